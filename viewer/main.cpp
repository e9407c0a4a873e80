// upshot: opens the timeline viewer, or renders a logfile (or a running job) to an image with no
// display (--export).
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>

#include <QPainter>
#include <QTimer>

#include <malloc.h>

#include <cstdio>
#include <utility>

#include "benchmark.h"
#include "commmatrix.h"
#include "compareload.h"
#include "countertracks.h"
#include "livesession.h"
#include "liveview.h"
#include "loader.h"
#include "mainwindow.h"
#include "mpe/interop.h"
#include "outofcore.h"
#include "rankgroups.h"
#include "renderer.h"
#include "summary.h"
#include "svgexport.h"
#include "tracebuilder.h"
#include "waitstates.h"

namespace {

// Parses "1.5ms", "200us", "3s", "42ns" or a bare number of seconds into ns.
bool parseTime(QString s, double *ns)
{
    s = s.trimmed();
    double unit = 1e9;
    for (auto [suffix, u] : { std::pair { "ns", 1.0 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } }) {
        if (s.endsWith(QString::fromUtf8(suffix))) {
            s.chop(QString::fromUtf8(suffix).size());
            unit = u;
            break;
        }
    }
    bool ok = false;
    *ns = s.toDouble(&ok) * unit;
    return ok;
}

// The preview of a logfile or an OTF2 archive, from its index alone.
mpe::StatusOr<std::shared_ptr<upshot::TraceModel>> loadPreview(const QString &path)
{
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return opened.status();
    return upshot::buildPreview((*opened)->file());
}

// --live with --export: attaches to a running job, collects for `after` seconds, renders the
// live page to out (PNG) and prints one line of JSON to stdout, for scripts and the MPI tests:
//   {"ranks_seen":N,"world_size":N,"ended":B,"frames_lost":N,"events_dropped":N,"rejected":N,
//    "deadlocks":[[r,...],...],"stuck":[{"holder":r,"waiting":[r,...]},...],"image":"out.png"}
// Each deadlock is its cycle's ranks in wait-for order (each waits for the next, the last for the
// first); see upshot::liveSummary(). Exit status 1, and a line on stderr, when the .live file
// cannot be read, the relay not subscribed to or the image not written.
int runLiveExport(const QString &path, const QString &out, double afterSeconds, double stuckSeconds, QSize size)
{
    upshot::LiveSession session;
    QString error;
    if (!session.attach(path, &error)) {
        std::fprintf(stderr, "upshot: cannot attach to %s: %s\n", qPrintable(path), qPrintable(error));
        return 1;
    }
    QTimer::singleShot(static_cast<int>(afterSeconds * 1000), qApp, &QCoreApplication::quit);
    QApplication::exec();
    session.poll();
    upshot::LiveView view;
    view.setJob(session.job());
    view.setStuckSeconds(stuckSeconds);
    view.setSource(QStringLiteral("%1 via %2").arg(QFileInfo(path).fileName(), session.endpoint()));
    const QImage img = view.snapshot(size);
    if (!img.save(out)) {
        std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(out));
        return 1;
    }
    nlohmann::json summary = upshot::liveSummary(*session.job(), stuckSeconds);
    summary["image"] = out.toStdString();
    std::printf("%s\n", summary.dump().c_str());
    return 0;
}

// Parses "WxH" into a size an image can have.
bool parseSize(const QString &text, QSize *size)
{
    const QStringList wh = text.split('x');
    *size = QSize(wh.value(0).toInt(), wh.value(1).toInt());
    return size->width() >= 64 && size->height() >= 32 && size->width() <= 16384 && size->height() <= 16384;
}

// Parses a number of seconds in [0, max].
bool parseSeconds(const QString &text, double max, double *seconds)
{
    bool ok = false;
    *seconds = text.toDouble(&ok);
    return ok && *seconds >= 0 && *seconds <= max;
}

// upshot's command-line options.
struct Options
{
    QCommandLineOption exportOpt { QStringList { "export", "screenshot" },
        "Render FILE to an image (PNG, or SVG by the .svg suffix) and exit; needs no display.", "out.png" };
    QCommandLineOption rangeOpt { "range",
        "Time window for --export, T0:T1 (seconds, or with ns/us/ms/s), or \"all\" for the whole run (default: the "
        "run's work, from the end of MPI_Init to the start of MPI_Finalize when those take over half the run).",
        "T0:T1|all" };
    QCommandLineOption sizeOpt { "size", "Image size for --export (default 1920x1080).", "WxH", "1920x1080" };
    QCommandLineOption benchOpt { "bench",
        "Measure load time, frame times (full view and a 1 ms window) and memory, then exit." };
    QCommandLineOption previewOpt { "preview",
        "With --export: draw the preview from the logfile's index (no decoding: instant on huge logs)." };
    QCommandLineOption grabOpt { "grab", "Open FILE in the whole window (offscreen), save a picture of it and exit.",
        "out.png" };
    QCommandLineOption waitsOpt { "waits",
        "With --export: analyze the wait states and draw their overlay (the waiting part of each state "
        "hatched, one colour per pattern)." };
    QCommandLineOption umqOpt { "umq",
        "With --export: add the unexpected-queue length rebuilt from the log's messages as a counter track." };
    QCommandLineOption liveOpt { "live",
        "Attach to a running job through the .live file `mpe run --live` wrote, and follow it live.", "run.live" };
    QCommandLineOption afterOpt { "after",
        "With --live --export: collect for SECONDS, then render the live page and print a one-line JSON summary.",
        "SECONDS", "3" };
    QCommandLineOption stuckOpt { "stuck",
        "With --live: a rank in a blocking call longer than SECONDS is stuck (default 1).", "SECONDS", "1" };
    QCommandLineOption groupOpt { "group",
        "With --export: group ranks by node, comm:<global id|world>, blocks[:N] or behaviour[:K]; auto (default) "
        "groups only when rows would be thinner than 3 px, none never.",
        "HOW", "auto" };
    QCommandLineOption drawOpt { "draw",
        "With --export: a group's row shows the dominant, max (MPI first) or mpi-share.", "MODE", "dominant" };
    QCommandLineOption summaryOpt { "summary",
        "With --export: the summary band on or off (default: on when ranks are grouped).", "on|off" };
    QCommandLineOption matrixOpt { "matrix",
        "With --export: also write the communication matrix of the window as a heat map (.png) or CSV (.csv).",
        "M.png|M.csv" };
    QCommandLineOption matrixValueOpt { "matrix-value",
        "What --matrix counts: bytes (default), messages or wait (needs --waits).", "VALUE", "bytes" };
    QCommandLineOption outOfCoreOpt { "out-of-core",
        "Open FILE through its view index (FILE.view, built on first use by one streaming pass) without loading its "
        "records: the default above 50 M records. Zoomed-in views read the records of their chunks." };
    QCommandLineOption sortMemoryOpt { "sort-memory",
        "Out of core: bytes of messages the index build sorts in memory before it spills sorted runs to $TMPDIR "
        "(default 256 MiB).",
        "BYTES" };
    QCommandLineOption connectOpt { "connect",
        "Open the log `mpe serve LOG --listen-file F` serves (perhaps through an SSH tunnel: docs/serve.md), "
        "reading only what is drawn; with --export, draw it headless.",
        "F" };
    QCommandLineOption inMemoryOpt { "in-memory",
        "Load every record of FILE, however large (the default below 50 M)." };
    QCommandLineOption compareOpt { "compare",
        "Compare FILE (A) with B: two timelines on aligned iterations and a difference band (docs/compare.md); "
        "with --export, writes that picture.",
        "B.mpelog" };

    void addTo(QCommandLineParser &parser) const
    {
        parser.addOptions({ exportOpt, rangeOpt, sizeOpt, benchOpt, previewOpt, grabOpt, waitsOpt, umqOpt, liveOpt,
            afterOpt, stuckOpt, groupOpt, drawOpt, summaryOpt, matrixOpt, matrixValueOpt, compareOpt, outOfCoreOpt,
            inMemoryOpt, connectOpt, sortMemoryOpt });
    }
};

// Whether the arguments ask for no window (export, bench or grab): those run on the offscreen
// platform unless QT_QPA_PLATFORM says otherwise.
bool headlessArguments(int argc, char **argv)
{
    bool headless = false;
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--export" || a == "--screenshot" || a == "--bench" || a == "--grab" || a.startsWith("--export="))
            headless = true;
    }
    return headless;
}

// --live with --export: the image size and how long to collect, then runLiveExport().
int exportLive(const QCommandLineParser &parser, const Options &o, double stuckSeconds)
{
    QSize size;
    double after = 0;
    if (!parseSize(parser.value(o.sizeOpt), &size)) {
        std::fprintf(stderr, "upshot: bad --size %s\n", qPrintable(parser.value(o.sizeOpt)));
        return 2;
    }
    if (!parseSeconds(parser.value(o.afterOpt), 86400, &after)) {
        std::fprintf(stderr, "upshot: bad --after %s\n", qPrintable(parser.value(o.afterOpt)));
        return 2;
    }
    return runLiveExport(parser.value(o.liveOpt), parser.value(o.exportOpt), after, stuckSeconds, size);
}

// --compare B with --export: the picture of FILE (A) compared with B.
int exportComparison(const QCommandLineParser &parser, const Options &o, const QStringList &files)
{
    QSize size;
    if (files.size() != 1 || !parseSize(parser.value(o.sizeOpt), &size)) {
        std::fprintf(stderr, "upshot: --export --compare B needs one FILE (A) and a good --size\n");
        return 2;
    }
    const auto wrote = upshot::exportCompare(files[0], parser.value(o.compareOpt), parser.value(o.exportOpt), size);
    if (!wrote.ok()) {
        std::fprintf(stderr, "upshot: cannot compare: %s\n", wrote.status().to_string().c_str());
        return 1;
    }
    std::printf("upshot: %s\n", qPrintable(wrote.value()));
    return 0;
}

// What --export draws, from the options: the window, grouping, draw mode, summary band, and what
// --matrix counts.
struct ExportRequest
{
    QSize size;
    double t0 = 0, t1 = 0;
    bool wholeRun = false;
    upshot::OpeningOptions opening;
    upshot::MatrixValue matrixValue = upshot::MatrixValue::Bytes;
};

// Parses --group, --draw, --summary and --matrix-value into *req, and checks that --waits and
// --umq do not come with --preview; false (with a line on stderr) when they are bad.
bool parseExportLook(const QCommandLineParser &parser, const Options &o, ExportRequest *req)
{
    QString error;
    if (!upshot::parseGroupSpec(parser.value(o.groupOpt), &req->opening.group, &error)) {
        std::fprintf(stderr, "upshot: %s\n", qPrintable(error));
        return false;
    }
    if (!upshot::parseDrawMode(parser.value(o.drawOpt), &req->opening.drawMode)) {
        std::fprintf(
            stderr, "upshot: bad --draw %s (want dominant, max or mpi-share)\n", qPrintable(parser.value(o.drawOpt)));
        return false;
    }
    if (parser.isSet(o.summaryOpt)) {
        const QString v = parser.value(o.summaryOpt);
        if (v != QLatin1String("on") && v != QLatin1String("off")) {
            std::fprintf(stderr, "upshot: bad --summary %s (want on or off)\n", qPrintable(v));
            return false;
        }
        req->opening.summary = v == QLatin1String("on");
    }
    if (const QString v = parser.value(o.matrixValueOpt); v == QLatin1String("messages"))
        req->matrixValue = upshot::MatrixValue::Messages;
    else if (v == QLatin1String("wait"))
        req->matrixValue = upshot::MatrixValue::WaitTime;
    else if (v != QLatin1String("bytes")) {
        std::fprintf(stderr, "upshot: bad --matrix-value %s (want bytes, messages or wait)\n", qPrintable(v));
        return false;
    }
    if (parser.isSet(o.outOfCoreOpt) && parser.isSet(o.inMemoryOpt)) {
        std::fprintf(stderr, "upshot: --out-of-core and --in-memory exclude each other\n");
        return false;
    }
    if ((parser.isSet(o.waitsOpt) || parser.isSet(o.umqOpt)) && parser.isSet(o.outOfCoreOpt)) {
        std::fprintf(stderr,
            "upshot: --waits and --umq load the whole log (add --in-memory); out of core, run `mpe waits` or `mpe "
            "umq`\n");
        return false;
    }
    if ((parser.isSet(o.waitsOpt) || parser.isSet(o.umqOpt)) && parser.isSet(o.previewOpt)) {
        std::fprintf(stderr, "upshot: --waits and --umq need the decoded log, not --preview\n");
        return false;
    }
    return true;
}

// The model --export draws: the preview, or the decoded log with the wait states (--waits) and the
// rebuilt queue (--umq) when asked for; *waitsNote says how many wait states it has. Null (with a
// line on stderr) when the file cannot be opened.
std::shared_ptr<upshot::TraceModel> loadForExport(const QCommandLineParser &parser, const Options &o,
    const QString &path, QString *waitsNote, std::shared_ptr<upshot::OutOfCoreLog> *outOfCore)
{
    const bool analyses = parser.isSet(o.waitsOpt) || parser.isSet(o.umqOpt) || parser.isSet(o.previewOpt);
    if (parser.isSet(o.connectOpt)) {
        auto remote = upshot::OutOfCoreLog::connect(parser.value(o.connectOpt));
        if (!remote.ok()) {
            std::fprintf(stderr, "upshot: cannot open the log served through %s: %s\n", qPrintable(path),
                remote.status().to_string().c_str());
            return nullptr;
        }
        *outOfCore = *remote;
        return (*remote)->summary();
    }
    if (!analyses && !parser.isSet(o.inMemoryOpt)) {
        if (parser.isSet(o.outOfCoreOpt) || upshot::OutOfCoreLog::wanted(path)) {
            bool sized = false;
            const qulonglong sortMemory = parser.value(o.sortMemoryOpt).toULongLong(&sized);
            if (parser.isSet(o.sortMemoryOpt) && (!sized || sortMemory < 4096)) {
                std::fprintf(stderr, "upshot: bad --sort-memory %s (want bytes, at least 4096)\n",
                    qPrintable(parser.value(o.sortMemoryOpt)));
                return nullptr;
            }
            auto big = upshot::OutOfCoreLog::open(path, {}, sized ? sortMemory : 0);
            if (!big.ok()) {
                std::fprintf(
                    stderr, "upshot: cannot open %s: %s\n", qPrintable(path), big.status().to_string().c_str());
                return nullptr;
            }
            *outOfCore = *big;
            return (*big)->summary();
        }
    }
    // With --waits the file stays open for the analysis after the model is built.
    std::shared_ptr<mpe::interop::OpenedLog> opened;
    mpe::StatusOr<std::shared_ptr<upshot::TraceModel>> loaded = mpe::Status();
    mpe::StatusOr<std::shared_ptr<const upshot::WaitStates>> waits = mpe::Status();
    mpe::StatusOr<std::shared_ptr<upshot::CounterTracks>> counters = mpe::Status();
    if (parser.isSet(o.previewOpt)) {
        loaded = loadPreview(path);
    } else if (parser.isSet(o.waitsOpt) || parser.isSet(o.umqOpt)) {
        // One decode: the wait states and the rebuilt queue come from the model's pass.
        auto opening = mpe::interop::OpenedLog::open(path.toStdString());
        if (opening.ok()) opened = *opening;
        upshot::OpenSteps steps;
        steps.waits = parser.isSet(o.waitsOpt);
        steps.rebuiltQueue = parser.isSet(o.umqOpt);
        steps.waitsReady = [&](const mpe::StatusOr<std::shared_ptr<const upshot::WaitStates>> &w) { waits = w; };
        steps.countersReady = [&](const mpe::StatusOr<std::shared_ptr<upshot::CounterTracks>> &c) { counters = c; };
        loaded = opening.ok() ? upshot::openTrace(opened->file(), steps) : decltype(loaded)(opening.status());
    } else {
        loaded = upshot::loadModel(path);
    }
    if (!loaded.ok()) {
        std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(path), loaded.status().to_string().c_str());
        return nullptr;
    }
    const std::shared_ptr<upshot::TraceModel> model = *loaded;
    if (!model->filterNote().isEmpty()) std::fprintf(stderr, "upshot: %s\n", qPrintable(model->filterNote()));
    if (opened && parser.isSet(o.umqOpt)) {
        if (counters.ok())
            model->setCounters(*counters);
        else
            std::fprintf(stderr, "upshot: rebuilt queue not drawn: %s\n", counters.status().to_string().c_str());
    }
    if (opened && parser.isSet(o.waitsOpt)) {
        // A failed analysis leaves the picture without the overlay, and says why.
        if (waits.ok()) {
            model->setWaits(*waits);
            *waitsNote = QStringLiteral(", %1 wait states").arg((*waits)->instanceCount());
        } else {
            std::fprintf(stderr, "upshot: wait states not drawn: %s\n", waits.status().to_string().c_str());
        }
        opened.reset();
    }
    return model;
}

// --matrix: the communication matrix of the view's window, as a heat map (.png) or CSV (.csv);
// false (with a line on stderr) when it cannot be written.
bool writeMatrix(
    const QString &path, const upshot::TraceModel &model, const upshot::ViewState &view, upshot::MatrixValue value)
{
    const upshot::CommMatrix m
        = upshot::buildCommMatrix(model, view.scale.t0(), view.scale.t1(), value, view.groups.get());
    if (!m.note.isEmpty()) std::fprintf(stderr, "upshot: matrix: %s\n", qPrintable(m.note));
    bool written = false;
    if (path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) {
        QFile f(path);
        written = f.open(QIODevice::WriteOnly) && f.write(upshot::commMatrixCsv(m).toUtf8()) >= 0;
    } else {
        written = upshot::commMatrixImage(m, QSize(1024, 1024)).save(path);
    }
    if (!written) std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(path));
    return written;
}

// --export: loads FILE, draws the request's view into an image (PNG, or SVG by the suffix), and
// the matrix when asked for.
int exportImage(const QCommandLineParser &parser, const Options &o, const QString &file, ExportRequest req)
{
    QElapsedTimer timer;
    timer.start();
    QString waitsNote;
    std::shared_ptr<upshot::OutOfCoreLog> outOfCore;
    std::shared_ptr<upshot::TraceModel> model = loadForExport(parser, o, file, &waitsNote, &outOfCore);
    if (!model) return 1;
    const double loadMs = timer.nsecsElapsed() / 1e6;
    upshot::RenderStats stats;
    const QString out = parser.value(o.exportOpt);
    const QSize size = req.size;
    upshot::OpeningOptions &opening = req.opening;
    // An explicit window keeps the plain layout (rows only); the first picture has the legend.
    opening.legend = !parser.isSet(o.rangeOpt) || req.wholeRun;
    if (req.wholeRun)
        opening.range = std::make_pair(model->tBegin(), model->tEnd());
    else if (req.t1 > req.t0)
        opening.range = std::make_pair(req.t0, req.t1);
    QString groupMessage;
    const upshot::ViewState view = upshot::openingView(*model, size, opening, &groupMessage);
    if (!groupMessage.isEmpty()) std::fprintf(stderr, "upshot: %s\n", qPrintable(groupMessage));
    if (outOfCore) {
        // Out of core: the view drawn from its chunks' records when they fit, else from the summary.
        auto drawn = outOfCore->modelFor(view.scale.t0(), view.scale.t1());
        if (!drawn.ok()) {
            std::fprintf(stderr, "upshot: cannot read %s: %s\n", qPrintable(file), drawn.status().to_string().c_str());
            return 1;
        }
        model = *drawn;
        waitsNote += model->messagesSampled() ? QStringLiteral(", from the view index")
                                              : QStringLiteral(", window read from the log");
    }
    if (parser.isSet(o.matrixOpt) && !writeMatrix(parser.value(o.matrixOpt), *model, view, req.matrixValue)) return 1;
    if (out.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        if (!upshot::exportSvg(*model, view, out)) {
            std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(out));
            return 1;
        }
        std::printf("upshot: wrote %s (%dx%d)\n", qPrintable(out), size.width(), size.height());
        return 0;
    }
    QImage img(size, QImage::Format_RGB32);
    img.fill(Qt::white);
    {
        QPainter p(&img);
        upshot::paintTimeline(p, *model, view, &stats);
    }
    if (!img.save(out)) {
        std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(out));
        return 1;
    }
    if (view.groups)
        waitsNote += QStringLiteral(", %1 groups (%2)").arg(view.groups->groupCount()).arg(parser.value(o.groupOpt));
    std::printf("upshot: wrote %s (%dx%d): %zu boxes, %zu folds, %zu arrows, %zu events%s; load %.0f ms, total "
                "%.0f ms\n",
        qPrintable(out), size.width(), size.height(), stats.boxes, stats.folds, stats.arrows, stats.events,
        qPrintable(waitsNote), loadMs, timer.nsecsElapsed() / 1e6);
    return 0;
}

// --export or --bench of one FILE: checks the size and window, then benchmarks or exports.
int exportOrBench(const QCommandLineParser &parser, const Options &o, QStringList files)
{
    if (parser.isSet(o.connectOpt)) {
        if (!files.isEmpty() || parser.isSet(o.benchOpt) || parser.isSet(o.waitsOpt) || parser.isSet(o.umqOpt)
            || parser.isSet(o.previewOpt) || parser.isSet(o.inMemoryOpt)) {
            std::fprintf(stderr,
                "upshot: --connect F --export takes no FILE, nor --bench, --waits, --umq, --preview "
                "or --in-memory\n");
            return 2;
        }
        files = QStringList { parser.value(o.connectOpt) };
    }
    if (files.size() != 1) {
        std::fprintf(stderr, "upshot: --export and --bench need exactly one FILE\n");
        return 2;
    }
    ExportRequest req;
    if (!parseSize(parser.value(o.sizeOpt), &req.size)) {
        std::fprintf(stderr, "upshot: bad --size %s\n", qPrintable(parser.value(o.sizeOpt)));
        return 2;
    }
    req.wholeRun = parser.value(o.rangeOpt) == QLatin1String("all");
    if (parser.isSet(o.rangeOpt) && !req.wholeRun) {
        const QStringList r = parser.value(o.rangeOpt).split(':');
        if (r.size() != 2 || !parseTime(r[0], &req.t0) || !parseTime(r[1], &req.t1) || req.t1 <= req.t0) {
            std::fprintf(
                stderr, "upshot: bad --range %s (want T0:T1, T1 > T0)\n", qPrintable(parser.value(o.rangeOpt)));
            return 2;
        }
    }
    if (parser.isSet(o.benchOpt))
        return parser.isSet(o.outOfCoreOpt) ? upshot::runOutOfCoreBench(files[0], req.size)
                                            : upshot::runBench(files[0], req.size);
    if (!parseExportLook(parser, o, &req)) return 2;
    return exportImage(parser, o, files[0], req);
}

// The window: FILE opened (and compared with --compare B once loaded), or a live job followed;
// --grab saves a picture of it once the file is loaded, and exits.
int runWindow(QApplication &app, const QCommandLineParser &parser, const Options &o, const QStringList &files,
    double stuckSeconds)
{
    upshot::MainWindow window;
    if (parser.isSet(o.grabOpt)) {
        const QStringList wh = parser.value(o.sizeOpt).split('x');
        window.resize(wh.value(0).toInt(), wh.value(1).toInt());
        QObject::connect(&window, &upshot::MainWindow::fileLoaded, &app, [&] {
            QTimer::singleShot(
                200, &app, [&] { QApplication::exit(window.grab().save(parser.value(o.grabOpt)) ? 0 : 1); });
        });
        QObject::connect(&window, &upshot::MainWindow::loadFailed, &app, [&] { QApplication::exit(1); });
    }
    window.show();
    if (parser.isSet(o.liveOpt)) {
        window.liveView()->setStuckSeconds(stuckSeconds);
        window.attachLive(parser.value(o.liveOpt));
    } else if (parser.isSet(o.connectOpt)) {
        window.connectToServer(parser.value(o.connectOpt));
    } else if (!files.isEmpty()) {
        window.openFile(files.first());
        if (parser.isSet(o.compareOpt))
            QObject::connect(
                &window, &upshot::MainWindow::fileLoaded, &window,
                [&window, b = parser.value(o.compareOpt)] { window.compareWith(b); }, Qt::SingleShotConnection);
    }
    return app.exec();
}

} // namespace

int main(int argc, char **argv)
{
    // Large arrays (states, message queues, decoded chunks) get their own mappings and go back to
    // the system when freed; glibc's default raises this threshold as they are freed and then
    // keeps the freed blocks resident in the heap, ~20% more peak memory on a 100 M-event log.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    if (headlessArguments(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("mpe-tools"));
    QApplication::setApplicationName(QStringLiteral("upshot"));
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Timeline viewer for MPE logfiles (.mpelog)."));
    parser.addHelpOption();
    parser.addVersionOption();
    const Options o;
    o.addTo(parser);
    parser.addPositionalArgument("FILE", "The logfile to open.");
    parser.process(app);
    const QStringList files = parser.positionalArguments();

    double stuckSeconds = 1;
    if (parser.isSet(o.liveOpt)) {
        if (!files.isEmpty()) {
            std::fprintf(stderr, "upshot: --live takes no FILE\n");
            return 2;
        }
        if (!parseSeconds(parser.value(o.stuckOpt), 1e6, &stuckSeconds) || stuckSeconds <= 0) {
            std::fprintf(stderr, "upshot: bad --stuck %s\n", qPrintable(parser.value(o.stuckOpt)));
            return 2;
        }
    }
    if (parser.isSet(o.liveOpt) && parser.isSet(o.exportOpt)) return exportLive(parser, o, stuckSeconds);
    if (parser.isSet(o.compareOpt) && parser.isSet(o.exportOpt)) return exportComparison(parser, o, files);
    if (parser.isSet(o.exportOpt) || parser.isSet(o.benchOpt)) return exportOrBench(parser, o, files);
    return runWindow(app, parser, o, files, stuckSeconds);
}
