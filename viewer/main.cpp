// upshot: opens the timeline viewer, or renders a logfile to an image with no display (--export).
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include "mainwindow.h"
#include "renderer.h"
#include "svgexport.h"

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

} // namespace

int main(int argc, char **argv)
{
    bool headless = false;
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--export" || a == "--screenshot" || a == "--bench" || a == "--grab" || a.startsWith("--export="))
            headless = true;
    }
    if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    const double rss0 = rssMiB();
    QElapsedTimer startup;
    startup.start();

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
    QCommandLineOption rangeOpt("range", "Time window for --export, T0:T1 (seconds, or with ns/us/ms/s).", "T0:T1");
    QCommandLineOption sizeOpt("size", "Image size for --export (default 1920x1080).", "WxH", "1920x1080");
    QCommandLineOption benchOpt(
        "bench", "Measure load time, frame times (full view and a 1 ms window) and memory, then exit.");
    QCommandLineOption grabOpt(
        "grab", "Open FILE in the whole window (offscreen), save a picture of it and exit.", "out.png");
    parser.addOptions({ exportOpt, rangeOpt, sizeOpt, benchOpt, grabOpt });
    parser.addPositionalArgument("FILE", "The logfile to open.");
    parser.process(app);
    const QStringList files = parser.positionalArguments();

    if (parser.isSet(exportOpt) || parser.isSet(benchOpt)) {
        if (files.size() != 1) {
            std::fprintf(stderr, "upshot: --export and --bench need exactly one FILE\n");
            return 2;
        }
        const QStringList wh = parser.value(sizeOpt).split('x');
        const QSize size(wh.value(0).toInt(), wh.value(1).toInt());
        if (size.width() < 64 || size.height() < 32 || size.width() > 16384 || size.height() > 16384) {
            std::fprintf(stderr, "upshot: bad --size %s\n", qPrintable(parser.value(sizeOpt)));
            return 2;
        }
        double t0 = 0, t1 = 0;
        if (parser.isSet(rangeOpt)) {
            const QStringList r = parser.value(rangeOpt).split(':');
            if (r.size() != 2 || !parseTime(r[0], &t0) || !parseTime(r[1], &t1) || t1 <= t0) {
                std::fprintf(
                    stderr, "upshot: bad --range %s (want T0:T1, T1 > T0)\n", qPrintable(parser.value(rangeOpt)));
                return 2;
            }
        }
        QString error;
        QElapsedTimer timer;
        timer.start();
        auto model = upshot::loadModel(files[0], &error);
        if (!model) {
            std::fprintf(stderr, "upshot: cannot open %s: %s\n", qPrintable(files[0]), qPrintable(error));
            return 1;
        }
        const double loadMs = timer.nsecsElapsed() / 1e6;
        if (parser.isSet(benchOpt)) {
            upshot::renderImage(*model, t0, t1, size); // first frame
            const double firstFrameMs = startup.nsecsElapsed() / 1e6;
            auto median = [&](double a, double b, double *cpuMedian) {
                std::vector<double> ms, cpu;
                QImage img(size, QImage::Format_RGB32);
                const upshot::ViewState v = upshot::fittedView(*model, a, b, size);
                for (int i = 0; i < 9; ++i) {
                    QElapsedTimer t;
                    t.start();
                    const double c0 = threadCpuMs();
                    QPainter p(&img);
                    upshot::paintTimeline(p, *model, v);
                    p.end();
                    ms.push_back(t.nsecsElapsed() / 1e6);
                    cpu.push_back(threadCpuMs() - c0);
                }
                std::sort(ms.begin(), ms.end());
                std::sort(cpu.begin(), cpu.end());
                *cpuMedian = cpu[cpu.size() / 2];
                return ms[ms.size() / 2];
            };
            double fullCpu = 0, windowCpu = 0;
            const double full = median(model->tBegin(), model->tEnd(), &fullCpu);
            const double mid = (model->tBegin() + model->tEnd()) / 2;
            const double window = median(mid, mid + 1e6, &windowCpu);
            const double rss = rssMiB();
            std::printf(
                "file %s\nrecords %llu\nrows %d\nload_ms %.1f\nstart_to_first_frame_ms %.1f\n"
                "frame_full_ms %.2f\nframe_1ms_window_ms %.2f\nframe_full_cpu_ms %.2f\nframe_1ms_window_cpu_ms %.2f\n"
                "model_bytes_per_record %.1f\n"
                "rss_mib %.1f\nrss_delta_bytes_per_record %.1f\n",
                qPrintable(files[0]), static_cast<unsigned long long>(model->recordCount()), model->rowCount(), loadMs,
                firstFrameMs, full, window, fullCpu, windowCpu,
                static_cast<double>(model->memoryBytes()) / std::max<uint64_t>(1, model->recordCount()), rss,
                (rss - rss0) * 1024 * 1024 / std::max<uint64_t>(1, model->recordCount()));
            return 0;
        }
        upshot::RenderStats stats;
        const QString out = parser.value(exportOpt);
        if (out.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
            if (!upshot::exportSvg(*model, upshot::fittedView(*model, t0, t1, size), out)) {
                std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(out));
                return 1;
            }
            std::printf("upshot: wrote %s (%dx%d)\n", qPrintable(out), size.width(), size.height());
            return 0;
        }
        const QImage img = upshot::renderImage(*model, t0, t1, size, &stats);
        if (!img.save(out)) {
            std::fprintf(stderr, "upshot: cannot write %s\n", qPrintable(out));
            return 1;
        }
        std::printf(
            "upshot: wrote %s (%dx%d): %zu boxes, %zu folds, %zu arrows, %zu events; load %.0f ms, total %.0f ms\n",
            qPrintable(out), size.width(), size.height(), stats.boxes, stats.folds, stats.arrows, stats.events, loadMs,
            timer.nsecsElapsed() / 1e6);
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
    if (!files.isEmpty()) window.openFile(files.first());
    return app.exec();
}
