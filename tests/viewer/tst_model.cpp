// Model-level tests of upshot: the time scale, culling, LOD folding, hit-testing, search order,
// histogram contents, window statistics and the legend model (under QAbstractItemModelTester).
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <map>

#include "lodfolder.h"
#include "mpe/interop.h"
#include "panels.h"
#include "testlog.h"
#include "timescale.h"
#include "tracebuilder.h"
#include "tracemodel.h"

using namespace upshot;

class TestModel : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::shared_ptr<TraceModel> m_known, m_dense;
    static constexpr int kDense = 100000;

    std::shared_ptr<TraceModel> load(const std::vector<std::vector<mpe::format::Record>> &recs, const char *name)
    {
        const QString path = m_dir.filePath(name);
        if (!testlog::writeLog(path.toStdString(), recs)) return nullptr;
        auto m = loadModel(path);
        if (!m.ok()) {
            qWarning() << m.status().to_string().c_str();
            return nullptr;
        }
        return *m;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_known = load(testlog::knownRecords(), "known.mpelog");
        m_dense = load(testlog::denseRecords(kDense), "dense.mpelog");
        QVERIFY(m_known && m_dense);
    }

    void timeScaleMapsBothWays_data()
    {
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("nsPerPx");
        QTest::addColumn<double>("x");
        QTest::newRow("unit") << 0.0 << 1.0 << 10.0;
        QTest::newRow("offset") << 1e9 << 1e3 << 333.0;
        QTest::newRow("sub-ns") << 5.0 << 0.01 << 77.0;
    }
    void timeScaleMapsBothWays()
    {
        QFETCH(double, t0);
        QFETCH(double, nsPerPx);
        QFETCH(double, x);
        TimeScale s(t0, nsPerPx, 1000);
        QCOMPARE(s.timeToX(s.xToTime(x)), x);
        QCOMPARE(s.xToTime(0), t0);
        QCOMPARE(s.t1(), t0 + 1000 * nsPerPx);
    }
    void timeScaleZoomKeepsAnchor()
    {
        TimeScale s = TimeScale::fit(0, 1e6, 1000);
        const double t = s.xToTime(250);
        s.zoom(4, 250);
        QVERIFY(qAbs(s.xToTime(250) - t) < 1e-6);
        QCOMPARE(s.visibleSpan(), 0.25e6);
        s.zoom(0.25, 900);
        QVERIFY(qAbs(s.visibleSpan() - 1e6) < 1e-6);
        s.zoom(1e30, 0); // clamped
        QCOMPARE(s.nsPerPixel(), TimeScale::kMinNsPerPixel);
    }

    void knownLogLayout()
    {
        const TraceModel &m = *m_known;
        QCOMPARE(m.rowCount(), 2);
        QCOMPARE(m.rowLabel(1), QString("rank 1"));
        QCOMPARE(m.laneCount(0), 2); // compute at depth 0, MPI_Barrier at depth 1
        QCOMPARE(m.tBegin(), 0.0);
        QCOMPARE(m.tEnd(), 1000.0);
        QCOMPARE(m.messages().size(), size_t(1));
        const int compute = m.findCategory("compute"), barrier = m.findCategory("MPI_Barrier");
        QVERIFY(compute >= 0 && barrier >= 0);
        QCOMPARE(m.categoryInfo(compute).count, uint64_t(2));
        QCOMPARE(m.categoryInfo(compute).inclusiveNs, 550.0);
        QCOMPARE(m.categoryInfo(compute).exclusiveNs, 450.0); // minus the nested barrier
        QCOMPARE(m.categoryInfo(compute).color, QColor(0xFF0000));
        QCOMPARE(m.markers(1).size(), size_t(1));
    }

    void cullingFindsOnlyOverlappingStates()
    {
        const TraceModel &m = *m_dense;
        // Lane 0 holds kDense small states then the wide barrier [20*kDense, 40*kDense].
        auto [b, e] = m.visibleStates(0, 0, 1000, 1100);
        QCOMPARE(b, size_t(50)); // [1000,1010]
        QCOMPARE(e, size_t(56)); // up to the one starting at 1100
        // A window inside the long state finds exactly it.
        auto [b2, e2] = m.visibleStates(0, 0, 30.0 * kDense, 31.0 * kDense);
        QCOMPARE(e2 - b2, size_t(1));
        QCOMPARE(m.category(0, b2), m.findCategory("MPI_Barrier"));
        // A gap between states holds nothing.
        auto [b3, e3] = m.visibleStates(0, 0, 1012, 1018);
        QCOMPARE(e3 - b3, size_t(0));
        // Nested lane: the barrier is visible from inside the compute state only where it is.
        auto [nb, ne] = m_known->visibleStates(0, 1, 150, 160);
        QCOMPARE(ne - nb, size_t(1));
        auto [nb2, ne2] = m_known->visibleStates(0, 1, 250, 260);
        QCOMPARE(ne2 - nb2, size_t(0));
    }

    // Widths: folds of ~15 states (state by state), ~300 (16-state blocks), ~5000 (256-state
    // blocks): the folds then end on block boundaries, and the invariants hold at every level.
    void foldingBoundsBoxesAndCoversEveryState_data()
    {
        QTest::addColumn<double>("width");
        QTest::addColumn<size_t>("boundary");
        QTest::newRow("states") << 20000.0 << size_t(1);
        QTest::newRow("fine blocks") << 1000.0 << TraceModel::blockSize(0);
        QTest::newRow("coarse blocks") << 60.0 << TraceModel::blockSize(1);
    }
    void foldingBoundsBoxesAndCoversEveryState()
    {
        QFETCH(double, width);
        QFETCH(size_t, boundary);
        const TraceModel &m = *m_dense;
        const TimeScale s = TimeScale::fit(m.tBegin(), m.tEnd(), width);
        std::vector<LodBox> boxes;
        LodFolder(m, s, 3).fold(0, 0, boxes);
        QVERIFY2(boxes.size() <= width / 3 + 2, qPrintable(QString::number(boxes.size())));
        // Boxes are in order and together cover every state exactly once.
        size_t next = 0, aligned = 0;
        for (const LodBox &b : boxes) {
            QCOMPARE(b.first, next);
            next = b.last;
            aligned += b.last % boundary == 0;
        }
        QVERIFY2(aligned + 2 >= boxes.size(), qPrintable(QStringLiteral("%1 of %2").arg(aligned).arg(boxes.size())));
        QCOMPARE(next, m.stateCount(0));
        // The last box is the wide barrier, unfolded; the others are folds.
        QVERIFY(!boxes.back().folded);
        QCOMPARE(boxes.back().category, m.findCategory("MPI_Barrier"));
        QVERIFY(boxes.front().folded);
        // The summary of a fold counts and splits its time exactly.
        const FoldSummary f = m.summarize(0, boxes.front().first, boxes.front().last);
        QCOMPARE(f.count, boxes.front().last - boxes.front().first);
        double sum = 0;
        for (auto &[c, ns] : f.timePerCategory)
            sum += ns;
        QCOMPARE(sum, 10.0 * f.count);
    }

    void foldingKeepsWideStatesWhenZoomedIn()
    {
        const TraceModel &m = *m_dense;
        const TimeScale s = TimeScale::fit(0, 2000, 1000); // 2 ns per pixel: a 10 ns state is 5 px
        std::vector<LodBox> boxes;
        LodFolder(m, s, 3).fold(0, 0, boxes);
        QCOMPARE(boxes.size(), size_t(101));
        for (const LodBox &b : boxes)
            QVERIFY(!b.folded && b.last == b.first + 1);
    }

    void hitTestingFindsDeepestState()
    {
        const TraceModel &m = *m_known;
        StateRef s = m.stateAt(0, 150);
        QVERIFY(s.valid());
        QCOMPARE(m.category(0, s.index), m.findCategory("MPI_Barrier"));
        s = m.stateAt(0, 300);
        QCOMPARE(m.category(0, s.index), m.findCategory("compute"));
        QVERIFY(!m.stateAt(0, 450).valid()); // gap between compute and the send
        QVERIFY(m.stateAt(0, 450, 60).valid()); // within tolerance of the send
        QVERIFY(!m.stateAt(5, 100).valid()); // no such row
        QVERIFY(m.describeState(m.stateAt(1, 400)).contains("MPI_Recv"));
        QVERIFY(m.describeMessage(0).contains("64 bytes"));
        QVERIFY(m.describeMessage(0).contains("latency 300 ns"));
    }

    void searchVisitsInstancesInTimeOrder()
    {
        const TraceModel &m = *m_known;
        std::vector<double> starts;
        double t = -1;
        for (StateRef s; (s = m.find(t, true, -1)).valid();) {
            starts.push_back(m.start(s.row, s.index));
            t = starts.back();
        }
        QCOMPARE(starts, (std::vector<double> { 0, 100, 300, 500, 850 }));
        // Backward from the end, one category, one row.
        const int compute = m.findCategory("compute");
        std::vector<double> back;
        t = 2000;
        for (StateRef s; (s = m.find(t, false, compute)).valid();) {
            back.push_back(m.start(s.row, s.index));
            t = back.back();
        }
        QCOMPARE(back, (std::vector<double> { 850, 0 }));
        StateRef only1 = m.find(-1, true, compute, { 1 });
        QCOMPARE(only1.row, 1);
        // Unsearchable categories are skipped.
        m_known->categoryInfo(m.findCategory("MPI_Barrier")).searchable = false;
        const StateRef after0 = m.find(0, true, -1);
        QCOMPARE(after0.row, 1);
        QCOMPARE(m.start(after0.row, after0.index), 300.0); // the receive, not the barrier at 100
        m_known->categoryInfo(m.findCategory("MPI_Barrier")).searchable = true;
    }

    void histogramCountsDurations()
    {
        const TraceModel &m = *m_dense;
        std::vector<bool> cats(static_cast<size_t>(m.categoryCount()), false);
        cats[static_cast<size_t>(m.findCategory("MPI_Send"))] = true;
        Histogram h = m.histogram(cats, m.tBegin(), m.tEnd(), 10, false);
        QCOMPARE(h.total, uint64_t(kDense / 2));
        QCOMPARE(h.counts[0], uint64_t(kDense / 2)); // all 10 ns
        // All states over the whole run: kDense of 10 ns and one of 2,000,000 ns.
        Histogram all = m.histogram({}, m.tBegin(), m.tEnd(), 4, true);
        QCOMPARE(all.total, uint64_t(kDense + 1));
        QCOMPARE(all.counts.front(), uint64_t(kDense));
        QCOMPARE(all.counts.back(), uint64_t(1));
        QVERIFY(all.binRange(0).first <= 10 + 1e-9 && all.binRange(3).second > 2e6 - 1e-6);
        // The range follows the window: only the states starting inside it.
        Histogram win = m.histogram({}, 0, 199, 4, false);
        QCOMPARE(win.total, uint64_t(10));
    }

    void histogramWidgetHighlightsABar()
    {
        HistogramWidget w;
        w.resize(400, 300);
        w.setModel(m_known);
        w.setLogX(false);
        w.setBins(5);
        // Durations 400, 100, 100, 500, 150 (compute, barrier, send, recv, compute).
        QCOMPARE(w.histogram().total, uint64_t(5));
        QCOMPARE(w.histogram().counts, (std::vector<uint64_t> { 3, 0, 0, 1, 1 })); // bins of 80 ns from 100 ns
        QSignalSpy spy(&w, &HistogramWidget::highlightRequested);
        w.selectBar(4);
        QCOMPARE(spy.count(), 1);
        const Highlight h = spy.first().first().value<Highlight>();
        QVERIFY(h.active());
        QVERIFY(h.lo > 400 && h.lo <= 500 && h.hi > 500);
        w.setCategory(m_known->findCategory("compute"));
        QCOMPARE(w.histogram().total, uint64_t(2));
    }

    void windowStatistics()
    {
        const TraceModel &m = *m_known;
        const auto per = m.timePerCategory(0, 1000);
        QCOMPARE(per[0][m.findCategory("compute")], 400.0);
        QCOMPARE(per[1][m.findCategory("MPI_Recv")], 500.0);
        const auto clipped = m.timePerCategory(700, 900);
        QCOMPARE(clipped[1][m.findCategory("MPI_Recv")], 100.0);
        QCOMPARE(clipped[1][m.findCategory("compute")], 50.0);
        const auto mat = m.commMatrix(0, 1000);
        QCOMPARE(mat[0 * 2 + 1], uint64_t(64));
        QCOMPARE(mat[1 * 2 + 0], uint64_t(0));
        QCOMPARE(m.commMatrix(600, 1000)[1], uint64_t(0)); // sent at 500
    }

    void legendModelIsAWellBehavedModel()
    {
        LegendModel legend;
        QAbstractItemModelTester tester(&legend, QAbstractItemModelTester::FailureReportingMode::QtTest);
        legend.setModel(m_known);
        // Only the categories the log uses, largest inclusive time first: compute (550 ns),
        // MPI_Recv (500), then MPI_Send and MPI_Barrier (100 each).
        QCOMPARE(legend.rowCount(), 4);
        QCOMPARE(legend.data(legend.index(1, LegendModel::Name), Qt::DisplayRole).toString(), QString("MPI_Recv"));
        const int row = 0, c = m_known->findCategory("compute");
        QCOMPARE(legend.categoryAt(row), c);
        QCOMPARE(legend.data(legend.index(row, LegendModel::Name), Qt::DisplayRole).toString(), QString("compute"));
        QCOMPARE(legend.data(legend.index(row, LegendModel::Count), Qt::DisplayRole).toULongLong(), 2ull);
        QSignalSpy spy(&legend, &LegendModel::categoriesChanged);
        QVERIFY(legend.setData(legend.index(row, LegendModel::Name), Qt::Unchecked, Qt::CheckStateRole));
        QVERIFY(!m_known->categoryInfo(c).visible);
        QVERIFY(legend.setData(legend.index(row, LegendModel::Name), QColor(Qt::blue), Qt::DecorationRole));
        QCOMPARE(m_known->categoryInfo(c).color, QColor(Qt::blue));
        QCOMPARE(spy.count(), 2);
        legend.setData(legend.index(row, LegendModel::Name), Qt::Checked, Qt::CheckStateRole);
        m_known->categoryInfo(c).color = QColor(0xFF0000);
        legend.setModel(nullptr);
        QCOMPARE(legend.rowCount(), 0);
    }

    // The model built chunk by chunk (on 1 or 2 decoding threads) holds exactly what the
    // reference reader, mpe::format::load_trace(), decodes: states, events, messages and the span,
    // including a state longer than 32 bits of ns and a causality repair.
    void modelMatchesTheReferenceReader_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("threads");
        const uint16_t U = mpe::format::kUserCategoryBase;
        using testlog::rec;
        using K = mpe::format::RecordKind;
        // Rank 1's receive completes before rank 0's send began: the reader shifts rank 1.
        const std::vector<std::vector<mpe::format::Record>> skewed = {
            { rec(K::kUserEvent, 50, U), rec(K::kState, 500, 0, 1, 0, 0, 100), rec(K::kSend, 500, 0, 1, 3, 0, 10),
                rec(K::kUserEvent, 700, U + 1), rec(K::kState, 1000, 2, 0, 0, 0, 5'000'000'000ull),
                rec(K::kCollective, 1000, 2, -1, 0, 0, 8) },
            { rec(K::kState, 200, 1, 0, 0, 0, 150), rec(K::kRecv, 300, 1, 0, 3, 0, 10), rec(K::kMarker, 400, 0, 1, 1) }
        };
        QVERIFY(testlog::writeLog(m_dir.filePath("skewed.mpelog").toStdString(), skewed));
        for (int threads : { 1, 2 }) {
            for (const char *name : { "known.mpelog", "dense.mpelog", "skewed.mpelog" })
                QTest::addRow("%s, %d threads", name, threads) << QString(name) << threads;
        }
    }
    void modelMatchesTheReferenceReader()
    {
        QFETCH(QString, name);
        QFETCH(int, threads);
        auto file = mpe::format::LogFile::open(m_dir.filePath(name).toStdString());
        QVERIFY(file.ok());
        auto trace = mpe::format::load_trace(*file);
        QVERIFY(trace.ok());
        auto built = buildModel(*file, {}, threads);
        QVERIFY2(built.ok(), built.status().to_string().c_str());
        const std::shared_ptr<TraceModel> model = *built;
        QCOMPARE(model->rowCount(), static_cast<int>(trace->timelines.size()));
        QCOMPARE(model->tBegin(), static_cast<double>(trace->t_begin));
        QCOMPARE(model->tEnd(), static_cast<double>(trace->t_end));
        QCOMPARE(model->recordCount(), trace->records);
        auto key = [](const mpe::format::State &s) { return std::tuple(s.start, s.depth, s.end, s.cat); };
        for (int r = 0; r < model->rowCount(); ++r) {
            const auto &T = trace->timelines[static_cast<size_t>(r)];
            QCOMPARE(model->rank(r), T.rank);
            std::vector<std::tuple<int64_t, uint32_t, int64_t, uint32_t>> want, got;
            for (const auto &s : T.states)
                want.push_back(key(s));
            for (size_t i = 0; i < model->stateCount(r); ++i)
                got.push_back(key(model->state(r, i)));
            std::sort(want.begin(), want.end());
            std::sort(got.begin(), got.end());
            QCOMPARE(got, want);
            QCOMPARE(model->events(r).size(), T.events.size());
            for (size_t i = 0; i < T.events.size(); ++i) {
                QCOMPARE(model->events(r)[i].time, T.events[i].time);
                QCOMPARE(model->events(r)[i].kind, T.events[i].kind);
            }
        }
        std::vector<std::tuple<int64_t, int64_t, uint32_t, uint32_t, int32_t, uint64_t>> want, got;
        for (const auto &m : trace->messages)
            want.emplace_back(m.send_time, m.recv_time, m.send_timeline, m.recv_timeline, m.tag, m.bytes);
        for (const auto &m : model->messages())
            got.emplace_back(m.send_time, m.recv_time, m.send_timeline, m.recv_timeline, m.tag, m.bytes);
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        QCOMPARE(got, want);
        if (name == "skewed.mpelog") {
            QVERIFY(!trace->causality_shift_ns.empty()); // the case this log is for
            const int barrier = model->findCategory("MPI_Barrier");
            auto [b, e] = model->lane(0, 0);
            bool longOne = false;
            for (size_t i = b; i < e; ++i)
                longOne |= model->category(0, i) == barrier && model->duration(0, i) == 5e9;
            QVERIFY(longOne);
        }
    }

    // The preview, from the index alone: the dense log's one chunk [0, 40 us] spends 20 us in its
    // wide MPI_Barrier and 5 us each in MPI_Send and MPI_Recv; its 16 slices of 2.5 us go 8, 2
    // and 2 to them, the first to the dominant barrier, and 4 stay empty.
    void previewSharesEachChunkAmongItsTopCategories()
    {
        auto file = mpe::format::LogFile::open(m_dir.filePath("dense.mpelog").toStdString());
        QVERIFY(file.ok());
        auto preview = buildPreview(*file);
        QVERIFY(preview->isPreview());
        QCOMPARE(preview->rowCount(), 1);
        QCOMPARE(preview->tBegin(), 0.0);
        QCOMPARE(preview->tEnd(), 40.0 * kDense);
        QCOMPARE(preview->recordCount(), uint64_t(kDense + 1));
        QCOMPARE(preview->messages().size(), size_t(0));
        QCOMPARE(preview->laneCount(0), 1);
        const int barrier = preview->findCategory("MPI_Barrier"), send = preview->findCategory("MPI_Send"),
                  recv = preview->findCategory("MPI_Recv");
        QCOMPARE(preview->category(0, 0), barrier);
        QCOMPARE(preview->start(0, 0), 0.0);
        std::map<int, double> time;
        double end = 0;
        for (size_t i = 0; i < preview->stateCount(0); ++i) {
            QVERIFY(preview->start(0, i) >= end); // no overlap, in order
            end = preview->end(0, i);
            time[preview->category(0, i)] += preview->duration(0, i);
        }
        QVERIFY(end <= 40.0 * kDense);
        QCOMPARE(time.size(), size_t(3));
        QCOMPARE(time[barrier], 20.0 * kDense);
        QCOMPARE(time[send], 5.0 * kDense);
        QCOMPARE(time[recv], 5.0 * kDense);
        const StateRef hit = preview->stateAt(0, 1000);
        QVERIFY(hit.valid());
        QCOMPARE(preview->category(0, hit.index), barrier);
    }

    // upshot opens an OTF2 archive (written here by our own exporter) into the same model.
    void otf2ArchiveLoadsIntoTheSameModel()
    {
        const std::string log = m_dir.filePath("known.mpelog").toStdString();
        const std::string archive = m_dir.filePath("known-otf2").toStdString();
        const mpe::Status st = mpe::interop::mpelog_to_otf2(log, archive);
        QVERIFY2(st.ok(), st.to_string().c_str());
        auto loaded = loadModel(QString::fromStdString(archive + "/traces.otf2"));
        QVERIFY2(loaded.ok(), loaded.status().to_string().c_str());
        const std::shared_ptr<TraceModel> m = *loaded;
        const TraceModel &want = *m_known;
        QCOMPARE(m->rowCount(), want.rowCount());
        for (int r = 0; r < want.rowCount(); ++r)
            QCOMPARE(m->stateCount(r), want.stateCount(r));
        QCOMPARE(m->messages().size(), want.messages().size());
        const int compute = m->findCategory("compute");
        QVERIFY(compute >= 0);
        QCOMPARE(m->categoryInfo(compute).count, uint64_t(2));
        QCOMPARE(m->categoryInfo(compute).inclusiveNs, want.categoryInfo(want.findCategory("compute")).inclusiveNs);
    }

    void corruptFilesAreErrorsNotCrashes()
    {
        const auto missing = loadModel(m_dir.filePath("missing.mpelog"));
        QVERIFY(!missing.ok());
        QVERIFY(!missing.status().message().empty());
        QFile f(m_dir.filePath("garbage.mpelog"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        QVERIFY(!loadModel(f.fileName()).ok());
        // A good file with bytes flipped in the middle.
        QFile good(m_dir.filePath("dense.mpelog"));
        QVERIFY(good.open(QIODevice::ReadOnly));
        QByteArray bytes = good.readAll();
        for (int i = 200; i < 260; ++i)
            bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
        QFile bad(m_dir.filePath("flipped.mpelog"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(bytes);
        bad.close();
        const auto flipped = loadModel(bad.fileName());
        QVERIFY(!flipped.ok());
        QVERIFY(flipped.status().code() == mpe::StatusCode::kCorrupt
            || flipped.status().code() == mpe::StatusCode::kTruncated);
    }
};

QTEST_MAIN(TestModel)
#include "tst_model.moc"
