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
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <tuple>
#include <vector>

#include "commmatrix.h"
#include "compareload.h"
#include "countertracks.h"
#include "livesession.h"
#include "liveview.h"
#include "loader.h"
#include "mainwindow.h"
#include "mpe/interop.h"
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

// CPU time of the calling thread in ms: frame costs that other processes on the machine cannot inflate.
double threadCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double rssMiB()
{
    FILE *f = std::fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
        std::fclose(f);
    }
    return rss * 4096.0 / (1024 * 1024);
}

// The peak resident set size so far (VmHWM), in MiB.
double peakRssMiB()
{
    FILE *f = std::fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::atol(line + 6);
    if (f) std::fclose(f);
    return kb / 1024.0;
}

// Milliseconds since the kernel started this process (so exec and loading Qt count too);
// 10 ms resolution (clock ticks).
double processAgeMs()
{
    FILE *f = std::fopen("/proc/self/stat", "r");
    char buf[1024] = {};
    const size_t n = f ? std::fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) std::fclose(f);
    const char *p = n ? std::strrchr(buf, ')') : nullptr; // the command name may hold spaces
    unsigned long long start = 0;
    for (int field = 2; p && *p && field < 22; ++p)
        if (*p == ' ') ++field;
    if (p && std::sscanf(p, "%llu", &start) != 1) start = 0;
    timespec now {};
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (now.tv_sec * 1e3 + now.tv_nsec / 1e6) - start * 1e3 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Median wall and thread-CPU milliseconds of painting view v of model into an image, 15 times.
std::pair<double, double> medianFrameMs(const upshot::TraceModel &model, const upshot::ViewState &v)
{
    std::vector<double> ms, cpu;
    QImage img(v.size, QImage::Format_RGB32);
    for (int i = 0; i < 15; ++i) {
        QElapsedTimer t;
        t.start();
        const double c0 = threadCpuMs();
        QPainter p(&img);
        upshot::paintTimeline(p, model, v);
        p.end();
        ms.push_back(t.nsecsElapsed() / 1e6);
        cpu.push_back(threadCpuMs() - c0);
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu.begin(), cpu.end());
    return { ms[ms.size() / 2], cpu[cpu.size() / 2] };
}

// The preview of a logfile or an OTF2 archive, from its index alone.
mpe::StatusOr<std::shared_ptr<upshot::TraceModel>> loadPreview(const QString &path)
{
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return opened.status();
    return upshot::buildPreview((*opened)->file());
}

// --bench: what the window does, timed. The first frame is the index preview (open the file,
// read its index, paint the summaries), timed from the kernel's start of the process. Then the
// full model is built on all cores, and frames of it are timed at full view and in a 1 ms
// window at the middle of the run. Memory: peak RSS (VmHWM) minus the RSS of the process
// before it opened the file (Qt up, fonts loaded by painting an empty frame), per record.
// Last, the wait states are analyzed and the same frames timed with their overlay (*_waits_*).
int runBench(const QString &path, QSize size)
{
    {
        QImage empty(size, QImage::Format_RGB32);
        QPainter p(&empty);
        p.drawText(10, 20, QStringLiteral("upshot 0123456789 ms"));
    }
    const double rssBase = rssMiB();
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) {
        std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(path), opened.status().to_string().c_str());
        return 1;
    }
    const mpe::format::LogFile *file = &(*opened)->file();
    const double rssOpen = rssMiB(); // the log's definitions and index
    QElapsedTimer timer;
    timer.start();
    {
        auto preview = upshot::buildPreview(*file);
        upshot::renderImage(*preview, 0, 0, size);
    }
    const double previewMs = timer.nsecsElapsed() / 1e6;
    const double firstFrameMs = processAgeMs();
    timer.restart();
    auto built = upshot::buildModel(*file);
    if (!built.ok()) {
        std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(path), built.status().to_string().c_str());
        return 1;
    }
    const std::shared_ptr<upshot::TraceModel> model = *built;
    const double loadMs = timer.nsecsElapsed() / 1e6;
    const double peak = peakRssMiB(), rss = rssMiB();
    const auto [full, fullCpu]
        = medianFrameMs(*model, upshot::fittedView(*model, model->tBegin(), model->tEnd(), size));
    const double mid = (model->tBegin() + model->tEnd()) / 2;
    const auto [window, windowCpu] = medianFrameMs(*model, upshot::fittedView(*model, mid, mid + 1e6, size));
    // What the window shows of a log with many ranks: the whole run, rows 8 px high (the
    // window's minimum when fitting), scrolled to the middle rows.
    upshot::ViewState scrolled = upshot::fittedView(*model, model->tBegin(), model->tEnd(), size);
    scrolled.rowHeight = 8;
    scrolled.yOffset = std::max(0.0, (model->rowCount() * 8.0 - scrolled.plotRect().height()) / 2);
    const auto [rows8, rows8Cpu] = medianFrameMs(*model, scrolled);
    // Many ranks: the opening picture with the summary band and rank groups (grouped whatever
    // the row height, by node or in blocks), the first time (groups built, and the bins below
    // 256 rows; above, loading built them) and then; and every row fitted without groups (1 px
    // rows at 1,024 ranks: the thin-row path).
    timer.restart();
    upshot::OpeningOptions grouped;
    grouped.minRowPx = 1e9;
    grouped.summary = true;
    grouped.range = std::make_pair(model->tBegin(), model->tEnd());
    const upshot::ViewState groupedView = upshot::openingView(*model, size, grouped);
    {
        QImage img(size, QImage::Format_RGB32);
        QPainter p(&img);
        upshot::paintTimeline(p, *model, groupedView);
    }
    const double groupsFirstMs = timer.nsecsElapsed() / 1e6;
    // For profiling (perf record): UPSHOT_PROFILE_FRAMES=N paints the grouped view and the
    // fitted rows N times each, then exits.
    if (const int n = qEnvironmentVariableIntValue("UPSHOT_PROFILE_FRAMES"); n > 0) {
        upshot::OpeningOptions flat = grouped;
        flat.group.by = upshot::GroupBy::None;
        flat.summary = false;
        const upshot::ViewState flatView = upshot::openingView(*model, size, flat);
        QImage img(size, QImage::Format_RGB32);
        for (int i = 0; i < 2 * n; ++i) {
            QPainter p(&img);
            upshot::paintTimeline(p, *model, i < n ? groupedView : flatView);
        }
        return 0;
    }
    const auto [fullGrouped, fullGroupedCpu] = medianFrameMs(*model, groupedView);
    upshot::OpeningOptions flat = grouped;
    flat.group.by = upshot::GroupBy::None;
    flat.summary = false;
    const upshot::ViewState flatView = upshot::openingView(*model, size, flat);
    const auto [fullFlat, fullFlatCpu] = medianFrameMs(*model, flatView);
    const double records = static_cast<double>(std::max<uint64_t>(1, model->recordCount()));
    const double MiB = 1024.0 * 1024.0;
    // The same frames with the wait-state overlay, after the analysis the window runs in the
    // background (timed, with the peak memory it reaches).
    timer.restart();
    // UPSHOT_BENCH_NO_WAITS=1 leaves the analysis (and the *_waits_* figures) out.
    auto waits = qEnvironmentVariableIntValue("UPSHOT_BENCH_NO_WAITS") > 0
        ? mpe::StatusOr<std::shared_ptr<const upshot::WaitStates>>(
            mpe::Status(mpe::StatusCode::kInvalidArgument, "skipped"))
        : upshot::analyzeWaits(*file, *model);
    const double waitsMs = timer.nsecsElapsed() / 1e6;
    double fullW = 0, fullWCpu = 0, windowW = 0, windowWCpu = 0, rows8W = 0, rows8WCpu = 0;
    if (waits.ok()) {
        model->setWaits(*waits);
        std::tie(fullW, fullWCpu)
            = medianFrameMs(*model, upshot::fittedView(*model, model->tBegin(), model->tEnd(), size));
        std::tie(windowW, windowWCpu) = medianFrameMs(*model, upshot::fittedView(*model, mid, mid + 1e6, size));
        std::tie(rows8W, rows8WCpu) = medianFrameMs(*model, scrolled);
    } else {
        std::fprintf(stderr, "upshot: wait states not analyzed: %s\n", waits.status().to_string().c_str());
    }
    std::printf(
        "file %s\nrecords %llu\nrows %d\nstart_to_first_frame_ms %.1f\npreview_open_and_frame_ms %.1f\n"
        "full_load_ms %.1f\nframe_full_ms %.2f\nframe_1ms_window_ms %.2f\nframe_full_cpu_ms %.2f\n"
        "frame_1ms_window_cpu_ms %.2f\nframe_full_rows8_scrolled_ms %.2f\nframe_full_rows8_scrolled_cpu_ms %.2f\n"
        "model_bytes_per_record %.1f\nrss_base_mib %.1f\nrss_after_open_mib %.1f\nrss_peak_mib %.1f\n"
        "peak_rss_bytes_per_record %.1f\nrss_after_load_bytes_per_record %.1f\n"
        "groups %d\nbins_and_groups_first_frame_ms %.1f\nframe_full_summary_groups_ms %.2f\n"
        "frame_full_summary_groups_cpu_ms %.2f\nrow_height_fitted_px %.2f\nframe_full_rows_fitted_ms %.2f\n"
        "frame_full_rows_fitted_cpu_ms %.2f\n",
        qPrintable(path), static_cast<unsigned long long>(model->recordCount()), model->rowCount(), firstFrameMs,
        previewMs, loadMs, full, window, fullCpu, windowCpu, rows8, rows8Cpu,
        static_cast<double>(model->memoryBytes()) / records, rssBase, rssOpen, peak, (peak - rssBase) * MiB / records,
        (rss - rssBase) * MiB / records, groupedView.groups ? groupedView.groups->groupCount() : 0, groupsFirstMs,
        fullGrouped, fullGroupedCpu, flatView.rowHeight, fullFlat, fullFlatCpu);
    if (waits.ok())
        std::printf("waits_instances %llu\nwaits_analysis_ms %.1f\nwaits_overlay_bytes_per_instance %.1f\n"
                    "rss_peak_with_waits_mib %.1f\nframe_full_waits_ms %.2f\nframe_full_waits_cpu_ms %.2f\n"
                    "frame_1ms_window_waits_ms %.2f\nframe_1ms_window_waits_cpu_ms %.2f\n"
                    "frame_full_rows8_scrolled_waits_ms %.2f\nframe_full_rows8_scrolled_waits_cpu_ms %.2f\n",
            static_cast<unsigned long long>((*waits)->instanceCount()), waitsMs,
            static_cast<double>((*waits)->memoryBytes()) / std::max<double>(1, (*waits)->instanceCount()), peakRssMiB(),
            fullW, fullWCpu, windowW, windowWCpu, rows8W, rows8WCpu);
    return 0;
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

} // namespace

int main(int argc, char **argv)
{
    // Large arrays (states, message queues, decoded chunks) get their own mappings and go back to
    // the system when freed; glibc's default raises this threshold as they are freed and then
    // keeps the freed blocks resident in the heap, ~20% more peak memory on a 100 M-event log.
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    bool headless = false;
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--export" || a == "--screenshot" || a == "--bench" || a == "--grab" || a.startsWith("--export="))
            headless = true;
    }
    if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("mpe-tools"));
    QApplication::setApplicationName(QStringLiteral("upshot"));
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Timeline viewer for MPE logfiles (.mpelog)."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption exportOpt(QStringList { "export", "screenshot" },
        "Render FILE to an image (PNG, or SVG by the .svg suffix) and exit; needs no display.", "out.png");
    QCommandLineOption rangeOpt("range",
        "Time window for --export, T0:T1 (seconds, or with ns/us/ms/s), or \"all\" for the whole run (default: the "
        "run's work, from the end of MPI_Init to the start of MPI_Finalize when those take over half the run).",
        "T0:T1|all");
    QCommandLineOption sizeOpt("size", "Image size for --export (default 1920x1080).", "WxH", "1920x1080");
    QCommandLineOption benchOpt(
        "bench", "Measure load time, frame times (full view and a 1 ms window) and memory, then exit.");
    QCommandLineOption previewOpt(
        "preview", "With --export: draw the preview from the logfile's index (no decoding: instant on huge logs).");
    QCommandLineOption grabOpt(
        "grab", "Open FILE in the whole window (offscreen), save a picture of it and exit.", "out.png");
    QCommandLineOption waitsOpt("waits",
        "With --export: analyze the wait states and draw their overlay (the waiting part of each state "
        "hatched, one colour per pattern).");
    QCommandLineOption umqOpt(
        "umq", "With --export: add the unexpected-queue length rebuilt from the log's messages as a counter track.");
    QCommandLineOption liveOpt("live",
        "Attach to a running job through the .live file `mpe run --live` wrote, and follow it live.", "run.live");
    QCommandLineOption afterOpt("after",
        "With --live --export: collect for SECONDS, then render the live page and print a one-line JSON summary.",
        "SECONDS", "3");
    QCommandLineOption stuckOpt(
        "stuck", "With --live: a rank in a blocking call longer than SECONDS is stuck (default 1).", "SECONDS", "1");
    QCommandLineOption groupOpt("group",
        "With --export: group ranks by node, comm:<global id|world>, blocks[:N] or behaviour[:K]; auto (default) "
        "groups only when rows would be thinner than 3 px, none never.",
        "HOW", "auto");
    QCommandLineOption drawOpt(
        "draw", "With --export: a group's row shows the dominant, max (MPI first) or mpi-share.", "MODE", "dominant");
    QCommandLineOption summaryOpt(
        "summary", "With --export: the summary band on or off (default: on when ranks are grouped).", "on|off");
    QCommandLineOption matrixOpt("matrix",
        "With --export: also write the communication matrix of the window as a heat map (.png) or CSV (.csv).",
        "M.png|M.csv");
    QCommandLineOption matrixValueOpt(
        "matrix-value", "What --matrix counts: bytes (default), messages or wait (needs --waits).", "VALUE", "bytes");
    QCommandLineOption compareOpt("compare",
        "Compare FILE (A) with B: two timelines on aligned iterations and a difference band (docs/compare.md); "
        "with --export, writes that picture.",
        "B.mpelog");
    parser.addOptions({ exportOpt, rangeOpt, sizeOpt, benchOpt, previewOpt, grabOpt, waitsOpt, umqOpt, liveOpt,
        afterOpt, stuckOpt, groupOpt, drawOpt, summaryOpt, matrixOpt, matrixValueOpt, compareOpt });
    parser.addPositionalArgument("FILE", "The logfile to open.");
    parser.process(app);
    const QStringList files = parser.positionalArguments();

    double stuckSeconds = 1;
    if (parser.isSet(liveOpt)) {
        if (!files.isEmpty()) {
            std::fprintf(stderr, "upshot: --live takes no FILE\n");
            return 2;
        }
        if (!parseSeconds(parser.value(stuckOpt), 1e6, &stuckSeconds) || stuckSeconds <= 0) {
            std::fprintf(stderr, "upshot: bad --stuck %s\n", qPrintable(parser.value(stuckOpt)));
            return 2;
        }
    }
    if (parser.isSet(liveOpt) && parser.isSet(exportOpt)) {
        QSize size;
        double after = 0;
        if (!parseSize(parser.value(sizeOpt), &size)) {
            std::fprintf(stderr, "upshot: bad --size %s\n", qPrintable(parser.value(sizeOpt)));
            return 2;
        }
        if (!parseSeconds(parser.value(afterOpt), 86400, &after)) {
            std::fprintf(stderr, "upshot: bad --after %s\n", qPrintable(parser.value(afterOpt)));
            return 2;
        }
        return runLiveExport(parser.value(liveOpt), parser.value(exportOpt), after, stuckSeconds, size);
    }
    if (parser.isSet(compareOpt) && parser.isSet(exportOpt)) {
        QSize size;
        if (files.size() != 1 || !parseSize(parser.value(sizeOpt), &size)) {
            std::fprintf(stderr, "upshot: --export --compare B needs one FILE (A) and a good --size\n");
            return 2;
        }
        const auto wrote = upshot::exportCompare(files[0], parser.value(compareOpt), parser.value(exportOpt), size);
        if (!wrote.ok()) {
            std::fprintf(stderr, "upshot: cannot compare: %s\n", wrote.status().to_string().c_str());
            return 1;
        }
        std::printf("upshot: %s\n", qPrintable(wrote.value()));
        return 0;
    }
    if (parser.isSet(exportOpt) || parser.isSet(benchOpt)) {
        if (files.size() != 1) {
            std::fprintf(stderr, "upshot: --export and --bench need exactly one FILE\n");
            return 2;
        }
        QSize size;
        if (!parseSize(parser.value(sizeOpt), &size)) {
            std::fprintf(stderr, "upshot: bad --size %s\n", qPrintable(parser.value(sizeOpt)));
            return 2;
        }
        double t0 = 0, t1 = 0;
        const bool wholeRun = parser.value(rangeOpt) == QLatin1String("all");
        if (parser.isSet(rangeOpt) && !wholeRun) {
            const QStringList r = parser.value(rangeOpt).split(':');
            if (r.size() != 2 || !parseTime(r[0], &t0) || !parseTime(r[1], &t1) || t1 <= t0) {
                std::fprintf(
                    stderr, "upshot: bad --range %s (want T0:T1, T1 > T0)\n", qPrintable(parser.value(rangeOpt)));
                return 2;
            }
        }
        if (parser.isSet(benchOpt)) return runBench(files[0], size);
        upshot::OpeningOptions opening;
        QString error;
        if (!upshot::parseGroupSpec(parser.value(groupOpt), &opening.group, &error)) {
            std::fprintf(stderr, "upshot: %s\n", qPrintable(error));
            return 2;
        }
        if (!upshot::parseDrawMode(parser.value(drawOpt), &opening.drawMode)) {
            std::fprintf(
                stderr, "upshot: bad --draw %s (want dominant, max or mpi-share)\n", qPrintable(parser.value(drawOpt)));
            return 2;
        }
        if (parser.isSet(summaryOpt)) {
            const QString v = parser.value(summaryOpt);
            if (v != QLatin1String("on") && v != QLatin1String("off")) {
                std::fprintf(stderr, "upshot: bad --summary %s (want on or off)\n", qPrintable(v));
                return 2;
            }
            opening.summary = v == QLatin1String("on");
        }
        upshot::MatrixValue matrixValue = upshot::MatrixValue::Bytes;
        if (const QString v = parser.value(matrixValueOpt); v == QLatin1String("messages"))
            matrixValue = upshot::MatrixValue::Messages;
        else if (v == QLatin1String("wait"))
            matrixValue = upshot::MatrixValue::WaitTime;
        else if (v != QLatin1String("bytes")) {
            std::fprintf(stderr, "upshot: bad --matrix-value %s (want bytes, messages or wait)\n", qPrintable(v));
            return 2;
        }
        if ((parser.isSet(waitsOpt) || parser.isSet(umqOpt)) && parser.isSet(previewOpt)) {
            std::fprintf(stderr, "upshot: --waits and --umq need the decoded log, not --preview\n");
            return 2;
        }
        QElapsedTimer timer;
        timer.start();
        // With --waits the file stays open for the analysis after the model is built.
        std::shared_ptr<mpe::interop::OpenedLog> opened;
        mpe::StatusOr<std::shared_ptr<upshot::TraceModel>> loaded = mpe::Status();
        mpe::StatusOr<std::shared_ptr<const upshot::WaitStates>> waits = mpe::Status();
        mpe::StatusOr<std::shared_ptr<upshot::CounterTracks>> counters = mpe::Status();
        if (parser.isSet(previewOpt)) {
            loaded = loadPreview(files[0]);
        } else if (parser.isSet(waitsOpt) || parser.isSet(umqOpt)) {
            // One decode: the wait states and the rebuilt queue come from the model's pass.
            auto o = mpe::interop::OpenedLog::open(files[0].toStdString());
            if (o.ok()) opened = *o;
            upshot::OpenSteps steps;
            steps.waits = parser.isSet(waitsOpt);
            steps.rebuiltQueue = parser.isSet(umqOpt);
            steps.waitsReady = [&](const mpe::StatusOr<std::shared_ptr<const upshot::WaitStates>> &w) { waits = w; };
            steps.countersReady = [&](const mpe::StatusOr<std::shared_ptr<upshot::CounterTracks>> &c) { counters = c; };
            loaded = o.ok() ? upshot::openTrace(opened->file(), steps) : decltype(loaded)(o.status());
        } else {
            loaded = upshot::loadModel(files[0]);
        }
        if (!loaded.ok()) {
            std::fprintf(
                stderr, "upshot: cannot open %s: %s\n", qPrintable(files[0]), loaded.status().to_string().c_str());
            return 1;
        }
        const std::shared_ptr<upshot::TraceModel> model = *loaded;
        QString waitsNote;
        if (opened && parser.isSet(umqOpt)) {
            if (counters.ok())
                model->setCounters(*counters);
            else
                std::fprintf(stderr, "upshot: rebuilt queue not drawn: %s\n", counters.status().to_string().c_str());
        }
        if (opened && parser.isSet(waitsOpt)) {
            // A failed analysis leaves the picture without the overlay, and says why.
            if (waits.ok()) {
                model->setWaits(*waits);
                waitsNote = QStringLiteral(", %1 wait states").arg((*waits)->instanceCount());
            } else {
                std::fprintf(stderr, "upshot: wait states not drawn: %s\n", waits.status().to_string().c_str());
            }
            opened.reset();
        }
        const double loadMs = timer.nsecsElapsed() / 1e6;
        upshot::RenderStats stats;
        const QString out = parser.value(exportOpt);
        // An explicit window keeps the plain layout (rows only); the first picture has the legend.
        opening.legend = !parser.isSet(rangeOpt) || wholeRun;
        if (wholeRun)
            opening.range = std::make_pair(model->tBegin(), model->tEnd());
        else if (t1 > t0)
            opening.range = std::make_pair(t0, t1);
        QString groupMessage;
        const upshot::ViewState view = upshot::openingView(*model, size, opening, &groupMessage);
        if (!groupMessage.isEmpty()) std::fprintf(stderr, "upshot: %s\n", qPrintable(groupMessage));
        if (parser.isSet(matrixOpt)) {
            const QString path = parser.value(matrixOpt);
            const upshot::CommMatrix m
                = upshot::buildCommMatrix(*model, view.scale.t0(), view.scale.t1(), matrixValue, view.groups.get());
            if (!m.note.isEmpty()) std::fprintf(stderr, "upshot: matrix: %s\n", qPrintable(m.note));
            bool written = false;
            if (path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive)) {
                QFile f(path);
                written = f.open(QIODevice::WriteOnly) && f.write(upshot::commMatrixCsv(m).toUtf8()) >= 0;
            } else {
                written = upshot::commMatrixImage(m, QSize(1024, 1024)).save(path);
            }
            if (!written) {
                std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(path));
                return 1;
            }
        }
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
            waitsNote += QStringLiteral(", %1 groups (%2)").arg(view.groups->groupCount()).arg(parser.value(groupOpt));
        std::printf("upshot: wrote %s (%dx%d): %zu boxes, %zu folds, %zu arrows, %zu events%s; load %.0f ms, total "
                    "%.0f ms\n",
            qPrintable(out), size.width(), size.height(), stats.boxes, stats.folds, stats.arrows, stats.events,
            qPrintable(waitsNote), loadMs, timer.nsecsElapsed() / 1e6);
        return 0;
    }

    upshot::MainWindow window;
    if (parser.isSet(grabOpt)) {
        const QStringList wh = parser.value(sizeOpt).split('x');
        window.resize(wh.value(0).toInt(), wh.value(1).toInt());
        QObject::connect(&window, &upshot::MainWindow::fileLoaded, &app, [&] {
            QTimer::singleShot(
                200, &app, [&] { QApplication::exit(window.grab().save(parser.value(grabOpt)) ? 0 : 1); });
        });
        QObject::connect(&window, &upshot::MainWindow::loadFailed, &app, [&] { QApplication::exit(1); });
    }
    window.show();
    if (parser.isSet(liveOpt)) {
        window.liveView()->setStuckSeconds(stuckSeconds);
        window.attachLive(parser.value(liveOpt));
    } else if (!files.isEmpty()) {
        window.openFile(files.first());
        if (parser.isSet(compareOpt))
            QObject::connect(
                &window, &upshot::MainWindow::fileLoaded, &window,
                [&window, b = parser.value(compareOpt)] { window.compareWith(b); }, Qt::SingleShotConnection);
    }
    return app.exec();
}
