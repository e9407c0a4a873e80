// Call sites in upshot's model and panels: the site of every state (the ranks' own ids unified
// by the reader), the tooltip and details text, search by call site, the time per call site and
// the duration histogram of one site, on the known call-site run of testlog.h.
#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <tuple>

#include "panels.h"
#include "testlog.h"
#include "tracebuilder.h"
#include "tracemodel.h"

using namespace upshot;

namespace {
// The run-wide ids testlog::callsiteDefs() documents.
constexpr uint32_t kMain42 = 1, kDeep = 2, kMain60 = 3, kCompute = 4, kWorker = 5;
} // namespace

class TestCallSites : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    std::shared_ptr<TraceModel> m_model;

    // The states of a row as (start, end, category name, depth, site), in start order.
    using Row = std::vector<std::tuple<int64_t, int64_t, QString, uint32_t, uint32_t>>;
    Row rowStates(int row) const
    {
        Row out;
        for (size_t i = 0; i < m_model->stateCount(row); ++i) {
            const mpe::format::State s = m_model->state(row, i);
            out.emplace_back(
                s.start, s.end, m_model->categoryInfo(m_model->categoryIndex(s.cat)).name, s.depth, s.site);
        }
        std::sort(out.begin(), out.end());
        return out;
    }
    StateRef stateStarting(int row, double t) const
    {
        for (size_t i = 0; i < m_model->stateCount(row); ++i)
            if (m_model->start(row, i) == t) return { row, i };
        return {};
    }
    // The starts (row, ns) that Find visits for sites from t, one way.
    std::vector<std::pair<int, double>> visit(const std::vector<bool> &sites, double t, bool forward) const
    {
        std::vector<std::pair<int, double>> out;
        for (StateRef s; (s = m_model->findSite(t, forward, sites)).valid() && out.size() < 20;) {
            t = m_model->start(s.row, s.index);
            out.emplace_back(s.row, t);
        }
        return out;
    }
    static std::vector<int> ids(const std::vector<bool> &sites)
    {
        std::vector<int> out;
        for (size_t k = 0; k < sites.size(); ++k)
            if (sites[k]) out.push_back(static_cast<int>(k));
        return out;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath("callsites.mpelog");
        QVERIFY(testlog::writeCallsiteLog(m_path.toStdString()));
        auto m = loadModel(m_path);
        QVERIFY2(m.ok(), m.status().to_string().c_str());
        m_model = *m;
    }

    // The table: five sites, the ranks' ids unified by file:line whatever the offsets.
    void callSiteTableIsTheRunsUnified()
    {
        const TraceModel &m = *m_model;
        QCOMPARE(m.callSiteCount(), 5);
        QCOMPARE(m.callSiteText(kMain42), QString("callsites.c:42 (main)"));
        QCOMPARE(m.callSiteText(kDeep), QString("csite.c:12 (csite_send) <- callsites.c:50 (main)"));
        QCOMPARE(m.callSiteText(kMain60), QString("callsites.c:60 (main)"));
        QCOMPARE(m.callSiteText(kCompute), QString("callsites.c:30 (main)"));
        QCOMPARE(m.callSiteText(kWorker), QString("callsites.c:70 (worker)"));
        QCOMPARE(m.callSiteText(0), QString());
        QCOMPARE(m.callSiteText(6), QString());
        QCOMPARE(m.callSite(kDeep).frames.size(), size_t(2));
        // Whole-run totals per site.
        QCOMPARE(m.callSite(kDeep).count, uint64_t(3));
        QCOMPARE(m.callSite(kDeep).inclusiveNs, 150.0);
        QCOMPARE(m.callSite(kMain42).count, uint64_t(2));
        QCOMPARE(m.callSite(kMain42).inclusiveNs, 140.0);
        QCOMPARE(m.callSite(kWorker).inclusiveNs, 540.0);
    }

    // Every state carries its run-wide site, the user state that of the event starting it.
    void everyStateHasItsSite()
    {
        QCOMPARE(m_model->rowCount(), 2);
        const Row r0 = { { 0, 400, "compute", 0, kCompute }, { 100, 200, "MPI_Barrier", 1, kMain42 },
            { 500, 600, "MPI_Send", 0, kDeep }, { 700, 730, "MPI_Send", 0, kDeep },
            { 900, 1000, "MPI_Barrier", 0, kMain60 } };
        const Row r1 = { { 200, 210, "MPI_Barrier", 0, 0 }, { 300, 800, "MPI_Recv", 0, kWorker },
            { 810, 850, "MPI_Recv", 0, kWorker }, { 860, 1000, "MPI_Barrier", 0, kMain60 },
            { 1010, 1050, "MPI_Barrier", 0, kMain42 }, { 1100, 1120, "MPI_Send", 0, kDeep } };
        QCOMPARE(rowStates(0), r0);
        QCOMPARE(rowStates(1), r1);
        // site() agrees with state(), index by index (the sorted lane carried its sites along).
        for (int r = 0; r < 2; ++r)
            for (size_t i = 0; i < m_model->stateCount(r); ++i)
                QCOMPARE(m_model->site(r, i), m_model->state(r, i).site);
    }

    // The model holds exactly the reference reader's sites, on 1 and 2 decoding threads.
    void sitesMatchTheReferenceReader()
    {
        auto file = mpe::format::LogFile::open(m_path.toStdString());
        QVERIFY(file.ok());
        auto trace = mpe::format::load_trace(*file);
        QVERIFY(trace.ok());
        for (int threads : { 1, 2 }) {
            auto built = buildModel(*file, {}, threads);
            QVERIFY(built.ok());
            for (int r = 0; r < (*built)->rowCount(); ++r) {
                auto key
                    = [](const mpe::format::State &s) { return std::tuple(s.start, s.depth, s.end, s.cat, s.site); };
                std::vector<std::tuple<int64_t, uint32_t, int64_t, uint32_t, uint32_t>> want, got;
                for (const auto &s : trace->timelines[static_cast<size_t>(r)].states)
                    want.push_back(key(s));
                for (size_t i = 0; i < (*built)->stateCount(r); ++i)
                    got.push_back(key((*built)->state(r, i)));
                std::sort(want.begin(), want.end());
                std::sort(got.begin(), got.end());
                QCOMPARE(got, want);
            }
        }
    }

    // The tooltip and the details pane (both describeState()): the innermost frame with the
    // shared library it is in, then the outer frames.
    void descriptionsNameTheCallSite()
    {
        const TraceModel &m = *m_model;
        QCOMPARE(m.describeState(stateStarting(0, 500)),
            QString("MPI_Send on rank 0\nstart 500 ns\nduration 100 ns\ndepth 0\n"
                    "call site csite.c:12 (csite_send) in libcsite.so\n  <- callsites.c:50 (main)"));
        QCOMPARE(m.describeState(stateStarting(1, 300)),
            QString("MPI_Recv on rank 1\nstart 300 ns\nduration 500 ns\ndepth 0\ncall site callsites.c:70 (worker)"));
        QCOMPARE(m.describeState(stateStarting(0, 0)),
            QString("compute on rank 0\nstart 0 ns\nduration 400 ns\ndepth 0\ncall site callsites.c:30 (main)"));
        // No site, no line.
        QCOMPARE(m.describeState(stateStarting(1, 200)),
            QString("MPI_Barrier on rank 1\nstart 200 ns\nduration 10 ns\ndepth 0"));
        // Hit-testing finds the nested barrier; its description names its own site.
        QVERIFY(m.describeState(m.stateAt(0, 150)).endsWith("\ncall site callsites.c:42 (main)"));
    }

    void queriesMatchCallSites_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<std::vector<int>>("sites");
        QTest::newRow("file:line") << "callsites.c:42" << std::vector<int> { 1 };
        QTest::newRow("file:line is exact") << "callsites.c:4" << std::vector<int> {};
        QTest::newRow("path:line") << "/src/tests/callsites/callsites.c:60" << std::vector<int> { 3 };
        QTest::newRow("outer frame") << "callsites.c:50" << std::vector<int> { 2 };
        QTest::newRow("library frame") << "csite.c:12" << std::vector<int> { 2 };
        QTest::newRow("function") << "worker" << std::vector<int> { 5 };
        QTest::newRow("function in any frame") << "main" << std::vector<int> { 1, 2, 3, 4 };
        QTest::newRow("text, any case") << "  CALLSITES.C:60 (MAIN) " << std::vector<int> { 3 };
        QTest::newRow("nothing") << "halo.c" << std::vector<int> {};
        QTest::newRow("empty") << "" << std::vector<int> {};
    }
    void queriesMatchCallSites()
    {
        QFETCH(QString, query);
        QFETCH(std::vector<int>, sites);
        const std::vector<bool> matched = m_model->matchCallSites(query);
        QCOMPARE(matched.size(), size_t(6));
        QCOMPARE(ids(matched), sites);
    }

    // Find next / previous steps through the states of the matched sites, over both ranks.
    void searchStepsThroughASitesStates()
    {
        using Hits = std::vector<std::pair<int, double>>;
        const auto deep = m_model->matchCallSites("csite_send");
        QCOMPARE(visit(deep, -1, true), (Hits { { 0, 500 }, { 0, 700 }, { 1, 1100 } }));
        QCOMPARE(visit(deep, 5000, false), (Hits { { 1, 1100 }, { 0, 700 }, { 0, 500 } }));
        const auto main42 = m_model->matchCallSites("callsites.c:42");
        QCOMPARE(visit(main42, -1, true), (Hits { { 0, 100 }, { 1, 1010 } })); // a nested state too
        // One rank only.
        const StateRef onRank1 = m_model->findSite(-1, true, main42, { 1 });
        QCOMPARE(onRank1.row, 1);
        QCOMPARE(m_model->start(onRank1.row, onRank1.index), 1010.0);
        // States of hidden categories are not found; no site matched, nothing found.
        const int barrier = m_model->findCategory("MPI_Barrier");
        m_model->categoryInfo(barrier).visible = false;
        QCOMPARE(visit(main42, -1, true), Hits {});
        m_model->categoryInfo(barrier).visible = true;
        QVERIFY(!m_model->findSite(-1, true, m_model->matchCallSites("halo.c")).valid());
        QVERIFY(!m_model->findSite(-1, true, {}).valid());
    }

    // Time per (call site, routine), over the whole run and clipped to a window.
    void timePerCallSiteGroupsStates()
    {
        const int send = m_model->findCategory("MPI_Send"), recv = m_model->findCategory("MPI_Recv"),
                  barrier = m_model->findCategory("MPI_Barrier"), compute = m_model->findCategory("compute");
        const std::vector<SiteTime> run = m_model->timePerCallSite(m_model->tBegin(), m_model->tEnd());
        const std::vector<SiteTime> wantRun
            = { { kWorker, recv, 2, 540 }, { kCompute, compute, 1, 400 }, { kMain60, barrier, 2, 240 },
                  { kDeep, send, 3, 150 }, { kMain42, barrier, 2, 140 }, { 0, barrier, 1, 10 } };
        QCOMPARE(run, wantRun);
        // [650, 1000]: the send at [500, 600] and the barrier at 1010 stay out, the receive
        // [300, 800] counts 150 ns.
        const std::vector<SiteTime> window = m_model->timePerCallSite(650, 1000);
        const std::vector<SiteTime> wantWindow
            = { { kMain60, barrier, 2, 240 }, { kWorker, recv, 2, 190 }, { kDeep, send, 1, 30 } };
        QCOMPARE(window, wantWindow);
        // A state touching the window's edge only is not in it.
        QCOMPARE(m_model->timePerCallSite(600, 650), (std::vector<SiteTime> { { kWorker, recv, 1, 50 } }));
    }

    // The statistics window's call-site tab lists the same, with the site's text and routine.
    void statisticsListTimePerCallSite()
    {
        StatsWidget w;
        w.setModel(m_model);
        w.setRange(650, 1000);
        w.showCallSites(false);
        QTableWidget *t = w.callSiteTable();
        QCOMPARE(t->rowCount(), 3);
        auto cell = [&](int r, int c) { return t->item(r, c)->text(); };
        QCOMPARE(cell(0, StatsWidget::SiteTextColumn), QString("callsites.c:60 (main)"));
        QCOMPARE(cell(0, StatsWidget::SiteRoutineColumn), QString("MPI_Barrier"));
        QCOMPARE(cell(0, StatsWidget::SiteCallsColumn), QString("2"));
        QCOMPARE(t->item(0, StatsWidget::SiteTimeColumn)->data(Qt::UserRole).toDouble(), 240.0);
        QCOMPARE(cell(1, StatsWidget::SiteTextColumn), QString("callsites.c:70 (worker)"));
        QCOMPARE(t->item(1, StatsWidget::SiteTimeColumn)->data(Qt::UserRole).toDouble(), 190.0);
        QCOMPARE(cell(2, StatsWidget::SiteTextColumn), QString("csite.c:12 (csite_send) <- callsites.c:50 (main)"));
        QCOMPARE(t->item(2, StatsWidget::SiteTextColumn)->data(Qt::UserRole).toUInt(), kDeep);
        QVERIFY(t->item(2, StatsWidget::SiteTextColumn)->toolTip().contains("in libcsite.so"));
        // The whole run: six rows, the states without a site last.
        w.findChild<QCheckBox *>("callSitesWholeRun")->setChecked(true);
        QCOMPARE(t->rowCount(), 6);
        QCOMPARE(cell(0, StatsWidget::SiteTextColumn), QString("callsites.c:70 (worker)"));
        QCOMPARE(t->item(0, StatsWidget::SiteTimeColumn)->data(Qt::UserRole).toDouble(), 540.0);
        QCOMPARE(cell(3, StatsWidget::SiteCallsColumn), QString("3"));
        QCOMPARE(cell(5, StatsWidget::SiteTextColumn), QString("(unknown)"));
        // Double-clicking a row names its site.
        QSignalSpy spy(&w, &StatsWidget::callSiteActivated);
        emit t->cellDoubleClicked(3, StatsWidget::SiteTimeColumn);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.first().first().toUInt(), kDeep);
    }

    // The duration histogram limited to one call site, and the highlight of its bars.
    void histogramOfOneCallSite()
    {
        const Histogram h = m_model->histogram({}, m_model->tBegin(), m_model->tEnd(), 4, false, kWorker);
        QCOMPARE(h.total, uint64_t(2)); // 500 and 40 ns
        QCOMPARE(m_model->histogram({}, m_model->tBegin(), m_model->tEnd(), 4, false, 0).total, uint64_t(1));
        QCOMPARE(m_model->histogram({}, m_model->tBegin(), m_model->tEnd(), 4, false).total, uint64_t(11));
        HistogramWidget w;
        w.resize(400, 300);
        w.setModel(m_model);
        auto *sites = w.findChild<QComboBox *>("histogramCallSite");
        QVERIFY(sites);
        QCOMPARE(sites->count(), 6); // all, then the five sites
        QCOMPARE(sites->itemText(1), QString("callsites.c:70 (worker)")); // most time first
        w.setLogX(false);
        w.setBins(5);
        w.setCallSite(kDeep);
        QCOMPARE(sites->currentText(), QString("csite.c:12 (csite_send) <- callsites.c:50 (main)"));
        // Durations 100, 30 and 20 ns in bins of 16 ns from 20 ns.
        QCOMPARE(w.histogram().total, uint64_t(3));
        QCOMPARE(w.histogram().counts, (std::vector<uint64_t> { 2, 0, 0, 0, 1 }));
        QSignalSpy spy(&w, &HistogramWidget::highlightRequested);
        w.selectBar(0);
        const Highlight hl = spy.first().first().value<Highlight>();
        QCOMPARE(hl.site, int64_t(kDeep));
        // Choosing "all call sites" in the list lifts the limit.
        sites->setCurrentIndex(0);
        QCOMPARE(w.callSite(), int64_t(-1));
        QCOMPARE(w.histogram().total, uint64_t(11));
    }

    // A real run's log, for tests/python: UPSHOT_SITES_LOG names it, UPSHOT_SITES_EXPECT lists
    // "site text=count" pairs separated by ';', each a site of upshot's table with that many states.
    void sitesOfTheGivenLog()
    {
        const QString path = qEnvironmentVariable("UPSHOT_SITES_LOG");
        if (path.isEmpty()) QSKIP("run by tests/python with UPSHOT_SITES_LOG set");
        auto m = loadModel(path);
        QVERIFY2(m.ok(), m.status().to_string().c_str());
        QMap<QString, uint64_t> table;
        for (int id = 1; id <= (*m)->callSiteCount(); ++id)
            table[(*m)->callSiteText(id)] += (*m)->callSite(id).count;
        for (const QString &pair : qEnvironmentVariable("UPSHOT_SITES_EXPECT").split(';', Qt::SkipEmptyParts)) {
            const QString text = pair.section('=', 0, -2);
            QVERIFY2(
                table.contains(text), qPrintable("no site " + text + " in " + QStringList(table.keys()).join(", ")));
            QCOMPARE(table[text], pair.section('=', -1).toULongLong());
        }
    }
};

QTEST_MAIN(TestCallSites)
#include "tst_callsites.moc"
