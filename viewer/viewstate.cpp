// ViewState's geometry (slots, rows, lanes under a point) and the views a front end starts from:
// fitted to a time range, and the opening picture of a run.
#include <algorithm>
#include <cmath>
#include <vector>

#include "countertracks.h"
#include "renderer.h"

namespace upshot {

int ViewState::slotAt(double y, int slotCount) const
{
    if (y < rowsTop()) return -1;
    const int k = static_cast<int>(std::floor((y - rowsTop() + yOffset) / rowHeight));
    return k >= 0 && k < slotCount ? k : -1;
}

int ViewState::rowAt(double y, int rowCount) const
{
    if (!groups) return slotAt(y, rowCount);
    const int k = slotAt(y, static_cast<int>(groups->rowSlots().size()));
    return k >= 0 ? groups->rowSlots()[static_cast<size_t>(k)].row : -1;
}

std::pair<double, double> ViewState::boxY(int row, int depth) const
{
    const double top = rowTop(row);
    const double h = rowHeight - counterBand(row);
    const double pad = h >= 8 ? 1.5 : 0;
    const double inset = std::min(h * 0.12, 4.0) * depth;
    double y0 = top + pad + inset, y1 = top + h - pad - inset;
    if (y1 - y0 < 2) {
        const double c = top + h / 2;
        y0 = c - 1, y1 = c + 1;
    }
    return { y0, y1 };
}

int ViewState::depthAt(int row, double y, int laneCount) const
{
    for (int d = laneCount - 1; d >= 0; --d) {
        auto [y0, y1] = boxY(row, d);
        if (y >= y0 && y <= y1) return d;
    }
    return -1;
}

ViewState fittedView(const TraceModel &model, double t0, double t1, QSize size, const ViewState &like)
{
    ViewState v = like;
    v.size = size;
    v.yOffset = 0;
    if (t1 <= t0) t0 = model.tBegin(), t1 = model.tEnd();
    v.scale = TimeScale::fit(t0, t1, size.width() - v.labelWidth);
    const double avail = v.plotRect().height();
    v.rowHeight = std::clamp(avail / std::max(1, v.slotCount(model)), 1.0, ViewState::kMaxFittedRow);
    setCounterRows(v, model);
    return v;
}

// The first state whose category is one of cats (by category index) among the first (or last) few
// of row's depth-0 lane, or none.
static std::optional<size_t> stateNearEnd(
    const TraceModel &model, int row, const std::vector<bool> &cats, bool fromStart)
{
    if (model.laneCount(row) == 0) return std::nullopt;
    auto [b, e] = model.lane(row, 0);
    for (size_t k = 0; k < 8 && k < e - b; ++k) {
        const size_t i = fromStart ? b + k : e - 1 - k;
        if (cats[static_cast<size_t>(model.category(row, i))]) return i;
    }
    return std::nullopt;
}

std::pair<double, double> openingRange(const TraceModel &model, QString *note)
{
    // The routines that start and end MPI, by their class in the routine table (which the log
    // carries), not by their names: MPI_Init_thread starts MPI as MPI_Init does.
    std::vector<bool> init(static_cast<size_t>(model.categoryCount())), fin(init.size());
    bool anyClass = false;
    for (int c = 0; c < model.categoryCount(); ++c) {
        init[static_cast<size_t>(c)] = model.categoryInfo(c).routine.starts_mpi();
        fin[static_cast<size_t>(c)] = model.categoryInfo(c).routine.ends_mpi();
        anyClass = anyClass || init[static_cast<size_t>(c)] || fin[static_cast<size_t>(c)];
    }
    double initEnd = model.tBegin(), finStart = model.tEnd();
    bool anyInit = false, anyFin = false;
    for (int r = 0; anyClass && r < model.rowCount(); ++r) {
        if (auto i = stateNearEnd(model, r, init, true)) initEnd = std::max(initEnd, model.end(r, *i)), anyInit = true;
        if (auto i = stateNearEnd(model, r, fin, false))
            finStart = std::min(finStart, model.start(r, *i)), anyFin = true;
    }
    const double run = model.tEnd() - model.tBegin();
    const double setup = (initEnd - model.tBegin()) + (model.tEnd() - finStart);
    if ((anyInit || anyFin) && finStart > initEnd && setup > run / 2) {
        if (note) *note = QStringLiteral("from end of MPI_Init to start of MPI_Finalize; Home for the full run");
        return { initEnd, finStart };
    }
    return { model.tBegin(), model.tEnd() };
}

ViewState openingView(const TraceModel &model, QSize size, const OpeningOptions &options, QString *message)
{
    ViewState v;
    v.size = size;
    v.legendHeight = options.legend ? 20 : 0;
    v.drawMode = options.drawMode;
    std::pair<double, double> range;
    if (options.range)
        range = *options.range;
    else
        range = openingRange(model, &v.rulerNote);
    const double avail = v.plotRect().height();
    const bool thin = model.rowCount() * options.minRowPx > avail;
    if (options.group.by != GroupBy::None && (options.group.by != GroupBy::Auto || thin)) {
        // Group rows of at least 8 px, at most 256 groups.
        const int target = std::clamp(static_cast<int>(avail / 8), 1, 256);
        v.groups = RankGroups::make(model, options.group, range.first, range.second, target);
        if (message) *message = v.groups->message();
    }
    v.summaryHeight = options.summary.value_or(v.groups != nullptr) ? ViewState::kSummaryBand : 0;
    return fittedView(model, range.first, range.second, size, v);
}

} // namespace upshot
