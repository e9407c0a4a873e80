// Tests of upshot's live mode: the follow-now time window and pause, the now table (under
// QAbstractItemModelTester: sorting, the stuck mark), the diagnosis naming a deadlock's cycle
// and a holding rank, the traffic matrix, the live timeline's painting, the live page offscreen,
// the session's decoding (garbage, gaps, the job's end and its merged log), and the main window.
#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QJsonDocument>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include "livejob.h"
#include "livemodel.h"
#include "livesession.h"
#include "liveview.h"
#include "mainwindow.h"
#include "mpe/live_transport.h"
#include "testlog.h"

using namespace upshot;
using livejob::kNow;
using livejob::kSecond;

namespace {

// Colours of an image, to tell a drawing from a blank one.
int distinctColors(const QImage &img)
{
    QSet<QRgb> seen;
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2)
            seen.insert(img.pixel(x, y));
    return static_cast<int>(seen.size());
}

std::shared_ptr<mpe::live_stream::JobView> jobOf(const std::vector<mpe::live_stream::RankFrame> &frames)
{
    auto job = std::make_shared<mpe::live_stream::JobView>(kLiveKeepSeconds, kLiveTrafficSeconds);
    livejob::feed(*job, frames);
    return job;
}

} // namespace

class TestLive : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void windowFollowsNow()
    {
        LiveTimeWindow w;
        w.setSpan(10e9);
        const double now = static_cast<double>(kNow);
        QVERIFY(w.following());
        QCOMPARE(w.end(now), now);
        QCOMPARE(w.begin(now), now - 10e9);
        const TimeScale s = w.scale(now, 1000);
        QCOMPARE(s.timeToX(now), 1000.0);
        QCOMPARE(s.timeToX(now - 5e9), 500.0);
        // New data moves the window with it.
        QCOMPARE(w.end(now + 3e9), now + 3e9);
        QCOMPARE(w.scale(now + 3e9, 1000).timeToX(now + 3e9), 1000.0);
    }

    void windowSpanIsClamped_data()
    {
        QTest::addColumn<double>("asked");
        QTest::addColumn<double>("got");
        QTest::newRow("too short") << 1e9 << LiveTimeWindow::kMinSpan;
        QTest::newRow("within") << 42e9 << 42e9;
        QTest::newRow("too long") << 1e12 << LiveTimeWindow::kMaxSpan;
    }
    void windowSpanIsClamped()
    {
        QFETCH(double, asked);
        QFETCH(double, got);
        LiveTimeWindow w;
        w.setSpan(asked);
        QCOMPARE(w.span(), got);
    }

    void pausedWindowStaysAndScrollsWithinWhatArrived()
    {
        LiveTimeWindow w;
        w.setSpan(10e9);
        const double now = static_cast<double>(kNow), oldest = now - 60e9;
        w.pause(now);
        QVERIFY(!w.following());
        QCOMPARE(w.end(now + 5e9), now); // data kept coming: the paused window did not move
        w.scroll(-3e9, oldest, now + 5e9);
        QCOMPARE(w.end(now + 5e9), now - 3e9);
        w.scroll(-1000e9, oldest, now + 5e9); // not before what was kept
        QCOMPARE(w.begin(now + 5e9), oldest);
        w.scroll(1000e9, oldest, now + 5e9); // not past now
        QCOMPARE(w.end(now + 5e9), now + 5e9);
        w.resume();
        QCOMPARE(w.end(now + 9e9), now + 9e9);
        // Scrolling a following window pauses it.
        w.scroll(-1e9, oldest, now + 9e9);
        QVERIFY(!w.following());
        QCOMPARE(w.end(now + 20e9), now + 8e9);
    }

    void nowTableSortsLongestFirstAndMarksStuck()
    {
        const auto job = jobOf(livejob::stuck4());
        NowTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows(job->now_table(1.0));
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.columnCount(), int(NowTableModel::ColumnCount));
        // Longest first: rank 3 computing 5 s, then the barrier waiters 4, 3, 2 s.
        for (int i = 0; i < 4; ++i)
            QCOMPARE(model.data(model.index(i, NowTableModel::Rank), Qt::DisplayRole).toInt(), i == 0 ? 3 : i - 1);
        QCOMPARE(model.data(model.index(0, NowTableModel::Routine), Qt::DisplayRole).toString(),
            QStringLiteral("(application)"));
        QCOMPARE(model.data(model.index(1, NowTableModel::Routine), Qt::DisplayRole).toString(),
            QStringLiteral("MPI_Barrier"));
        QCOMPARE(model.data(model.index(1, NowTableModel::CallSite), Qt::DisplayRole).toString(),
            QStringLiteral("stuck.c:20 main"));
        QCOMPARE(
            model.data(model.index(1, NowTableModel::Seconds), Qt::DisplayRole).toString(), QStringLiteral("4.00"));
        // Computing is not stuck, however long; blocking calls past the threshold are.
        QVERIFY(!model.data(model.index(0, NowTableModel::Rank), Qt::BackgroundRole).isValid());
        for (int i = 1; i < 4; ++i)
            QCOMPARE(model.data(model.index(i, NowTableModel::Seconds), Qt::BackgroundRole).value<QColor>(),
                NowTableModel::kStuckColor);
        // A higher threshold: only the 4 s wait is stuck.
        model.setRows(job->now_table(3.5));
        QVERIFY(model.data(model.index(1, 0), Qt::BackgroundRole).isValid());
        QVERIFY(!model.data(model.index(2, 0), Qt::BackgroundRole).isValid());
        // Any column sorts; rows with the same key keep rank order.
        model.sort(NowTableModel::Rank, Qt::AscendingOrder);
        for (int i = 0; i < 4; ++i)
            QCOMPARE(model.data(model.index(i, NowTableModel::Rank), Qt::DisplayRole).toInt(), i);
        model.sort(NowTableModel::Routine, Qt::DescendingOrder);
        QCOMPARE(model.data(model.index(0, NowTableModel::Routine), Qt::DisplayRole).toString(),
            QStringLiteral("MPI_Barrier"));
        QCOMPARE(model.data(model.index(0, NowTableModel::Rank), Qt::DisplayRole).toInt(), 0);
        // Fewer rows, then more: inserted and removed under the tester.
        model.sort(NowTableModel::Seconds, Qt::DescendingOrder);
        model.setRows(jobOf(livejob::cycle3())->now_table(1.0));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.data(model.index(0, NowTableModel::Peer), Qt::DisplayRole).toString(), QStringLiteral("1"));
        QCOMPARE(model.data(model.index(0, NowTableModel::Tag), Qt::DisplayRole).toInt(), 7);
        model.setRows(job->now_table(1.0));
        QCOMPARE(model.rowCount(), 4);
        model.setRows({});
        QCOMPARE(model.rowCount(), 0);
    }

    void diagnosisNamesTheCycle()
    {
        const auto job = jobOf(livejob::cycle3());
        const QString text = diagnosisText(job->diagnose(1.0), 1.0);
        QVERIFY2(text.contains(QStringLiteral("Deadlock: ranks 0 → 1 → 2 → 0")), qPrintable(text));
        for (int r = 0; r < 3; ++r)
            QVERIFY2(text.contains(
                         QStringLiteral("rank %1: MPI_Recv peer %2 tag 7, in ring.c:1%1 main").arg(r).arg((r + 1) % 3)),
                qPrintable(text));
        const nlohmann::json summary = liveSummary(*job, 1.0);
        QCOMPARE(summary["ranks_seen"].get<int>(), 3);
        QVERIFY(summary["deadlocks"] == nlohmann::json::parse("[[0, 1, 2]]"));
        QCOMPARE(summary["stuck"].size(), size_t { 0 });
        // Under the threshold there is no diagnosis yet.
        const QString early = diagnosisText(job->diagnose(10.0), 10.0);
        QVERIFY2(early.startsWith(QStringLiteral("No deadlock")), qPrintable(early));
    }

    void diagnosisNamesTheHoldingRank()
    {
        const auto job = jobOf(livejob::stuck4());
        const QString text = diagnosisText(job->diagnose(1.0), 1.0);
        QVERIFY2(text.contains(QStringLiteral("Stuck: rank 3 holds ranks 0, 1, 2")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("rank 3: in the application, 5.0 s")), qPrintable(text));
        QVERIFY(!text.contains(QStringLiteral("Deadlock")));
        const nlohmann::json summary = liveSummary(*job, 1.0);
        QCOMPARE(summary["deadlocks"].size(), size_t { 0 });
        QVERIFY(summary["stuck"] == nlohmann::json::parse(R"([{"holder": 3, "waiting": [0, 1, 2]}])"));
    }

    void matrixColoursPairsOnALogScale()
    {
        const TrafficMatrix m({ { 0, 1, 10, 1000000 }, { 2, 0, 1, 1000 }, { 1, 2, 1, 10 } }, 3);
        QCOMPARE(m.ranks(), 3);
        QCOMPARE(m.maxBytes(), uint64_t(1000000));
        QVERIFY(m.at(0, 1) && m.at(0, 1)->count == 10);
        QVERIFY(!m.at(1, 0));
        QCOMPARE(m.color(0), QColor(Qt::white));
        // Heavier is darker, and a thousandth of the heaviest still shows.
        QVERIFY(m.color(1000000).lightness() < m.color(1000).lightness());
        QVERIFY(m.color(1000).lightness() < m.color(10).lightness());
        QVERIFY(m.color(10) != QColor(Qt::white));
        // A sender beyond the world size widens the matrix instead of being lost.
        QCOMPARE(TrafficMatrix({ { 5, 0, 1, 1 } }, 2).ranks(), 6);
    }

    void matrixWidgetPaintsItsCells()
    {
        TrafficMatrixWidget w;
        w.resize(300, 300);
        QImage blank = w.grab().toImage(); // no traffic yet: says so, no crash
        QVERIFY(!blank.isNull());
        const TrafficMatrix m({ { 0, 1, 10, 1000000 }, { 1, 0, 2, 100 } }, 2);
        w.setMatrix(m);
        const QImage img = w.grab().toImage();
        const TrafficMatrixLayout L { w.size(), 2 };
        QCOMPARE(L.cellAt(L.cellRect(0, 1).center()), std::pair(0, 1));
        QCOMPARE(L.cellAt(QPointF(1, 1)), std::pair(-1, -1));
        const QPoint heavy = L.cellRect(0, 1).center().toPoint(), light = L.cellRect(1, 0).center().toPoint(),
                     none = L.cellRect(0, 0).center().toPoint();
        QCOMPARE(img.pixelColor(heavy).rgb(), m.color(1000000).rgb());
        QCOMPARE(img.pixelColor(light).rgb(), m.color(100).rgb());
        QCOMPARE(img.pixelColor(none).rgb(), QColor(Qt::white).rgb());
    }

    void timelinePaintsStatesAndArrows()
    {
        const auto job = jobOf(livejob::traffic2());
        QCOMPARE(job->arrows().size(), size_t(2));
        LiveTimeWindow w;
        w.setSpan(5e9);
        const QSize size(800, 200);
        QImage img(size, QImage::Format_RGB32);
        LiveTimelineStats stats;
        {
            QPainter p(&img);
            paintLiveTimeline(p, *job, w, size, &stats);
        }
        QVERIFY(stats.states >= 3);
        QCOMPARE(stats.arrows, size_t(1)); // the received message
        QCOMPARE(stats.openArrows, size_t(1)); // the one not received yet: a tick
        // Rank 1 was in MPI_Recv for both intervals, up to now: the right edge of its row.
        const LiveTimelineLayout L { size, 2 };
        QCOMPARE(img.pixelColor(size.width() - 2, static_cast<int>(L.rowCenter(1)) + 8).rgb(),
            liveRoutineColor("MPI_Recv").rgb());
        // Paused 5 s before the data, nothing is in the window.
        w.pause(static_cast<double>(kNow));
        w.scroll(-5e9, static_cast<double>(kNow) - 300e9, static_cast<double>(kNow));
        LiveTimelineStats before;
        QPainter p(&img);
        paintLiveTimeline(p, *job, w, size, &before);
        QCOMPARE(before.states, size_t(0));
        QCOMPARE(before.arrows + before.openArrows, size_t(0));
    }

    void timelineBundlesDenseArrows()
    {
        // 1000 messages from rank 0 to rank 1 in 100 ms: a few pixels at a 5 s span.
        mpe::live_stream::RankFrame a = livejob::frame(0, 2, 0), b = livejob::frame(1, 2, 0);
        for (uint64_t i = 0; i < 1000; ++i) {
            const uint64_t t = a.interval_start_ns + i * 90000;
            a.events.push_back(livejob::event(mpe::live_stream::EventKind::kSend, t, 1, 8));
            b.events.push_back(livejob::event(mpe::live_stream::EventKind::kRecv, t + 5000, 0, 8));
        }
        const auto job = jobOf({ a, b });
        QCOMPARE(job->arrows().size(), size_t(1000));
        LiveTimeWindow w;
        w.setSpan(5e9);
        QImage img(QSize(800, 200), QImage::Format_RGB32);
        LiveTimelineStats stats;
        QPainter p(&img);
        paintLiveTimeline(p, *job, w, img.size(), &stats);
        QVERIFY2(stats.arrows >= 1 && stats.arrows <= 4, qPrintable(QString::number(stats.arrows)));
        QCOMPARE(stats.arrows + stats.bundled, size_t(1000));
    }

    void timelineWidgetPausesWhenScrolledBack()
    {
        const auto job = jobOf(livejob::traffic2());
        LiveView view;
        view.setJob(job);
        view.resize(900, 600);
        view.show();
        LiveTimelineWidget *t = view.timeline();
        QSignalSpy paused(t, &LiveTimelineWidget::pausedChanged);
        QVERIFY(t->timeWindow().following());
        QWheelEvent back(QPointF(300, 100), t->mapToGlobal(QPointF(300, 100)), QPoint(), QPoint(0, 120), Qt::NoButton,
            Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(t, &back);
        QVERIFY(!t->timeWindow().following());
        QCOMPARE(paused.count(), 1);
        QVERIFY(view.pauseButton()->isChecked()); // the button says so
        view.pauseButton()->setChecked(false);
        QVERIFY(t->timeWindow().following());
        // The span box and Ctrl+wheel agree.
        view.spanBox()->setValue(60);
        QCOMPARE(t->timeWindow().span(), 60e9);
        QWheelEvent zoom(QPointF(300, 100), t->mapToGlobal(QPointF(300, 100)), QPoint(), QPoint(0, -120), Qt::NoButton,
            Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(t, &zoom);
        QCOMPARE(t->timeWindow().span(), 75e9);
        QCOMPARE(view.spanBox()->value(), 75);
    }

    void livePageRendersOffscreen()
    {
        const auto job = jobOf(livejob::cycle3());
        LiveView view;
        view.setJob(job);
        const QImage img = view.snapshot(QSize(1100, 700));
        QVERIFY(!img.isNull());
        QCOMPARE(img.size(), QSize(1100, 700));
        QVERIFY(distinctColors(img) > 8);
        QVERIFY2(
            view.diagnosis().contains(QStringLiteral("Deadlock: ranks 0 → 1 → 2 → 0")), qPrintable(view.diagnosis()));
        QVERIFY2(view.status().contains(QStringLiteral("3 / 3 ranks seen")), qPrintable(view.status()));
        QVERIFY(view.status().contains(QStringLiteral("frames lost 0")));
        QVERIFY(view.status().contains(QStringLiteral("job running")));
        QCOMPARE(view.nowModel()->rowCount(), 3);
        QVERIFY(!view.offersLog());
        // The stuck threshold is the user's: above 5 s nothing is stuck or deadlocked.
        view.setStuckSeconds(30);
        QVERIFY(view.diagnosis().startsWith(QStringLiteral("No deadlock")));
        QVERIFY(!view.nowModel()->data(view.nowModel()->index(0, 0), Qt::BackgroundRole).isValid());
    }

    void sessionDecodesCountsGarbageAndGaps()
    {
        LiveSession session;
        QVERIFY(!session.attached());
        session.ingest("certainly not a frame");
        QCOMPARE(session.job()->rejected(), uint64_t(1));
        for (const auto &f : livejob::cycle3(0))
            session.ingest(mpe::live_stream::encode(f));
        QCOMPARE(session.job()->ranks_seen(), size_t(3));
        // A frame cut short is garbage, not a crash.
        const std::string whole = mpe::live_stream::encode(livejob::cycle3(1)[0]);
        session.ingest(whole.substr(0, whole.size() / 2));
        QCOMPARE(session.job()->rejected(), uint64_t(2));
        // Rank 0's seq 1 and 2 never came: two frames lost in transit.
        session.ingest(mpe::live_stream::encode(livejob::cycle3(3, kNow + 3 * livejob::kInterval)[0]));
        QCOMPARE(session.job()->frames_lost_in_transit(), uint64_t(2));
        LiveView view;
        view.setJob(session.job());
        QVERIFY2(view.status().contains(QStringLiteral("frames lost 2")), qPrintable(view.status()));
        QVERIFY(view.status().contains(QStringLiteral("2 rejected messages")));
    }

    void jobEndOffersTheMergedLog()
    {
        const QString log = m_dir.filePath("ended.mpelog");
        LiveSession session;
        for (const auto &f : livejob::cycle3())
            session.ingest(mpe::live_stream::encode(f));
        LiveView view;
        view.setJob(session.job());
        view.show();
        mpe::live_stream::JobEnd end;
        end.exit_status = 0;
        end.mpelog = log.toStdString();
        session.ingest(mpe::live_stream::encode(end));
        QVERIFY(session.job()->ended());
        view.refresh();
        QVERIFY2(view.status().contains(QStringLiteral("job ended (exit status 0)")), qPrintable(view.status()));
        // The log is not written yet: the bar says the job ended and waits for it.
        QVERIFY(!view.offersLog());
        QVERIFY(testlog::writeKnownLog(log.toStdString()));
        QTRY_VERIFY_WITH_TIMEOUT(view.offersLog(), 5000);
        QSignalSpy open(&view, &LiveView::openLogRequested);
        view.openLogButton()->click();
        QCOMPARE(open.count(), 1);
        QCOMPARE(open.first().first().toString(), log);
    }

    void attachingToNothingSaysWhy_data()
    {
        QTest::addColumn<QString>("content"); // empty: no file at all
        QTest::newRow("missing") << QString();
        QTest::newRow("not a live file") << QStringLiteral("garbage\n");
        const QJsonObject badKeys { { "format", "mpe-tools live" }, { "version", 1 },
            { "viewer_endpoint", "tcp://127.0.0.1:1" }, { "publish_endpoint", "tcp://127.0.0.1:2" },
            { "server_public", "short" }, { "viewer_public", "x" }, { "viewer_secret", "y" } };
        QTest::newRow("bad keys") << QString::fromUtf8(QJsonDocument(badKeys).toJson());
    }
    void attachingToNothingSaysWhy()
    {
        QFETCH(QString, content);
        const QString path = m_dir.filePath(QStringLiteral("bad-%1.live").arg(QTest::currentDataTag()));
        if (!content.isEmpty()) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content.toUtf8());
        }
        MainWindow win;
        win.show();
        QSignalSpy failed(&win, &MainWindow::liveFailed);
        QVERIFY(!win.attachLive(path));
        QCOMPARE(failed.count(), 1);
        QVERIFY(!win.inLiveMode());
        auto *box = win.findChild<QMessageBox *>("liveError");
        QVERIFY(box);
        QVERIFY2(box->text().contains(QFileInfo(path).fileName()), qPrintable(box->text()));
        box->close();
    }

    void windowAttachesThenOpensTheMergedLog()
    {
        // A relay that is not there (yet): attaching works, the page says nothing came.
        auto server = mpe::live_stream::new_key_pair();
        auto viewer = mpe::live_stream::new_key_pair();
        QVERIFY(server.ok() && viewer.ok());
        mpe::live_stream::LiveFile file;
        file.viewer_endpoint = "tcp://127.0.0.1:9";
        file.publish_endpoint = "tcp://127.0.0.1:9";
        file.server_public = server->public_key;
        file.viewer = *viewer;
        const QString path = m_dir.filePath("nobody.live");
        QVERIFY(mpe::live_stream::write_live_file(path.toStdString(), file).ok());
        MainWindow win;
        win.show();
        QSignalSpy attached(&win, &MainWindow::liveAttached);
        QVERIFY(win.attachLive(path));
        QCOMPARE(attached.count(), 1);
        QVERIFY(win.inLiveMode());
        QVERIFY(win.liveSession() && win.liveSession()->attached());
        QVERIFY2(
            win.liveView()->status().contains(QStringLiteral("no message yet")), qPrintable(win.liveView()->status()));
        QVERIFY(win.windowTitle().contains(QStringLiteral("live")));
        // The job's merged log opens in the same window, which leaves live mode.
        const QString log = m_dir.filePath("merged.mpelog");
        QVERIFY(testlog::writeKnownLog(log.toStdString()));
        QSignalSpy loaded(&win, &MainWindow::fileLoaded);
        emit win.liveView()->openLogRequested(log);
        QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 10000);
        QVERIFY(!win.inLiveMode());
        QVERIFY(!win.liveSession()->attached());
        QVERIFY(win.model());
    }
};

QTEST_MAIN(TestLive)
#include "tst_live.moc"
