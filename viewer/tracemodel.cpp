// The timeline model's storage and culling: categories, lane layout and blocks, per-category
// totals, visible ranges by binary search, hit-testing. Its text, search and statistics are in
// tracetext.cpp, tracesearch.cpp and tracestats.cpp.
#include "tracemodel.h"

#include "mpe/filter_report.h"

#include <algorithm>
#include <unordered_set>

#include "summary.h"

namespace upshot {

using mpe::format::Event;
using mpe::format::RecordKind;
using mpe::format::State;

static QColor fallbackColor(uint32_t id)
{
    return QColor::fromHsv(static_cast<int>((id * 137u) % 360u), 140, 220);
}

TraceModel::TraceModel(const mpe::format::Definitions &defs)
    : m_catIndex(0x10000, -1), m_worldSize(static_cast<int>(defs.world_size)),
      m_program(QString::fromStdString(defs.program)),
      m_filterNote(QString::fromStdString(mpe::format::filter_note(mpe::format::filter_report(defs))))
{
    for (const auto &c : defs.categories) {
        if (c.id >= 0x10000 || m_catIndex[c.id] >= 0) continue;
        CategoryInfo info;
        info.id = c.id;
        info.name = QString::fromStdString(c.name);
        info.color = QColor::fromRgb(static_cast<QRgb>(c.color));
        info.isState = c.kind == mpe::format::CategoryKind::kState;
        info.routine = c.routine;
        m_catIndex[c.id] = static_cast<int32_t>(m_categories.size());
        m_categories.push_back(info);
        // A user state is started and ended by two event ids; both name the state.
        if (c.kind == mpe::format::CategoryKind::kState && c.id >= mpe::format::kUserCategoryBase && c.end_id != c.id
            && c.end_id < 0x10000 && m_catIndex[c.end_id] < 0)
            m_catIndex[c.end_id] = m_catIndex[c.id];
    }
    // Hosts, and each communicator once: every member rank defines it (MPI_COMM_SELF, one
    // member, is left out: 100,000 of them at 100,000 ranks say nothing about the run).
    std::unordered_set<uint64_t> seen;
    m_hosts.reserve(defs.ranks.size());
    for (const auto &r : defs.ranks) {
        m_hosts.push_back(r.host);
        for (const auto &c : r.comms) {
            if (c.members.size() < 2 || !seen.insert(c.global_id).second) continue;
            m_comms.push_back({ c.global_id, c.inter, std::vector<int32_t>(c.members.begin(), c.members.end()) });
        }
    }
}

std::shared_ptr<const RankBins> TraceModel::rankBins() const
{
    if (!m_rankBins) m_rankBins = std::make_shared<RankBins>(*this);
    return m_rankBins;
}

std::shared_ptr<const BinCounts> TraceModel::allRowCounts() const
{
    if (!m_allRowCounts) m_allRowCounts = std::make_shared<BinCounts>(rankBins());
    return m_allRowCounts;
}

int TraceModel::ensureCategory(uint32_t id, bool isState)
{
    if (id < 0x10000 && m_catIndex[id] >= 0) return m_catIndex[id];
    for (size_t i = 0; i < m_categories.size(); ++i)
        if (m_categories[i].id == id) return static_cast<int>(i);
    CategoryInfo info;
    info.id = id;
    info.name = QStringLiteral("cat%1").arg(id);
    info.color = fallbackColor(id);
    info.isState = isState;
    if (id < 0x10000) m_catIndex[id] = static_cast<int32_t>(m_categories.size());
    m_categories.push_back(info);
    return static_cast<int>(m_categories.size()) - 1;
}

int64_t TraceModel::longDuration(int row, size_t i) const
{
    const auto &L = m_rows[row].longDurations;
    auto it = std::lower_bound(L.begin(), L.end(), i, [](const auto &e, size_t k) { return e.first < k; });
    return it != L.end() && it->first == i ? it->second : static_cast<int64_t>(PackedState::kLongDuration);
}

int TraceModel::depth(int row, size_t i) const
{
    const auto &L = m_rows[row].lanes;
    return static_cast<int>(std::upper_bound(L.begin(), L.end(), i) - L.begin()) - 1;
}

mpe::format::State TraceModel::state(int row, size_t i) const
{
    const int64_t s = startNs(row, i);
    return State { s, s + durationNs(row, i), m_categories[category(row, i)].id, static_cast<uint32_t>(depth(row, i)),
        site(row, i) };
}

void TraceModel::finishRows()
{
    for (auto &c : m_categories)
        c.count = 0, c.inclusiveNs = 0, c.exclusiveNs = 0;
    for (auto &site : m_sites)
        site.count = 0, site.inclusiveNs = 0;
    for (int r = 0; r < rowCount(); ++r) {
        Row &row = m_rows[r];
        // Inclusive and exclusive time: a state's time leaves its parent's exclusive time when
        // the parent (the last state of the lane above starting no later) encloses it.
        for (int d = 0; d < laneCount(r); ++d) {
            auto [b, e] = lane(r, d);
            size_t parent = d > 0 ? lane(r, d - 1).first : 0;
            const size_t parentEnd = d > 0 ? lane(r, d - 1).second : 0;
            for (size_t i = b; i < e; ++i) {
                const double dur = duration(r, i);
                auto &info = m_categories[category(r, i)];
                ++info.count;
                info.inclusiveNs += dur;
                info.exclusiveNs += dur;
                if (const uint32_t s = site(r, i); s >= 1 && s <= m_sites.size()) {
                    ++m_sites[s - 1].count;
                    m_sites[s - 1].inclusiveNs += dur;
                }
                if (d == 0) continue;
                while (parent + 1 < parentEnd && startNs(r, parent + 1) <= startNs(r, i))
                    ++parent;
                if (parent < parentEnd && startNs(r, parent) <= startNs(r, i) && end(r, parent) >= end(r, i))
                    m_categories[category(r, parent)].exclusiveNs -= dur;
            }
        }
        row.markers.clear();
        row.ticks.clear();
        row.ticks.reserve(row.events.size());
        for (const Event &e : row.events) {
            int c = -1;
            if (e.kind == RecordKind::kMarker) {
                const auto m = mpe::format::as<mpe::format::MarkerRecord>(e);
                row.markers.push_back({ static_cast<double>(e.time), m.level, m.logging_on });
            }
            if (e.kind == RecordKind::kUserEvent || e.kind == RecordKind::kCollective) {
                c = ensureCategory(e.cat, false);
                if (e.kind == RecordKind::kUserEvent) ++m_categories[c].count;
            }
            row.ticks.push_back({ e.time, c, e.kind });
        }
        // Block summaries per lane and level.
        for (int level = 0; level < kBlockLevels; ++level) {
            row.blocks[level].clear();
            row.blockOffsets[level].clear();
            for (int d = 0; d < laneCount(r); ++d) {
                row.blockOffsets[level].push_back(row.blocks[level].size());
                summarizeLane(r, d, blockSize(level), row.blocks[level]);
            }
            row.blockOffsets[level].push_back(row.blocks[level].size());
        }
    }
    m_maxLatency = 0;
    for (const Message &m : m_messages)
        m_maxLatency = std::max<int64_t>(m_maxLatency, m.recv_time - m.send_time);
    m_arrowSampleStride = std::max<size_t>(1, m_messages.size() / 65536);
    m_arrowSample.clear();
    m_arrowSample.reserve(m_messages.size() / m_arrowSampleStride + 1);
    for (size_t i = 0; i < m_messages.size(); i += m_arrowSampleStride) {
        const Message &m = m_messages[i];
        m_arrowSample.push_back({ m.send_time, m.recv_time, m.send_timeline, m.recv_timeline, m.bytes });
    }
}

void TraceModel::summarizeLane(int r, int d, size_t B, std::vector<Block> &out) const
{
    auto [lb, le] = lane(r, d);
    for (size_t b = lb; b < le; b += B) {
        const size_t e = std::min(le, b + B);
        int cats[8];
        int64_t time[8];
        int n = 0;
        int64_t longest = 0;
        for (size_t i = b; i < e; ++i) {
            longest = std::max(longest, durationNs(r, i));
            const int c = category(r, i);
            int k = 0;
            while (k < n && cats[k] != c)
                ++k;
            if (k == n) {
                if (n == 8) continue;
                cats[n] = c, time[n] = 0, ++n;
            }
            time[k] += durationNs(r, i);
        }
        out.push_back({ startNs(r, b), startNs(r, e - 1) + durationNs(r, e - 1),
            static_cast<uint32_t>(std::clamp<int64_t>(longest, 0, UINT32_MAX)),
            cats[std::max_element(time, time + n) - time] });
    }
}

std::pair<size_t, size_t> TraceModel::candidateSamples(double t0, double t1) const
{
    const auto &A = m_arrowSample;
    const double from = t0 - static_cast<double>(m_maxLatency);
    auto first = std::partition_point(A.begin(), A.end(), [&](const ArrowSample &m) { return m.send_time < from; });
    auto last = std::partition_point(first, A.end(), [&](const ArrowSample &m) { return m.send_time <= t1; });
    return { static_cast<size_t>(first - A.begin()), static_cast<size_t>(last - A.begin()) };
}

int TraceModel::rowOf(uint32_t rank, uint32_t thread) const
{
    auto it = std::partition_point(m_rows.begin(), m_rows.end(),
        [&](const Row &r) { return std::pair(r.rank, r.thread) < std::pair(rank, thread); });
    return it != m_rows.end() && it->rank == rank && it->thread == thread ? static_cast<int>(it - m_rows.begin()) : -1;
}

int TraceModel::categoryIndexSlow(uint32_t id) const
{
    for (size_t i = 0; i < m_categories.size(); ++i)
        if (m_categories[i].id == id) return static_cast<int>(i);
    return 0;
}

int TraceModel::findCategory(const QString &name) const
{
    for (int i = 0; i < categoryCount(); ++i)
        if (m_categories[i].name == name) return i;
    return -1;
}

std::pair<size_t, size_t> TraceModel::visibleStates(int row, int depth, double t0, double t1) const
{
    auto [b, e] = lane(row, depth);
    // Ends are sorted inside a lane: the first visible state is the first ending at or after t0.
    const size_t first = partitionIndex(b, e, [&](size_t i) { return end(row, i) < t0; });
    return { first, partitionIndex(first, e, [&](size_t i) { return start(row, i) <= t1; }) };
}

std::pair<size_t, size_t> TraceModel::visibleEvents(int row, double t0, double t1) const
{
    const auto &E = m_rows[row].ticks;
    auto first = std::partition_point(E.begin(), E.end(), [&](const EventTick &e) { return e.time < t0; });
    auto last = std::partition_point(first, E.end(), [&](const EventTick &e) { return e.time <= t1; });
    return { static_cast<size_t>(first - E.begin()), static_cast<size_t>(last - E.begin()) };
}

std::pair<size_t, size_t> TraceModel::candidateMessages(double t0, double t1) const
{
    const auto &M = m_messages;
    const double from = t0 - static_cast<double>(m_maxLatency);
    auto first = std::partition_point(M.begin(), M.end(), [&](const Message &m) { return m.send_time < from; });
    auto last = std::partition_point(first, M.end(), [&](const Message &m) { return m.send_time <= t1; });
    return { static_cast<size_t>(first - M.begin()), static_cast<size_t>(last - M.begin()) };
}

StateRef TraceModel::stateAt(int row, double t, double tolerance) const
{
    if (row < 0 || row >= rowCount()) return {};
    for (int d = laneCount(row) - 1; d >= 0; --d) {
        auto [b, e] = visibleStates(row, d, t - tolerance, t + tolerance);
        if (b == e) continue;
        // Prefer the state that contains t, else the nearest one.
        size_t best = b;
        double bestDist = 1e300;
        for (size_t i = b; i < e && i < b + 64; ++i) {
            const double dist = t < start(row, i) ? start(row, i) - t : (t > end(row, i) ? t - end(row, i) : 0);
            if (dist < bestDist) bestDist = dist, best = i;
        }
        if (!m_categories[category(row, best)].visible) continue;
        return { row, best };
    }
    return {};
}

size_t TraceModel::memoryBytes() const
{
    size_t b = m_messages.capacity() * sizeof(Message) + m_catIndex.capacity() * sizeof(int32_t);
    for (const Row &T : m_rows) {
        b += sizeof(T) + T.states.capacity() * sizeof(PackedState) + T.sites.capacity() * sizeof(uint32_t)
            + T.events.capacity() * sizeof(Event) + T.lanes.capacity() * sizeof(size_t)
            + T.longDurations.capacity() * sizeof(T.longDurations[0]) + T.markers.capacity() * sizeof(Marker)
            + T.ticks.capacity() * sizeof(EventTick);
        for (int level = 0; level < kBlockLevels; ++level)
            b += T.blocks[level].capacity() * sizeof(Block) + T.blockOffsets[level].capacity() * sizeof(size_t);
    }
    return b + m_arrowSample.capacity() * sizeof(ArrowSample);
}

} // namespace upshot
