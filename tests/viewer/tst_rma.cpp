// upshot and one-sided communication: a known three-rank log with RMA records gives the model
// the transfers the reader gives (targets converted to world ranks through the window's
// communicator, completion by the synchronisation that covers the target), and the renderer
// draws them as dashed orange arrows from origin to target, which the toggle hides.
#include <QImage>
#include <QPainter>
#include <QTemporaryDir>
#include <QtTest>

#include "renderer.h"
#include "testlog.h"
#include "tracebuilder.h"

using namespace upshot;
using namespace mpe::format;

namespace {

// Categories 0..5; rank r's comm 2 is a communicator over the three ranks in reverse order.
Definitions rmaDefs()
{
    Definitions d = testlog::defs(3);
    d.categories = mpi_categories(
        { "MPI_Win_create", "MPI_Put", "MPI_Win_fence", "MPI_Get", "MPI_Accumulate", "MPI_Win_unlock" });
    for (auto &m : d.ranks)
        m.comms.push_back(CommDef { 2, 77, false, { 2, 1, 0 } });
    return d;
}
enum : uint16_t { kWinCreate = 0, kPut, kFence, kGet, kAcc, kUnlock };

// Window 0 over MPI_COMM_WORLD on every rank; rank 0 puts 64 bytes to rank 1 at 100, completed by
// its fence ending at 500. Rank 2 also creates window 1 over the reversed communicator, gets 32
// bytes from its group rank 2 (world 0) at 200 and accumulates 16 bytes to group rank 1 (world 1)
// at 250; its MPI_Win_unlock(2) ending at 600 completes the get only.
std::vector<std::vector<Record>> rmaRecords()
{
    using testlog::rec;
    std::vector<std::vector<Record>> r(3);
    for (uint32_t k = 0; k < 3; ++k)
        r[k].push_back(rec(RecordKind::kWinCreate, 10, kWinCreate, 0, 0, 0, 512));
    r[0].push_back(rec(RecordKind::kState, 100, kPut, 0, 0, 0, 50));
    r[0].push_back(rec(RecordKind::kRmaOp, 100, kPut, 1, 0, 0, 64));
    r[0].push_back(rec(RecordKind::kState, 400, kFence, 0, 0, 0, 100));
    r[0].push_back(rec(RecordKind::kRmaComplete, 500, kFence, -1, 0, 0, 0));
    r[1].push_back(rec(RecordKind::kState, 400, kFence, 0, 0, 0, 80));
    r[1].push_back(rec(RecordKind::kRmaComplete, 480, kFence, -1, 0, 0, 0));
    r[2].push_back(rec(RecordKind::kWinCreate, 20, kWinCreate, 1, 0, 2, 128));
    r[2].push_back(rec(RecordKind::kRmaOp, 200, kGet, 2, 32, 1, 0));
    r[2].push_back(rec(RecordKind::kRmaOp, 250, kAcc, 1, 0, 1, 16));
    r[2].push_back(rec(RecordKind::kState, 550, kUnlock, 0, 0, 0, 50));
    r[2].push_back(rec(RecordKind::kRmaComplete, 600, kUnlock, 2, 0, 1, 0));
    return r;
}

} // namespace

class TestRma : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::shared_ptr<TraceModel> m_model;
    const QSize m_size { 96 + 1000, 28 + 3 * 40 };

    // Orange pixels among n points evenly along a -> b (inner 80% only: away from the rows' boxes;
    // n = 1: the point a).
    static int orangeAlong(const QImage &img, QPointF a, QPointF b, int n = 40)
    {
        int hits = 0;
        for (int k = 0; k < n; ++k) {
            const QPointF q = n == 1 ? a : a + (b - a) * (0.1 + 0.8 * k / (n - 1));
            bool hit = false;
            for (int dy = -1; dy <= 1 && !hit; ++dy)
                for (int dx = -1; dx <= 1 && !hit; ++dx) {
                    const QPoint p = q.toPoint() + QPoint(dx, dy);
                    hit = img.rect().contains(p) && img.pixelColor(p) == rmaArrowColor();
                }
            hits += hit;
        }
        return hits;
    }
    QImage render(bool showRma) const
    {
        QImage img(m_size, QImage::Format_RGB32);
        img.fill(Qt::white);
        QPainter p(&img);
        ViewState v = fittedView(*m_model, 0, 1000, m_size);
        v.showRma = showRma;
        paintTimeline(p, *m_model, v);
        return img;
    }

private slots:
    void initTestCase()
    {
        const std::string path = m_dir.filePath("rma.mpelog").toStdString();
        QVERIFY(testlog::writeLog(path, rmaRecords(), rmaDefs()));
        QString error;
        m_model = loadModel(QString::fromStdString(path), &error);
        QVERIFY2(m_model, qPrintable(error));
    }

    void modelHasTheTransfersTheReaderHas()
    {
        const auto &X = m_model->rmaTransfers();
        QCOMPARE(X.size(), size_t(3));
        QCOMPARE(m_model->rmaWindows().size(), size_t(2));
        // By start: the put, the get, the accumulate.
        QCOMPARE(X[0].origin, 0);
        QCOMPARE(X[0].target, 1);
        QCOMPARE(X[0].kind, RmaKind::kPut);
        QCOMPARE(X[0].sent, uint64_t(64));
        QCOMPARE(X[0].start, int64_t(90)); // ns since the first record, at 10
        QCOMPARE(X[0].complete, int64_t(490));
        QCOMPARE(X[1].origin, 2);
        QCOMPARE(X[1].target, 0); // group rank 2 of the reversed communicator
        QCOMPARE(X[1].kind, RmaKind::kGet);
        QCOMPARE(X[1].received, uint64_t(32));
        QCOMPARE(X[1].complete, int64_t(590));
        QCOMPARE(X[1].window, X[0].window + 1);
        QCOMPARE(X[2].target, 1);
        QCOMPARE(X[2].kind, RmaKind::kAccumulate);
        QCOMPARE(X[2].complete, int64_t(-1)); // MPI_Win_unlock(2) does not cover target 1

        auto file = LogFile::open(m_dir.filePath("rma.mpelog").toStdString());
        QVERIFY(file.ok());
        auto tr = load_trace(*file);
        QVERIFY(tr.ok());
        QCOMPARE(tr->rma.transfers.size(), X.size());
        for (size_t i = 0; i < X.size(); ++i) {
            const RmaTransfer &a = tr->rma.transfers[i], &b = X[i];
            QCOMPARE(std::make_tuple(a.origin, a.target, a.window, a.start, a.complete, a.sent, a.received),
                std::make_tuple(b.origin, b.target, b.window, b.start, b.complete, b.sent, b.received));
        }
    }

    void arrowsGoFromOriginToTargetAtTheCompletion()
    {
        const QImage img = render(true);
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        const QPointF put0(v.xOf(90), v.rowCenter(0)), put1(v.xOf(490), v.rowCenter(1));
        const QPointF get0(v.xOf(190), v.rowCenter(2)), get1(v.xOf(590), v.rowCenter(0));
        // Dashed: about half the points of each line are on a dash.
        QVERIFY2(orangeAlong(img, put0, put1) >= 12, "the put's arrow");
        QVERIFY2(orangeAlong(img, get0, get1) >= 12, "the get's arrow");
        // Not drawn the other way round, and nothing for the accumulate nobody completed.
        const QPointF ma(v.xOf(90), v.rowCenter(1)), mb(v.xOf(490), v.rowCenter(0)); // crosses it halfway
        for (double f : { 0.15, 0.25, 0.75, 0.85 })
            QCOMPARE(orangeAlong(img, ma + (mb - ma) * f, ma + (mb - ma) * f, 1), 0);
        QCOMPARE(orangeAlong(img, QPointF(v.xOf(250), v.rowCenter(2)), QPointF(v.xOf(900), v.rowCenter(1))), 0);
        // Distinct from messages: no message arrow colour on them.
        QVERIFY(rmaArrowColor() != arrowColor());
        RenderStats st;
        QImage again(m_size, QImage::Format_RGB32);
        QPainter p(&again);
        paintTimeline(p, *m_model, v, &st);
        QCOMPARE(st.rmaArrows, size_t(2));
        QCOMPARE(st.arrows, size_t(0));
        QCOMPARE(st.events, size_t(4)); // the window creations: operations and completions are the arrows' ends
    }

    void toggleHidesTheArrows()
    {
        const QImage img = render(false);
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        QCOMPARE(orangeAlong(img, QPointF(v.xOf(90), v.rowCenter(0)), QPointF(v.xOf(490), v.rowCenter(1))), 0);
        QCOMPARE(orangeAlong(img, QPointF(v.xOf(190), v.rowCenter(2)), QPointF(v.xOf(590), v.rowCenter(0))), 0);
    }
};

QTEST_MAIN(TestRma)
#include "tst_rma.moc"
