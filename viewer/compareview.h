// The compare view's widgets: run A's timeline (a TimelineWidget), the difference band, run B's
// timeline warped onto A's time (iteration k under iteration k), zoomed and panned together, and
// the window holding them with the diff table as a dock (docs/compare.md).
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QWidget>

#include <memory>

#include "compareload.h"

class QLabel;
class QTableView;

namespace upshot {

class TimelineWidget;

// Run B drawn on the aligned time axis (paintWarped()); its scale follows run A's timeline. Wheel
// and drag ask for zoom and pan on A, which moves both.
class WarpedTimeline : public QWidget
{
    Q_OBJECT
public:
    explicit WarpedTimeline(QWidget *parent = nullptr);
    void setScene(std::shared_ptr<TraceModel> model, const AlignedTime &map);
    // Follows A's view: its aligned scale (t0 and resolution) and label width.
    void followView(const ViewState &aligned);
    // The view as painted: rows fitted to the height, scale in aligned (A's) time.
    const ViewState &view() const { return m_view; }
    // B's time at the left and right edges of the plot.
    std::pair<double, double> windowB() const;
    void setSelected(StateRef s);
    StateRef selected() const { return m_view.selected; }
    // Describes the state of B under widget point pos, "" when none.
    QString describeAt(QPointF pos) const;

signals:
    void zoomRequested(double factor, double x);
    void panRequested(double dx);
    void detailsChanged(const QString &text);

protected:
    void paintEvent(QPaintEvent *) override;
    void resizeEvent(QResizeEvent *) override;
    void wheelEvent(QWheelEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void mouseMoveEvent(QMouseEvent *) override;
    void mouseReleaseEvent(QMouseEvent *) override;

private:
    void refit();
    std::shared_ptr<TraceModel> m_model;
    AlignedTime m_map;
    ViewState m_view;
    QPointF m_pressPos, m_lastPos;
    bool m_dragging = false;
};

// The difference band under A's timeline, with its legend line.
class DiffBandWidget : public QWidget
{
    Q_OBJECT
public:
    explicit DiffBandWidget(QWidget *parent = nullptr);
    void setBand(const DiffBand &band, const QString &note);
    void followView(const ViewState &aligned);
    const DiffBand &band() const { return m_band; }
    double saturation() const { return m_saturation; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *) override;
    bool event(QEvent *e) override; // tooltips: rank, iteration, both durations

private:
    static constexpr int kLegend = 22;
    DiffBand m_band;
    QString m_note;
    double m_saturation = 0.1;
    ViewState m_view;
};

// A over the band over B, coupled on aligned time.
class CompareView : public QWidget
{
    Q_OBJECT
public:
    explicit CompareView(QWidget *parent = nullptr);
    void setData(std::shared_ptr<const CompareData> data);
    TimelineWidget *timelineA() const { return m_a; }
    WarpedTimeline *timelineB() const { return m_b; }
    DiffBandWidget *band() const { return m_band; }
    // Shows the worst instance (longest state) of row's site in each run: both selected, the
    // aligned window covering both; false when neither run has one.
    bool showRow(const CompareRow &row, StateRef *inA = nullptr, StateRef *inB = nullptr);

signals:
    void detailsChanged(const QString &text);
    void statusMessage(const QString &text);

private:
    std::shared_ptr<const CompareData> m_data;
    QLabel *m_captionA, *m_captionB;
    TimelineWidget *m_a;
    DiffBandWidget *m_band;
    WarpedTimeline *m_b;
};

// The compare window: the view, the diff table as a dock, the details of a click.
class CompareWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit CompareWindow(QWidget *parent = nullptr);
    // Loads B (and A's iterations and the diff) in the background, A's model reused; shows the
    // window when done, or emits failed and closes.
    void load(const QString &aPath, std::shared_ptr<TraceModel> aModel, const QString &bPath);
    void setData(std::shared_ptr<const CompareData> data);
    CompareView *view() const { return m_view; }
    QTableView *table() const { return m_table; }
    CompareTableModel *tableModel() const { return m_rows; }

signals:
    void loaded(const QString &bPath);
    void failed(const QString &bPath, const QString &error);

private:
    CompareView *m_view;
    CompareTableModel *m_rows;
    QTableView *m_table;
    QLabel *m_tableNote;
};

} // namespace upshot
