// Builds TraceModels: the index preview, and the full model from chunks decoded in parallel.
#include "tracebuilder.h"
#include "modelbuilder.h"

#include "alongside.h"
#include "countertracks.h"
#include "mpe/chunk_pass.h"
#include "mpe/interop.h"
#include "mpe/message_matcher.h"

#include <QFileInfo>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <map>
#include <new>
#include <numeric>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>

namespace upshot {

std::shared_ptr<TraceModel> buildPreview(const LogFile &file)
{
    auto model = std::make_shared<TraceModel>(file.definitions());
    ModelBuilder::preview(file, *model);
    return model;
}

// Rows from which a model's bins are built while loading: about where rows fitted to a window
// get thinner than 3 px and ranks are grouped.
constexpr int kBinsAtLoadRows = 256;

namespace {

// What upshot says when a log does not fit: its model holds every record (the streaming commands
// need memory for the ranks only).
mpe::Status outOfMemory(const LogFile &file)
{
    uint64_t records = 0;
    for (const auto &e : file.index())
        records += e.nrecords;
    return mpe::Status(mpe::StatusCode::kOutOfMemory,
        "upshot holds all " + std::to_string(records)
            + " records of this log and could not get the memory: open it where more memory is free, or "
              "summarize it with `mpe stat`, which needs memory for its ranks only");
}

mpe::StatusOr<std::shared_ptr<TraceModel>> buildModelInMemory(const LogFile &file, const BuildProgress &progress,
    int threads, const std::vector<mpe::format::ChunkConsumer> &alsoFeed, const std::function<void()> &afterPass)
{
    auto model = std::make_shared<TraceModel>(file.definitions());
    ModelBuilder builder(file, *model);
    const size_t n = file.index().size();
    // The one decode of the file: the model, the counter samples and what the caller adds (the
    // analyses' endpoints) take each chunk in turn.
    CounterSampleCollector counterSamples(file);
    std::vector<mpe::format::ChunkConsumer> consumers { [&](const mpe::format::Chunk &c) {
        builder.addChunk(c.index, c.records, c.count);
    } };
    if (counterSamples.wanted()) consumers.push_back(counterSamples.consumer());
    consumers.insert(consumers.end(), alsoFeed.begin(), alsoFeed.end());
    mpe::format::ChunkPassOptions pass;
    pass.decoders = threads;
    pass.what = "load";
    int reported = -1;
    pass.keep_going = [&](size_t done) {
        const int percent = static_cast<int>(95 * done / n);
        if (percent == reported) return true;
        reported = percent;
        return !progress || progress(percent);
    };
    if (mpe::Status s = mpe::format::run_chunk_pass(file, consumers, pass); !s.ok()) {
        if (s.code() == mpe::StatusCode::kCancelled) return mpe::Status(mpe::StatusCode::kInvalidArgument, "cancelled");
        return s;
    }
    runAlongside(afterPass, [&] {
        builder.finish();
        // Many ranks: the per-row bins behind the summary band and the groups' rows (summary.h),
        // built here on the loading thread rather than by the first frame that needs them.
        if (model->rowCount() >= kBinsAtLoadRows) model->allRowCounts();
        model->setCounters(counterSamples.tracks(*model));
    });
    releaseFreedMemory(); // the build's queues and lanes
    if (progress) progress(100);
    return model;
}

} // namespace

mpe::StatusOr<std::shared_ptr<TraceModel>> buildModel(const LogFile &file, const BuildProgress &progress, int threads,
    const std::vector<mpe::format::ChunkConsumer> &alsoFeed, const std::function<void()> &afterPass)
{
    // Out of memory is an answer (a dialog, or one line with --export), never an abort: what was
    // built is freed on the way out, so the message can be made.
    try {
        auto built = buildModelInMemory(file, progress, threads, alsoFeed, afterPass);
        if (!built.ok() && built.status().code() == mpe::StatusCode::kOutOfMemory) return outOfMemory(file);
        return built;
    } catch (const std::bad_alloc &) {
        return outOfMemory(file);
    } catch (const std::system_error &) { // a thread without memory for its stack
        return outOfMemory(file);
    }
}

mpe::StatusOr<std::shared_ptr<TraceModel>> loadModel(
    const QString &path, const std::function<void(int, const QString &)> &progress)
{
    auto report = [&](int p, const QString &s) {
        if (progress) progress(p, s);
    };
    report(0, QStringLiteral("Opening %1").arg(QFileInfo(path).fileName()));
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return opened.status();
    const LogFile *file = &(*opened)->file();
    const QString stage = QStringLiteral("Decoding %1 chunks").arg(file->index().size());
    return buildModel(*file, [&](int p) {
        report(p, stage);
        return true;
    });
}

std::shared_ptr<TraceModel> loadModel(const QString &path, QString *error)
{
    auto model = loadModel(path);
    if (model.ok()) return *model;
    if (error) *error = QString::fromStdString(model.status().to_string());
    return nullptr;
}

} // namespace upshot
