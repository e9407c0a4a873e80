// The timeline model: lane layout, category statistics, culling, hit-testing, search, histogram.
#include "tracemodel.h"

#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "summary.h"

namespace upshot {

using mpe::log::Event;
using mpe::log::RecordKind;
using mpe::log::State;

QString formatDuration(double ns, int precision)
{
    const double a = std::fabs(ns);
    if (a < 1e3) return QString::number(ns, 'g', precision + 1) + QStringLiteral(" ns");
    if (a < 1e6) return QString::number(ns / 1e3, 'g', precision + 1) + QStringLiteral(" µs");
    if (a < 1e9) return QString::number(ns / 1e6, 'g', precision + 1) + QStringLiteral(" ms");
    return QString::number(ns / 1e9, 'g', precision + 2) + QStringLiteral(" s");
}

std::pair<double, double> Histogram::binRange(int i) const
{
    const int n = static_cast<int>(counts.size());
    if (logBins && lo > 0) {
        const double a = std::log(lo), b = std::log(hi);
        return { std::exp(a + (b - a) * i / n), std::exp(a + (b - a) * (i + 1) / n) };
    }
    return { lo + (hi - lo) * i / n, lo + (hi - lo) * (i + 1) / n };
}

static QColor fallbackColor(uint32_t id)
{
    return QColor::fromHsv(static_cast<int>((id * 137u) % 360u), 140, 220);
}

TraceModel::TraceModel(const mpe::log::Definitions &defs)
    : m_catIndex(0x10000, -1), m_worldSize(static_cast<int>(defs.world_size)),
      m_program(QString::fromStdString(defs.program))
{
    for (const auto &c : defs.categories) {
        if (c.id >= 0x10000 || m_catIndex[c.id] >= 0) continue;
        CategoryInfo info;
        info.id = c.id;
        info.name = QString::fromStdString(c.name);
        info.color = QColor::fromRgb(static_cast<QRgb>(c.color));
        info.isState = c.kind == mpe::log::CategoryKind::kState;
        m_catIndex[c.id] = static_cast<int32_t>(m_categories.size());
        m_categories.push_back(info);
        // A user state is started and ended by two event ids; both name the state.
        if (c.kind == mpe::log::CategoryKind::kState && c.id >= mpe::log::kUserCategoryBase && c.end_id != c.id
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

mpe::log::State TraceModel::state(int row, size_t i) const
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
            if (e.kind == RecordKind::kMarker) row.markers.push_back({ static_cast<double>(e.time), e.a, e.b != 0 });
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

QString TraceModel::rowLabel(int row) const
{
    const Row &T = m_rows[row];
    bool threaded
        = (row > 0 && m_rows[row - 1].rank == T.rank) || (row + 1 < rowCount() && m_rows[row + 1].rank == T.rank);
    return threaded ? QStringLiteral("rank %1.%2").arg(T.rank).arg(T.thread) : QStringLiteral("rank %1").arg(T.rank);
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

QString TraceModel::describeState(StateRef s) const
{
    if (!s.valid()) return {};
    const State st = state(s.row, s.index);
    QString text = QStringLiteral("%1 on %2\nstart %3\nduration %4\ndepth %5")
                       .arg(m_categories[categoryIndex(st.cat)].name, rowLabel(s.row),
                           formatDuration(static_cast<double>(st.start), 6),
                           formatDuration(static_cast<double>(st.end - st.start), 4))
                       .arg(st.depth);
    if (st.site != 0) text += QLatin1Char('\n') + describeCallSite(st.site);
    return text;
}

QString TraceModel::callSiteText(uint32_t id) const
{
    return id >= 1 && id <= m_sites.size() ? m_sites[id - 1].text : QString();
}

namespace {

// A module whose file name says it is a shared library ("libcsite.so", "libmpi.so.12"): a frame
// in one is not in the program's own code, so the details name the library; frames in the
// executable need no module.
bool isSharedLibrary(std::string_view module)
{
    static const QRegularExpression so(QStringLiteral("\\.so(\\.[0-9.]+)?$"));
    return so.match(QString::fromUtf8(mpe::base_name(module))).hasMatch();
}

// One frame as mpe::callsite_text() writes it ("csite.c:12 (csite_send)", or
// "libcsite.so+0x1a2b (csite_send)" without a line), and " in libcsite.so" for a shared library.
QString frameText(const mpe::Frame &f)
{
    const QString function = QString::fromStdString(f.function);
    const QString module = QString::fromUtf8(mpe::base_name(f.module));
    if (f.file.empty())
        return QStringLiteral("%1+0x%2 (%3)")
            .arg(module, QString::number(static_cast<qulonglong>(f.offset), 16), function);
    QString text
        = QStringLiteral("%1:%2 (%3)").arg(QString::fromUtf8(mpe::base_name(f.file))).arg(f.line).arg(function);
    if (isSharedLibrary(f.module)) text += QStringLiteral(" in ") + module;
    return text;
}

} // namespace

QString TraceModel::describeCallSite(uint32_t id) const
{
    if (id < 1 || id > m_sites.size()) return {};
    const CallSiteInfo &site = m_sites[id - 1];
    if (site.frames.empty()) return QStringLiteral("call site ") + site.text;
    QString text = QStringLiteral("call site ") + frameText(site.frames[0]);
    for (size_t k = 1; k < site.frames.size(); ++k)
        text += QStringLiteral("\n  <- ") + frameText(site.frames[k]);
    return text;
}

std::vector<bool> TraceModel::matchCallSites(const QString &query) const
{
    std::vector<bool> out(m_sites.size() + 1, false);
    const QString q = query.trimmed();
    if (q.isEmpty()) return out;
    static const QRegularExpression fileLine(QStringLiteral("^([^\\s()]+):(\\d+)$"));
    const QRegularExpressionMatch m = fileLine.match(q);
    const std::string file = m.hasMatch() ? m.captured(1).toStdString() : std::string();
    const int line = m.hasMatch() ? m.captured(2).toInt() : 0;
    for (const CallSiteInfo &site : m_sites) {
        bool hit = false;
        if (m.hasMatch()) {
            // Exact: "halo.c:4" must not find the calls at halo.c:42.
            for (const mpe::Frame &f : site.frames)
                hit |= f.line == line && !f.file.empty()
                    && (mpe::base_name(f.file) == file || f.file == file
                        || (f.file.size() > file.size() && f.file.ends_with("/" + file)));
        } else {
            hit = site.text.contains(q, Qt::CaseInsensitive);
        }
        out[site.id] = hit;
    }
    return out;
}

QString TraceModel::describeMessage(size_t i) const
{
    const Message &m = m_messages[i];
    return QStringLiteral("message %1 -> %2\ntag %3, %4 bytes\nsent %5\nlatency %6")
        .arg(rank(static_cast<int>(m.send_timeline)))
        .arg(rank(static_cast<int>(m.recv_timeline)))
        .arg(m.tag)
        .arg(m.bytes)
        .arg(formatDuration(static_cast<double>(m.send_time), 6),
            formatDuration(static_cast<double>(m.recv_time - m.send_time)));
}

QString TraceModel::describeEvent(int row, size_t i) const
{
    const Event &e = m_rows[row].events[i];
    const QString at = formatDuration(static_cast<double>(e.time), 6);
    const QString name = m_categories[categoryIndex(e.cat)].name;
    switch (e.kind) {
    case RecordKind::kMarker:
        return QStringLiteral("MPI_Pcontrol(%1) on %2 at %3, logging %4")
            .arg(e.a)
            .arg(rowLabel(row), at, e.b ? "on" : "off");
    case RecordKind::kUserEvent:
        return QStringLiteral("event %1 on %2 at %3, data %4").arg(name, rowLabel(row), at).arg(e.c)
            + (e.site != 0 ? QLatin1Char('\n') + describeCallSite(e.site) : QString());
    case RecordKind::kCollective:
        return QStringLiteral("%1 on %2 at %3, root %4, %5 bytes").arg(name, rowLabel(row), at).arg(e.a).arg(e.c);
    case RecordKind::kCommCreate:
        return QStringLiteral("communicator %1 created (size %2) on %3 at %4")
            .arg(e.comm)
            .arg(e.a)
            .arg(rowLabel(row), at);
    case RecordKind::kWinCreate:
        return QStringLiteral("window %1 created by %2 (%3 bytes here) on %4 at %5")
            .arg(e.a)
            .arg(name)
            .arg(e.c)
            .arg(rowLabel(row), at);
    case RecordKind::kSend:
        return QStringLiteral("unmatched send to %1, tag %2, %3 bytes on %4 at %5")
            .arg(e.a)
            .arg(e.b)
            .arg(e.c)
            .arg(rowLabel(row), at);
    case RecordKind::kRecv:
        return QStringLiteral("unmatched receive from %1, tag %2, %3 bytes on %4 at %5")
            .arg(e.a)
            .arg(e.b)
            .arg(e.c)
            .arg(rowLabel(row), at);
    default:
        return QStringLiteral("event kind %1 on %2 at %3").arg(static_cast<int>(e.kind)).arg(rowLabel(row), at);
    }
}

FoldSummary TraceModel::summarize(int row, size_t first, size_t last) const
{
    FoldSummary f;
    if (first >= last) return f;
    f.count = last - first;
    f.start = start(row, first);
    f.end = end(row, last - 1);
    std::map<int, double> per;
    for (size_t i = first; i < last; ++i)
        per[category(row, i)] += duration(row, i);
    f.timePerCategory.assign(per.begin(), per.end());
    std::sort(f.timePerCategory.begin(), f.timePerCategory.end(), [](auto &a, auto &b) { return a.second > b.second; });
    return f;
}

QString TraceModel::describeFold(int row, const FoldSummary &f) const
{
    QString s = QStringLiteral("%1 states folded on %2\n%3 .. %4")
                    .arg(f.count)
                    .arg(rowLabel(row), formatDuration(f.start, 6), formatDuration(f.end, 6));
    for (size_t i = 0; i < f.timePerCategory.size() && i < 6; ++i)
        s += QStringLiteral("\n  %1: %2")
                 .arg(m_categories[f.timePerCategory[i].first].name, formatDuration(f.timePerCategory[i].second));
    return s;
}

template<class Match>
StateRef TraceModel::findWhere(double t, bool forward, const std::vector<int> &rows, Match match) const
{
    StateRef best;
    double bestT = forward ? 1e300 : -1e300;
    auto scanRow = [&](int row) {
        for (int d = 0; d < laneCount(row); ++d) {
            auto [b, e] = lane(row, d);
            if (forward) {
                for (size_t i = partitionIndex(b, e, [&](size_t k) { return start(row, k) <= t; }); i < e; ++i) {
                    if (start(row, i) >= bestT) break;
                    if (match(row, i)) {
                        bestT = start(row, i);
                        best = { row, i };
                        break;
                    }
                }
            } else {
                for (size_t i = partitionIndex(b, e, [&](size_t k) { return start(row, k) < t; }); i > b;) {
                    --i;
                    if (start(row, i) <= bestT) break;
                    if (match(row, i)) {
                        bestT = start(row, i);
                        best = { row, i };
                        break;
                    }
                }
            }
        }
    };
    if (rows.empty())
        for (int r = 0; r < rowCount(); ++r)
            scanRow(r);
    else
        for (int r : rows)
            if (r >= 0 && r < rowCount()) scanRow(r);
    return best;
}

StateRef TraceModel::find(double t, bool forward, int cat, const std::vector<int> &rows) const
{
    return findWhere(t, forward, rows, [&](int row, size_t i) {
        const int c = category(row, i);
        return cat >= 0 ? c == cat : (m_categories[c].searchable && m_categories[c].visible);
    });
}

StateRef TraceModel::findSite(
    double t, bool forward, const std::vector<bool> &sites, const std::vector<int> &rows) const
{
    if (std::find(sites.begin(), sites.end(), true) == sites.end()) return {};
    return findWhere(t, forward, rows, [&](int row, size_t i) {
        const uint32_t s = site(row, i);
        return s != 0 && s < sites.size() && sites[s] && m_categories[category(row, i)].visible;
    });
}

Histogram TraceModel::histogram(
    const std::vector<bool> &cats, double t0, double t1, int bins, bool logBins, int64_t site) const
{
    Histogram h;
    h.logBins = logBins;
    bins = std::max(bins, 1);
    h.counts.assign(static_cast<size_t>(bins), 0);
    auto selected = [&](int c) {
        return cats.empty() ? m_categories[c].visible : (static_cast<size_t>(c) < cats.size() && cats[c]);
    };
    std::vector<double> durs;
    for (int r = 0; r < rowCount(); ++r) {
        for (int d = 0; d < laneCount(r); ++d) {
            auto [b, e] = lane(r, d);
            for (size_t i = partitionIndex(b, e, [&](size_t k) { return start(r, k) < t0; });
                 i < e && start(r, i) <= t1; ++i)
                if (selected(category(r, i)) && (site < 0 || this->site(r, i) == site)) durs.push_back(duration(r, i));
        }
    }
    if (durs.empty()) return h;
    auto [mn, mx] = std::minmax_element(durs.begin(), durs.end());
    h.lo = *mn;
    h.hi = *mx;
    if (logBins) h.lo = std::max(h.lo, 1.0), h.hi = std::max(h.hi, h.lo);
    if (h.hi <= h.lo) h.hi = h.lo + 1;
    h.hi = std::nextafter(h.hi, 1e300) + (h.hi - h.lo) * 1e-9;
    const double a = logBins ? std::log(h.lo) : h.lo, b = logBins ? std::log(h.hi) : h.hi;
    for (double d : durs) {
        const double v = logBins ? std::log(std::max(d, 1.0)) : d;
        const int i = std::clamp(static_cast<int>((v - a) / (b - a) * bins), 0, bins - 1);
        ++h.counts[static_cast<size_t>(i)];
    }
    h.total = durs.size();
    return h;
}

std::vector<std::vector<double>> TraceModel::timePerCategory(double t0, double t1) const
{
    std::vector<std::vector<double>> out(
        static_cast<size_t>(rowCount()), std::vector<double>(m_categories.size(), 0.0));
    for (int r = 0; r < rowCount(); ++r) {
        if (laneCount(r) == 0) continue;
        auto [b, e] = visibleStates(r, 0, t0, t1);
        for (size_t i = b; i < e; ++i)
            out[r][category(r, i)] += std::max(0.0, std::min(end(r, i), t1) - std::max(start(r, i), t0));
    }
    return out;
}

std::vector<SiteTime> TraceModel::timePerCallSite(double t0, double t1) const
{
    // One slot per site for its first category, a map for further ones (a site calls one
    // routine, unless the log merges several under one stack): one array access per state.
    std::vector<SiteTime> first(m_sites.size() + 1);
    std::map<std::pair<uint32_t, int>, SiteTime> more;
    for (int r = 0; r < rowCount(); ++r) {
        for (int d = 0; d < laneCount(r); ++d) {
            auto [b, e] = visibleStates(r, d, t0, t1);
            for (size_t i = b; i < e; ++i) {
                const double ns = std::max(0.0, std::min(end(r, i), t1) - std::max(start(r, i), t0));
                if (ns == 0 && durationNs(r, i) > 0) continue; // touches the window only
                const uint32_t s = site(r, i) <= m_sites.size() ? site(r, i) : 0;
                const int c = category(r, i);
                SiteTime *acc = &first[s];
                if (acc->category < 0) acc->site = s, acc->category = c;
                if (acc->category != c) {
                    acc = &more[{ s, c }];
                    acc->site = s, acc->category = c;
                }
                ++acc->count;
                acc->ns += ns;
            }
        }
    }
    std::vector<SiteTime> out;
    for (const SiteTime &st : first)
        if (st.count > 0) out.push_back(st);
    for (const auto &[key, st] : more)
        out.push_back(st);
    std::sort(out.begin(), out.end(), [](const SiteTime &a, const SiteTime &b) {
        if (a.ns != b.ns) return a.ns > b.ns;
        if (a.count != b.count) return a.count > b.count;
        return std::pair(a.site, a.category) < std::pair(b.site, b.category);
    });
    return out;
}

std::vector<uint64_t> TraceModel::commMatrix(double t0, double t1) const
{
    const size_t n = static_cast<size_t>(std::max(m_worldSize, 1));
    std::vector<uint64_t> out(n * n, 0);
    const auto &M = m_messages;
    auto it = std::partition_point(M.begin(), M.end(), [&](const Message &m) { return m.send_time < t0; });
    for (; it != M.end() && it->send_time <= t1; ++it) {
        const size_t src = rank(static_cast<int>(it->send_timeline)), dst = rank(static_cast<int>(it->recv_timeline));
        if (src < n && dst < n) out[src * n + dst] += it->bytes;
    }
    return out;
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
