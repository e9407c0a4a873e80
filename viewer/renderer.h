// Paints the timeline (rows, states, arrows, events, ruler, labels) for the widget and for
// headless export; only paints, every decision about data comes from TraceModel and LodFolder.
#pragma once

#include <QImage>
#include <QPainter>
#include <QRect>

#include <optional>
#include <vector>

#include "timescale.h"
#include "tracemodel.h"
#include "waitstates.h"

namespace upshot {

// Everything that decides what one frame shows.
struct ViewState
{
    TimeScale scale; // x measured from the left of the plot area
    QSize size { 800, 600 }; // the whole canvas
    int labelWidth = 96;
    int rulerHeight = 28;
    double rowHeight = 28;
    double yOffset = 0; // vertical scroll in pixels
    Highlight highlight;
    StateRef selected;
    long selectedMessage = -1;
    std::optional<std::pair<double, double>> measure; // duration ruler, times
    QRect rubberBand; // in canvas pixels; empty = none
    double cursorTime = -1; // search cursor, < 0 = none
    std::vector<int> selectedRows; // rows whose labels were clicked: search scope (empty = all)
    bool showWaits = true; // the wait-state overlay, when the model has its wait states
    bool showRma = true; // one-sided transfers as dashed arrows
    int waitPattern = -1; // the pattern whose instances are selected (outlined), -1 = none
    WaitRef selectedWait; // shown with its culprit's state and, point to point, its message
    // Rows with a counter band under their states (setCounterRows(), countertracks.h), by row.
    std::vector<uint8_t> counterRows;
    static constexpr double kCounterBand = 12; // px, less on rows under 30 px

    QRect plotRect() const
    {
        return QRect(labelWidth, rulerHeight, size.width() - labelWidth, size.height() - rulerHeight);
    }
    double rowTop(int row) const { return rulerHeight + row * rowHeight - yOffset; }
    double rowCenter(int row) const { return rowTop(row) + rowHeight / 2; }
    // The row under canvas y, or -1.
    int rowAt(double y, int rowCount) const;
    double timeAt(double x) const { return scale.xToTime(x - labelWidth); }
    double xOf(double t) const { return labelWidth + scale.timeToX(t); }
    // Height of the counter band at the bottom of a row (0 when it has none): the states keep the rest.
    double counterBand(int row) const
    {
        const bool has
            = row >= 0 && static_cast<size_t>(row) < counterRows.size() && counterRows[static_cast<size_t>(row)];
        return has ? std::min(kCounterBand, rowHeight * 0.4) : 0;
    }
    // Vertical extent of a state box at depth d in a row.
    std::pair<double, double> boxY(int row, int depth) const;
    // The lane depth under canvas y in a row (deepest lane whose box contains y).
    int depthAt(int row, double y, int laneCount) const;
};

struct RenderStats
{
    size_t boxes = 0, folds = 0, arrows = 0, arrowBundles = 0, events = 0;
    size_t waitRuns = 0; // rectangles of the wait-state overlay
    size_t rmaArrows = 0; // one-sided transfers drawn
    size_t counterTracks = 0; // counter tracks drawn (countertracks.h)
};

// Paints one frame of the model into a painter covering view.size.
void paintTimeline(QPainter &p, const TraceModel &model, const ViewState &view, RenderStats *stats = nullptr);

// Renders [t0, t1] of the model (the whole run when t1 <= t0) into an image of the given size.
QImage renderImage(const TraceModel &model, double t0, double t1, QSize size, RenderStats *stats = nullptr);

// A view showing [t0, t1] with rows fitted to the height (between 1 and 100 px each).
ViewState fittedView(const TraceModel &model, double t0, double t1, QSize size);

// The message whose arrow passes within tol pixels of pos, or -1.
long messageAt(const TraceModel &model, const ViewState &view, QPointF pos, double tol = 4);
// The event marker of a row within tol pixels of x, or -1.
long eventAt(const TraceModel &model, const ViewState &view, int row, double x, double tol = 4);

// The colour used for message arrows (tests look for it).
QColor arrowColor();
// The colour of the dashed arrows of one-sided transfers, origin to target (tests look for it).
QColor rmaArrowColor();

} // namespace upshot
