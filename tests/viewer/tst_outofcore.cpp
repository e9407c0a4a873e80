// A log opened out of core (outofcore.h, mpe/view_index.h) against the same log loaded in memory:
// the view index's totals, bins and messages, and the window models' states and messages, must be
// the in-memory model's exactly; a stale or damaged index is built again; the picture of a view
// drawn from its window is the in-memory picture.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <tuple>

#include "legendmodel.h"
#include "loader.h"
#include "mainwindow.h"
#include "outofcore.h"
#include "renderer.h"
#include "summary.h"
#include "timelinewidget.h"
#include "tracebuilder.h"
#include "windowfollower.h"

using namespace upshot;

namespace {

// Copies a log into dir (its index is written beside it) and returns the copy's path.
QString copyInto(const QTemporaryDir &dir, const QString &log)
{
    const QString to = dir.filePath(QFileInfo(log).fileName());
    QFile::remove(to);
    QFile::copy(log, to);
    return to;
}

QString synth(const QTemporaryDir &dir, const QString &name, const QStringList &args)
{
    const QString path = dir.filePath(name);
    QProcess p;
    p.start(MPE_EXE, QStringList { "synth" } + args + QStringList { path });
    p.waitForFinished(120000);
    return p.exitCode() == 0 ? path : QString();
}

using StateKey = std::tuple<int64_t, int64_t, int, int, uint32_t>; // start, end, category id, depth, site

// The states of model's row that overlap [t0, t1], every lane.
std::vector<StateKey> statesIn(const TraceModel &m, int row, double t0, double t1)
{
    std::vector<StateKey> out;
    for (int d = 0; d < m.laneCount(row); ++d) {
        auto [b, e] = m.lane(row, d);
        for (size_t i = b; i < e; ++i)
            if (m.start(row, i) <= t1 && m.end(row, i) >= t0)
                out.emplace_back(m.startNs(row, i), m.startNs(row, i) + m.durationNs(row, i),
                    m.categoryInfo(m.category(row, i)).id, d, m.site(row, i));
    }
    std::sort(out.begin(), out.end());
    return out;
}

using MessageKey = std::tuple<int64_t, int64_t, uint32_t, uint32_t, int32_t, uint64_t>;

std::vector<MessageKey> messagesIn(const TraceModel &m, double t0, double t1)
{
    std::vector<MessageKey> out;
    for (const Message &x : m.messages())
        if (x.send_time <= t1 && x.recv_time >= t0)
            out.emplace_back(x.send_time, x.recv_time, x.send_timeline, x.recv_timeline, x.tag, x.bytes);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

class TestOutOfCore : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QStringList m_logs;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        for (const char *golden : { "v1-synth", "v2-halo2d", "v5-synth", "v6-skewed" })
            m_logs << copyInto(m_dir, QStringLiteral(GOLDEN_DIR "/%1.mpelog").arg(golden));
        // Many ranks with nodes and slow ranks; and a seed whose clocks need the causality repair.
        m_logs << synth(m_dir, "nodes.mpelog", { "--ranks", "48", "--ranks-per-node", "8", "--events", "300000" });
        m_logs << synth(m_dir, "seed3.mpelog", { "--ranks", "6", "--events", "120000", "--seed", "3" });
        for (const QString &log : m_logs)
            QVERIFY2(!log.isEmpty(), "mpe synth failed");
    }

    // The index's run: records, span, category totals, every row's bins and every message are those
    // of the model that holds every record.
    void summaryIsTheWholeRun()
    {
        for (const QString &log : m_logs) {
            auto whole = loadModel(log);
            QVERIFY2(whole.ok(), whole.status().to_string().c_str());
            auto big = OutOfCoreLog::open(log);
            QVERIFY2(big.ok(), big.status().to_string().c_str());
            const TraceModel &m = **whole;
            const mpe::format::ViewIndex &index = (*big)->index();
            const TraceModel &s = *(*big)->summary();
            QVERIFY(s.isFromIndex() && s.messagesSampled());
            QCOMPARE(index.records(), m.recordCount());
            QCOMPARE(s.recordCount(), m.recordCount());
            QCOMPARE(s.tBegin(), m.tBegin());
            QCOMPARE(s.tEnd(), m.tEnd());
            QCOMPARE(s.rowCount(), m.rowCount());
            for (int r = 0; r < m.rowCount(); ++r) {
                QCOMPARE(s.markers(r).size(), m.markers(r).size());
                for (size_t k = 0; k < m.markers(r).size(); ++k)
                    QVERIFY(s.markers(r)[k].time == m.markers(r)[k].time
                        && s.markers(r)[k].level == m.markers(r)[k].level && s.markers(r)[k].on == m.markers(r)[k].on);
                QCOMPARE(s.laneCount(r), std::max(1, m.laneCount(r)));
            }
            for (int c = 0; c < m.categoryCount(); ++c) {
                const CategoryInfo &want = m.categoryInfo(c);
                const CategoryInfo &got = s.categoryInfo(s.findCategory(want.name));
                QVERIFY2(got.count == want.count && got.inclusiveNs == want.inclusiveNs
                        && got.exclusiveNs == want.exclusiveNs,
                    qPrintable(QStringLiteral("%1 %2: count %3/%4, inclusive %5/%6, exclusive %7/%8")
                                   .arg(log, want.name)
                                   .arg(got.count)
                                   .arg(want.count)
                                   .arg(got.inclusiveNs)
                                   .arg(want.inclusiveNs)
                                   .arg(got.exclusiveNs)
                                   .arg(want.exclusiveNs)));
            }
            // Bins: the category of the model's depth-0 state holding each centre, where one state at
            // most holds it (v6-skewed's generator overlaps depth-0 states: which one the index
            // keeps is not defined, nor what a lane search finds).
            size_t differ = 0, compared = 0;
            for (int r = 0; r < m.rowCount(); ++r) {
                const uint8_t *codes = index.codes(static_cast<uint32_t>(r));
                std::vector<uint8_t> holders(index.bins(), 0);
                std::vector<int> holder(index.bins(), -1);
                auto [lb, le] = m.lane(r, 0);
                for (size_t i = lb; i < le; ++i) {
                    const double k0 = std::ceil((m.start(r, i) - index.bin_origin()) / index.bin_width() - 0.5);
                    const double k1 = std::ceil((m.end(r, i) - index.bin_origin()) / index.bin_width() - 0.5);
                    for (double k = std::max(0.0, k0); k < std::min<double>(k1, index.bins()); ++k) {
                        holders[static_cast<size_t>(k)]
                            = static_cast<uint8_t>(std::min(2, holders[static_cast<size_t>(k)] + 1));
                        holder[static_cast<size_t>(k)] = static_cast<int>(m.categoryInfo(m.category(r, i)).id);
                    }
                }
                for (uint32_t k = 0; k < index.bins(); ++k) {
                    if (holders[k] > 1) continue;
                    ++compared;
                    const int want = holder[k];
                    const int got = codes[k] == 0 ? -1 : static_cast<int>(index.code_categories()[codes[k] - 1]);
                    differ += want != got;
                }
            }
            QVERIFY2(differ == 0 && compared > index.bins() * m.rowCount() / 2,
                qPrintable(QStringLiteral("%1: %2 of %3 bins differ").arg(log).arg(differ).arg(compared)));
            std::vector<MessageKey> all;
            QVERIFY(index
                        .messages_crossing(INT64_MIN, INT64_MAX,
                            [&](const mpe::format::ViewMessage &x) {
                                all.emplace_back(
                                    x.send_time, x.recv_time, x.send_timeline, x.recv_timeline, x.tag, x.bytes);
                            })
                        .ok());
            std::sort(all.begin(), all.end());
            QCOMPARE(all.size(), m.messages().size());
            QVERIFY2(all == messagesIn(m, -1e30, 1e30), qPrintable(log));
            QCOMPARE(index.messages(), m.messages().size());
            QCOMPARE(index.sample().size(), (m.messages().size() + index.sample_stride() - 1) / index.sample_stride());
        }
    }

    // A window's model holds exactly the states and messages of the whole model that overlap it.
    void windowsHoldTheirRecords()
    {
        std::mt19937_64 random(7);
        for (const QString &log : m_logs) {
            auto whole = loadModel(log);
            auto big = OutOfCoreLog::open(log);
            QVERIFY(whole.ok() && big.ok());
            const TraceModel &m = **whole;
            for (int w = 0; w < 6; ++w) {
                std::uniform_real_distribution<double> at(m.tBegin(), m.tEnd());
                double t0 = at(random), t1 = at(random);
                if (t1 < t0) std::swap(t0, t1);
                if (w == 0) t0 = m.tBegin(), t1 = m.tEnd();
                auto window = (*big)->window(t0, t1);
                QVERIFY2(window.ok(), window.status().to_string().c_str());
                const TraceModel &x = **window;
                QVERIFY(!x.messagesSampled());
                QCOMPARE(x.rowCount(), m.rowCount());
                const double a = std::floor(t0), z = std::ceil(t1);
                for (int r = 0; r < m.rowCount(); ++r)
                    QVERIFY2(statesIn(x, r, a, z) == statesIn(m, r, a, z),
                        qPrintable(QStringLiteral("%1 row %2 window %3..%4").arg(log).arg(r).arg(a).arg(z)));
                QVERIFY2(messagesIn(x, a, z) == messagesIn(m, a, z), qPrintable(log));
            }
        }
    }

    // Drawn from its window, a zoomed view is the in-memory picture, pixel for pixel: the rows'
    // lanes and Pcontrol strips are the whole run's, whatever the window holds.
    void windowPictureIsTheInMemoryOne()
    {
        for (const QString &log : { m_logs[4], m_logs[5] }) {
            auto whole = loadModel(log);
            auto big = OutOfCoreLog::open(log);
            QVERIFY(whole.ok() && big.ok());
            const TraceModel &m = **whole;
            for (double at : { 0.1, 0.4, 0.8 }) {
                const double span = m.tEnd() - m.tBegin();
                const double t0 = m.tBegin() + span * at, t1 = t0 + span * 0.05;
                QVERIFY((*big)->windowFits(t0, t1));
                auto window = (*big)->modelFor(t0, t1);
                QVERIFY(window.ok() && !(*window)->messagesSampled());
                const QImage want = renderImage(m, t0, t1, QSize(1200, 500));
                const QImage got = renderImage(**window, t0, t1, QSize(1200, 500));
                int differ = 0;
                for (int y = 0; y < got.height(); ++y)
                    for (int x = 0; x < got.width(); ++x)
                        differ += got.pixel(x, y) != want.pixel(x, y);
                QVERIFY2(
                    differ == 0, qPrintable(QStringLiteral("%1 at %2: %3 pixels differ").arg(log).arg(at).arg(differ)));
            }
        }
    }

    // In the window: the log opens on its summary; zoomed in, the view's records are read off the
    // GUI thread and drawn, the legend's choices carried over; zoomed out again, the summary.
    void windowFollowsTheView()
    {
        MainWindow win;
        win.resize(1200, 700);
        win.show();
        win.loader()->setMemory(TraceLoader::Memory::OutOfCore);
        QSignalSpy loaded(&win, &MainWindow::fileLoaded);
        win.openFile(m_logs[4]);
        QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 20000);
        TimelineWidget *timeline = win.timeline();
        QVERIFY(timeline->model() && timeline->model()->messagesSampled());
        const TraceModel *summary = timeline->model();
        // A window of a tenth of the run's records fits, not more (this log has a chunk per rank: any
        // window decodes them all).
        WindowFollower *follower = win.findChild<WindowFollower *>();
        QVERIFY(follower && follower->log());
        follower->log()->setWindowLimits(summary->recordCount() / 10, summary->recordCount());
        const double span = summary->tEnd() - summary->tBegin();
        const double t0 = summary->tBegin() + span * 0.3, t1 = t0 + span * 0.02;
        // Hide the legend's first category (on the summary, as the legend holds it).
        LegendModel *legend = win.findChild<LegendModel *>();
        QVERIFY(legend->setData(legend->index(0, 0), Qt::Unchecked, Qt::CheckStateRole));
        const int hidden = legend->categoryAt(0);
        QVERIFY(hidden >= 0 && !summary->categoryInfo(hidden).visible);
        timeline->zoomToRange(t0, t1);
        QVERIFY(
            follower->log()->windowFits(t0, t1) && !follower->log()->windowFits(summary->tBegin(), summary->tEnd()));
        QTRY_VERIFY_WITH_TIMEOUT(timeline->model() && !timeline->model()->messagesSampled(), 20000);
        const TraceModel *window = timeline->model();
        QVERIFY(window->window().first <= t0 && window->window().second >= t1);
        for (int c = 0; c < summary->categoryCount(); ++c)
            QCOMPARE(window->categoryInfo(c).visible, summary->categoryInfo(c).visible);
        QVERIFY(!window->categoryInfo(hidden).visible);
        QVERIFY(!timeline->viewport()->grab().isNull());
        timeline->zoomToRange(summary->tBegin(), summary->tEnd());
        QTRY_VERIFY_WITH_TIMEOUT(timeline->model() == summary, 20000);
    }

    // An index of another log, or a damaged one, is built again.
    void staleDamagedAndUnwritable()
    {
        QTemporaryDir dir;
        const QString log = copyInto(dir, m_logs[0]);
        QVERIFY(OutOfCoreLog::open(log).ok());
        const QString index = QString::fromStdString(mpe::format::ViewIndex::path_for(log.toStdString()));
        QCOMPARE(index, log + ".view");
        // Another log under the same name: the old index is stale.
        QFile::remove(log);
        QFile::copy(m_logs[2], log);
        auto other = mpe::format::LogFile::open(log.toStdString());
        QVERIFY(other.ok());
        auto stale = mpe::format::ViewIndex::open(*other, index.toStdString());
        QVERIFY(!stale.ok());
        QVERIFY(QString::fromStdString(stale.status().to_string()).contains("another log"));
        auto rebuilt = OutOfCoreLog::open(log);
        QVERIFY(rebuilt.ok());
        auto whole = loadModel(log);
        QCOMPARE((*rebuilt)->index().records(), (*whole)->recordCount());
        // Damaged: cut in the middle.
        std::filesystem::resize_file(index.toStdString(), std::filesystem::file_size(index.toStdString()) / 2);
        auto damaged = mpe::format::ViewIndex::open(*other, index.toStdString());
        QVERIFY(!damaged.ok());
        QVERIFY(OutOfCoreLog::open(log).ok());
        QVERIFY(mpe::format::ViewIndex::open(*other, index.toStdString()).ok());
    }
};

QTEST_MAIN(TestOutOfCore)
#include "tst_outofcore.moc"
