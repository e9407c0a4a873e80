// Wait states in upshot, model side: the overlay intervals the model exposes for a log with known
// waits (a Late Sender and a barrier with one late rank), the Wait states dock's totals as the
// window moves, Find over a pattern's instances (from the dock, in the main window), the
// coverage levels and window totals of a dense log against a brute-force sum.
#include <QAction>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <tuple>

#include "countertracks.h"
#include "loader.h"
#include "mainwindow.h"
#include "mpe/interop.h"
#include "panels.h"
#include "testlog.h"
#include "timelinewidget.h"
#include "tracebuilder.h"
#include "waitstates.h"

using namespace upshot;
using mpe::analysis::waits::Pattern;

namespace {

constexpr int kLS = static_cast<int>(Pattern::kLateSender);
constexpr int kBarrier = static_cast<int>(Pattern::kWaitBarrier);

// The model of path with its wait states, as the window's loader builds them.
std::shared_ptr<TraceModel> loadWithWaits(const QString &path)
{
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return nullptr;
    auto model = buildModel((*opened)->file());
    if (!model.ok()) return nullptr;
    auto waits = analyzeWaits((*opened)->file(), **model);
    if (!waits.ok()) {
        qWarning() << waits.status().to_string().c_str();
        return nullptr;
    }
    (*model)->setWaits(*waits);
    return *model;
}

} // namespace

class TestWaits : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    std::shared_ptr<TraceModel> m_model, m_dense;
    static constexpr int kDense = 2000;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath("waits.mpelog");
        QVERIFY(testlog::writeLog(m_path.toStdString(), testlog::waitRecords()));
        m_model = loadWithWaits(m_path);
        QVERIFY(m_model && m_model->waits());
        const QString dense = m_dir.filePath("dense-waits.mpelog");
        QVERIFY(testlog::writeLog(dense.toStdString(), testlog::denseWaitRecords(kDense)));
        m_dense = loadWithWaits(dense);
        QVERIFY(m_dense && m_dense->waits());
    }

    void overlayIntervalsAreTheKnownWaits()
    {
        const TraceModel &m = *m_model;
        const WaitStates &W = *m.waits();
        QCOMPARE(W.rowCount(), 2);
        QCOMPARE(W.instanceCount(), uint64_t(2));
        QCOMPARE(W.unplaced(), uint64_t(0));
        const StateRef recv = m.stateAt(1, 200), send = m.stateAt(0, 175);
        const StateRef barrier0 = m.stateAt(0, 350), barrier1 = m.stateAt(1, 425);
        QVERIFY(recv.valid() && send.valid() && barrier0.valid() && barrier1.valid());
        QCOMPARE(m.categoryInfo(m.category(1, recv.index)).name, QString("MPI_Recv"));

        // Rank 1: Late Sender over the part of its MPI_Recv before rank 0 entered MPI_Send.
        QCOMPARE(W.spans(1).size(), size_t(1));
        const WaitSpan &ls = W.spans(1)[0];
        QCOMPARE(ls.pattern, uint8_t(kLS));
        QCOMPARE(ls.start, int64_t(100));
        QCOMPARE(ls.end, int64_t(150));
        QCOMPARE(size_t(ls.state), recv.index);
        QCOMPARE(ls.depth, uint8_t(0));
        QCOMPARE(ls.culpritRow, 0);
        QCOMPARE(ls.culpritTime, int64_t(150));
        QCOMPARE(size_t(ls.culpritState), send.index);
        QCOMPARE(ls.message, 0u); // the one message, 150 -> 300
        QCOMPARE(m.messages()[0].send_time, int64_t(150));
        QCOMPARE(m.messages()[0].recv_time, int64_t(300));

        // Rank 0: Wait at Barrier from its entry to rank 1's.
        QCOMPARE(W.spans(0).size(), size_t(1));
        const WaitSpan &wb = W.spans(0)[0];
        QCOMPARE(wb.pattern, uint8_t(kBarrier));
        QCOMPARE(wb.start, int64_t(300));
        QCOMPARE(wb.end, int64_t(400));
        QCOMPARE(size_t(wb.state), barrier0.index);
        QCOMPARE(wb.culpritRow, 1);
        QCOMPARE(wb.culpritTime, int64_t(400));
        QCOMPARE(size_t(wb.culpritState), barrier1.index);
        QCOMPARE(wb.message, WaitSpan::kNone);

        // Culling: the spans overlapping a window, by open overlap.
        QCOMPARE(W.visible(1, 120, 130), (std::pair<size_t, size_t>(0, 1)));
        QCOMPARE(W.visible(1, 150, 300), (std::pair<size_t, size_t>(1, 1)));
        QCOMPARE(W.visible(0, 0, 300), (std::pair<size_t, size_t>(0, 0)));

        // The state that waits knows its instance; the one that made it wait has none.
        QCOMPARE(W.atState(m, 1, recv.index), (WaitRef { 1, 0 }));
        QVERIFY(!W.atState(m, 0, send.index).valid());
        const QString d = W.describe(m, { 1, 0 });
        for (const char *part : { "Late Sender", "rank 1", "waited 50 ns in MPI_Recv", "rank 0", "MPI_Send", "150 ns" })
            QVERIFY2(d.contains(QString::fromUtf8(part)), qPrintable(d));
        QVERIFY(W.describe(m, { 0, 0 }).contains("Wait at Barrier"));
    }

    void dockTotalsFollowTheWindow()
    {
        const WaitStates &W = *m_model->waits();
        QCOMPARE(W.runTotals()[kLS], (WaitTotal { 50, 1 }));
        QCOMPARE(W.runTotals()[kBarrier], (WaitTotal { 100, 1 }));
        QCOMPARE(W.windowTotals(m_model->tBegin(), m_model->tEnd()), W.runTotals());
        // Clipped at both edges.
        WaitTotals clipped = W.windowTotals(120, 350);
        QCOMPARE(clipped[kLS], (WaitTotal { 30, 1 }));
        QCOMPARE(clipped[kBarrier], (WaitTotal { 50, 1 }));
        // Touching a window's edge is not in it.
        WaitTotals between = W.windowTotals(150, 300);
        for (const WaitTotal &t : between)
            QCOMPARE(t, WaitTotal {});

        WaitStatesWidget dock;
        dock.resize(500, 300);
        dock.show();
        dock.setModel(m_model);
        QTableWidget *t = dock.table();
        QCOMPARE(t->rowCount(), kWaitPatterns);
        QCOMPARE(t->item(kLS, WaitStatesWidget::PatternColumn)->text(), QString("Late Sender"));
        QCOMPARE(t->item(kLS, WaitStatesWidget::TimeColumn)->text(), formatDuration(50));
        QCOMPARE(t->item(kBarrier, WaitStatesWidget::InstancesColumn)->text(), QString("1"));
        QVERIFY(t->item(kBarrier, WaitStatesWidget::RunColumn)->text().startsWith(formatDuration(100)));
        dock.setRange(120, 350);
        QCOMPARE(dock.windowTotals()[kLS], (WaitTotal { 30, 1 }));
        QCOMPARE(t->item(kLS, WaitStatesWidget::TimeColumn)->text(), formatDuration(30));
        QCOMPARE(t->item(kBarrier, WaitStatesWidget::TimeColumn)->text(), formatDuration(50));
        dock.setRange(160, 290);
        QCOMPARE(t->item(kLS, WaitStatesWidget::InstancesColumn)->text(), QString("0"));
        // A click on a pattern selects it; a second click clears the selection.
        QSignalSpy spy(&dock, &WaitStatesWidget::patternActivated);
        const QPoint at = t->visualItemRect(t->item(kBarrier, WaitStatesWidget::PatternColumn)).center();
        QTest::mouseClick(t->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.last().first().toInt(), kBarrier);
        QCOMPARE(dock.selectedPattern(), kBarrier);
        QTest::mouseClick(t->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(spy.last().first().toInt(), -1);
    }

    void findVisitsInstancesInOrder()
    {
        const WaitStates &W = *m_model->waits();
        std::vector<WaitRef> seen;
        for (WaitRef w = W.find(-1, {}, true, -1); w.valid(); w = W.find(W.span(w).start, w, true, -1))
            seen.push_back(w);
        QCOMPARE(seen, (std::vector<WaitRef> { { 1, 0 }, { 0, 0 } }));
        seen.clear();
        for (WaitRef w = W.find(1e6, {}, false, -1); w.valid(); w = W.find(W.span(w).start, w, false, -1))
            seen.push_back(w);
        QCOMPARE(seen, (std::vector<WaitRef> { { 0, 0 }, { 1, 0 } }));
        // One pattern; an instance starting exactly at t is found from t; rows limit the search.
        QCOMPARE(W.find(300, {}, true, kBarrier), (WaitRef { 0, 0 }));
        QVERIFY(!W.find(300, { 0, 0 }, true, kBarrier).valid());
        QVERIFY(!W.find(0, {}, true, kLS, { 0 }).valid());
        QVERIFY(!W.find(0, {}, true, static_cast<int>(Pattern::kLateBroadcast)).valid());
    }

    // The main window: the analysis runs after the load, the dock selects a pattern, Find
    // (F3) steps through its instances, and the overlay toggles.
    void dockAndFindInTheWindow()
    {
        MainWindow win;
        win.resize(1200, 700);
        win.show();
        QSignalSpy analyzed(&win, &MainWindow::waitsAnalyzed);
        win.openFile(m_path);
        QVERIFY(analyzed.wait(10000));
        QCOMPARE(analyzed.first().at(1).toBool(), true);
        QVERIFY(win.model() && win.model()->waits());
        QVERIFY(win.statusBar()->currentMessage().contains("2 instances"));
        QCOMPARE(win.waitStates()->windowTotals()[kBarrier].instances, uint64_t(1));
        TimelineWidget *tl = win.timeline();
        QVERIFY(tl->showWaits());

        win.waitStates()->selectPattern(kBarrier);
        QCOMPARE(tl->view().waitPattern, kBarrier);
        QVERIFY(win.search(true));
        QCOMPARE(tl->selectedWait(), (WaitRef { 0, 0 }));
        QCOMPARE(tl->view().selected, win.model()->stateAt(0, 350));
        QCOMPARE(tl->cursorTime(), 300.0);
        QVERIFY(!win.search(true)); // the only one
        win.waitStates()->selectPattern(kLS);
        tl->setCursorTime(0);
        QTest::keyClick(&win, Qt::Key_F3);
        QCOMPARE(tl->selectedWait(), (WaitRef { 1, 0 }));
        QCOMPARE(tl->cursorTime(), 100.0);
        QVERIFY(win.search(false) == false); // none before it

        // The overlay's action: on by default, W turns it off.
        QAction *overlay = win.waitsOverlayAction();
        QVERIFY(overlay->isChecked());
        overlay->trigger();
        QVERIFY(!tl->showWaits());
        overlay->trigger();
        QVERIFY(tl->showWaits());
    }

    // A dense log: 2000 Late Senders of 40 ns every 200 ns. The coverage level that bridges the
    // 160-ns gaps holds one interval; window totals match a brute-force sum; frames draw a few
    // rectangles at full view and one per instance when zoomed in.
    void denseLogLevelsAndTotals()
    {
        const TraceModel &m = *m_dense;
        const WaitStates &W = *m.waits();
        QCOMPARE(W.instanceCount(), uint64_t(kDense));
        QCOMPARE(W.runTotals()[kLS], (WaitTotal { 40.0 * kDense, kDense }));
        const auto &levels = W.coverLevels(1, kLS);
        QCOMPARE(levels.size(), size_t(1));
        QCOMPARE(levels[0].gap, 256.0);
        QCOMPARE(levels[0].items.size(), size_t(1));
        QCOMPARE(levels[0].items[0].start, int64_t(0));
        QCOMPARE(levels[0].items[0].end, int64_t(200 * (kDense - 1) + 40));
        for (auto [t0, t1] : { std::pair(0.0, 1000.0), std::pair(30.0, 12345.0), std::pair(10010.0, 200007.0),
                 std::pair(-5.0, 1e9), std::pair(25.0, 35.0) }) {
            WaitTotal brute;
            for (const WaitSpan &s : W.spans(1)) {
                const double ns = std::min<double>(s.end, t1) - std::max<double>(s.start, t0);
                if (ns > 0) brute.ns += ns, ++brute.instances;
            }
            QCOMPARE(W.windowTotals(t0, t1)[kLS], brute);
        }
        RenderStats full, zoomed;
        renderImage(m, 0, 0, QSize(96 + 700, 28 + 80), &full);
        QCOMPARE(full.waitRuns, size_t(1));
        renderImage(m, 0, 1999, QSize(96 + 700, 28 + 80), &zoomed); // 2.9 ns per pixel
        QCOMPARE(zoomed.waitRuns, size_t(10));
    }

    // A run of 8 ranks from `mpe synth` (halo messages, some of them unexpected, collectives):
    // wait states on every rank, a rebuilt queue on several.
    QString synthesized()
    {
        const QString path = m_dir.filePath("synth.mpelog");
        if (QFileInfo::exists(path)) return path;
        QProcess p;
        p.start(MPE_EXE, { "synth", "--ranks", "8", "--events", "40000", path });
        if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
        return path;
    }

    // Opening a log (openTrace: one decode, the wait states' analysis beside the model's finish,
    // their layout beside the rebuilt queue) gives what a decode for each gives.
    void oneOpeningGivesWhatSeparatePassesGive()
    {
        const QString synth = synthesized();
        QVERIFY(!synth.isEmpty());
        for (const QString &path : { m_dir.filePath("waits.mpelog"), m_dir.filePath("dense-waits.mpelog"), synth }) {
            auto opened = mpe::interop::OpenedLog::open(path.toStdString());
            QVERIFY(opened.ok());
            const mpe::format::LogFile &file = (*opened)->file();
            std::shared_ptr<const WaitStates> waits;
            std::shared_ptr<CounterTracks> counters;
            int ready = 0;
            OpenSteps steps;
            steps.modelReady = [&](const std::shared_ptr<TraceModel> &) { QCOMPARE(ready++, 0); };
            steps.waitsReady = [&](const mpe::StatusOr<std::shared_ptr<const WaitStates>> &w) {
                QCOMPARE(ready++, 1);
                QVERIFY(w.ok());
                waits = w.value();
            };
            steps.countersReady = [&](const mpe::StatusOr<std::shared_ptr<CounterTracks>> &c) {
                QCOMPARE(ready++, 2);
                QVERIFY(c.ok());
                counters = c.value();
            };
            auto model = openTrace(file, steps);
            QVERIFY(model.ok() && waits && counters);
            QCOMPARE(ready, 3);

            auto separateWaits = analyzeWaits(file, **model);
            auto separateQueue = withRebuiltQueue(file, **model, (*model)->counters());
            QVERIFY(separateWaits.ok() && separateQueue.ok());
            const WaitStates &A = *waits, &B = **separateWaits;
            QVERIFY(A.instanceCount() > 0);
            QCOMPARE(A.instanceCount(), B.instanceCount());
            QCOMPARE(A.rowCount(), B.rowCount());
            for (int r = 0; r < A.rowCount(); ++r) {
                QCOMPARE(A.spans(r).size(), B.spans(r).size());
                for (size_t i = 0; i < A.spans(r).size(); ++i) {
                    const WaitSpan &a = A.spans(r)[i], &b = B.spans(r)[i];
                    QCOMPARE(std::tie(a.start, a.end, a.culpritTime, a.state, a.culpritState, a.message, a.culpritRow,
                                 a.pattern, a.depth),
                        std::tie(b.start, b.end, b.culpritTime, b.state, b.culpritState, b.message, b.culpritRow,
                            b.pattern, b.depth));
                }
            }
            const CounterTracks &C = *counters, &D = **separateQueue;
            if (path == synth) QVERIFY(C.tracks().size() > 1); // the rebuilt queue on several ranks
            QCOMPARE(C.tracks().size(), D.tracks().size());
            for (size_t t = 0; t < C.tracks().size(); ++t) {
                QCOMPARE(C.tracks()[t].rank, D.tracks()[t].rank);
                QCOMPARE(C.tracks()[t].times, D.tracks()[t].times);
                QCOMPARE(C.tracks()[t].levels, D.tracks()[t].levels);
            }
        }
    }

    // The layout takes a row's instances as one run, as the analysis orders them; a report in
    // another order (by time alone: the rows' instances interleave) is laid out the same.
    void layoutIgnoresTheReportsOrder()
    {
        const QString synth = synthesized();
        QVERIFY(!synth.isEmpty());
        auto opened = mpe::interop::OpenedLog::open(synth.toStdString());
        QVERIFY(opened.ok());
        auto model = buildModel((*opened)->file());
        QVERIFY(model.ok());
        auto analyze = [&] { return mpe::analysis::waits::analyze((*opened)->file(), waitOverlayOptions()); };
        auto ordered = analyze(), shuffled = analyze();
        QVERIFY(ordered.ok() && shuffled.ok());
        auto &I = shuffled->instances;
        QVERIFY(I.size() > 2);
        std::stable_sort(I.begin(), I.end(), [](const auto &x, const auto &y) { return x.start < y.start; });
        QVERIFY(I[0].rank != I[1].rank || I[1].rank != I[2].rank);
        auto a = layOutWaits(**model, std::move(ordered)), b = layOutWaits(**model, std::move(shuffled));
        QVERIFY(a.ok() && b.ok());
        QCOMPARE((*a)->rowCount(), 8);
        for (int r = 0; r < (*a)->rowCount(); ++r) {
            QVERIFY(!(*a)->spans(r).empty());
            QCOMPARE((*a)->spans(r).size(), (*b)->spans(r).size());
            for (size_t i = 0; i < (*a)->spans(r).size(); ++i) {
                QCOMPARE((*a)->spans(r)[i].start, (*b)->spans(r)[i].start);
                QCOMPARE((*a)->spans(r)[i].state, (*b)->spans(r)[i].state);
                QCOMPARE((*a)->spans(r)[i].culpritState, (*b)->spans(r)[i].culpritState);
                QCOMPARE((*a)->spans(r)[i].message, (*b)->spans(r)[i].message);
            }
        }
    }
};

QTEST_MAIN(TestWaits)
#include "tst_waits.moc"
