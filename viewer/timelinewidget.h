// The timeline widget: navigation (zoom, pan, rubber band, history), hover and click details;
// it holds a ViewState and asks paintTimeline() to draw it.
#pragma once

#include <QAbstractScrollArea>
#include <QElapsedTimer>
#include <QImage>

#include <memory>
#include <vector>

#include "renderer.h"

namespace upshot {

class TimelineWidget : public QAbstractScrollArea
{
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget *parent = nullptr);

    // Shows model fitted to the run; keepView keeps the zoom, scroll and row height instead
    // (the full model replacing its preview).
    // A new model opens on openingView() (the run's work, rows fitted, grouped when too thin).
    void setModel(std::shared_ptr<TraceModel> model, bool keepView = false);
    TraceModel *model() const { return m_model.get(); }
    const ViewState &view() const { return m_view; }

    // Sets the visible time scale, recording the previous one in the zoom history.
    void setScale(const TimeScale &scale, bool record = true);
    void zoomToRange(double t0, double t1, bool record = true);
    // Zooms horizontally by factor about viewport x (plot coordinates included).
    void zoomAt(double factor, double viewportX, bool record = true);
    // Zooms vertically by factor about viewport y.
    void zoomVerticalAt(double factor, double viewportY);
    void fitAll();
    bool canGoBack() const { return !m_back.empty(); }
    bool canGoForward() const { return !m_forward.empty(); }
    void back();
    void forward();
    void setHighlight(const Highlight &h);
    void setClickZooms(bool on) { m_clickZooms = on; }
    // Selects a state, scrolls to its row and centres it, keeping the zoom unless it is too small.
    void showState(StateRef s);
    double cursorTime() const { return m_view.cursorTime; }
    void setCursorTime(double t);
    // Describes what is under viewport point pos (state, arrow, event or fold).
    QString describeAt(QPointF pos) const;
    // Selected rows for search (empty = all).
    std::vector<int> selectedRows() const { return m_view.selectedRows; }
    void setSelectedRows(std::vector<int> rows);

    // The wait-state overlay (drawn when the model has its wait states; on by default).
    void setShowWaits(bool on);
    void setShowRma(bool on);
    // The model's counter tracks or their visibility changed: bands are laid out again.
    void countersChanged();
    bool showWaits() const { return m_view.showWaits; }
    // Frames the instances of pattern (-1 = none) in the overlay.
    void setWaitPattern(int pattern);
    // Selects a wait-state instance: its waiting state is selected and centred as by
    // showState(), the cursor moves to where the waiting starts, and its culprit (and message)
    // are highlighted.
    void showWait(WaitRef w);
    WaitRef selectedWait() const { return m_view.selectedWait; }

    // Many ranks (docs/manyranks.md). Groups rows as spec says over the visible window (None:
    // one row per timeline; Auto: only when rows would be under 3 px) and refits the rows;
    // returns the grouping's message ("" or why it fell back to blocks), also sent as groupingMessage.
    QString setGrouping(const GroupSpec &spec);
    const GroupSpec &grouping() const { return m_opening.group; }
    RankGroups *groups() const { return m_view.groups.get(); }
    // Expands a collapsed group into its rows, or collapses an expanded one.
    void toggleGroup(int group);
    void setDrawMode(DrawMode mode);
    void setSummaryBand(bool on);
    void setIntraGroupMessages(bool on);
    // Selects message m and centres it.
    void showMessage(size_t m);

signals:
    void viewChanged(double t0, double t1);
    void detailsChanged(const QString &text);
    void hoverChanged(const QString &text);
    void historyChanged();
    void groupingMessage(const QString &text);

protected:
    void paintEvent(QPaintEvent *) override;
    void resizeEvent(QResizeEvent *) override;
    void wheelEvent(QWheelEvent *) override;
    void keyPressEvent(QKeyEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseMoveEvent(QMouseEvent *) override;
    void mouseReleaseEvent(QMouseEvent *) override;
    void mouseDoubleClickEvent(QMouseEvent *) override;
    void scrollContentsBy(int, int) override { }

private:
    enum class Drag { None, Pending, Pan, Rubber, Measure };
    void pushHistory();
    void changed();
    void syncScrollBars();
    void onHScroll(int v);
    void onVScroll(int v);
    void clampY();
    // Row height fitted to the slots (3..40 px when grouped), scrolled to the top.
    void refitRows();

    std::shared_ptr<TraceModel> m_model;
    ViewState m_view;
    std::vector<TimeScale> m_back, m_forward;
    QElapsedTimer m_lastWheelPush;
    Drag m_drag = Drag::None;
    Qt::KeyboardModifiers m_pressMods;
    Qt::MouseButton m_pressButton = Qt::NoButton;
    QPointF m_pressPos, m_lastPos;
    bool m_clickZooms = true;
    bool m_syncing = false;
    QImage m_frame; // painted into first: lets paintTimeline() fill boxes directly
    OpeningOptions m_opening; // grouping, draw mode and summary band for new models
};

} // namespace upshot
