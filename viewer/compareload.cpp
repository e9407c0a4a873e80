// Loads two runs for the compare view: models, iterations, aligned time, band and diff rows, each
// log decoded once.
#include "compareload.h"

#include <QFileInfo>

#include <new>

#include "mpe/chunk_pass.h"
#include "mpe/interop.h"
#include "mpe/iterations.h"
#include "tracebuilder.h"

namespace upshot {

namespace {

mpe::Status named(const QString &path, const mpe::Status &s)
{
    return mpe::Status(s.code(), path.toStdString() + ": " + s.message());
}

// One run's model (built unless given), iterations and diff model (mpe/diff.h), all from one
// chunk pass over the opened file: each chunk is decoded once and handed to the model's builder
// (when there is no model), the diff model's and the iterations' collector. Iterations that
// cannot be found leave the run without any (the view then aligns the starts and says why).
struct LoadedRun
{
    std::shared_ptr<TraceModel> model;
    mpe::analysis::Iterations iterations;
    QString iterationsError;
    mpe::analysis::diff::Run run;
};

mpe::StatusOr<LoadedRun> loadRun(const QString &path, std::shared_ptr<TraceModel> model)
{
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return named(path, opened.status());
    const mpe::format::LogFile &file = (*opened)->file();
    mpe::analysis::diff::RunBuilder diffBuilder(file, path.toStdString());
    mpe::analysis::IterationCollector iterations(file);
    const std::vector<mpe::format::ChunkConsumer> consumers { diffBuilder.consumer(), iterations.consumer() };
    // Once the pass is over: the wait states and the cut, alongside the model's own finish.
    mpe::StatusOr<mpe::analysis::diff::Run> diffRun = mpe::Status::out_of_memory();
    mpe::StatusOr<mpe::analysis::Iterations> found = mpe::Status::out_of_memory();
    auto afterPass = [&] {
        try {
            diffRun = diffBuilder.finish();
            found = iterations.finish();
        } catch (const std::bad_alloc &) { }
    };
    LoadedRun run;
    if (model) {
        run.model = std::move(model);
        mpe::format::ChunkPassOptions pass;
        pass.decoders = 0;
        if (const mpe::Status s = mpe::format::run_chunk_pass(file, consumers, pass); !s.ok()) return named(path, s);
        afterPass();
    } else {
        auto built = buildModel(file, {}, 0, consumers, afterPass);
        if (!built.ok()) return named(path, built.status());
        run.model = *built;
    }
    if (!diffRun.ok()) return named(path, diffRun.status());
    run.run = std::move(*diffRun);
    if (found.ok())
        run.iterations = std::move(*found);
    else
        run.iterationsError = QString::fromStdString(found.status().message());
    return run;
}

} // namespace

mpe::StatusOr<std::shared_ptr<CompareData>> loadCompare(
    const QString &aPath, std::shared_ptr<TraceModel> aModel, const QString &bPath)
{
    auto b = loadRun(bPath, nullptr);
    if (!b.ok()) return b.status();
    auto a = loadRun(aPath, std::move(aModel));
    if (!a.ok()) return a.status();
    auto data = std::make_shared<CompareData>();
    CompareScene &s = data->scene;
    s.a = a->model;
    s.b = b->model;
    s.nameA = QFileInfo(aPath).fileName();
    s.nameB = QFileInfo(bPath).fileName();
    s.map = alignIterations(a->iterations, b->iterations, s.a->tBegin(), s.b->tBegin(), &s.note);
    for (const auto &[which, err] : { std::pair { "A", a->iterationsError }, { "B", b->iterationsError } })
        if (!err.isEmpty()) s.note += QStringLiteral(" (iterations of %1 not found: %2)").arg(which, err);
    const mpe::analysis::diff::IterationComparison iterations
        = mpe::analysis::diff::compare_iterations(a->iterations, b->iterations);
    s.band = diffBand(a->iterations, iterations);
    if (s.band.ranks == 0 && iterations.ranks == 0 && !iterations.rows.empty())
        s.note += QStringLiteral("; no difference band: A has %1 ranks, B %2")
                      .arg(a->iterations.ranks)
                      .arg(b->iterations.ranks);
    const mpe::analysis::diff::Comparison c = mpe::analysis::diff::compare(std::move(a->run), std::move(b->run));
    data->rows = compareRows(c);
    if (c.unrelated())
        data->rowsNote = QStringLiteral("A and B have no call site in common: only the routine totals compare");
    else if (c.scaled)
        data->rowsNote = QStringLiteral("A and B have different rank counts: times are per rank (totals scaled)");
    return data;
}

mpe::StatusOr<QString> exportCompare(const QString &aPath, const QString &bPath, const QString &out, QSize size)
{
    auto loaded = loadCompare(aPath, nullptr, bPath);
    if (!loaded.ok()) return loaded.status();
    const CompareData &data = **loaded;
    const auto cannotWrite = mpe::Status(mpe::StatusCode::kIoError, "cannot write " + out.toStdString());
    RenderStats a, b;
    if (out.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        if (!exportCompareSvg(data.scene, size, out)) return cannotWrite;
    } else if (!renderCompare(data.scene, size, &a, &b).save(out)) {
        return cannotWrite;
    }
    return QStringLiteral("wrote %1 (%2x%3): A %4 boxes, B %5 boxes, %6 iterations compared; %7")
        .arg(out)
        .arg(size.width())
        .arg(size.height())
        .arg(a.boxes)
        .arg(b.boxes)
        .arg(data.scene.band.iterations)
        .arg(data.scene.note);
}

} // namespace upshot
