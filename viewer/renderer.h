// Paints the timeline (rows, states, arrows, events, ruler, labels) for the widget and for
// headless export; only paints, every decision about data comes from TraceModel and LodFolder.
#pragma once

#include <QImage>
#include <QPainter>
#include <QRect>

#include <memory>
#include <optional>
#include <vector>

#include "rankgroups.h"
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
    // Many ranks (docs/manyranks.md): the summary band between the ruler and the rows (0 = none),
    // rank groups (null = one row per timeline) and how a group's row is drawn.
    double summaryHeight = 0;
    std::shared_ptr<RankGroups> groups;
    DrawMode drawMode = DrawMode::Dominant;
    bool intraGroupMessages = true; // messages between rows drawn in one group's row
    int legendHeight = 0; // a legend of the colours shown, along the bottom (0 = none)
    QString rulerNote; // said at the right end of the ruler (why the view starts where it does)
    static constexpr double kSummaryBand = 48; // px
    static constexpr double kMaxFittedRow = 300; // px: fitted rows never grow taller

    // Where the rows start: under the ruler and the summary band.
    double rowsTop() const { return rulerHeight + summaryHeight; }
    QRect plotRect() const
    {
        const int top = static_cast<int>(rowsTop());
        return QRect(labelWidth, top, size.width() - labelWidth, size.height() - top - legendHeight);
    }
    // Drawn rows: the model's rows, or with groups their slots (RankGroups::rowSlots()).
    int slotCount(const TraceModel &model) const
    {
        return groups ? static_cast<int>(groups->rowSlots().size()) : model.rowCount();
    }
    // The slot a model row is drawn in (its collapsed group's when it has none of its own).
    int slotOfRow(int row) const { return groups ? groups->slotOfRow(row) : row; }
    double slotTop(int slot) const { return rowsTop() + slot * rowHeight - yOffset; }
    double rowTop(int row) const { return slotTop(slotOfRow(row)); }
    double rowCenter(int row) const { return rowTop(row) + rowHeight / 2; }
    // The slot under canvas y, or -1.
    int slotAt(double y, int slotCount) const;
    // The model row drawn on its own under canvas y, or -1 (none, or a group's row).
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
    size_t groupRows = 0, summaryColumns = 0, legendEntries = 0;
    size_t boxes = 0, folds = 0, arrows = 0, arrowBundles = 0, events = 0;
    // Messages and bytes the bundles carry (estimates when sampled), bundles between groups labelled.
    uint64_t bundledMessages = 0, bundledBytes = 0;
    size_t bundleLabels = 0;
    size_t waitRuns = 0; // rectangles of the wait-state overlay
    size_t rmaArrows = 0; // one-sided transfers drawn
    size_t counterTracks = 0; // counter tracks drawn (countertracks.h)
};

// Paints one frame of the model into a painter covering view.size.
void paintTimeline(QPainter &p, const TraceModel &model, const ViewState &view, RenderStats *stats = nullptr);

// Renders [t0, t1] of the model (the whole run when t1 <= t0) into an image of the given size.
QImage renderImage(const TraceModel &model, double t0, double t1, QSize size, RenderStats *stats = nullptr);

// A view showing [t0, t1] with rows (or the slots of view.groups, when set in `like`) fitted to
// the height, between 1 and ViewState::kMaxFittedRow px each; the other settings from `like`.
ViewState fittedView(const TraceModel &model, double t0, double t1, QSize size, const ViewState &like = {});

// Where the first picture of a run starts and ends: the whole run, or, when MPI_Init and
// MPI_Finalize together take more than half of it, from the end of the last rank's MPI_Init to
// the start of the first rank's MPI_Finalize (*note then says so).
std::pair<double, double> openingRange(const TraceModel &model, QString *note = nullptr);

// The first picture: openingRange(), rows fitted, the legend along the bottom; grouped as spec
// says when rows would be thinner than minRowPx (spec.by == None: never; groups' message, if
// any, in *message), with the summary band when summary is true (or, unset, when grouped).
struct OpeningOptions
{
    GroupSpec group; // Auto: group only when rows would be too thin
    DrawMode drawMode = DrawMode::Dominant;
    std::optional<bool> summary;
    double minRowPx = 3;
    std::optional<std::pair<double, double>> range; // overrides openingRange()
    bool legend = true;
};
ViewState openingView(const TraceModel &model, QSize size, const OpeningOptions &options, QString *message = nullptr);

// The message whose arrow passes within tol pixels of pos, or -1.
long messageAt(const TraceModel &model, const ViewState &view, QPointF pos, double tol = 4);
// The event marker of a row within tol pixels of x, or -1.
long eventAt(const TraceModel &model, const ViewState &view, int row, double x, double tol = 4);

// The colour used for message arrows (tests look for it).
QColor arrowColor();
// The colour of the dashed arrows of one-sided transfers, origin to target (tests look for it).
QColor rmaArrowColor();

} // namespace upshot
