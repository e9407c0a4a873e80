// The upshot main window: menus, recent files, drag and drop, background loading with a
// progress bar, and the legend, histogram, statistics and details docks around the timeline; or,
// attached to a running job, the live mode page in the timeline's place.
#pragma once

#include <QMainWindow>
#include <QPointer>

#include <memory>

#include "tracemodel.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QStackedWidget;
class QTableView;

namespace upshot {

class HistogramWidget;
class LegendModel;
class LiveSession;
class LiveView;
class StatsWidget;
class TimelineWidget;
class WindowFollower;
class TraceLoader;
class WaitStatesWidget;
class CommMatrixWidget;
class CompareWindow;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Starts loading a logfile in the background; errors end in an error dialog. Once it shows,
    // live mode ends.
    // Opens the log `mpe serve` serves, from its listen file (outofcore.h).
    void connectToServer(const QString &listenFile);
    void openFile(const QString &path);
    // Attaches to a running job through its .live file and shows the live mode page; false
    // (with a message box and liveFailed) when the file cannot be read or the relay not subscribed to.
    bool attachLive(const QString &path);
    bool inLiveMode() const;
    LiveView *liveView() const { return m_live; }
    LiveSession *liveSession() const { return m_session; }
    TimelineWidget *timeline() const { return m_timeline; }
    HistogramWidget *histogram() const { return m_histogram; }
    LegendModel *legend() const { return m_legend; }
    StatsWidget *stats() const { return m_stats; }
    TraceLoader *loader() const { return m_loader; }
    WaitStatesWidget *waitStates() const { return m_waits; }
    // View ▸ Wait states overlay (checkable, on by default).
    QAction *waitsOverlayAction() const { return m_waitsAction; }
    std::shared_ptr<TraceModel> model() const { return m_model; }
    // Finds the next (or previous) instance of what the search box names: a category, call
    // site or wait-state pattern picked from its list, or typed text naming call sites
    // (TraceModel::matchCallSites(): "file:line", a function, a part of a site's text) or,
    // failing that, a category by name. Returns false (and says so in the status bar) when
    // there is none.
    bool search(bool forward);
    // Puts text in the search box: the list entry it names, else a call-site query.
    void setSearchText(const QString &text);
    // File ▸ Compare with…: compares the shown log (A) with the log at path (B) in a compare
    // window (compareview.h); a B that cannot be read gets an error box and A stays shown.
    void compareWith(const QString &path);
    CompareWindow *compareWindow() const;
    static QStringList recentFiles();

signals:
    // The index preview of path is shown; fileLoaded follows once it is decoded.
    void previewShown(const QString &path);
    void fileLoaded(const QString &path);
    void loadFailed(const QString &path, const QString &error);
    // The wait states of the shown log are analyzed (ok) or could not be (the status bar says why).
    void waitsAnalyzed(const QString &path, bool ok);
    void liveAttached(const QString &path);
    void liveFailed(const QString &path, const QString &error);
    // The compare window shows B, or B could not be compared (the error box says why).
    void compareShown(const QString &path);
    void compareFailed(const QString &path, const QString &error);

protected:
    void dragEnterEvent(QDragEnterEvent *e) override;
    void dropEvent(QDropEvent *e) override;

private:
    void setModel(std::shared_ptr<TraceModel> model, const QString &path);
    void showPreview(std::shared_ptr<TraceModel> preview, const QString &path);
    void addRecent(const QString &path);
    void rebuildRecentMenu();
    void exportImage();
    // The menus and toolbars (mainwindowmenus.cpp), made once by the constructor.
    QAction *createFileMenu();
    void createViewMenu(QAction *open, const QList<QDockWidget *> &docks);
    void createSearchBar();
    void createHelpMenu();
    // View ▸ Many ranks: grouping, draw mode, summary band, messages inside groups.
    void addManyRanksMenu(QMenu *menu);
    void connectLoader();
    void connectPanels(QDockWidget *histDock);
    void setWaits(std::shared_ptr<TraceModel> model, std::shared_ptr<const WaitStates> waits, const QString &path);
    // Back to the log timeline: stops listening and shows the docks live mode hid.
    void leaveLiveMode();
    // Shows an error box named objectName (the tests find it by that name).
    void showError(const char *objectName, const QString &text);

    std::shared_ptr<TraceModel> m_model;
    QString m_previewPath; // the file whose preview the timeline shows, if any
    TimelineWidget *m_timeline;
    TraceLoader *m_loader;
    WindowFollower *m_follower; // the records of the view, for a log opened out of core
    LegendModel *m_legend;
    QTableView *m_legendView;
    HistogramWidget *m_histogram;
    StatsWidget *m_stats;
    QPlainTextEdit *m_details;
    QProgressBar *m_progress;
    QLabel *m_hover;
    QComboBox *m_searchCat;
    WaitStatesWidget *m_waits;
    CommMatrixWidget *m_matrix;
    QAction *m_waitsAction;
    QMenu *m_recentMenu;
    QStackedWidget *m_pages; // the log timeline, or the live page
    LiveView *m_live;
    LiveSession *m_session = nullptr;
    QList<QDockWidget *> m_liveHiddenDocks; // the log's docks live mode hid, shown again after it
    QString m_path; // the shown log's file (A of a comparison)
    QPointer<CompareWindow> m_compare;
};

} // namespace upshot
