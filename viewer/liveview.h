// upshot's live mode: the timeline that follows now, the traffic matrix, the now table, the
// hang diagnosis and the status line, all read from one mpe::live_stream::JobView. The painters only
// paint; what they show is decided by LiveTimeWindow, TrafficMatrix and the job view.
#pragma once

#include <QImage>
#include <QPainter>
#include <QWidget>

#include <memory>

#include "livemodel.h"

class QCheckBox;
class QDoubleSpinBox;
class QFrame;
class QHBoxLayout;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;
class QToolButton;

namespace upshot {

// The layout of a live timeline frame: rank labels on the left, the ruler on top.
struct LiveTimelineLayout
{
    static constexpr int kLabelWidth = 64, kRulerHeight = 22;
    QSize size;
    int ranks = 0;
    QRect plotRect() const
    {
        return QRect(kLabelWidth, kRulerHeight, size.width() - kLabelWidth, size.height() - kRulerHeight);
    }
    double rowHeight() const { return ranks > 0 ? static_cast<double>(plotRect().height()) / ranks : 0; }
    double rowTop(int rank) const { return kRulerHeight + rank * rowHeight(); }
    double rowCenter(int rank) const { return rowTop(rank) + rowHeight() / 2; }
};

struct LiveTimelineStats
{
    size_t states = 0, arrows = 0, openArrows = 0; // open: sends whose receive has not arrived
    size_t bundled = 0; // arrows not drawn: another of the same ranks a few pixels away was
};

// Paints the window of the job's kept states and arrows, one row per rank, into size.
void paintLiveTimeline(QPainter &p, const mpe::live_stream::JobView &job, const LiveTimeWindow &window, QSize size,
    LiveTimelineStats *stats = nullptr);

// The layout of the traffic matrix: senders down, receivers across, square cells.
struct TrafficMatrixLayout
{
    static constexpr int kMargin = 40; // room for the axis labels
    QSize size;
    int ranks = 0;
    double cell() const;
    QRectF cellRect(int from, int to) const;
    // The (from, to) cell under widget point pos, or (-1, -1).
    std::pair<int, int> cellAt(QPointF pos) const;
};

// Paints the matrix into size: a cell per pair that sent, coloured by bytes on a log scale.
void paintTrafficMatrix(QPainter &p, const TrafficMatrix &m, QSize size);

// The live timeline: follows now, or, paused (the Pause button, or scrolling back with the wheel
// or a drag), stays where the user put it. Ctrl+wheel changes the span.
class LiveTimelineWidget : public QWidget
{
    Q_OBJECT
public:
    explicit LiveTimelineWidget(QWidget *parent = nullptr);
    void setJob(std::shared_ptr<const mpe::live_stream::JobView> job);
    const LiveTimeWindow &timeWindow() const { return m_window; }
    void setSpanSeconds(double seconds);
    void setPaused(bool paused);
    // Scrolls by dt ns (negative: back), pausing.
    void scrollBy(double dt);
    double nowNs() const { return m_job ? static_cast<double>(m_job->now_ns()) : 0; }

signals:
    void pausedChanged(bool paused);
    void spanChanged(double seconds);

protected:
    void paintEvent(QPaintEvent *) override;
    void wheelEvent(QWheelEvent *e) override;
    void mousePressEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;

private:
    double oldestNs() const;

    std::shared_ptr<const mpe::live_stream::JobView> m_job;
    LiveTimeWindow m_window;
    double m_dragX = -1;
};

// The rank × rank traffic matrix; hovering a cell tells its messages and bytes.
class TrafficMatrixWidget : public QWidget
{
    Q_OBJECT
public:
    explicit TrafficMatrixWidget(QWidget *parent = nullptr);
    void setMatrix(TrafficMatrix m);
    const TrafficMatrix &matrix() const { return m_matrix; }

protected:
    void paintEvent(QPaintEvent *) override;
    bool event(QEvent *e) override;

private:
    TrafficMatrix m_matrix;
};

// The live mode page: controls (window span, Pause, stuck threshold), the "job ended" bar that
// offers the merged log, the timeline, the matrix, the now table, the diagnosis and the status.
class LiveView : public QWidget
{
    Q_OBJECT
public:
    explicit LiveView(QWidget *parent = nullptr);
    void setJob(std::shared_ptr<const mpe::live_stream::JobView> job);
    // Where the data comes from, for the status line ("run.live via tcp://...").
    void setSource(const QString &text);
    // Reads the job view again: the table, the diagnosis, the matrix, the status, the timeline.
    void refresh();
    // Refreshes within kRefreshMs: however fast frames come, the page is redrawn a few times a second.
    void scheduleRefresh();
    static constexpr int kRefreshMs = 200;
    void setStuckSeconds(double seconds);
    double stuckSeconds() const;
    // Renders the page at size offscreen, up to date.
    QImage snapshot(QSize size);

    LiveTimelineWidget *timeline() const { return m_timeline; }
    TrafficMatrixWidget *matrix() const { return m_matrix; }
    NowTableModel *nowModel() const { return m_nowModel; }
    QTableView *nowView() const { return m_nowView; }
    QString diagnosis() const;
    QString status() const;
    QToolButton *pauseButton() const { return m_pause; }
    QSpinBox *spanBox() const { return m_span; }
    // The "Open the merged log" button (shown once the job ended and its log exists).
    QPushButton *openLogButton() const { return m_openLog; }
    bool offersLog() const;

signals:
    // The user asked to open the job's merged logfile.
    void openLogRequested(const QString &path);

private:
    QHBoxLayout *makeControls();
    void makeEndBar();
    void updateEndBar();

    std::shared_ptr<const mpe::live_stream::JobView> m_job;
    QString m_source;
    QString m_mergedLog; // offered once it exists
    LiveTimelineWidget *m_timeline;
    TrafficMatrixWidget *m_matrix;
    QLabel *m_matrixTitle;
    QCheckBox *m_cumulative; // the matrix since attached, instead of the last seconds
    NowTableModel *m_nowModel;
    QTableView *m_nowView;
    QPlainTextEdit *m_diagnosis;
    QLabel *m_status;
    QSpinBox *m_span;
    QToolButton *m_pause;
    QDoubleSpinBox *m_stuck;
    QFrame *m_endBar;
    QLabel *m_endText;
    QPushButton *m_openLog;
    QTimer *m_logWatch; // the merged log may be written after the job's end is announced
    QTimer *m_refreshTimer;
};

} // namespace upshot
