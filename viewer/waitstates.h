// Wait states on the timeline: the instances of mpe::analysis::waits::analyze() laid out per row for the
// overlay, the "Wait states" dock (totals over the visible window) and Find.
//
// Design.
//   The analysis runs once per loaded log, on the loader's thread (analyzeWaits()), with
//   Options::keep_instances; its Report is turned into 48-byte spans per row, sorted by start,
//   each knowing its waiting state, its culprit's row and state, and for point-to-point patterns
//   the model's message; the Report is then dropped. What the frame and the dock need is
//   precomputed beside the spans so neither ever walks all of them:
//   - window totals: per row, prefix sums of waiting time and instances per pattern every
//     kBlock spans (1.1 bytes per span); a window costs two binary searches and at most
//     2 * kBlock spans per row;
//   - coverage for coarse zoom: per row and pattern, the spans merged across gaps shorter than
//     64 ns, 256 ns, ... (x4); a level is kept only when it has at most half the intervals of
//     the last kept one (so all levels together hold fewer intervals than the spans), plus a
//     level of gap 0 for a pattern with less than half of the row's spans. A frame draws, per
//     pattern, the coarsest level whose gaps are under a pixel (the row's spans when there is
//     none): a few intervals per pixel, whatever the log's size.
//
// Invariant: spans of a row are sorted by (start, end); within a row they normally do not
// overlap (one MPI call at a time per thread), and when they do (a Waitall completing a
// receive and a nonblocking collective) the row keeps the running maximum of their ends.
//
// Memory: 48 bytes per instance plus the levels (at most 24 bytes per instance, a few in
// practice) and the prefix sums; while building, the Report's instances (~100 bytes each) too.
#pragma once

#include <QColor>
#include <QString>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/status.h"
#include "mpe/waits.h"
#include "tracemodel.h"

namespace upshot {

inline constexpr int kWaitPatterns = mpe::analysis::waits::kPatternCount;

// The overlay colour of pattern p (mpe::analysis::waits::Pattern as int), one per pattern.
QColor waitColor(int pattern);
// "Late Sender", ... (mpe::analysis::waits::pattern_name()).
QString waitPatternName(int pattern);

// One waiting interval on a row (48 bytes).
struct WaitSpan
{
    static constexpr uint32_t kNone = 0xFFFFFFFFu;
    int64_t start; // the waiting part, ns (the model's times)
    int64_t end;
    int64_t culpritTime; // when the culprit entered (send entry, receive post, collective entry)
    uint32_t state; // the waiting state's index in its row, kNone when the model has none there
    uint32_t culpritState; // the culprit's state in culpritRow, kNone when unknown
    uint32_t message; // Late Sender / Receiver: the message in TraceModel::messages(), or kNone
    int32_t culpritRow; // -1 when unknown
    uint8_t pattern;
    uint8_t depth; // the waiting state's lane
};

// A span: row and index into spans(row).
struct WaitRef
{
    int row = -1;
    size_t index = 0;
    bool valid() const { return row >= 0; }
    bool operator==(const WaitRef &) const = default;
};

struct WaitTotal
{
    double ns = 0; // waiting time, clipped to the window
    uint64_t instances = 0; // instances overlapping the window
    bool operator==(const WaitTotal &) const = default;
};
using WaitTotals = std::array<WaitTotal, kWaitPatterns>;

class WaitStates
{
public:
    // Coverage interval of one pattern on one row at a coarse level (24 bytes).
    struct Cover
    {
        int64_t start;
        int64_t end;
        uint8_t depth; // the shallowest lane among the merged spans
    };
    struct CoverLevel
    {
        double gap; // gaps shorter than this (ns) are bridged
        std::vector<Cover> items; // sorted, disjoint
    };
    static constexpr size_t kBlock = 64;

    // Lays report's instances (analyzed with Options::keep_instances) over model's rows; orders
    // them by (rank, thread, start) first when they are not (the analysis gives them so).
    WaitStates(const TraceModel &model, mpe::analysis::waits::Report &&report);

    int rowCount() const { return static_cast<int>(m_rows.size()); }
    const std::vector<WaitSpan> &spans(int row) const { return m_rows[static_cast<size_t>(row)].spans; }
    const WaitSpan &span(WaitRef r) const { return m_rows[static_cast<size_t>(r.row)].spans[r.index]; }
    uint64_t instanceCount() const { return m_instances; }
    // Instances whose (rank, thread) is not a row of the model (none for a log and its model).
    uint64_t unplaced() const { return m_unplaced; }
    // Whole-run totals and MPI time, as the analysis reports them.
    const WaitTotals &runTotals() const { return m_runTotals; }
    double mpiNs() const { return m_mpiNs; }

    // Spans of pattern on row.
    size_t count(int row, int pattern) const
    {
        return m_rows[static_cast<size_t>(row)].counts[static_cast<size_t>(pattern)];
    }
    // True when no two spans of row overlap (their ends are then sorted too).
    bool disjoint(int row) const { return m_rows[static_cast<size_t>(row)].reach.empty(); }
    // Spans of row overlapping (t0, t1): [first, last) by start.
    std::pair<size_t, size_t> visible(int row, double t0, double t1) const;
    // Per pattern: waiting time inside [t0, t1] and instances overlapping it, over all rows.
    WaitTotals windowTotals(double t0, double t1) const;

    // The kept coverage levels of (row, pattern), finest first (gaps 0, 64 ns, 256 ns, ...).
    const std::vector<CoverLevel> &coverLevels(int row, int pattern) const
    {
        return m_rows[static_cast<size_t>(row)].covers[static_cast<size_t>(pattern)];
    }

    // The next (forward) or previous instance of pattern (-1 = any) in the order (start, row,
    // index) after (before) `from`, or, when from is invalid, starting at or after (before) t;
    // over rows (empty = all). Invalid when there is none.
    WaitRef find(double t, WaitRef from, bool forward, int pattern, const std::vector<int> &rows = {}) const;
    // The instance that waits in state (row, index), or invalid.
    WaitRef atState(const TraceModel &model, int row, size_t index) const;
    // For the details pane: pattern, who waited how long in which call, for whom, the message
    // (point to point) and, with withSite, the waiting call's site.
    QString describe(const TraceModel &model, WaitRef r, bool withSite = true) const;

    // Bytes held (spans, prefix sums, coverage levels), by capacity.
    size_t memoryBytes() const;

private:
    struct BlockSum
    {
        std::array<int64_t, kWaitPatterns> ns {};
        std::array<uint32_t, kWaitPatterns> n {};
    };
    struct Row
    {
        std::vector<WaitSpan> spans;
        std::vector<int64_t> reach; // running maximum of the ends, only when spans overlap
        std::vector<BlockSum> prefix; // sums over spans [0, k * kBlock)
        std::array<std::vector<CoverLevel>, kWaitPatterns> covers;
        std::array<size_t, kWaitPatterns> counts {};
    };
    // Sums over spans [0, i) of row r.
    BlockSum prefixAt(const Row &r, size_t i) const;
    void finishRow(Row &r);

    std::vector<Row> m_rows;
    WaitTotals m_runTotals {};
    double m_mpiNs = 0;
    uint64_t m_instances = 0;
    uint64_t m_unplaced = 0;
};

// Runs mpe::analysis::waits::analyze() over file (the log model was built from) and lays the instances
// out; keepGoing, asked between chunks, can stop it (kCancelled). Errors: the analysis's
// (corrupt, truncated, io-error), out-of-memory.
mpe::StatusOr<std::shared_ptr<const WaitStates>> analyzeWaits(
    const mpe::format::LogFile &file, const TraceModel &model, std::function<bool()> keepGoing = {});
// The options the overlay's analysis runs with: every instance, no pair totals (the overlay draws
// culprits per instance). For a caller that runs the analysis itself (openTrace(), from the endpoints
// its pass collected) and then lays it out with layOutWaits().
mpe::analysis::waits::Options waitOverlayOptions();
// Lays out an analysis's report (run with waitOverlayOptions()) over the model of the same log,
// and drops the report. Errors: the report's, out-of-memory.
mpe::StatusOr<std::shared_ptr<const WaitStates>> layOutWaits(
    const TraceModel &model, mpe::StatusOr<mpe::analysis::waits::Report> &&report);

} // namespace upshot
