// The timeline model: holds a decoded log in compact per-row arrays and answers index-based queries (culling, folding,
// hit-testing, search, histogram, statistics) for the painter, the panels and the tests.
#pragma once

#include <QColor>
#include <QMetaType>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "mpe/frame.h"
#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace upshot {

// The first index in [lo, hi) for which pred is false, pred being true then false: bisection.
template<class Pred> size_t partitionIndex(size_t lo, size_t hi, Pred pred)
{
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (pred(mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// One legend entry: a state or event category of the log.
struct CategoryInfo
{
    uint32_t id = 0; // category id in the log
    QString name;
    QColor color;
    bool isState = true;
    mpe::format::RoutineInfo routine; // what an MPI routine does (mpe/routine.h); unknown for the application's
    bool visible = true;
    bool searchable = true;
    uint64_t count = 0; // states (or events) of the category
    double inclusiveNs = 0; // summed durations
    double exclusiveNs = 0; // minus the time of nested states
};

// A state on a row: index into the row's lane-major state array.
struct StateRef
{
    int row = -1;
    size_t index = 0;
    bool valid() const { return row >= 0; }
    bool operator==(const StateRef &) const = default;
};

// Folded run of narrow states: [first, last) of one lane.
struct FoldSummary
{
    uint64_t count = 0;
    double start = 0, end = 0;
    std::vector<std::pair<int, double>> timePerCategory; // (category index, ns), largest first
};

// States whose duration falls in [lo, hi), whose category is selected and (when site >= 0) whose
// call site is site are highlighted.
struct Highlight
{
    std::vector<bool> categories; // by category index; empty = none
    double lo = 0, hi = 0;
    int64_t site = -1; // run-wide call site id, -1 = any
    bool active() const { return !categories.empty(); }
};

// A call site of the run (mpe::format::LogFile::callsites()): the stack a call was made from.
struct CallSiteInfo
{
    uint32_t id = 0; // 1, 2, ...: index + 1 in the model's table
    QString text; // mpe::callsite_text(): "callsites.c:42 (main)", then " <- " and the outer frames
    std::vector<mpe::Frame> frames; // innermost first
    uint64_t count = 0; // states of the site, whole run
    double inclusiveNs = 0; // their summed durations
};

// The states of one call site and one category (a site normally calls one routine) and their
// time: a row of the statistics window's call-site table.
struct SiteTime
{
    uint32_t site = 0; // 0 = states without a known call site
    int category = -1; // category index
    uint64_t count = 0; // states overlapping the window
    double ns = 0; // their time, clipped to the window
    bool operator==(const SiteTime &) const = default;
};

struct Histogram
{
    double lo = 0, hi = 0; // duration range in ns
    bool logBins = false;
    std::vector<uint64_t> counts;
    uint64_t total = 0;
    // Returns the duration range [lo, hi) of bin i.
    std::pair<double, double> binRange(int i) const;
};

// A state as the model holds it: 12 bytes (Tracy holds a zone in 22; the decoded
// mpe::format::State takes 24). The start is a signed 48-bit count of ns (±78 hours); the duration
// is 32-bit ns, and a state of 4.29 s or more (or a negative one, from a damaged log) keeps its
// exact duration in its row's side table. The depth is the lane the state sits in.
struct PackedState
{
    static constexpr uint32_t kLongDuration = 0xFFFFFFFFu; // look the duration up in the side table
    uint32_t startLo = 0;
    uint16_t startHi = 0;
    uint16_t category = 0; // category index in the model
    uint32_t duration = 0;

    int64_t start() const
    {
        return static_cast<int64_t>((static_cast<uint64_t>(startHi) << 48) | (static_cast<uint64_t>(startLo) << 16))
            >> 16;
    }
    void setStart(int64_t t)
    {
        startLo = static_cast<uint32_t>(t);
        startHi = static_cast<uint16_t>(static_cast<uint64_t>(t) >> 32);
    }
};
static_assert(sizeof(PackedState) == 12);

// One matched message (40 bytes); its source and destination ranks are those of its timelines.
struct Message
{
    int64_t send_time; // entry of the send call
    int64_t recv_time; // completion of the receive
    uint32_t send_timeline;
    uint32_t recv_timeline;
    int32_t tag;
    uint64_t bytes;
};

class ModelBuilder;
class WaitStates;
class CounterTracks;
class RankBins;
class BinCounts;

class TraceModel
{
public:
    // An empty model with the categories of defs; ModelBuilder (tracebuilder.h) fills it.
    explicit TraceModel(const mpe::format::Definitions &defs);

    // Rows: one per timeline (rank, thread), ordered by rank then thread.
    int rowCount() const { return static_cast<int>(m_rows.size()); }
    QString rowLabel(int row) const;
    uint32_t rank(int row) const { return m_rows[row].rank; }
    int rowOfTimeline(uint32_t timeline) const { return static_cast<int>(timeline); }
    // The row of (rank, thread), or -1.
    int rowOf(uint32_t rank, uint32_t thread) const;
    int worldSize() const { return m_worldSize; }
    double tBegin() const { return static_cast<double>(m_tBegin); }
    double tEnd() const { return static_cast<double>(m_tEnd); }
    uint64_t recordCount() const { return m_records; }
    const QString &program() const { return m_program; }
    // What the run's filter left out (mpe/filter_report.h), "" for a log that was not filtered.
    const QString &filterNote() const { return m_filterNote; }
    // True for the preview built from the index alone (summary boxes, no messages or events).
    bool isPreview() const { return m_preview; }
    // True for a model drawn from a view index (a log larger than memory, outofcore.h): the span,
    // records and legend totals are the whole run's, the rows hold window() only.
    bool isFromIndex() const { return m_fromIndex; }
    // The span whose records the rows hold; empty (second <= first) for the index's summary, whose
    // rows are sampled bins and whose arrows are the index's sample only (messagesSampled()).
    std::pair<double, double> window() const { return m_window; }
    bool messagesSampled() const { return m_fromIndex && m_window.second <= m_window.first; }

    // The host a rank ran on (RankMeta::host), "" when the log does not say.
    const std::string &host(uint32_t rank) const
    {
        static const std::string kNone;
        return rank < m_hosts.size() ? m_hosts[rank] : kNone;
    }
    // A communicator of the run with more than one member, once per global id, in the order
    // the definitions first name it.
    struct Communicator
    {
        uint64_t globalId = 0;
        bool inter = false;
        std::vector<int32_t> members; // world ranks
    };
    const std::vector<Communicator> &communicators() const { return m_comms; }
    // True for the categories of MPI functions (the rest are the application's).
    bool isMpiCategory(int c) const { return m_categories[c].id < mpe::format::kUserCategoryBase; }
    // Every row's depth-0 category sampled at fixed bins over the run (summary.h), built on
    // first use (O(records + rows x bins)); the summary band and rank groups draw from it.
    std::shared_ptr<const RankBins> rankBins() const;
    // rankBins() summed over all rows (the summary band at coarse zoom), built on first use.
    std::shared_ptr<const BinCounts> allRowCounts() const;

    // States of a row, lane-major: lane d holds the depth-d states, sorted by start; within a
    // lane states do not overlap, so their ends are sorted too.
    int laneCount(int row) const { return static_cast<int>(m_rows[row].lanes.size()) - 1; }
    std::pair<size_t, size_t> lane(int row, int depth) const
    {
        return { m_rows[row].lanes[depth], m_rows[row].lanes[depth + 1] };
    }
    size_t stateCount(int row) const { return m_rows[row].states.size(); }
    // The state as the log reader would give it (category id, depth), for descriptions and tests.
    mpe::format::State state(int row, size_t i) const;
    int64_t startNs(int row, size_t i) const { return m_rows[row].states[i].start(); }
    int64_t durationNs(int row, size_t i) const
    {
        const PackedState &s = m_rows[row].states[i];
        return s.duration != PackedState::kLongDuration ? static_cast<int64_t>(s.duration) : longDuration(row, i);
    }
    double start(int row, size_t i) const { return static_cast<double>(startNs(row, i)); }
    double end(int row, size_t i) const { return static_cast<double>(startNs(row, i) + durationNs(row, i)); }
    double duration(int row, size_t i) const { return static_cast<double>(durationNs(row, i)); }
    int category(int row, size_t i) const { return m_rows[row].states[i].category; }
    int depth(int row, size_t i) const;
    // The run-wide call site of a state (callSite()), 0 when unknown.
    uint32_t site(int row, size_t i) const
    {
        const auto &S = m_rows[row].sites;
        return S.empty() ? 0 : S[i];
    }
    // One row's states for inner loops (the folder's): the accessors above without looking the
    // row up on every call.
    struct RowStates
    {
        const PackedState *s;
        const TraceModel *model;
        int row;
        int64_t durationNs(size_t i) const
        {
            return s[i].duration != PackedState::kLongDuration ? static_cast<int64_t>(s[i].duration)
                                                               : model->longDuration(row, i);
        }
        double start(size_t i) const { return static_cast<double>(s[i].start()); }
        double end(size_t i) const { return static_cast<double>(s[i].start() + durationNs(i)); }
        double duration(size_t i) const { return static_cast<double>(durationNs(i)); }
        int category(size_t i) const { return s[i].category; }
    };
    RowStates rowStates(int row) const { return { m_rows[row].states.data(), this, row }; }

    // Summary of kBlock consecutive states of a lane (level 0), or of kBlock * kBlockFanout
    // (level 1), for folding at coarse zoom without touching the states: the first state's
    // start, the last one's end, the longest duration (saturated at 32 bits) and the category
    // with most time. 24 bytes per 16 states, plus 1/16 of that for level 1: folds spanning a
    // few dozen states (mid zoom) and thousands (full views of huge logs) both cost a few reads.
    static constexpr size_t kBlock = 16;
    static constexpr size_t kBlockFanout = 16;
    static constexpr int kBlockLevels = 2;
    struct Block
    {
        int64_t start;
        int64_t end;
        uint32_t maxDuration;
        int32_t dominant;
    };
    // States per block of a level.
    static constexpr size_t blockSize(int level) { return level == 0 ? kBlock : kBlock * kBlockFanout; }
    // The level's blocks of lane (row, depth): block k covers lane states [b + k*B, b + (k+1)*B),
    // b the lane's first state and B = blockSize(level).
    const Block *blocks(int row, int depth, size_t *count, int level = 0) const
    {
        const auto &off = m_rows[row].blockOffsets[level];
        *count = off[depth + 1] - off[depth];
        return m_rows[row].blocks[level].data() + off[depth];
    }

    // Culling: the states of lane (row, depth) that overlap [t0, t1], by binary search.
    std::pair<size_t, size_t> visibleStates(int row, int depth, double t0, double t1) const;
    // Events of a row overlapping [t0, t1].
    std::pair<size_t, size_t> visibleEvents(int row, double t0, double t1) const;
    const std::vector<mpe::format::Event> &events(int row) const { return m_rows[row].events; }
    // What painting an event marker needs, 16 bytes, same index as events(row): thinning dense
    // markers strides through these instead of the 40-byte events (fewer cache and TLB misses).
    struct EventTick
    {
        int64_t time;
        int32_t category; // category index for user events and collectives, else -1
        mpe::format::RecordKind kind;
    };
    const std::vector<EventTick> &eventTicks(int row) const { return m_rows[row].ticks; }
    // Messages that may cross [t0, t1]: a range of messages by send time (filter recv yourself).
    std::pair<size_t, size_t> candidateMessages(double t0, double t1) const;
    const std::vector<Message> &messages() const { return m_messages; }
    // Every arrowSampleStride()-th message, in one small contiguous array (at most ~64 Ki
    // entries): views with too many arrows to draw bundle a sample, and reading it sequentially
    // costs far less than striding through the messages (a cache and TLB miss per message).
    struct ArrowSample
    {
        int64_t send_time;
        int64_t recv_time;
        uint32_t send_timeline;
        uint32_t recv_timeline;
        uint64_t bytes;
    };
    const std::vector<ArrowSample> &arrowSample() const { return m_arrowSample; }
    size_t arrowSampleStride() const { return m_arrowSampleStride; }
    // The range of arrowSample() that may cross [t0, t1], as candidateMessages().
    std::pair<size_t, size_t> candidateSamples(double t0, double t1) const;
    // One-sided transfers (mpe/rma.h), by start time; each names its origin timeline (= row) and
    // its target's world rank, drawn to that rank's first row at the completing synchronisation.
    const std::vector<mpe::format::RmaTransfer> &rmaTransfers() const { return m_rma.transfers; }
    const std::vector<mpe::format::RmaWindow> &rmaWindows() const { return m_rma.windows; }
    // MPI_Pcontrol markers of a row: (time, level, logging on after the call).
    struct Marker
    {
        double time;
        int level;
        bool on;
    };
    const std::vector<Marker> &markers(int row) const { return m_rows[row].markers; }

    // Categories.
    int categoryCount() const { return static_cast<int>(m_categories.size()); }
    const CategoryInfo &categoryInfo(int c) const { return m_categories[c]; }
    CategoryInfo &categoryInfo(int c) { return m_categories[c]; }
    int categoryIndex(uint32_t id) const
    {
        return id < 0x10000 && m_catIndex[id] >= 0 ? m_catIndex[id] : categoryIndexSlow(id);
    }
    int findCategory(const QString &name) const;
    // Takes the colour, visibility and searchability of each category from `from`, a model of the
    // same log numbering its categories alike (the summary and windows of a log opened out of core).
    void copyCategoryLook(const TraceModel &from)
    {
        for (int c = 0; c < categoryCount() && c < from.categoryCount(); ++c) {
            if (m_categories[c].id != from.m_categories[c].id) continue;
            m_categories[c].color = from.m_categories[c].color;
            m_categories[c].visible = from.m_categories[c].visible;
            m_categories[c].searchable = from.m_categories[c].searchable;
        }
    }

    // Call sites: ids 1..callSiteCount(); none for logs before format version 3 and for previews
    // of them.
    int callSiteCount() const { return static_cast<int>(m_sites.size()); }
    const CallSiteInfo &callSite(uint32_t id) const { return m_sites[id - 1]; }
    // The site's one-line text, or "" for 0 or an unknown id.
    QString callSiteText(uint32_t id) const;
    // The site for the details pane: "call site csite.c:12 (csite_send) in libcsite.so", then a
    // line "  <- callsites.c:50 (main)" per outer frame; the module is named for frames in a
    // shared library. "" for 0 or an unknown id.
    QString describeCallSite(uint32_t id) const;
    // The call sites a search query names, by id (index 0, "unknown", never matches): "file:line"
    // matches the sites with a frame at that line of that file (file name or path); any other
    // query matches the sites whose text contains it, ignoring case ("exchange", "halo.c").
    std::vector<bool> matchCallSites(const QString &query) const;

    // Hit-testing: the deepest state on row containing t (within tolerance ns), or invalid.
    StateRef stateAt(int row, double t, double tolerance = 0) const;
    // The message whose arrow passes nearest (x, y) on the screen is found by the painter; this
    // returns a description for the details pane.
    QString describeState(StateRef s) const;
    QString describeMessage(size_t m) const;
    QString describeEvent(int row, size_t e) const;
    QString describeFold(int row, const FoldSummary &f) const;
    FoldSummary summarize(int row, size_t first, size_t last) const;

    // Search: the next (forward) or previous state after/before time t, over rows (empty = all),
    // of category cat (-1 = any searchable category).
    StateRef find(double t, bool forward, int cat, const std::vector<int> &rows = {}) const;
    // The same for the states of the call sites selected in sites (by id, as matchCallSites()
    // gives them) whose category is visible.
    StateRef findSite(double t, bool forward, const std::vector<bool> &sites, const std::vector<int> &rows = {}) const;

    // Histogram of the durations of states of the selected categories (empty = all visible)
    // starting inside [t0, t1], of call site `site` only when site >= 0.
    Histogram histogram(
        const std::vector<bool> &cats, double t0, double t1, int bins, bool logBins, int64_t site = -1) const;
    // Time per category per row inside [t0, t1] (depth-0 states, clipped): [row][category] ns.
    std::vector<std::vector<double>> timePerCategory(double t0, double t1) const;
    // Time per (call site, category) inside [t0, t1]: the states of every depth overlapping the
    // window (not merely touching its edge), their time clipped to it; most time first (then most calls, then by site
    // and category). [tBegin(), tEnd()] gives the whole run.
    std::vector<SiteTime> timePerCallSite(double t0, double t1) const;
    // Bytes sent between ranks by messages sent inside [t0, t1]: [src * worldSize + dst].
    std::vector<uint64_t> commMatrix(double t0, double t1) const;

    // Bytes held by the model's arrays (states, events, messages, blocks and indices), by capacity.
    size_t memoryBytes() const;

    // The wait states of the log (waitstates.h), once analyzed: null until then, and for
    // previews. Set on the GUI thread, which is the one that paints.
    const WaitStates *waits() const { return m_waits.get(); }
    std::shared_ptr<const WaitStates> sharedWaits() const { return m_waits; }
    void setWaits(std::shared_ptr<const WaitStates> waits) { m_waits = std::move(waits); }

    // The counter tracks (countertracks.h): the log's MPI_T samples (buildModel() loads them), then
    // with the rebuilt unexpected queue once computed. Null when there are none. Set on the GUI thread.
    const CounterTracks *counters() const { return m_counters.get(); }
    CounterTracks *counters() { return m_counters.get(); }
    void setCounters(std::shared_ptr<CounterTracks> counters) { m_counters = std::move(counters); }

private:
    friend class ModelBuilder;

    struct Row
    {
        uint32_t rank = 0;
        uint32_t thread = 0;
        std::vector<PackedState> states; // lane-major
        std::vector<uint32_t> sites; // call site per state (same index); empty when none is known
        std::vector<size_t> lanes { 0 }; // lane start offsets, plus the end
        std::vector<std::pair<size_t, int64_t>> longDurations; // (state index, ns), by index
        std::vector<mpe::format::Event> events; // by time
        std::vector<Marker> markers;
        std::vector<EventTick> ticks;
        std::vector<Block> blocks[kBlockLevels]; // per level, lane after lane
        std::vector<size_t> blockOffsets[kBlockLevels]; // per level: first block of each lane, plus the end
    };

    int categoryIndexSlow(uint32_t id) const;
    // The first state after (forward) or before t, over rows, for which match(row, i) holds.
    template<class Match> StateRef findWhere(double t, bool forward, const std::vector<int> &rows, Match match) const;
    // The index of category id, added with a fallback name and colour when the log did not define it.
    int ensureCategory(uint32_t id, bool isState);
    int64_t longDuration(int row, size_t i) const;
    // Computes what the painter and the legend need once the rows and messages are in place:
    // per-category counts and times, markers, lane blocks, the longest message latency.
    void finishRows();
    // Appends the blocks of size B of lane (r, d) to out.
    void summarizeLane(int r, int d, size_t B, std::vector<Block> &out) const;

    std::vector<Row> m_rows;
    std::vector<Message> m_messages; // by send time
    mpe::format::RmaModel m_rma;
    std::vector<ArrowSample> m_arrowSample;
    size_t m_arrowSampleStride = 1;
    std::vector<CategoryInfo> m_categories;
    std::vector<CallSiteInfo> m_sites; // by id - 1
    std::vector<int32_t> m_catIndex; // category id (< 0x10000) -> index
    int64_t m_maxLatency = 0;
    int64_t m_tBegin = 0, m_tEnd = 0;
    uint64_t m_records = 0;
    int m_worldSize = 0;
    bool m_preview = false;
    bool m_fromIndex = false;
    std::pair<double, double> m_window { 0, 0 };
    QString m_program;
    QString m_filterNote;
    std::shared_ptr<const WaitStates> m_waits;
    std::shared_ptr<CounterTracks> m_counters;
    std::vector<std::string> m_hosts; // by rank
    std::vector<Communicator> m_comms;
    mutable std::shared_ptr<const RankBins> m_rankBins; // built on first use, on the painting thread
    mutable std::shared_ptr<const BinCounts> m_allRowCounts; // likewise
};

// Loads a logfile or an OTF2 archive into a model (decoding on all cores). progress (0..100) is
// called from the calling thread. Errors: those of mpe::interop::OpenedLog::open and buildModel().
mpe::StatusOr<std::shared_ptr<TraceModel>> loadModel(
    const QString &path, const std::function<void(int, const QString &)> &progress = {});
// The older form, null on failure with the message in *error. Kept only for
// tests/viewer/tst_render.cpp and tst_window.cpp until they take the StatusOr form; remove then.
std::shared_ptr<TraceModel> loadModel(const QString &path, QString *error);

// Formats a time or duration in ns with a sensible unit ("1.25 ms").
QString formatDuration(double ns, int precision = 3);

} // namespace upshot

Q_DECLARE_METATYPE(upshot::Highlight)
