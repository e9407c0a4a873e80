// Counter tracks in upshot's model: the log's MPI_T samples become per-rank step series (levels
// of values as is, deltas summed), unified across ranks by name; the rebuilt unexpected queue
// joins them as its own counter; the legend hides and shows them and the band follows; the
// folding to pixel columns keeps every level the column holds.
#include <QTemporaryDir>
#include <QtTest>

#include "counterlog.h"
#include "countertracks.h"
#include "mpe/interop.h"
#include "panels.h"
#include "renderer.h"
#include "tracebuilder.h"

using namespace upshot;

class TestCounters : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    std::shared_ptr<TraceModel> m_model;

    const CounterTrack &track(const CounterTracks &C, int row, const QString &name)
    {
        for (int k : C.rowTracks(row))
            if (C.counters()[static_cast<size_t>(C.tracks()[static_cast<size_t>(k)].counter)].name == name)
                return C.tracks()[static_cast<size_t>(k)];
        qFatal("no track %s on row %d", qPrintable(name), row);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QString error;
        m_model = counterlog::writeAndLoad(m_dir.path(), &m_path, &error);
        QVERIFY2(m_model, qPrintable(error));
    }

    void modelHasTheLoggedTracks()
    {
        const CounterTracks *C = m_model->counters();
        QVERIFY(C);
        QCOMPARE(C->counters().size(), size_t(2));
        QCOMPARE(C->counters()[0].name, QString("unexpected_recvq_length"));
        QCOMPARE(C->counters()[1].name, QString("bytes_received"));
        QCOMPARE(C->counters()[0].samples, uint64_t(3));
        QCOMPARE(C->counters()[0].maxLevel, 5.0);
        QCOMPARE(C->counters()[1].maxLevel, 100.0);
        QVERIFY(!C->counters()[0].rebuilt);
        QCOMPARE(C->tracks().size(), size_t(2));

        const CounterTrack &q = track(*C, 0, "unexpected_recvq_length");
        QCOMPARE(q.rank, 0u);
        QCOMPARE(q.comm, mpe::format::kUnknownComm);
        QCOMPARE(q.times, (std::vector<int64_t> { 150, 250, 600 }));
        QCOMPARE(q.levels, (std::vector<double> { 3, 5, 0 }));
        // A step function, 0 before the first sample.
        QCOMPARE(q.levelAt(100), 0.0);
        QCOMPARE(q.levelAt(150), 3.0);
        QCOMPARE(q.levelAt(249), 3.0);
        QCOMPARE(q.levelAt(300), 5.0);
        QCOMPARE(q.levelAt(900), 0.0);
        // Deltas are summed: 64, then 100.
        const CounterTrack &b = track(*C, 1, "bytes_received");
        QCOMPARE(b.levels, (std::vector<double> { 64, 100 }));
        QCOMPARE(b.maxLevel, 100.0);

        const QString d = C->describe(0, 300);
        QVERIFY2(d.contains("unexpected_recvq_length = 5"), qPrintable(d));
        QVERIFY2(d.contains("300 ns"), qPrintable(d));
        QVERIFY(C->describe(1, 450).contains("bytes_received = 64"));
    }

    void rebuiltQueueIsATrackOfItsOwn()
    {
        auto opened = mpe::interop::OpenedLog::open(m_path.toStdString());
        QVERIFY(opened.ok());
        auto with = withRebuiltQueue((*opened)->file(), *m_model, m_model->counters());
        QVERIFY2(with.ok(), with.status().to_string().c_str());
        const CounterTracks &C = **with;
        QCOMPARE(C.counters().size(), size_t(3));
        const int k = C.find(kRebuiltQueueName);
        QCOMPARE(k, 2);
        QVERIFY(C.counters()[2].rebuilt);
        QCOMPARE(C.counters()[2].name, QString("unexpected queue (rebuilt)"));
        // Rank 1 receives the one message: queued from the send's start until its receive's post.
        const CounterTrack &q = track(C, 1, kRebuiltQueueName);
        QCOMPARE(q.levelAt(50), 0.0);
        QCOMPARE(q.levelAt(100), 1.0);
        QCOMPARE(q.levelAt(299), 1.0);
        QCOMPARE(q.levelAt(300), 0.0);
        QCOMPARE(q.maxLevel, 1.0);
        // Rank 0 is sent nothing: no rebuilt track on its row. The logged tracks are kept.
        for (int t : C.rowTracks(0))
            QVERIFY(!C.counters()[static_cast<size_t>(C.tracks()[static_cast<size_t>(t)].counter)].rebuilt);
        QCOMPARE(track(C, 0, "unexpected_recvq_length").levels, (std::vector<double> { 3, 5, 0 }));
    }

    void legendHidesAndShowsACounterAndItsBand()
    {
        LegendModel legend;
        legend.setModel(m_model);
        // The counters follow the categories (MPI_Send, MPI_Recv, compute), in counter order.
        QCOMPARE(legend.rowCount(), 3 + 2);
        const int row = 3;
        QCOMPARE(legend.counterAt(row), 0);
        QCOMPARE(legend.counterAt(row + 1), 1);
        QCOMPARE(legend.data(legend.index(row, LegendModel::Name), Qt::DisplayRole).toString(),
            QString("unexpected_recvq_length"));
        QCOMPARE(legend.data(legend.index(row, LegendModel::Count), Qt::DisplayRole).toULongLong(), 3ull);
        QCOMPARE(legend.categoryAt(row), -1);

        ViewState v = fittedView(*m_model, 0, 0, QSize(800, 300));
        QCOMPARE(v.counterRows, (std::vector<uint8_t> { 1, 1 }));
        const double band = v.counterBand(0);
        QCOMPARE(band, ViewState::kCounterBand);
        // The states give the band the bottom of the row.
        QVERIFY(v.boxY(0, 0).second <= v.rowTop(0) + v.rowHeight - band);

        QSignalSpy spy(&legend, &LegendModel::countersChanged);
        QVERIFY(legend.setData(legend.index(row, LegendModel::Name), Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(spy.count(), 1);
        QVERIFY(!m_model->counters()->counters()[0].visible);
        setCounterRows(v, *m_model);
        QCOMPARE(v.counterRows, (std::vector<uint8_t> { 0, 1 }));
        QCOMPARE(v.counterBand(0), 0.0);
        QVERIFY(v.boxY(0, 0).second > v.rowTop(0) + v.rowHeight - band);
        QVERIFY(m_model->counters()->describe(0, 300).isEmpty());
        QVERIFY(legend.setData(legend.index(row, LegendModel::Name), Qt::Checked, Qt::CheckStateRole));
        setCounterRows(v, *m_model);
        QCOMPARE(v.counterRows, (std::vector<uint8_t> { 1, 1 }));
    }

    // 10000 samples alternating 0 / i in 100 pixels: at most one column per pixel, each holding
    // the extremes of its samples, and the last level right.
    void foldingKeepsEveryColumnsExtremes()
    {
        CounterTrack t;
        for (int i = 0; i < 10000; ++i) {
            t.times.push_back(1000 + i * 10);
            t.levels.push_back(i % 2 ? i : 0);
        }
        // Pixel x covers [t0 + (x - 0) * 1000, ...): 100 samples per pixel, from pixel 1 on.
        const auto cols = CounterTracks::columns(t, 0, 100, 0, 1000);
        QVERIFY(cols.size() <= 102);
        QCOMPARE(cols.front().x, 0);
        QCOMPARE(cols.front().last, 0.0);
        for (size_t i = 1; i < cols.size(); ++i) {
            const CounterColumn &c = cols[i];
            QVERIFY(c.x > cols[i - 1].x);
            // Samples k in pixel x: k = (x - 1) * 100 .. x * 100 - 1; odd ones carry k.
            const int k1 = c.x * 100 - 1;
            QCOMPARE(c.hi, static_cast<double>(k1));
            QCOMPARE(c.lo, 0.0);
            QCOMPARE(c.last, static_cast<double>(k1));
            QCOMPARE(t.levelAt(1000.0 * (c.x + 1) - 1), c.last);
        }
        QCOMPARE(cols.back().x, 100);
    }
};

QTEST_MAIN(TestCounters)
#include "tst_counters.moc"
