// Many ranks in upshot: the summary band's counts equal a direct count of the states, ranks land
// in the right groups (node, communicator, blocks, behaviour), groups expand and collapse, the
// communication matrix adds up to the messages, and the first picture fills the window.
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>

#include "commmatrix.h"
#include "rankgroups.h"
#include "renderer.h"
#include "summary.h"
#include "testlog.h"

using namespace upshot;
using namespace mpe::format;

namespace {

// Categories: MPI_Init 0, MPI_Finalize 1, MPI_Send 2, MPI_Recv 3, and the user state "compute".
constexpr uint16_t kInit = 0, kFinalize = 1, kSend = 2, kRecv = 3, kCompute = kUserCategoryBase;

// R ranks, 4 per host ("nodeA", "nodeB", ...; "" for every rank when hosts is false); communicators:
// world (global id 0), the two halves of a split (ids 100 and 101), {0, 5} (id 200), and self.
Definitions manyDefs(uint32_t ranks, bool hosts = true)
{
    Definitions d;
    d.world_size = ranks;
    d.program = "many";
    d.clock = "monotonic";
    d.categories = mpi_categories({ "MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv" });
    std::vector<int32_t> world, half[2];
    for (uint32_t k = 0; k < ranks; ++k) {
        world.push_back(static_cast<int32_t>(k));
        half[k < ranks / 2 ? 0 : 1].push_back(static_cast<int32_t>(k));
    }
    for (uint32_t r = 0; r < ranks; ++r) {
        RankMeta m;
        m.rank = r;
        m.world_size = ranks;
        m.host = hosts ? std::string("node") + static_cast<char>('A' + r / 4) : std::string();
        m.threads = { ThreadDef { 0, 100 + r } };
        const int h = r < ranks / 2 ? 0 : 1;
        m.comms = { CommDef { 0, 0, false, world }, CommDef { 1, 100u + h, false, half[h] },
            CommDef { 2, 1000 + r, false, { static_cast<int32_t>(r) } } };
        if (r == 0 || r == 5) m.comms.push_back(CommDef { 3, 200, false, { 0, 5 } });
        m.user_categories = { Category { kCompute, CategoryKind::kState, kCompute + 1u, 0xC04040, "compute" } };
        d.ranks.push_back(m);
    }
    merge_user_categories(&d);
    return d;
}

// MPI_Init [0, 10000 + 10 r]; then 10 iterations of 1000 ns from 11000: compute (300 ns, 900 on
// the slow ranks), MPI_Send of 64 (r + 1) bytes to r + 1, MPI_Recv from r - 1 to the iteration's
// end; MPI_Finalize [21000 + 10 r, 33000]. Init and Finalize take over half the run.
std::vector<std::vector<Record>> manyRecords(uint32_t ranks, const std::set<uint32_t> &slow = {})
{
    std::vector<std::vector<Record>> out(ranks);
    for (uint32_t r = 0; r < ranks; ++r) {
        auto &v = out[r];
        v.push_back(testlog::rec(RecordKind::kState, 0, kInit, 0, 0, 0, 10000 + 10 * r));
        for (uint32_t k = 0; k < 10; ++k) {
            const uint64_t t = 11000 + 1000 * k, c = slow.count(r) ? 900 : 300;
            v.push_back(testlog::rec(RecordKind::kUserEvent, t, kCompute));
            v.push_back(testlog::rec(RecordKind::kUserEvent, t + c, kCompute + 1));
            v.push_back(testlog::rec(RecordKind::kState, t + c, kSend, 0, 0, 0, 40));
            v.push_back(testlog::rec(RecordKind::kSend, t + c, kSend, static_cast<int32_t>((r + 1) % ranks),
                static_cast<int32_t>(k), 0, 64 * (r + 1)));
            v.push_back(testlog::rec(RecordKind::kState, t + c + 40, kRecv, 0, 0, 0, 1000 - c - 50));
            v.push_back(testlog::rec(RecordKind::kRecv, t + 990, kRecv, static_cast<int32_t>((r + ranks - 1) % ranks),
                static_cast<int32_t>(k), 0, 64 * ((r + ranks - 1) % ranks + 1)));
        }
        v.push_back(testlog::rec(RecordKind::kState, 21000 + 10 * r, kFinalize, 0, 0, 0, 12000 - 10 * r));
    }
    return out;
}

// The category of row's depth-0 state holding t, by a linear scan (the reference).
int directCategory(const TraceModel &m, int row, double t)
{
    if (m.laneCount(row) == 0) return -1;
    auto [b, e] = m.lane(row, 0);
    for (size_t i = b; i < e; ++i)
        if (m.start(row, i) <= t && t < m.end(row, i)) return m.category(row, i);
    return -1;
}

} // namespace

class TestManyRanks : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::shared_ptr<TraceModel> m_model; // 16 ranks, ranks 3, 7 and 12 slow
    QString m_path;

    std::shared_ptr<TraceModel> load(
        const QString &name, const std::vector<std::vector<Record>> &records, const Definitions &defs)
    {
        const QString path = m_dir.filePath(name);
        if (!testlog::writeLog(path.toStdString(), records, defs)) return nullptr;
        auto loaded = loadModel(path);
        return loaded.ok() ? *loaded : nullptr;
    }

private slots:
    void initTestCase()
    {
        m_path = m_dir.filePath("many.mpelog");
        QVERIFY(testlog::writeLog(m_path.toStdString(), manyRecords(16, { 3, 7, 12 }), manyDefs(16)));
        auto loaded = loadModel(m_path);
        QVERIFY(loaded.ok());
        m_model = *loaded;
        QCOMPARE(m_model->rowCount(), 16);
        QCOMPARE(static_cast<int>(m_model->messages().size()), 160);
    }

    void summaryCountsEqualADirectCount_data()
    {
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("t1");
        QTest::addColumn<int>("columns");
        QTest::addColumn<bool>("hideCompute");
        QTest::newRow("whole run") << 0.0 << 33000.0 << 300 << false;
        QTest::newRow("one iteration") << 12000.0 << 13000.0 << 97 << false;
        QTest::newRow("past the run's ends") << -500.0 << 34000.0 << 50 << false;
        QTest::newRow("compute hidden") << 11000.0 << 21000.0 << 200 << true;
    }
    void summaryCountsEqualADirectCount()
    {
        QFETCH(double, t0);
        QFETCH(double, t1);
        QFETCH(int, columns);
        QFETCH(bool, hideCompute);
        std::vector<char> visible(static_cast<size_t>(m_model->categoryCount()), 1);
        const int compute = m_model->findCategory("compute");
        QVERIFY(compute >= 0);
        if (hideCompute) visible[static_cast<size_t>(compute)] = 0;
        const SummaryBand band = summarize(*m_model, t0, t1, columns, visible);
        QCOMPARE(band.columns, columns);
        QVERIFY(!band.estimated);
        int checkedMpi = 0;
        for (int c = 0; c < columns; ++c) {
            const double t = t0 + (c + 0.5) * (t1 - t0) / columns;
            std::map<int, double> direct;
            for (int r = 0; r < m_model->rowCount(); ++r) {
                int cat = directCategory(*m_model, r, t);
                if (cat >= 0 && !visible[static_cast<size_t>(cat)]) cat = -1;
                direct[cat] += 1;
            }
            double sum = 0;
            for (int k = 0; k < band.codes(); ++k)
                sum += band.count(c, k);
            QCOMPARE(sum, 16.0);
            for (auto [cat, n] : direct) {
                QCOMPARE(band.countOfCategory(c, cat), n);
                checkedMpi += cat >= 0 && m_model->isMpiCategory(cat);
            }
        }
        QVERIFY(checkedMpi > 0); // MPI states were counted, not only "no state"
    }

    void binnedBandEqualsTheDirectCountAtBinCentres()
    {
        const RankBins &bins = *m_model->rankBins();
        QCOMPARE(bins.rowCount(), 16);
        const double a = bins.t0(), b = bins.t0() + bins.binWidth() * bins.binCount();
        const SummaryBand binned = m_model->allRowCounts()->band(0, a, b, bins.binCount());
        const SummaryBand direct = summarize(*m_model, a, b, bins.binCount());
        for (int c = 0; c < bins.binCount(); c += 7)
            for (int k = 0; k < direct.codes(); ++k)
                QCOMPARE(binned.countOfCategory(c, direct.categoryOfCode[static_cast<size_t>(k)]), direct.count(c, k));
    }

    void groupsByNodePutEachRankOnItsHost()
    {
        GroupSpec spec;
        QVERIFY(parseGroupSpec("node", &spec, nullptr));
        auto G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        QCOMPARE(G->by(), GroupBy::Node);
        QVERIFY(G->message().isEmpty());
        QCOMPARE(G->groupCount(), 4);
        for (int r = 0; r < 16; ++r) {
            const RankGroup &g = G->groups()[static_cast<size_t>(G->groupOfRow(r))];
            QCOMPARE(g.label, QString("node") + QChar('A' + r / 4));
            QCOMPARE(static_cast<int>(g.rows.size()), 4);
        }
    }

    void groupsByCommunicatorTakeItsMembers()
    {
        GroupSpec spec;
        // A split: the chosen half and its sibling, one group each.
        QVERIFY(parseGroupSpec("comm:101", &spec, nullptr));
        auto G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        QCOMPARE(G->by(), GroupBy::Communicator);
        QCOMPARE(G->groupCount(), 2);
        for (int r = 0; r < 16; ++r)
            QCOMPARE(G->groups()[static_cast<size_t>(G->groupOfRow(r))].label,
                r < 8 ? QString("comm 100") : QString("comm 101"));
        // A communicator with no sibling: its members, then the rest in blocks.
        QVERIFY(parseGroupSpec("comm:200", &spec, nullptr));
        G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd(), 4);
        const int g = G->groupOfRow(0);
        QCOMPARE(G->groups()[static_cast<size_t>(g)].label, QString("comm 200"));
        QCOMPARE(G->groups()[static_cast<size_t>(g)].rows, (std::vector<int> { 0, 5 }));
        for (int r = 0; r < 16; ++r)
            if (r != 0 && r != 5) QVERIFY(G->groupOfRow(r) != g && G->groupOfRow(r) >= 0);
        QVERIFY(parseGroupSpec("comm:world", &spec, nullptr));
        G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        QCOMPARE(G->groupCount(), 1);
        QCOMPARE(G->groups()[0].rows.size(), size_t { 16 });
    }

    void behaviourClusteringFindsTheSlowRanks()
    {
        GroupSpec spec;
        QVERIFY(parseGroupSpec("behaviour:2", &spec, nullptr));
        auto G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        QCOMPARE(G->by(), GroupBy::Behaviour);
        QCOMPARE(G->groupCount(), 2);
        const int slow = G->groupOfRow(3);
        QCOMPARE(G->groups()[static_cast<size_t>(slow)].rows, (std::vector<int> { 3, 7, 12 }));
        const RankGroup &s = G->groups()[static_cast<size_t>(slow)];
        QVERIFY(s.representative == 3 || s.representative == 7 || s.representative == 12);
        // The slow ranks spend less of the run in MPI than the others.
        const RankGroup &fast = G->groups()[static_cast<size_t>(1 - slow)];
        QVERIFY(s.maxMpiShare < fast.minMpiShare);
        // Deterministic: the same clusters again.
        auto again = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        for (int r = 0; r < 16; ++r)
            QCOMPARE(again->groupOfRow(r), G->groupOfRow(r));
    }

    void aGroupExpandsToExactlyItsRanksAndCollapses()
    {
        GroupSpec spec;
        QVERIFY(parseGroupSpec("blocks:4", &spec, nullptr));
        auto G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        QCOMPARE(G->groupCount(), 4);
        QCOMPARE(G->rowSlots().size(), size_t { 4 });
        G->setExpanded(1, true);
        QCOMPARE(G->rowSlots().size(), size_t { 8 });
        std::vector<int> shown;
        for (const auto &s : G->rowSlots())
            if (!s.isGroup()) shown.push_back(s.row);
        QCOMPARE(shown, (std::vector<int> { 4, 5, 6, 7 }));
        for (int r = 0; r < 16; ++r)
            QCOMPARE(G->rowShown(r), r >= 4 && r < 8);
        // Rows of collapsed groups are drawn in their group's slot (messages go there).
        QCOMPARE(G->slotOfRow(12), 7);
        G->toggle(1);
        QCOMPARE(G->rowSlots().size(), size_t { 4 });
        for (int r = 0; r < 16; ++r)
            QCOMPARE(G->slotOfRow(r), r / 4);
    }

    void badGroupingFallsBackToBlocksWithAMessage()
    {
        GroupSpec spec;
        QVERIFY(parseGroupSpec("comm:9999", &spec, nullptr));
        auto G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd(), 4);
        QCOMPARE(G->by(), GroupBy::Blocks);
        QVERIFY2(G->message().contains("no communicator \"9999\""), qPrintable(G->message()));
        QCOMPARE(G->groupCount(), 4);
        // Hosts missing.
        auto nohosts = load("nohosts.mpelog", manyRecords(8), manyDefs(8, false));
        QVERIFY(nohosts);
        QVERIFY(parseGroupSpec("node", &spec, nullptr));
        G = RankGroups::make(*nohosts, spec, nohosts->tBegin(), nohosts->tEnd(), 2);
        QCOMPARE(G->by(), GroupBy::Blocks);
        QVERIFY2(G->message().contains("no host name"), qPrintable(G->message()));
        QCOMPARE(G->groupCount(), 2);
        QVERIFY(!parseGroupSpec("bogus", &spec, nullptr));
        QVERIFY(!parseGroupSpec("blocks:0", &spec, nullptr));
        // The command line says it once on stderr and still writes the picture.
        QProcess p;
        p.start(UPSHOT_EXE, { "--export", m_dir.filePath("fallback.png"), "--group", "comm:9999", m_path });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.count("no communicator") == 1, qPrintable(err));
        QVERIFY(QImage(m_dir.filePath("fallback.png")).width() > 0);
    }

    void matrixTotalsEqualTheMessages()
    {
        uint64_t bytes = 0;
        for (const upshot::Message &m : m_model->messages())
            bytes += m.bytes;
        const MessageTotals t = messageTotals(*m_model);
        QCOMPARE(t.messages, uint64_t { 160 });
        QCOMPARE(t.bytes, bytes);
        QCOMPARE(bytes, uint64_t { 10 * 64 * (16 * 17 / 2) });
        const CommMatrix perRank = buildCommMatrix(*m_model, 0, 0, MatrixValue::Bytes);
        QCOMPARE(perRank.size, 16);
        QCOMPARE(perRank.total(), static_cast<double>(bytes));
        QCOMPARE(perRank.at(2, 3), 10.0 * 64 * 3);
        QCOMPARE(buildCommMatrix(*m_model, 0, 0, MatrixValue::Messages).total(), 160.0);
        // By node: the ring's messages inside a node land on the diagonal.
        GroupSpec spec;
        QVERIFY(parseGroupSpec("node", &spec, nullptr));
        auto G = RankGroups::make(*m_model, spec, m_model->tBegin(), m_model->tEnd());
        const CommMatrix byNode = buildCommMatrix(*m_model, 0, 0, MatrixValue::Messages, G.get());
        QCOMPARE(byNode.size, 4);
        QCOMPARE(byNode.total(), 160.0);
        for (int g = 0; g < 4; ++g) {
            QCOMPARE(byNode.at(g, g), 30.0); // 3 of each node's 4 senders send inside it
            QCOMPARE(byNode.at(g, (g + 1) % 4), 10.0);
        }
        // A window: the messages sent inside it; blocks when ranks exceed the size.
        const CommMatrix window = buildCommMatrix(*m_model, 12000, 13999, MatrixValue::Messages, nullptr, 5);
        QCOMPARE(window.size, 4);
        QCOMPARE(window.total(), 32.0);
        QCOMPARE(messageTotals(*m_model, 12000, 13999).messages, uint64_t { 32 });
        // No wait states analysed: said, and empty.
        const CommMatrix waits = buildCommMatrix(*m_model, 0, 0, MatrixValue::WaitTime);
        QVERIFY(!waits.note.isEmpty());
        QCOMPARE(waits.total(), 0.0);
        const long first = firstMessageOfCell(*m_model, perRank, 2, 3);
        QVERIFY(first >= 0);
        QCOMPARE(m_model->rank(static_cast<int>(m_model->messages()[static_cast<size_t>(first)].send_timeline)), 2u);
        QCOMPARE(firstMessageOfCell(*m_model, perRank, 3, 2), -1L);
    }

    void firstPictureFillsTheWindowFromTheEndOfInit()
    {
        auto four = load("four.mpelog", manyRecords(4), manyDefs(4));
        QVERIFY(four);
        const QSize size(1920, 1080);
        OpeningOptions o;
        const ViewState v = openingView(*four, size, o);
        // Starts at the last rank's end of MPI_Init, ends at the first one's MPI_Finalize.
        QCOMPARE(v.scale.t0(), 10030.0);
        QCOMPARE(v.scale.t1(), 21000.0);
        QVERIFY(v.rulerNote.contains("MPI_Init"));
        QVERIFY(!v.groups);
        QVERIFY(4 * v.rowHeight >= 0.8 * size.height());
        QImage img(size, QImage::Format_RGB32);
        img.fill(Qt::white);
        RenderStats st;
        {
            QPainter p(&img);
            paintTimeline(p, *four, v, &st);
        }
        QVERIFY(st.legendEntries >= 3);
        // The legend's first swatch has the colour of the category with most time (MPI_Finalize).
        const int legendMid = size.height() - v.legendHeight / 2;
        QCOMPARE(img.pixelColor(10, legendMid), four->categoryInfo(four->findCategory("MPI_Finalize")).color);
        // No MPI_Init is drawn: the view starts after it (the compute colour where rank 0 computes).
        const QColor compute = four->categoryInfo(four->findCategory("compute")).color;
        QCOMPARE(img.pixelColor(static_cast<int>(v.xOf(11150)), static_cast<int>(v.rowTop(0) + 6)), compute);
        // The whole run on request; and 16 ranks in 100 px rows are grouped, with the band.
        o.range = std::make_pair(four->tBegin(), four->tEnd());
        QCOMPARE(openingView(*four, size, o).scale.t0(), four->tBegin());
        const ViewState small = openingView(*m_model, QSize(800, 28 + 20 + 40), OpeningOptions {});
        QVERIFY(small.groups);
        QVERIFY(small.summaryHeight > 0);
    }

    void groupRowsAndTheBandPaintTheirCategories()
    {
        OpeningOptions o;
        QVERIFY(parseGroupSpec("node", &o.group, nullptr));
        o.summary = true;
        o.range = std::make_pair(11000.0, 21000.0);
        const QSize size(1200, 400);
        ViewState v = openingView(*m_model, size, o);
        QCOMPARE(v.slotCount(*m_model), 4);
        auto paint = [&](const ViewState &view, RenderStats *st) {
            QImage img(size, QImage::Format_RGB32);
            img.fill(Qt::white);
            QPainter p(&img);
            paintTimeline(p, *m_model, view, st);
            return img;
        };
        RenderStats st;
        QImage img = paint(v, &st);
        QCOMPARE(st.groupRows, size_t { 4 });
        QVERIFY(st.summaryColumns > 0);
        // At 11100 every rank computes: the group rows and the whole band show compute.
        const QColor compute = m_model->categoryInfo(m_model->findCategory("compute")).color;
        const int x = static_cast<int>(v.xOf(11100));
        QCOMPARE(img.pixelColor(x, static_cast<int>(v.slotTop(2) + v.rowHeight / 4)), compute);
        QCOMPARE(img.pixelColor(x, static_cast<int>(v.rulerHeight + v.summaryHeight / 2)), compute);
        // At 11600 the fast ranks receive and the slow ones compute: node A (rank 3 slow) is
        // dominantly MPI_Recv; with mpi-share its colour is a red shade, not a category's.
        const QColor recv = m_model->categoryInfo(m_model->findCategory("MPI_Recv")).color;
        const int x2 = static_cast<int>(v.xOf(11600));
        QCOMPARE(img.pixelColor(x2, static_cast<int>(v.slotTop(0) + v.rowHeight / 4)), recv);
        v.drawMode = DrawMode::MpiShare;
        img = paint(v, nullptr);
        const QColor shade = img.pixelColor(x2, static_cast<int>(v.slotTop(0) + v.rowHeight / 4));
        QVERIFY(shade != recv && shade.red() > shade.green());
        // Expanded, a group's rows are drawn on their own under it.
        v.groups->setExpanded(0, true);
        v = fittedView(*m_model, 11000, 21000, size, v);
        QCOMPARE(v.slotCount(*m_model), 8);
        img = paint(v, &st);
        QCOMPARE(img.pixelColor(x, static_cast<int>(v.rowTop(1) + v.rowHeight / 4)), compute);
    }

    // Dense messages between groups are bundled: the bundles carry every message and byte of
    // the view (1280 of a 128-rank ring, none sampled), and those between groups are labelled.
    void bundlesCarryTheMessagesCountAndBytes()
    {
        auto model = load("ring128.mpelog", manyRecords(128), manyDefs(128));
        QVERIFY(model);
        QCOMPARE(static_cast<int>(model->messages().size()), 1280);
        OpeningOptions o;
        QVERIFY(parseGroupSpec("node", &o.group, nullptr));
        o.range = std::make_pair(model->tBegin(), model->tEnd());
        const QSize size(900, 600);
        const ViewState v = openingView(*model, size, o);
        QCOMPARE(v.groups->groupCount(), 32);
        QImage img(size, QImage::Format_RGB32);
        img.fill(Qt::white);
        QPainter p(&img);
        RenderStats st;
        paintTimeline(p, *model, v, &st);
        QVERIFY(st.arrowBundles > 0);
        QVERIFY(st.arrowBundles < 1280);
        const MessageTotals t = messageTotals(*model);
        QCOMPARE(st.bundledMessages, t.messages);
        QCOMPARE(st.bundledBytes, t.bytes);
        QVERIFY(st.bundleLabels > 0);
    }

    // Sizes of 4 GiB and more survive the build's compact message queues (kept aside, by queue,
    // timeline and time), each with its own message.
    void messagesOfFourGiBAndMoreKeepTheirSize()
    {
        const uint64_t big = uint64_t { 5 } << 30;
        std::vector<std::vector<Record>> recs(2);
        recs[0] = { testlog::rec(RecordKind::kSend, 100, kSend, 1, 7, 0, big),
            testlog::rec(RecordKind::kSend, 120, kSend, 1, 7, 0, 3),
            testlog::rec(RecordKind::kSend, 150, kSend, 1, 7, 0, 0xFFFFFFFFu) };
        recs[1] = { testlog::rec(RecordKind::kRecv, 200, kRecv, 0, 7, 0, big),
            testlog::rec(RecordKind::kRecv, 300, kRecv, 0, 7, 0, 3),
            testlog::rec(RecordKind::kRecv, 400, kRecv, 0, 7, 0, 0xFFFFFFFFu) };
        auto model = load("big.mpelog", recs, manyDefs(2));
        QVERIFY(model);
        QCOMPARE(static_cast<int>(model->messages().size()), 3);
        std::map<int64_t, uint64_t> bytesByRecv; // times are from the run's start (100)
        for (const upshot::Message &m : model->messages())
            bytesByRecv[m.recv_time] = m.bytes;
        QCOMPARE(bytesByRecv[100], big);
        QCOMPARE(bytesByRecv[200], uint64_t { 3 });
        QCOMPARE(bytesByRecv[300], uint64_t { 0xFFFFFFFFu });
    }
};

QTEST_MAIN(TestManyRanks)
#include "tst_manyranks.moc"
