// The upshot main window: its layout, docks and search; the menus and toolbars are in
// mainwindowmenus.cpp; opening files, live jobs, recent files and export in mainwindowfiles.cpp.
#include "mainwindow.h"

#include <QAction>
#include <QColorDialog>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

#include "compareview.h"
#include "liveview.h"
#include "loader.h"
#include "panels.h"
#include "timelinewidget.h"
#include "windowfollower.h"

namespace upshot {

namespace {
// Search list entries: a category index (Qt::UserRole, -1 = any searchable), a call site id or
// a wait-state pattern.
constexpr int kSiteRole = Qt::UserRole + 1;
constexpr int kWaitRole = Qt::UserRole + 2;
constexpr int kMaxSiteEntries = 500; // the rest is found by typing
} // namespace

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("upshot"));
    setAcceptDrops(true);
    resize(1280, 800);
    m_timeline = new TimelineWidget(this);
    m_live = new LiveView(this);
    m_live->setObjectName("liveView");
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_timeline);
    m_pages->addWidget(m_live);
    setCentralWidget(m_pages);
    connect(m_live, &LiveView::openLogRequested, this, &MainWindow::openFile);
    m_loader = new TraceLoader(this);
    m_follower = new WindowFollower(this);

    m_legend = new LegendModel(this);
    m_legendView = new QTableView(this);
    m_legendView->setModel(m_legend);
    m_legendView->setSortingEnabled(false);
    m_legendView->verticalHeader()->hide();
    m_legendView->horizontalHeader()->setStretchLastSection(true);
    m_legendView->setSelectionBehavior(QAbstractItemView::SelectRows);
    auto *legendDock = new QDockWidget(tr("Legend"), this);
    legendDock->setObjectName("legendDock");
    legendDock->setWidget(m_legendView);
    addDockWidget(Qt::RightDockWidgetArea, legendDock);

    m_histogram = new HistogramWidget(this);
    auto *histDock = new QDockWidget(tr("Duration histogram"), this);
    histDock->setObjectName("histogramDock");
    histDock->setWidget(m_histogram);
    addDockWidget(Qt::RightDockWidgetArea, histDock);

    m_details = new QPlainTextEdit(this);
    m_details->setObjectName("details");
    m_details->setReadOnly(true);
    m_details->setMaximumBlockCount(200);
    auto *detailsDock = new QDockWidget(tr("Details"), this);
    detailsDock->setObjectName("detailsDock");
    detailsDock->setWidget(m_details);
    addDockWidget(Qt::RightDockWidgetArea, detailsDock);

    m_waits = new WaitStatesWidget(this);
    auto *waitsDock = new QDockWidget(tr("Wait states"), this);
    waitsDock->setObjectName("waitsDock");
    waitsDock->setWidget(m_waits);
    addDockWidget(Qt::RightDockWidgetArea, waitsDock);

    m_stats = new StatsWidget(this);
    auto *statsDock = new QDockWidget(tr("Window statistics"), this);
    statsDock->setObjectName("statsDock");
    statsDock->setWidget(m_stats);
    addDockWidget(Qt::BottomDockWidgetArea, statsDock);
    statsDock->hide();

    m_matrix = new CommMatrixWidget(this);
    auto *matrixPage = new QWidget(this);
    auto *matrixLayout = new QVBoxLayout(matrixPage);
    auto *matrixValue = new QComboBox(matrixPage);
    matrixValue->setObjectName("matrixValue");
    matrixValue->addItems({ tr("bytes"), tr("messages"), tr("wait time") });
    connect(matrixValue, &QComboBox::currentIndexChanged, this,
        [this](int i) { m_matrix->setValue(static_cast<MatrixValue>(i)); });
    matrixLayout->addWidget(matrixValue);
    matrixLayout->addWidget(m_matrix, 1);
    auto *matrixDock = new QDockWidget(tr("Communication matrix"), this);
    matrixDock->setObjectName("matrixDock");
    matrixDock->setWidget(matrixPage);
    addDockWidget(Qt::RightDockWidgetArea, matrixDock);
    matrixDock->hide();

    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(240);
    m_progress->hide();
    m_hover = new QLabel(this);
    statusBar()->addWidget(m_hover, 1);
    statusBar()->addPermanentWidget(m_progress);

    QAction *open = createFileMenu();
    createViewMenu(open, { legendDock, histDock, waitsDock, detailsDock, statsDock, matrixDock });
    createSearchBar();
    createHelpMenu();
    connectLoader();
    connectPanels(histDock);
}

// What the window shows as the loader reports: progress, the preview, the model, the wait states,
// or why the file could not be opened.
void MainWindow::connectLoader()
{
    connect(m_loader, &TraceLoader::progress, this, [this](int p, const QString &stage) {
        m_progress->show();
        m_progress->setRange(0, 100);
        m_progress->setValue(p);
        m_hover->setText(m_previewPath.isEmpty() ? stage : tr("Preview from the index; %1…").arg(stage));
    });
    connect(m_loader, &TraceLoader::previewReady, this, &MainWindow::showPreview);
    connect(m_loader, &TraceLoader::outOfCore, this,
        [this](std::shared_ptr<OutOfCoreLog> log, const QString &) { m_follower->setLog(std::move(log)); });
    connect(m_loader, &TraceLoader::loaded, this, [this](std::shared_ptr<TraceModel> model, const QString &path) {
        m_progress->hide();
        if (m_follower->log() && m_follower->log()->summary() != model) m_follower->setLog(nullptr);
        setModel(std::move(model), path);
        if (m_follower->log()) m_follower->viewChanged(m_timeline->view().scale.t0(), m_timeline->view().scale.t1());
    });
    // Out of core, the timeline and the panels of the view's window draw the model of the view's
    // records once read (windowfollower.h); the legend keeps the whole run's.
    connect(m_follower, &WindowFollower::modelChanged, this, [this](std::shared_ptr<TraceModel> model) {
        if (m_model && model != m_model) model->copyCategoryLook(*m_model);
        m_timeline->setModel(model, true);
        const std::shared_ptr<TraceModel> counted = model->messagesSampled() ? nullptr : model;
        m_histogram->setModel(counted);
        m_stats->setModel(counted);
        m_matrix->setModel(counted);
        const auto &scale = m_timeline->view().scale;
        m_histogram->setRange(scale.t0(), scale.t1());
        m_stats->setRange(scale.t0(), scale.t1());
        m_matrix->setRange(scale.t0(), scale.t1());
    });
    connect(m_follower, &WindowFollower::reading, this, [this](bool on, const QString &what) {
        if (!what.isEmpty()) m_hover->setText(what);
        if (on) {
            m_progress->show();
            m_progress->setRange(0, 0); // busy: the view keeps the summary meanwhile
        } else {
            m_progress->hide();
        }
    });
    connect(m_loader, &TraceLoader::waitsReady, this, &MainWindow::setWaits);
    connect(m_loader, &TraceLoader::waitsFailed, this,
        [this](std::shared_ptr<TraceModel> model, const QString &path, const QString &error) {
            if (model != m_model) return;
            // The timeline stays as it is, without the overlay.
            m_waits->setStatus(tr("Wait states not analyzed: %1").arg(error));
            statusBar()->showMessage(tr("Wait-state analysis skipped: %1").arg(error), 10000);
            emit waitsAnalyzed(path, false);
        });
    connect(m_loader, &TraceLoader::failed, this, [this](const QString &path, const QString &error) {
        m_progress->hide();
        if (m_previewPath == path) { // a damaged chunk: the preview goes too
            m_previewPath.clear();
            m_model.reset();
            m_timeline->setModel(nullptr);
            m_waits->setModel(nullptr);
        }
        m_hover->setText(tr("Could not open %1").arg(path));
        showError("loadError", tr("Could not open %1:\n%2").arg(QFileInfo(path).fileName(), error));
        emit loadFailed(path, error);
    });
}

// The panels and the timeline follow one another: the view's window, a chosen message, pattern,
// colour or call site.
void MainWindow::connectPanels(QDockWidget *histDock)
{
    connect(m_timeline, &TimelineWidget::hoverChanged, m_hover,
        [this](const QString &t) { m_hover->setText(QString(t).replace('\n', "  ·  ")); });
    connect(m_timeline, &TimelineWidget::detailsChanged, m_details, &QPlainTextEdit::appendPlainText);
    connect(m_timeline, &TimelineWidget::viewChanged, this, [this](double t0, double t1) {
        m_follower->viewChanged(t0, t1);
        m_histogram->setRange(t0, t1);
        m_stats->setRange(t0, t1);
        m_waits->setRange(t0, t1);
        m_matrix->setRange(t0, t1);
    });
    connect(m_timeline, &TimelineWidget::groupingMessage, this,
        [this](const QString &text) { statusBar()->showMessage(text, 15000); });
    connect(m_matrix, &CommMatrixWidget::messageChosen, this, [this](long m) {
        if (m >= 0)
            m_timeline->showMessage(static_cast<size_t>(m));
        else
            statusBar()->showMessage(tr("No message of that cell in the view"), 3000);
    });
    // A pattern clicked in the Wait states dock: its instances are framed and Find steps
    // through them.
    connect(m_waits, &WaitStatesWidget::patternActivated, this, [this](int pattern) {
        m_timeline->setWaitPattern(pattern);
        if (pattern < 0) return;
        const int i = m_searchCat->findData(pattern, kWaitRole);
        if (i >= 0) m_searchCat->setCurrentIndex(i);
    });
    connect(m_legend, &LegendModel::categoriesChanged, this, [this] {
        // Out of core, the legend edits the summary's categories; the window drawn follows them.
        if (TraceModel *shown = m_timeline->model(); shown && m_model && shown != m_model.get())
            shown->copyCategoryLook(*m_model);
        m_timeline->viewport()->update();
    });
    connect(m_legend, &LegendModel::countersChanged, m_timeline, &TimelineWidget::countersChanged);
    // The rebuilt unexpected queue joins the counter tracks once computed (after the wait states).
    connect(m_loader, &TraceLoader::countersReady, this,
        [this](std::shared_ptr<TraceModel> model, std::shared_ptr<CounterTracks> counters, const QString &) {
            if (!m_model || model != m_model) return; // another log is shown by now
            m_model->setCounters(std::move(counters));
            m_legend->setModel(m_model);
            m_timeline->countersChanged();
        });
    connect(m_legendView, &QTableView::doubleClicked, this, [this](const QModelIndex &i) {
        const int cat = m_legend->categoryAt(i.row());
        if (!m_model || i.column() != LegendModel::Name || cat < 0) return;
        const QColor c = QColorDialog::getColor(
            m_model->categoryInfo(cat).color, this, tr("Colour of %1").arg(m_model->categoryInfo(cat).name));
        if (c.isValid()) m_legend->setData(i, c, Qt::DecorationRole);
    });
    connect(m_histogram, &HistogramWidget::highlightRequested, m_timeline, &TimelineWidget::setHighlight);
    // A call site double-clicked in the statistics: search for it and show its durations.
    connect(m_stats, &StatsWidget::callSiteActivated, this, [this, histDock](uint32_t site) {
        if (!m_model) return;
        const int i = m_searchCat->findData(site, kSiteRole);
        if (i >= 0)
            m_searchCat->setCurrentIndex(i);
        else
            m_searchCat->setEditText(m_model->callSiteText(site));
        histDock->show();
        m_histogram->setCallSite(site);
    });
}

MainWindow::~MainWindow() = default;

void MainWindow::setModel(std::shared_ptr<TraceModel> model, const QString &path)
{
    // The full model takes the preview's place in the view the user may already have zoomed.
    const bool replacesPreview = m_previewPath == path && m_model && m_model->isPreview();
    leaveLiveMode();
    m_previewPath.clear();
    m_model = std::move(model);
    m_timeline->setModel(m_model, replacesPreview);
    m_legend->setModel(m_model);
    m_legendView->resizeColumnsToContents();
    // The summary of a log opened out of core holds sampled bins, not states: the panels that
    // count states and messages wait for the records of a zoomed-in view (windowfollower.h).
    const std::shared_ptr<TraceModel> counted = m_model->messagesSampled() ? nullptr : m_model;
    m_histogram->setModel(counted);
    m_stats->setModel(counted);
    m_waits->setModel(m_model);
    m_matrix->setModel(counted);
    if (!counted)
        statusBar()->showMessage(tr("Opened out of core: the histogram, statistics and matrix count the records of "
                                    "a zoomed-in view once read; `mpe stat` and `mpe waits` give the whole run"),
            15000);
    m_matrix->setRange(m_timeline->view().scale.t0(), m_timeline->view().scale.t1());
    m_matrix->setGroups(m_timeline->view().groups);
    if (m_model->isFromIndex())
        m_waits->setStatus(tr("Not analyzed for a log opened out of core: run `mpe waits` (spread with mpiexec)"));
    else if (!m_model->waits() && m_loader->analyzesWaits())
        m_waits->setStatus(tr("Analyzing wait states…"));
    m_searchCat->clear();
    m_searchCat->addItem(tr("any searchable"), -1);
    for (int c = 0; c < m_model->categoryCount(); ++c)
        if (m_model->categoryInfo(c).isState && m_model->categoryInfo(c).count > 0)
            m_searchCat->addItem(m_model->categoryInfo(c).name, c);
    // Then the call sites with states, most time first.
    std::vector<uint32_t> sites;
    for (int k = 1; k <= m_model->callSiteCount(); ++k)
        if (m_model->callSite(k).count > 0) sites.push_back(static_cast<uint32_t>(k));
    std::stable_sort(sites.begin(), sites.end(),
        [&](uint32_t a, uint32_t b) { return m_model->callSite(a).inclusiveNs > m_model->callSite(b).inclusiveNs; });
    if (sites.size() > kMaxSiteEntries) sites.resize(kMaxSiteEntries);
    for (uint32_t id : sites) {
        m_searchCat->addItem(m_model->callSite(id).text);
        m_searchCat->setItemData(m_searchCat->count() - 1, id, kSiteRole);
        m_searchCat->setItemData(m_searchCat->count() - 1, m_model->describeCallSite(id), Qt::ToolTipRole);
    }
    m_searchCat->setCurrentIndex(0);
    setWindowTitle(QStringLiteral("%1 — upshot").arg(QFileInfo(path).fileName()));
    m_hover->setText(tr("%1: %2 ranks, %3 timelines, %4 records, %5")
                         .arg(QFileInfo(path).fileName())
                         .arg(m_model->worldSize())
                         .arg(m_model->rowCount())
                         .arg(m_model->recordCount())
                         .arg(formatDuration(m_model->tEnd() - m_model->tBegin()))
        + (m_model->filterNote().isEmpty() ? QString() : QStringLiteral("; ") + m_model->filterNote()));
    // A listen file of `mpe serve` is good for one server's life: not a recent file.
    if (!m_follower->log() || m_follower->log()->name() == path) addRecent(QFileInfo(path).absoluteFilePath());
    m_path = path;
    emit fileLoaded(path);
}

void MainWindow::setWaits(
    std::shared_ptr<TraceModel> model, std::shared_ptr<const WaitStates> waits, const QString &path)
{
    if (!m_model || model != m_model) return; // another log is shown by now
    m_model->setWaits(waits);
    m_waits->setModel(m_model);
    const auto [t0, t1] = std::pair(m_timeline->view().scale.t0(), m_timeline->view().scale.t1());
    m_waits->setRange(t0, t1);
    // Find entries for the patterns the log has, after "any searchable".
    int at = 1;
    for (int p = 0; p < kWaitPatterns; ++p) {
        if (waits->runTotals()[static_cast<size_t>(p)].instances == 0) continue;
        m_searchCat->insertItem(at, tr("wait: %1").arg(waitPatternName(p)));
        m_searchCat->setItemData(at, p, kWaitRole);
        m_searchCat->setItemData(at, waitColor(p), Qt::DecorationRole);
        ++at;
    }
    m_timeline->viewport()->update();
    double ns = 0;
    for (const WaitTotal &t : waits->runTotals())
        ns += t.ns;
    statusBar()->showMessage(tr("Wait states: %1 instances, %2 waiting (%3% of MPI time)")
                                 .arg(waits->instanceCount())
                                 .arg(formatDuration(ns))
                                 .arg(waits->mpiNs() > 0 ? 100.0 * ns / waits->mpiNs() : 0.0, 0, 'f', 1),
        10000);
    emit waitsAnalyzed(path, true);
}

bool MainWindow::search(bool forward)
{
    if (!m_model) return false;
    // Out of core, the states searched are those of the window read (the summary's are bins).
    const TraceModel *shown = m_timeline->model() ? m_timeline->model() : m_model.get();
    double t = m_timeline->cursorTime();
    if (t < 0) t = forward ? m_timeline->view().scale.t0() : m_timeline->view().scale.t1();
    const QString text = m_searchCat->currentText().trimmed();
    const int entry = m_searchCat->findText(text);
    StateRef s;
    if (entry >= 0 && m_searchCat->itemData(entry, kWaitRole).isValid()) {
        // Instances of a pattern, in time order; ties (same start) by row, so none is skipped.
        const WaitStates *W = m_model->waits();
        WaitRef from = m_timeline->selectedWait();
        if (from.valid() && (!W || static_cast<double>(W->span(from).start) != t)) from = {};
        const WaitRef w = W
            ? W->find(t, from, forward, m_searchCat->itemData(entry, kWaitRole).toInt(), m_timeline->selectedRows())
            : WaitRef {};
        if (!w.valid()) {
            statusBar()->showMessage(forward ? tr("No later instance") : tr("No earlier instance"), 3000);
            return false;
        }
        m_timeline->showWait(w);
        return true;
    }
    if (entry >= 0 && m_searchCat->itemData(entry, kSiteRole).isValid()) {
        std::vector<bool> sites(static_cast<size_t>(m_model->callSiteCount()) + 1, false);
        const uint32_t id = m_searchCat->itemData(entry, kSiteRole).toUInt();
        if (id < sites.size()) sites[id] = true;
        s = shown->findSite(t, forward, sites, m_timeline->selectedRows());
    } else if (entry >= 0) {
        s = shown->find(t, forward, m_searchCat->itemData(entry).toInt(), m_timeline->selectedRows());
    } else {
        const std::vector<bool> sites = m_model->matchCallSites(text);
        if (std::find(sites.begin(), sites.end(), true) != sites.end()) {
            s = shown->findSite(t, forward, sites, m_timeline->selectedRows());
        } else {
            const int cat = m_searchCat->findText(text, Qt::MatchFixedString); // a category, any case
            if (cat < 0 || m_searchCat->itemData(cat, kSiteRole).isValid()
                || m_searchCat->itemData(cat, kWaitRole).isValid()) {
                statusBar()->showMessage(tr("No category or call site matches \"%1\"").arg(text), 3000);
                return false;
            }
            s = shown->find(t, forward, m_searchCat->itemData(cat).toInt(), m_timeline->selectedRows());
        }
    }
    if (!s.valid()) {
        statusBar()->showMessage(forward ? tr("No later instance") : tr("No earlier instance"), 3000);
        return false;
    }
    m_timeline->showState(s);
    return true;
}

void MainWindow::setSearchText(const QString &text)
{
    const int entry = m_searchCat->findText(text);
    if (entry >= 0)
        m_searchCat->setCurrentIndex(entry);
    else
        m_searchCat->setEditText(text);
}

CompareWindow *MainWindow::compareWindow() const
{
    return m_compare;
}

void MainWindow::compareWith(const QString &path)
{
    if (!m_model || m_model->isPreview() || m_path.isEmpty()) {
        showError("compareError", tr("Open a log (A) and let it load before comparing it with another."));
        emit compareFailed(path, tr("no log open"));
        return;
    }
    if (m_compare) m_compare->close();
    m_compare = new CompareWindow(this);
    connect(m_compare, &CompareWindow::loaded, this, &MainWindow::compareShown);
    connect(m_compare, &CompareWindow::failed, this, [this](const QString &p, const QString &error) {
        showError("compareError", tr("Could not compare with %1:\n%2").arg(QFileInfo(p).fileName(), error));
        emit compareFailed(p, error);
    });
    m_compare->load(m_path, m_model, path);
}

} // namespace upshot
