// The main window's menus and toolbars: File, View (navigation, overlays, docks, Many ranks), the
// search bar and Help.
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QComboBox>
#include <QCompleter>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QToolBar>

#include <functional>

#include "mainwindow.h"
#include "panels.h"
#include "timelinewidget.h"

namespace upshot {

// File: open, recent files, attach to a live job, export, compare, quit. Returns Open, which the
// navigation toolbar shows too.
QAction *MainWindow::createFileMenu()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Open logfile"), {},
            tr("Logfiles (*.mpelog *.otf2);;MPE logfiles (*.mpelog);;OTF2 archives (*.otf2);;All files (*)"));
        if (!p.isEmpty()) openFile(p);
    });
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addAction(tr("&Attach to running job…"), this,
            [this] {
                const QString p = QFileDialog::getOpenFileName(this, tr("Attach to running job"), {},
                    tr("Live files written by mpe run --live (*.live);;All files (*)"));
                if (!p.isEmpty()) attachLive(p);
            })
        ->setShortcut(QKeySequence(tr("Ctrl+L")));
    file->addAction(tr("Co&nnect to server…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Connect to mpe serve"), {},
            tr("Listen files written by mpe serve --listen-file (*);;All files (*)"));
        if (!p.isEmpty()) connectToServer(p);
    });
    file->addAction(tr("&Export image…"), this, &MainWindow::exportImage)->setShortcut(QKeySequence(tr("Ctrl+E")));
    file->addAction(tr("&Compare with…"), this, [this] {
        const QString p = QFileDialog::getOpenFileName(
            this, tr("Compare with (B)"), {}, tr("Logfiles (*.mpelog *.otf2);;All files (*)"));
        if (!p.isEmpty()) compareWith(p);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), qApp, &QApplication::quit)->setShortcut(QKeySequence::Quit);
    return open;
}

// View: back and forward, fit and zoom, click zooms, the overlays (all on the navigation toolbar),
// the docks' toggles and Many ranks.
void MainWindow::createViewMenu(QAction *open, const QList<QDockWidget *> &docks)
{
    QMenu *view = menuBar()->addMenu(tr("&View"));
    QToolBar *tb = addToolBar(tr("Navigation"));
    tb->setObjectName("navigation");
    tb->addAction(open);
    QAction *backA = view->addAction(tr("Back"), m_timeline, &TimelineWidget::back);
    backA->setShortcut(QKeySequence::Back);
    QAction *fwdA = view->addAction(tr("Forward"), m_timeline, &TimelineWidget::forward);
    fwdA->setShortcut(QKeySequence::Forward);
    QAction *fit = view->addAction(tr("Fit all"), m_timeline, &TimelineWidget::fitAll);
    fit->setShortcut(QKeySequence(Qt::Key_F));
    QAction *zin = view->addAction(tr("Zoom in"), this,
        [this] { m_timeline->zoomAt(2, m_timeline->view().labelWidth + m_timeline->view().plotRect().width() / 2.0); });
    QAction *zout = view->addAction(tr("Zoom out"), this, [this] {
        m_timeline->zoomAt(0.5, m_timeline->view().labelWidth + m_timeline->view().plotRect().width() / 2.0);
    });
    QAction *clickZoom = view->addAction(tr("Click zooms"));
    clickZoom->setCheckable(true);
    clickZoom->setChecked(true);
    connect(clickZoom, &QAction::toggled, m_timeline, &TimelineWidget::setClickZooms);
    m_waitsAction = view->addAction(tr("Wait states overlay"));
    m_waitsAction->setObjectName("waitsOverlayAction");
    m_waitsAction->setCheckable(true);
    m_waitsAction->setChecked(true);
    m_waitsAction->setShortcut(QKeySequence(Qt::Key_W));
    m_waitsAction->setToolTip(tr("Hatch the waiting part of each state, one colour per wait-state pattern (W)"));
    connect(m_waitsAction, &QAction::toggled, m_timeline, &TimelineWidget::setShowWaits);
    QAction *rmaAction = view->addAction(tr("One-sided transfers"));
    rmaAction->setObjectName("rmaArrowsAction");
    rmaAction->setCheckable(true);
    rmaAction->setChecked(true);
    rmaAction->setShortcut(QKeySequence(Qt::Key_O));
    rmaAction->setToolTip(tr("Draw RMA operations (Put, Get, Accumulate...) as dashed orange arrows from the "
                             "origin to the target, ending where a synchronisation completed them (O)"));
    connect(rmaAction, &QAction::toggled, m_timeline, &TimelineWidget::setShowRma);
    for (QAction *a : { backA, fwdA, fit, zin, zout, clickZoom, m_waitsAction, rmaAction })
        tb->addAction(a);
    view->addSeparator();
    for (QDockWidget *d : docks)
        view->addAction(d->toggleViewAction());
    addManyRanksMenu(view->addMenu(tr("&Many ranks")));
    auto updateHistory = [this, backA, fwdA] {
        backA->setEnabled(m_timeline->canGoBack());
        fwdA->setEnabled(m_timeline->canGoForward());
    };
    connect(m_timeline, &TimelineWidget::historyChanged, this, updateHistory);
    updateHistory();
}

// The search bar: a category, call site or wait-state pattern to find, and Previous / Next.
void MainWindow::createSearchBar()
{
    QToolBar *sb = addToolBar(tr("Search"));
    sb->setObjectName("search");
    m_searchCat = new QComboBox(this);
    m_searchCat->setObjectName("searchCategory");
    m_searchCat->setMinimumContentsLength(24);
    m_searchCat->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    // Editable, to type a call site ("halo.c:42", a function); typing adds no entry, and the
    // completer offers the entries containing what is typed instead of replacing it.
    m_searchCat->setEditable(true);
    m_searchCat->setInsertPolicy(QComboBox::NoInsert);
    m_searchCat->completer()->setCompletionMode(QCompleter::PopupCompletion);
    m_searchCat->completer()->setFilterMode(Qt::MatchContains);
    m_searchCat->lineEdit()->setPlaceholderText(tr("category, or call site (file:line, function)"));
    connect(m_searchCat->lineEdit(), &QLineEdit::returnPressed, this, [this] { search(true); });
    sb->addWidget(new QLabel(tr(" Find "), this));
    sb->addWidget(m_searchCat);
    QAction *prev = sb->addAction(tr("◀ Previous"), this, [this] { search(false); });
    prev->setShortcut(QKeySequence(tr("Shift+F3")));
    QAction *next = sb->addAction(tr("Next ▶"), this, [this] { search(true); });
    next->setShortcut(QKeySequence(tr("F3")));
}

void MainWindow::createHelpMenu()
{
    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("Controls"), this, [this] {
        QMessageBox::information(this, tr("upshot controls"),
            tr("Wheel: zoom about the mouse; Ctrl+wheel: row height; Shift+wheel: pan\n"
               "Click: zoom ×2 (Shift: ×½) and show details; double-click a state: zoom to it\n"
               "Drag: pan; Ctrl+drag or right-drag: zoom to the band; Shift+drag: duration ruler\n"
               "+/-: zoom; arrows: pan; Home/F: fit all; Backspace, Alt+Left/Right: zoom history\n"
               "F3 / Shift+F3: next / previous instance of the searched category, call site or\n"
               "wait-state pattern (pick one from the Find list or the Wait states dock, or type\n"
               "file:line or a function name)\n"
               "W: wait-state overlay on or off; click a waiting state to see what made it wait"));
    });
}

void MainWindow::addManyRanksMenu(QMenu *menu)
{
    // Group ranks: each choice regroups the rows over the visible window.
    QMenu *group = menu->addMenu(tr("Group ranks"));
    auto *groupBy = new QActionGroup(this);
    auto addGroup = [&](const QString &text, std::function<bool(GroupSpec *)> ask, bool checked = false) {
        QAction *a = group->addAction(text);
        a->setCheckable(true);
        a->setChecked(checked);
        groupBy->addAction(a);
        connect(a, &QAction::triggered, this, [this, ask] {
            GroupSpec spec;
            if (!ask(&spec)) return;
            m_timeline->setGrouping(spec);
            m_matrix->setGroups(m_timeline->view().groups);
        });
    };
    addGroup(
        tr("Automatic (when rows are under 3 px)"), [](GroupSpec *s) { return s->by = GroupBy::Auto, true; }, true);
    addGroup(tr("None"), [](GroupSpec *s) { return s->by = GroupBy::None, true; });
    addGroup(tr("By node"), [](GroupSpec *s) { return s->by = GroupBy::Node, true; });
    addGroup(tr("By communicator…"), [this](GroupSpec *s) {
        QStringList ids;
        if (m_model)
            for (const auto &c : m_model->communicators())
                if (ids.size() < 12) ids << QStringLiteral("%1 (%2 ranks)").arg(c.globalId).arg(c.members.size());
        bool ok = false;
        s->by = GroupBy::Communicator;
        s->comm = QInputDialog::getText(this, tr("Group by communicator"),
            tr("Global id (or \"world\"); its split siblings become groups too:\n%1").arg(ids.join('\n')),
            QLineEdit::Normal, QStringLiteral("world"), &ok);
        return ok;
    });
    addGroup(tr("In blocks of ranks…"), [this](GroupSpec *s) {
        bool ok = false;
        s->by = GroupBy::Blocks;
        s->blockSize
            = QInputDialog::getInt(this, tr("Blocks of ranks"), tr("Ranks per block:"), 16, 1, 1 << 20, 1, &ok);
        return ok;
    });
    addGroup(tr("By behaviour…"), [this](GroupSpec *s) {
        bool ok = false;
        s->by = GroupBy::Behaviour;
        s->clusters = QInputDialog::getInt(this, tr("Cluster ranks by behaviour"),
            tr("Clusters (k-means on time per category in the view):"), 4, 1, 256, 1, &ok);
        return ok;
    });
    QMenu *draw = menu->addMenu(tr("Draw groups as"));
    auto *modes = new QActionGroup(this);
    for (auto [mode, text] : { std::pair { DrawMode::Dominant, tr("Dominant category") },
             { DrawMode::Max, tr("Max (MPI first)") }, { DrawMode::MpiShare, tr("MPI share (shade)") } }) {
        QAction *a = draw->addAction(text);
        a->setCheckable(true);
        a->setChecked(mode == DrawMode::Dominant);
        modes->addAction(a);
        connect(a, &QAction::triggered, this, [this, mode = mode] { m_timeline->setDrawMode(mode); });
    }
    QAction *band = menu->addAction(tr("Summary band"));
    band->setObjectName("summaryBandAction");
    band->setCheckable(true);
    band->setShortcut(QKeySequence(Qt::Key_S));
    connect(band, &QAction::toggled, m_timeline, &TimelineWidget::setSummaryBand);
    connect(m_timeline, &TimelineWidget::viewChanged, band, [this, band] {
        const QSignalBlocker b(band);
        band->setChecked(m_timeline->view().summaryHeight > 0);
    });
    QAction *intra = menu->addAction(tr("Messages inside a group"));
    intra->setCheckable(true);
    intra->setChecked(true);
    connect(intra, &QAction::toggled, m_timeline, &TimelineWidget::setIntraGroupMessages);
}

} // namespace upshot
