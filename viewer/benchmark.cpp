// upshot --bench: the first frame, the load, frames of several views with and without the
// wait-state overlay, and memory, of one log (benchmark.h).
#include "benchmark.h"

#include <QElapsedTimer>
#include <QImage>
#include <QPainter>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <tuple>
#include <vector>

#include "mpe/interop.h"
#include "outofcore.h"
#include "renderer.h"
#include "tracebuilder.h"
#include "waitstates.h"

namespace upshot {

namespace {

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

// Median frame times (wall and thread CPU, ms) of the views the window shows most.
struct FrameTimes
{
    double full = 0, fullCpu = 0; // the whole run
    double window = 0, windowCpu = 0; // a 1 ms window at the middle of the run
    double rows8 = 0, rows8Cpu = 0; // the whole run in rows 8 px high, scrolled to the middle rows
};

FrameTimes timeViews(const TraceModel &model, QSize size)
{
    FrameTimes f;
    std::tie(f.full, f.fullCpu) = medianFrameMs(model, fittedView(model, model.tBegin(), model.tEnd(), size));
    const double mid = (model.tBegin() + model.tEnd()) / 2;
    std::tie(f.window, f.windowCpu) = medianFrameMs(model, fittedView(model, mid, mid + 1e6, size));
    // What the window shows of a log with many ranks: the whole run, rows 8 px high (the
    // window's minimum when fitting), scrolled to the middle rows.
    ViewState scrolled = fittedView(model, model.tBegin(), model.tEnd(), size);
    scrolled.rowHeight = 8;
    scrolled.yOffset = std::max(0.0, (model.rowCount() * 8.0 - scrolled.plotRect().height()) / 2);
    std::tie(f.rows8, f.rows8Cpu) = medianFrameMs(model, scrolled);
    return f;
}

// The opening picture of many ranks (summary band and rank groups, grouped whatever the row
// height, by node or in blocks) over the whole run, and the same with every row fitted and no
// groups (1 px rows at 1,024 ranks: the thin-row path).
OpeningOptions groupedOpening(const TraceModel &model)
{
    OpeningOptions grouped;
    grouped.minRowPx = 1e9;
    grouped.summary = true;
    grouped.range = std::make_pair(model.tBegin(), model.tEnd());
    return grouped;
}

OpeningOptions flatOpening(const OpeningOptions &grouped)
{
    OpeningOptions flat = grouped;
    flat.group.by = GroupBy::None;
    flat.summary = false;
    return flat;
}

// For profiling (perf record): UPSHOT_PROFILE_FRAMES=N paints the grouped view and the fitted
// rows N times each.
void paintForProfile(const TraceModel &model, QSize size, const ViewState &groupedView, int n)
{
    const ViewState flatView = openingView(model, size, flatOpening(groupedOpening(model)));
    QImage img(size, QImage::Format_RGB32);
    for (int i = 0; i < 2 * n; ++i) {
        QPainter p(&img);
        paintTimeline(p, model, i < n ? groupedView : flatView);
    }
}

// What runBench measured, before the wait-state analysis.
struct BenchFigures
{
    double rssBase = 0, rssOpen = 0; // MiB: Qt up and fonts loaded; and the log's definitions and index
    double previewMs = 0, firstFrameMs = 0, loadMs = 0;
    double peak = 0, rss = 0; // MiB after the load
    FrameTimes frames;
    int groups = 0;
    double groupsFirstMs = 0, fullGrouped = 0, fullGroupedCpu = 0;
    double flatRowHeight = 0, fullFlat = 0, fullFlatCpu = 0;
};

void printFigures(const QString &path, const TraceModel &model, const BenchFigures &b)
{
    const double records = static_cast<double>(std::max<uint64_t>(1, model.recordCount()));
    const double MiB = 1024.0 * 1024.0;
    const FrameTimes &f = b.frames;
    std::printf(
        "file %s\nrecords %llu\nrows %d\nstart_to_first_frame_ms %.1f\npreview_open_and_frame_ms %.1f\n"
        "full_load_ms %.1f\nframe_full_ms %.2f\nframe_1ms_window_ms %.2f\nframe_full_cpu_ms %.2f\n"
        "frame_1ms_window_cpu_ms %.2f\nframe_full_rows8_scrolled_ms %.2f\nframe_full_rows8_scrolled_cpu_ms %.2f\n"
        "model_bytes_per_record %.1f\nrss_base_mib %.1f\nrss_after_open_mib %.1f\nrss_peak_mib %.1f\n"
        "peak_rss_bytes_per_record %.1f\nrss_after_load_bytes_per_record %.1f\n"
        "groups %d\nbins_and_groups_first_frame_ms %.1f\nframe_full_summary_groups_ms %.2f\n"
        "frame_full_summary_groups_cpu_ms %.2f\nrow_height_fitted_px %.2f\nframe_full_rows_fitted_ms %.2f\n"
        "frame_full_rows_fitted_cpu_ms %.2f\n",
        qPrintable(path), static_cast<unsigned long long>(model.recordCount()), model.rowCount(), b.firstFrameMs,
        b.previewMs, b.loadMs, f.full, f.window, f.fullCpu, f.windowCpu, f.rows8, f.rows8Cpu,
        static_cast<double>(model.memoryBytes()) / records, b.rssBase, b.rssOpen, b.peak,
        (b.peak - b.rssBase) * MiB / records, (b.rss - b.rssBase) * MiB / records, b.groups, b.groupsFirstMs,
        b.fullGrouped, b.fullGroupedCpu, b.flatRowHeight, b.fullFlat, b.fullFlatCpu);
}

// The same frames with the wait-state overlay, after the analysis the window runs in the
// background (timed, with the peak memory it reaches).
struct WaitFigures
{
    bool analyzed = false;
    unsigned long long instances = 0;
    double analysisMs = 0, bytesPerInstance = 0, peak = 0;
    FrameTimes frames;
};

// UPSHOT_BENCH_NO_WAITS=1 leaves the analysis (and the *_waits_* figures) out.
WaitFigures benchWaits(const mpe::format::LogFile &file, TraceModel &model, QSize size)
{
    QElapsedTimer timer;
    timer.start();
    auto waits = qEnvironmentVariableIntValue("UPSHOT_BENCH_NO_WAITS") > 0
        ? mpe::StatusOr<std::shared_ptr<const WaitStates>>(mpe::Status(mpe::StatusCode::kInvalidArgument, "skipped"))
        : analyzeWaits(file, model);
    WaitFigures w;
    w.analysisMs = timer.nsecsElapsed() / 1e6;
    if (!waits.ok()) {
        std::fprintf(stderr, "upshot: wait states not analyzed: %s\n", waits.status().to_string().c_str());
        return w;
    }
    model.setWaits(*waits);
    w.frames = timeViews(model, size);
    w.analyzed = true;
    w.instances = static_cast<unsigned long long>((*waits)->instanceCount());
    w.bytesPerInstance = static_cast<double>((*waits)->memoryBytes()) / std::max<double>(1, (*waits)->instanceCount());
    w.peak = peakRssMiB();
    return w;
}

void printWaitFigures(const WaitFigures &w)
{
    const FrameTimes &f = w.frames;
    std::printf("waits_instances %llu\nwaits_analysis_ms %.1f\nwaits_overlay_bytes_per_instance %.1f\n"
                "rss_peak_with_waits_mib %.1f\nframe_full_waits_ms %.2f\nframe_full_waits_cpu_ms %.2f\n"
                "frame_1ms_window_waits_ms %.2f\nframe_1ms_window_waits_cpu_ms %.2f\n"
                "frame_full_rows8_scrolled_waits_ms %.2f\nframe_full_rows8_scrolled_waits_cpu_ms %.2f\n",
        w.instances, w.analysisMs, w.bytesPerInstance, w.peak, f.full, f.fullCpu, f.window, f.windowCpu, f.rows8,
        f.rows8Cpu);
}

} // namespace

// The first frame is the index preview (open the file, read its index, paint the summaries),
// timed from the kernel's start of the process. Then the full model is built on all cores, and
// frames of it are timed at full view and in a 1 ms window at the middle of the run. Memory: peak
// RSS (VmHWM) minus the RSS of the process before it opened the file (Qt up, fonts loaded by
// painting an empty frame), per record. Last, the wait states are analyzed and the same frames
// timed with their overlay (*_waits_*).
int runBench(const QString &path, QSize size)
{
    {
        QImage empty(size, QImage::Format_RGB32);
        QPainter p(&empty);
        p.drawText(10, 20, QStringLiteral("upshot 0123456789 ms"));
    }
    BenchFigures b;
    b.rssBase = rssMiB();
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) {
        std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(path), opened.status().to_string().c_str());
        return 1;
    }
    const mpe::format::LogFile *file = &(*opened)->file();
    b.rssOpen = rssMiB();
    QElapsedTimer timer;
    timer.start();
    {
        auto preview = buildPreview(*file);
        renderImage(*preview, 0, 0, size);
    }
    b.previewMs = timer.nsecsElapsed() / 1e6;
    b.firstFrameMs = processAgeMs();
    timer.restart();
    auto built = buildModel(*file);
    if (!built.ok()) {
        std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(path), built.status().to_string().c_str());
        return 1;
    }
    const std::shared_ptr<TraceModel> model = *built;
    b.loadMs = timer.nsecsElapsed() / 1e6;
    b.peak = peakRssMiB(), b.rss = rssMiB();
    b.frames = timeViews(*model, size);
    // Many ranks, grouped: the first time (groups built, and the bins below 256 rows; above,
    // loading built them) and then.
    timer.restart();
    const OpeningOptions grouped = groupedOpening(*model);
    const ViewState groupedView = openingView(*model, size, grouped);
    {
        QImage img(size, QImage::Format_RGB32);
        QPainter p(&img);
        paintTimeline(p, *model, groupedView);
    }
    b.groupsFirstMs = timer.nsecsElapsed() / 1e6;
    if (const int n = qEnvironmentVariableIntValue("UPSHOT_PROFILE_FRAMES"); n > 0) {
        paintForProfile(*model, size, groupedView, n);
        return 0;
    }
    b.groups = groupedView.groups ? groupedView.groups->groupCount() : 0;
    std::tie(b.fullGrouped, b.fullGroupedCpu) = medianFrameMs(*model, groupedView);
    const ViewState flatView = openingView(*model, size, flatOpening(grouped));
    std::tie(b.fullFlat, b.fullFlatCpu) = medianFrameMs(*model, flatView);
    b.flatRowHeight = flatView.rowHeight;
    const WaitFigures w = benchWaits(*file, *model, size);
    printFigures(path, *model, b);
    if (w.analyzed) printWaitFigures(w);
    return 0;
}

// Out of core: the index (built first when missing, and timed), then the summary opened from it
// and its first frame (the opening picture) timed from the kernel's start of the process; then the
// views of zooms 1, 4, 16 ... 4^9 at the middle of the run (and at 1/10 of it), each drawn from the
// model OutOfCoreLog::modelFor gives it: the read of each window is timed, and every frame's
// median. The largest frame is the one the interactive window must paint within 50 ms.
int runOutOfCoreBench(const QString &path, QSize size)
{
    {
        QImage empty(size, QImage::Format_RGB32);
        QPainter p(&empty);
        p.drawText(10, 20, QStringLiteral("upshot 0123456789 ms"));
    }
    const double rssBase = rssMiB();
    QElapsedTimer timer;
    timer.start();
    double indexMs = 0;
    {
        auto file = mpe::format::LogFile::open(path.toStdString());
        if (file.ok()
            && !mpe::format::ViewIndex::open(*file, mpe::format::ViewIndex::path_for(path.toStdString())).ok()) {
            auto built = mpe::format::ViewIndex::open_or_build(*file, path.toStdString());
            if (!built.ok()) {
                std::fprintf(
                    stderr, "upshot: cannot index %s: %s\n", qPrintable(path), built.status().to_string().c_str());
                return 1;
            }
            indexMs = timer.nsecsElapsed() / 1e6;
        }
    }
    const double indexPeak = peakRssMiB();
    timer.restart();
    auto log = OutOfCoreLog::open(path);
    if (!log.ok()) {
        std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(path), log.status().to_string().c_str());
        return 1;
    }
    const std::shared_ptr<TraceModel> summary = (*log)->summary();
    const ViewState opening = openingView(*summary, size, OpeningOptions {});
    renderImage(*summary, opening.scale.t0(), opening.scale.t1(), size);
    {
        QImage img(size, QImage::Format_RGB32);
        QPainter p(&img);
        paintTimeline(p, *summary, opening);
    }
    const double firstFrameMs = timer.nsecsElapsed() / 1e6;
    const double processMs = processAgeMs();
    double worstFrame = 0, worstRead = 0;
    std::printf("file %s\nrecords %llu\nrows %d\nindex_build_ms %.1f\nindex_build_peak_rss_mib %.1f\n"
                "summary_open_and_first_frame_ms %.1f\nstart_to_first_frame_ms %.1f\nsummary_model_mib %.1f\n",
        qPrintable(path), static_cast<unsigned long long>(summary->recordCount()), summary->rowCount(), indexMs,
        indexPeak, firstFrameMs, processMs, summary->memoryBytes() / 1048576.0);
    const double span = summary->tEnd() - summary->tBegin();
    // UPSHOT_BENCH_IN_MEMORY=1: the same views of the model holding every record, as the baseline.
    std::shared_ptr<TraceModel> whole;
    if (qEnvironmentVariableIntValue("UPSHOT_BENCH_IN_MEMORY") > 0) {
        auto built = buildModel((*log)->file());
        if (built.ok()) whole = *built;
    }
    for (double at : { 0.5, 0.1 }) {
        for (int z = 0; z <= 9; ++z) {
            const double width = span / std::pow(4.0, z);
            const double t0
                = std::clamp(summary->tBegin() + span * at - width / 2, summary->tBegin(), summary->tEnd() - width);
            ViewState v = opening;
            v.scale = TimeScale::fit(t0, t0 + width, v.plotRect().width());
            timer.restart();
            auto model = (*log)->modelFor(t0, t0 + width);
            if (!model.ok()) {
                std::fprintf(
                    stderr, "upshot: cannot read %s: %s\n", qPrintable(path), model.status().to_string().c_str());
                return 1;
            }
            const double readMs = timer.nsecsElapsed() / 1e6;
            const auto [frame, cpu] = medianFrameMs(**model, v);
            worstFrame = std::max(worstFrame, frame);
            if (!(*model)->messagesSampled()) worstRead = std::max(worstRead, readMs);
            std::printf("zoom_4^%d_at_%.1f %s read_ms %.1f frame_ms %.2f frame_cpu_ms %.2f", z, at,
                (*model)->messagesSampled() ? "summary" : "window", readMs, frame, cpu);
            if (whole) std::printf(" in_memory_frame_ms %.2f", medianFrameMs(*whole, v).first);
            std::printf("\n");
        }
    }
    std::printf("frame_max_ms %.2f\nwindow_read_max_ms %.1f\nrss_peak_mib %.1f\nrss_peak_over_base_mib %.1f\n",
        worstFrame, worstRead, peakRssMiB(), peakRssMiB() - rssBase);
    return 0;
}

} // namespace upshot
