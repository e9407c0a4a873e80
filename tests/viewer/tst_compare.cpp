// The compare view (docs/compare.md): the aligned-time map puts iteration k of A over iteration k
// of B, the difference band is slower (red) where a delay was injected and faster (blue) where
// time was taken out, by the injected amount, a table row moves both timelines to its call site's
// longest instance (each run's at its own line when the site moved), the export writes both
// timelines, and bad input falls back with a message.
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "compareload.h"
#include "comparemap.h"
#include "comparepaint.h"
#include "compareview.h"
#include "mainwindow.h"
#include "mpe/interop.h"
#include "testlog.h"
#include "timelinewidget.h"

using namespace upshot;
using namespace mpe::format;

namespace {

// A loop of kIterations iterations on kRanks ranks: each rank computes (the user state "compute",
// kCompute ns unless changed), then enters MPI_Barrier at loop.c:42 (main), which every rank
// leaves kBarrierTail ns after the last one entered; the next iteration starts kGap ns later.
constexpr int kRanks = 4, kIterations = 6;
constexpr int64_t kCompute = 4000, kBarrierTail = 1000, kGap = 200;
constexpr uint16_t kBarrier = 2; // testlog::defs()'s category
constexpr uint32_t kSite = 1;

// What each rank computes in each iteration: [k][r] ns.
using Schedule = std::vector<std::vector<int64_t>>;

Schedule baseSchedule()
{
    return Schedule(kIterations, std::vector<int64_t>(kRanks, kCompute));
}

// The changes B makes to A's schedule: rank 2 computes 3000 ns more in iteration 2 and 4000 more
// in iteration 3 (the injected delay); rank 1 computes 2000 less in iteration 4; rank 0 100 less
// in iteration 3, so that its barrier there is B's longest. In A, rank 3 computes 500 less in
// iteration 1: its barrier there is A's longest.
constexpr int kDelayRank = 2, kFastRank = 1;
Schedule scheduleA()
{
    Schedule s = baseSchedule();
    s[1][3] -= 500;
    return s;
}
Schedule scheduleB()
{
    Schedule s = scheduleA();
    s[1][3] += 500;
    s[2][kDelayRank] += 3000;
    s[3][kDelayRank] += 4000;
    s[4][kFastRank] -= 2000;
    s[3][0] -= 100;
    return s;
}

// Where iteration k starts (every rank starts it together) under schedule s.
int64_t iterationStart(const Schedule &s, int k)
{
    int64_t t = 0;
    for (int i = 0; i < k; ++i)
        t += *std::max_element(s[i].begin(), s[i].end()) + kBarrierTail + kGap;
    return t;
}

// The barrier of rank r in iteration k: [start, end).
std::pair<int64_t, int64_t> barrierOf(const Schedule &s, int k, int r)
{
    const int64_t t = iterationStart(s, k);
    return { t + s[k][r], t + *std::max_element(s[k].begin(), s[k].end()) + kBarrierTail };
}

std::vector<std::vector<Record>> loopRecords(const Schedule &s)
{
    std::vector<std::vector<Record>> ranks(kRanks);
    const uint16_t U = kUserCategoryBase;
    for (int k = 0; k < kIterations; ++k)
        for (int r = 0; r < kRanks; ++r) {
            const int64_t t = iterationStart(s, k);
            const auto [b0, b1] = barrierOf(s, k, r);
            auto &R = ranks[static_cast<size_t>(r)];
            R.push_back(testlog::rec(RecordKind::kUserEvent, static_cast<uint64_t>(t), U));
            R.push_back(testlog::rec(RecordKind::kUserEvent, static_cast<uint64_t>(t + s[k][r]), U + 1));
            R.push_back(testlog::rec(
                RecordKind::kState, static_cast<uint64_t>(b0), kBarrier, 0, kSite, 0, static_cast<uint64_t>(b1 - b0)));
            R.push_back(testlog::rec(RecordKind::kCollective, static_cast<uint64_t>(b0), kBarrier, -1, 0, 0, 0));
        }
    return ranks;
}

// The loop's definitions: its barrier called from loop.c:<line> (main).
Definitions loopDefs(int line = 42)
{
    Definitions d = testlog::defs(kRanks);
    d.program = "loop";
    for (auto &m : d.ranks)
        m.callsites = { CallSiteDef { kSite, { mpe::Frame { "main", "/src/loop.c", line, "/bin/loop", 0x1234 } } } };
    return d;
}

// Whether c is a shade of the hue h (its strongest channel is h's strongest) and not white.
bool isShadeOf(QColor c, QColor h)
{
    if (c.red() > 245 && c.green() > 245 && c.blue() > 245) return false;
    const bool redH = h.red() > h.blue();
    return redH ? c.red() > c.blue() + 40 : c.blue() > c.red() + 40;
}

} // namespace

class TestCompare : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_a, m_b, m_plain, m_plainShifted, m_bad;
    std::shared_ptr<CompareData> m_data;

private slots:
    void initTestCase()
    {
        m_a = m_dir.filePath("a.mpelog");
        m_b = m_dir.filePath("b.mpelog");
        QVERIFY(testlog::writeLog(m_a.toStdString(), loopRecords(scheduleA()), loopDefs()));
        QVERIFY(testlog::writeLog(m_b.toStdString(), loopRecords(scheduleB()), loopDefs()));
        // No repeating phase: one compute and one message per run (testlog's known run).
        m_plain = m_dir.filePath("plain.mpelog");
        m_plainShifted = m_dir.filePath("plain2.mpelog");
        QVERIFY(testlog::writeKnownLog(m_plain.toStdString()));
        QVERIFY(testlog::writeKnownLog(m_plainShifted.toStdString()));
        // A damaged B: a logfile cut in the middle.
        m_bad = m_dir.filePath("bad.mpelog");
        QFile in(m_b);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray bytes = in.readAll();
        QFile out(m_bad);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(bytes.left(bytes.size() / 2));
        out.close();
        auto loaded = loadCompare(m_a, nullptr, m_b);
        QVERIFY2(loaded.ok(), loaded.status().to_string().c_str());
        m_data = *loaded;
    }

    void mapPutsKnotsOnKnotsAndIsLinearBetween()
    {
        const AlignedTime m = AlignedTime::throughKnots({ 100, 200, 400 }, { 1000, 1300, 1400 });
        QCOMPARE(m.knotCount(), 3);
        QCOMPARE(m.toB(100), 1000.0);
        QCOMPARE(m.toB(200), 1300.0);
        QCOMPARE(m.toB(400), 1400.0);
        QCOMPARE(m.toB(150), 1150.0); // halfway through the first piece
        QCOMPARE(m.toB(300), 1350.0);
        QCOMPARE(m.toB(40), 940.0); // before the first knot: its offset
        QCOMPARE(m.toB(500), 1500.0); // after the last: its offset
        for (double t : { 0.0, 123.0, 250.0, 399.0, 900.0 })
            QVERIFY(std::fabs(m.toA(m.toB(t)) - t) < 1e-9);
        // A knot pair out of order in either run is dropped, so the map stays invertible.
        const AlignedTime d = AlignedTime::throughKnots({ 100, 90, 200, 300 }, { 10, 20, 5, 40 });
        QCOMPARE(d.knotCount(), 2);
        QCOMPARE(d.knotsA(), (std::vector<double> { 100, 300 }));
        // Pieces of a window are cut at the knots inside it.
        const auto pieces = m.pieces(150, 450);
        QCOMPARE(pieces.size(), size_t { 3 });
        QCOMPARE(pieces[0].a1, 200.0);
        QCOMPARE(pieces[1].b0, 1300.0);
        QCOMPARE(pieces[2].b1, 1450.0);
    }

    void iterationKOfAMapsOntoIterationKOfB()
    {
        const Schedule a = scheduleA(), b = scheduleB();
        const AlignedTime &map = m_data->scene.map;
        QVERIFY2(m_data->scene.note.contains("6 iterations aligned"), qPrintable(m_data->scene.note));
        QCOMPARE(map.knotCount(), kIterations + 1);
        for (int k = 0; k < kIterations; ++k) {
            QCOMPARE(map.knotsA()[static_cast<size_t>(k)], static_cast<double>(iterationStart(a, k)));
            // Exactly: a boundary of A lands on the same boundary of B.
            QCOMPARE(map.toB(static_cast<double>(iterationStart(a, k))), static_cast<double>(iterationStart(b, k)));
            QCOMPARE(map.toA(static_cast<double>(iterationStart(b, k))), static_cast<double>(iterationStart(a, k)));
        }
        // The last knot: the end of the last iteration (its longest compute).
        const double lastA = static_cast<double>(iterationStart(a, kIterations - 1) + kCompute);
        QCOMPARE(map.toB(lastA), static_cast<double>(iterationStart(b, kIterations - 1) + kCompute));
    }

    void bandIsSlowerWhereTheDelayWasInjectedByItsAmount()
    {
        const DiffBand &band = m_data->scene.band;
        QCOMPARE(band.ranks, kRanks);
        QCOMPARE(band.iterations, kIterations);
        const Schedule a = scheduleA(), b = scheduleB();
        for (int k = 0; k < kIterations; ++k)
            for (int r = 0; r < kRanks; ++r) {
                // An iteration is a "compute" instance: its change is the compute's.
                const double want = static_cast<double>(b[k][r] - a[k][r]) / static_cast<double>(a[k][r]);
                QVERIFY2(std::fabs(band.cell(r, k).relative() - want) < 1e-9,
                    qPrintable(QStringLiteral("rank %1 iteration %2: %3, want %4")
                                   .arg(r)
                                   .arg(k)
                                   .arg(band.cell(r, k).relative())
                                   .arg(want)));
            }
        QVERIFY(band.cell(kDelayRank, 3).relative() > 0.99); // +4000 over 4000
        QVERIFY(band.cell(kFastRank, 4).relative() < -0.49); // -2000 over 4000
        // Painted: the delayed rank's cells in the slower hue, the faster one's in the other,
        // unchanged cells white.
        const double sat = bandSaturation(band);
        QCOMPARE(sat, 1.0);
        QCOMPARE(bandColor(band.cell(kDelayRank, 3).relative(), sat), slowerColor());
        ViewState view
            = fittedView(*m_data->scene.a, m_data->scene.a->tBegin(), m_data->scene.a->tEnd(), QSize(1000, 300));
        QImage img(1000, 120, QImage::Format_RGB32);
        img.fill(Qt::black);
        {
            QPainter p(&img);
            paintBand(p, QRect(0, 0, 1000, 120), band, view, sat);
        }
        auto pixel = [&](int r, int k) {
            const DiffBand::Cell &c = band.cell(r, k);
            const int x = static_cast<int>(view.xOf((c.a0 + c.a1) / 2));
            const int y = (2 * r + 1) * 120 / (2 * kRanks);
            return img.pixelColor(x, y);
        };
        QVERIFY2(isShadeOf(pixel(kDelayRank, 2), slowerColor()), qPrintable(pixel(kDelayRank, 2).name()));
        QCOMPARE(pixel(kDelayRank, 3), slowerColor());
        QVERIFY2(isShadeOf(pixel(kFastRank, 4), fasterColor()), qPrintable(pixel(kFastRank, 4).name()));
        QCOMPARE(pixel(3, 2), QColor(Qt::white));
    }

    void tableRanksTheWaitedSiteAndARowShowsItsWorstInstances()
    {
        // The barrier site grew most: the others wait for rank 2 in iterations 2 and 3.
        int siteRow = -1;
        for (size_t i = 0; i < m_data->rows.size() && siteRow < 0; ++i)
            if (m_data->rows[i].isSite) siteRow = static_cast<int>(i);
        QVERIFY(siteRow >= 0);
        const CompareRow &row = m_data->rows[static_cast<size_t>(siteRow)];
        QCOMPARE(QString::fromStdString(row.diff.routine), QStringLiteral("MPI_Barrier"));
        QCOMPARE(QString::fromStdString(row.diff.name), QStringLiteral("loop.c:42 (main)"));
        const Schedule a = scheduleA(), b = scheduleB();
        auto barrierTotal = [](const Schedule &s) {
            int64_t sum = 0;
            for (int k = 0; k < kIterations; ++k)
                for (int r = 0; r < kRanks; ++r)
                    sum += barrierOf(s, k, r).second - barrierOf(s, k, r).first;
            return static_cast<double>(sum);
        };
        QCOMPARE(row.diff.ns_a, barrierTotal(a));
        QCOMPARE(row.diff.ns_b, barrierTotal(b));

        CompareWindow win;
        win.setData(m_data);
        win.resize(1200, 900);
        win.show();
        QVERIFY(QTest::qWaitForWindowExposed(&win));
        QTableView *table = win.table();
        const QModelIndex index = win.tableModel()->index(siteRow, CompareTableModel::Site);
        table->scrollTo(index);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(index).center());
        // A's longest barrier: rank 3 in iteration 1; B's: rank 0 in iteration 3.
        TimelineWidget *A = win.view()->timelineA();
        WarpedTimeline *B = win.view()->timelineB();
        const StateRef sa = A->view().selected, sb = B->selected();
        QVERIFY(sa.valid() && sb.valid());
        QCOMPARE(sa.row, 3);
        QCOMPARE(m_data->scene.a->startNs(sa.row, sa.index), barrierOf(a, 1, 3).first);
        QCOMPARE(m_data->scene.a->durationNs(sa.row, sa.index), barrierOf(a, 1, 3).second - barrierOf(a, 1, 3).first);
        QCOMPARE(sb.row, 0);
        QCOMPARE(m_data->scene.b->startNs(sb.row, sb.index), barrierOf(b, 3, 0).first);
        // Both views show their instance: A's window in A's time, B's through the map.
        const double t0 = A->view().scale.t0(), t1 = A->view().scale.t1();
        QVERIFY(t0 <= m_data->scene.a->start(sa.row, sa.index) && m_data->scene.a->end(sa.row, sa.index) <= t1);
        const auto [b0, b1] = B->windowB();
        QVERIFY2(b0 <= m_data->scene.b->start(sb.row, sb.index) && m_data->scene.b->end(sb.row, sb.index) <= b1,
            qPrintable(QStringLiteral("B window %1..%2").arg(b0).arg(b1)));
        QCOMPARE(B->view().scale.t0(), t0); // coupled on aligned time
        // Zooming B zooms A (and B with it).
        const double span = A->view().scale.visibleSpan();
        emit B->zoomRequested(2.0, 400);
        QVERIFY(std::fabs(A->view().scale.visibleSpan() - span / 2) < span * 1e-9);
        QCOMPARE(B->view().scale.nsPerPixel(), A->view().scale.nsPerPixel());
    }

    void aMovedSiteShowsEachRunsInstanceAtItsOwnLine()
    {
        // B rebuilt with 3 lines added above the barrier: loop.c:45. Its row pairs it with A's
        // loop.c:42 and says where the site is in each run, so each run's longest barrier is found
        // at that run's line, and not at the other's.
        const QString moved = m_dir.filePath("moved.mpelog");
        QVERIFY(testlog::writeLog(moved.toStdString(), loopRecords(scheduleB()), loopDefs(45)));
        auto loaded = loadCompare(m_a, nullptr, moved);
        QVERIFY2(loaded.ok(), loaded.status().to_string().c_str());
        const CompareScene &s = (*loaded)->scene;
        const CompareRow *site = nullptr;
        for (const CompareRow &r : (*loaded)->rows)
            if (r.isSite) site = &r;
        QVERIFY(site);
        QCOMPARE(QString::fromStdString(site->diff.note), QStringLiteral("moved from L42 to L45"));
        QCOMPARE(site->diff.site_a.line, 42);
        QCOMPARE(site->diff.site_b.line, 45);
        const Schedule a = scheduleA(), b = scheduleB();
        const StateRef sa = worstInstanceOf(*s.a, *site, true), sb = worstInstanceOf(*s.b, *site, false);
        QVERIFY(sa.valid() && sb.valid());
        QCOMPARE(sa.row, 3);
        QCOMPARE(s.a->startNs(sa.row, sa.index), barrierOf(a, 1, 3).first);
        QCOMPARE(sb.row, 0);
        QCOMPARE(s.b->startNs(sb.row, sb.index), barrierOf(b, 3, 0).first);
        QVERIFY(!worstInstance(*s.a, QStringLiteral("MPI_Barrier"), site->diff.site_b).valid());
        QVERIFY(!worstInstance(*s.b, QStringLiteral("MPI_Barrier"), site->diff.site_a).valid());
    }

    void exportWritesBothTimelinesAndTheBand()
    {
        const QString png = m_dir.filePath("cmp.png");
        QProcess p;
        p.start(UPSHOT_EXE, { "--export", png, "--size", "1000x700", "--compare", m_b, m_a });
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QImage img(png);
        QVERIFY(!img.isNull());
        QCOMPARE(img.size(), QSize(1000, 700));
        // Layout (compareParts): caption, A, band, legend, caption, B.
        const int timelineH = (700 - 2 * kCompareCaption - bandHeight(kRanks) - 22) / 2;
        const QRect top(96, kCompareCaption + 30, 1000 - 96, timelineH - 30);
        const QRect bottom(96, 700 - timelineH + 30, 1000 - 96, timelineH - 30);
        const QRect band(96, kCompareCaption + timelineH, 1000 - 96, bandHeight(kRanks));
        auto count = [&](const QRect &r, auto pred) {
            int n = 0;
            for (int y = r.top(); y <= r.bottom(); ++y)
                for (int x = r.left(); x <= r.right(); ++x)
                    n += pred(img.pixelColor(x, y));
            return n;
        };
        const QColor compute(0xFF0000), barrier(0xFFD700);
        auto is = [](QColor c) { return [c](QColor p) { return p == c; }; };
        // Both timelines show the compute and barrier states.
        QVERIFY(count(top, is(compute)) > 1000 && count(top, is(barrier)) > 100);
        QVERIFY(count(bottom, is(compute)) > 1000 && count(bottom, is(barrier)) > 100);
        // B's rows differ from A's (rank 2 computes longer, rank 1 shorter): pixel rows differ.
        int differing = 0;
        for (int dy = 0; dy < top.height(); ++dy)
            for (int x = top.left(); x <= top.right(); x += 2)
                differing += img.pixel(x, top.top() + dy) != img.pixel(x, bottom.top() + dy);
        QVERIFY2(differing > 200, qPrintable(QString::number(differing)));
        // The band has both hues.
        QVERIFY(count(band, [](QColor c) { return isShadeOf(c, slowerColor()); }) > 100);
        QVERIFY(count(band, [](QColor c) { return isShadeOf(c, fasterColor()); }) > 50);

        const QString svg = m_dir.filePath("cmp.svg");
        QProcess s;
        s.start(UPSHOT_EXE, { "--export", svg, "--compare", m_b, m_a });
        QVERIFY(s.waitForFinished(60000));
        QVERIFY2(s.exitCode() == 0, s.readAllStandardError().constData());
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.startsWith("<?xml"));
        QVERIFY(text.trimmed().endsWith("</svg>"));
        QCOMPARE(text.count("<g transform=\"translate("), 6); // the parts
        QVERIFY(text.contains("#ff0000")); // compute, in both timelines
        QVERIFY(text.contains(slowerColor().name().toLatin1()));
        QVERIFY(!text.contains("id=\"c1\"")); // clip ids made unique per part
    }

    void badBGetsTheReadersMessageAndAStaysOpen()
    {
        auto direct = mpe::interop::OpenedLog::open(m_bad.toStdString());
        QString readerMessage;
        if (!direct.ok()) {
            readerMessage = QString::fromStdString(direct.status().message());
        } else {
            const auto built = loadModel(m_bad);
            QVERIFY(!built.ok());
            readerMessage = QString::fromStdString(built.status().message());
        }
        QVERIFY(!readerMessage.isEmpty());
        MainWindow win;
        win.show();
        QSignalSpy loaded(&win, &MainWindow::fileLoaded);
        win.openFile(m_a);
        QVERIFY(loaded.wait(10000) || !loaded.isEmpty());
        const auto shown = win.model();
        QSignalSpy failed(&win, &MainWindow::compareFailed);
        win.compareWith(m_bad);
        QVERIFY(failed.wait(10000) || !failed.isEmpty());
        QVERIFY2(failed.first().at(1).toString().contains(readerMessage), qPrintable(failed.first().at(1).toString()));
        QVERIFY(win.model() == shown); // A stays open
        QVERIFY(win.findChild<QObject *>("compareError"));
        QTest::qWait(50);
        QVERIFY(!win.compareWindow());
        // A good B opens the compare window.
        QSignalSpy shownB(&win, &MainWindow::compareShown);
        win.compareWith(m_b);
        QVERIFY(shownB.wait(10000) || !shownB.isEmpty());
        QVERIFY(win.compareWindow() && win.compareWindow()->isVisible());
        QCOMPARE(win.compareWindow()->tableModel()->rowCount(), static_cast<int>(m_data->rows.size()));
        // The command line says the reader's message and fails.
        QProcess p;
        p.start(UPSHOT_EXE, { "--export", m_dir.filePath("bad.png"), "--compare", m_bad, m_a });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains(readerMessage) && err.contains("bad.mpelog"), qPrintable(err));
        QVERIFY(!QFile::exists(m_dir.filePath("bad.png")));
    }

    void runsWithoutIterationsAreAlignedAtTheirStarts()
    {
        auto loaded = loadCompare(m_plain, nullptr, m_plainShifted);
        QVERIFY2(loaded.ok(), loaded.status().to_string().c_str());
        const CompareScene &s = (*loaded)->scene;
        QVERIFY2(s.note.contains("No iterations found in either run: the runs are aligned at their starts"),
            qPrintable(s.note));
        QCOMPARE(s.map.knotCount(), 1);
        QCOMPARE(s.map.toB(s.a->tBegin()), s.b->tBegin());
        QCOMPARE(s.map.toB(s.a->tBegin() + 500), s.b->tBegin() + 500);
        QCOMPARE(s.band.iterations, 0);
        // The picture says so too: the export still writes both timelines.
        const QImage img = renderCompare(s, QSize(800, 500));
        QVERIFY(!img.isNull());
        const QString png = m_dir.filePath("plain.png");
        QProcess p;
        p.start(UPSHOT_EXE, { "--export", png, "--compare", m_plainShifted, m_plain });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(QString::fromUtf8(p.readAllStandardOutput()).contains("aligned at their starts"),
            "the summary line says how the runs were aligned");
    }
};

QTEST_MAIN(TestCompare)
#include "tst_compare.moc"
