// The timeline model: lane layout, category statistics, culling, hit-testing, search, histogram.
#include "tracemodel.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <map>

namespace upshot {

using mpe::log::Event;
using mpe::log::Message;
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

TraceModel::TraceModel(mpe::log::Trace &&trace, const mpe::log::Definitions &defs)
    : m_trace(std::move(trace)), m_catIndex(0x10000, -1), m_worldSize(static_cast<int>(defs.world_size)),
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
    auto ensure = [&](uint32_t id, bool isState) {
        if (id < 0x10000 && m_catIndex[id] >= 0) return;
        CategoryInfo info;
        info.id = id;
        info.name = QStringLiteral("cat%1").arg(id);
        info.color = fallbackColor(id);
        info.isState = isState;
        if (id < 0x10000) m_catIndex[id] = static_cast<int32_t>(m_categories.size());
        m_categories.push_back(info);
    };
    m_lanes.resize(m_trace.timelines.size());
    std::vector<std::pair<int, int64_t>> stack; // per depth: (category index, end)
    for (size_t r = 0; r < m_trace.timelines.size(); ++r) {
        auto &T = m_trace.timelines[r];
        // Inclusive and exclusive time, with the states in start order.
        stack.clear();
        uint32_t maxDepth = 0;
        for (const State &s : T.states) {
            ensure(s.cat, true);
            const int c = categoryIndex(s.cat);
            const double d = static_cast<double>(s.end - s.start);
            auto &info = m_categories[c];
            ++info.count;
            info.inclusiveNs += d;
            info.exclusiveNs += d;
            if (s.depth > 0 && s.depth <= stack.size() && stack[s.depth - 1].second >= s.end)
                m_categories[stack[s.depth - 1].first].exclusiveNs -= d;
            if (stack.size() <= s.depth) stack.resize(s.depth + 1);
            stack[s.depth] = { c, s.end };
            maxDepth = std::max(maxDepth, s.depth);
        }
        m_markers.emplace_back();
        for (const Event &e : T.events) {
            if (e.kind == RecordKind::kMarker)
                m_markers.back().push_back({ static_cast<double>(e.time), e.a, e.b != 0 });
            if (e.kind == RecordKind::kUserEvent || e.kind == RecordKind::kCollective) {
                ensure(e.cat, false);
                if (e.kind == RecordKind::kUserEvent) ++m_categories[categoryIndex(e.cat)].count;
            }
        }
        // Lane-major order: by depth, then start.
        std::stable_sort(
            T.states.begin(), T.states.end(), [](const State &a, const State &b) { return a.depth < b.depth; });
        auto &lanes = m_lanes[r];
        lanes.assign(T.states.empty() ? 1 : maxDepth + 2, 0);
        size_t i = 0;
        for (uint32_t d = 0; d <= maxDepth && !T.states.empty(); ++d) {
            lanes[d] = i;
            while (i < T.states.size() && T.states[i].depth == d)
                ++i;
        }
        lanes.back() = T.states.size();
        // Block summaries per lane.
        auto &blocks = m_blocks.emplace_back();
        auto &offsets = m_blockOffsets.emplace_back();
        for (size_t d = 0; d + 1 < lanes.size(); ++d) {
            offsets.push_back(blocks.size());
            for (size_t b = lanes[d]; b < lanes[d + 1]; b += kBlock) {
                const size_t e = std::min(lanes[d + 1], b + kBlock);
                int cats[8];
                int64_t time[8];
                int n = 0;
                for (size_t i = b; i < e; ++i) {
                    const int c = categoryIndex(T.states[i].cat);
                    int k = 0;
                    while (k < n && cats[k] != c) ++k;
                    if (k == n) {
                        if (n == 8) continue;
                        cats[n] = c, time[n] = 0, ++n;
                    }
                    time[k] += T.states[i].end - T.states[i].start;
                }
                blocks.push_back({ T.states[b].start, cats[std::max_element(time, time + n) - time] });
            }
        }
        offsets.push_back(blocks.size());
    }
    for (const Message &m : m_trace.messages)
        m_maxLatency = std::max<int64_t>(m_maxLatency, m.recv_time - m.send_time);
}

QString TraceModel::rowLabel(int row) const
{
    const auto &T = m_trace.timelines[row];
    bool threaded = (row > 0 && m_trace.timelines[row - 1].rank == T.rank)
        || (row + 1 < rowCount() && m_trace.timelines[row + 1].rank == T.rank);
    return threaded ? QStringLiteral("rank %1.%2").arg(T.rank).arg(T.thread) : QStringLiteral("rank %1").arg(T.rank);
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
    const auto &S = m_trace.timelines[row].states;
    auto [b, e] = lane(row, depth);
    // Ends are sorted inside a lane: the first visible state is the first ending at or after t0.
    auto first = std::partition_point(S.begin() + b, S.begin() + e, [&](const State &s) { return s.end < t0; });
    auto last = std::partition_point(first, S.begin() + e, [&](const State &s) { return s.start <= t1; });
    return { static_cast<size_t>(first - S.begin()), static_cast<size_t>(last - S.begin()) };
}

std::pair<size_t, size_t> TraceModel::visibleEvents(int row, double t0, double t1) const
{
    const auto &E = m_trace.timelines[row].events;
    auto first = std::partition_point(E.begin(), E.end(), [&](const Event &e) { return e.time < t0; });
    auto last = std::partition_point(first, E.end(), [&](const Event &e) { return e.time <= t1; });
    return { static_cast<size_t>(first - E.begin()), static_cast<size_t>(last - E.begin()) };
}

std::pair<size_t, size_t> TraceModel::candidateMessages(double t0, double t1) const
{
    const auto &M = m_trace.messages;
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
    const State &st = state(s.row, s.index);
    return QStringLiteral("%1 on %2\nstart %3\nduration %4\ndepth %5")
        .arg(m_categories[categoryIndex(st.cat)].name, rowLabel(s.row),
            formatDuration(static_cast<double>(st.start), 6), formatDuration(static_cast<double>(st.end - st.start), 4))
        .arg(st.depth);
}

QString TraceModel::describeMessage(size_t i) const
{
    const Message &m = m_trace.messages[i];
    return QStringLiteral("message %1 -> %2\ntag %3, %4 bytes\nsent %5\nlatency %6")
        .arg(m.src)
        .arg(m.dst)
        .arg(m.tag)
        .arg(m.bytes)
        .arg(formatDuration(static_cast<double>(m.send_time), 6),
            formatDuration(static_cast<double>(m.recv_time - m.send_time)));
}

QString TraceModel::describeEvent(int row, size_t i) const
{
    const Event &e = m_trace.timelines[row].events[i];
    const QString at = formatDuration(static_cast<double>(e.time), 6);
    const QString name = m_categories[categoryIndex(e.cat)].name;
    switch (e.kind) {
    case RecordKind::kMarker:
        return QStringLiteral("MPI_Pcontrol(%1) on %2 at %3, logging %4")
            .arg(e.a)
            .arg(rowLabel(row), at, e.b ? "on" : "off");
    case RecordKind::kUserEvent:
        return QStringLiteral("event %1 on %2 at %3, data %4").arg(name, rowLabel(row), at).arg(e.c);
    case RecordKind::kCollective:
        return QStringLiteral("%1 on %2 at %3, root %4, %5 bytes").arg(name, rowLabel(row), at).arg(e.a).arg(e.c);
    case RecordKind::kCommCreate:
        return QStringLiteral("communicator %1 created (size %2) on %3 at %4")
            .arg(e.comm)
            .arg(e.a)
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

StateRef TraceModel::find(double t, bool forward, int cat, const std::vector<int> &rows) const
{
    StateRef best;
    double bestT = forward ? 1e300 : -1e300;
    auto matches = [&](int c) { return cat >= 0 ? c == cat : (m_categories[c].searchable && m_categories[c].visible); };
    auto scanRow = [&](int row) {
        const auto &S = m_trace.timelines[row].states;
        for (int d = 0; d < laneCount(row); ++d) {
            auto [b, e] = lane(row, d);
            if (forward) {
                auto it
                    = std::partition_point(S.begin() + b, S.begin() + e, [&](const State &s) { return s.start <= t; });
                for (; it != S.begin() + e; ++it) {
                    if (static_cast<double>(it->start) >= bestT) break;
                    if (matches(categoryIndex(it->cat))) {
                        bestT = static_cast<double>(it->start);
                        best = { row, static_cast<size_t>(it - S.begin()) };
                        break;
                    }
                }
            } else {
                auto it
                    = std::partition_point(S.begin() + b, S.begin() + e, [&](const State &s) { return s.start < t; });
                while (it != S.begin() + b) {
                    --it;
                    if (static_cast<double>(it->start) <= bestT) break;
                    if (matches(categoryIndex(it->cat))) {
                        bestT = static_cast<double>(it->start);
                        best = { row, static_cast<size_t>(it - S.begin()) };
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

Histogram TraceModel::histogram(const std::vector<bool> &cats, double t0, double t1, int bins, bool logBins) const
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
        const auto &S = m_trace.timelines[r].states;
        for (int d = 0; d < laneCount(r); ++d) {
            auto [b, e] = lane(r, d);
            auto it = std::partition_point(S.begin() + b, S.begin() + e, [&](const State &s) { return s.start < t0; });
            for (; it != S.begin() + e && it->start <= t1; ++it)
                if (selected(categoryIndex(it->cat))) durs.push_back(static_cast<double>(it->end - it->start));
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

std::vector<uint64_t> TraceModel::commMatrix(double t0, double t1) const
{
    const size_t n = static_cast<size_t>(std::max(m_worldSize, 1));
    std::vector<uint64_t> out(n * n, 0);
    const auto &M = m_trace.messages;
    auto it = std::partition_point(M.begin(), M.end(), [&](const Message &m) { return m.send_time < t0; });
    for (; it != M.end() && it->send_time <= t1; ++it)
        if (it->src >= 0 && it->dst >= 0 && static_cast<size_t>(it->src) < n && static_cast<size_t>(it->dst) < n)
            out[static_cast<size_t>(it->src) * n + static_cast<size_t>(it->dst)] += it->bytes;
    return out;
}

size_t TraceModel::memoryBytes() const
{
    size_t b = m_trace.messages.capacity() * sizeof(Message) + m_catIndex.capacity() * sizeof(int32_t);
    for (const auto &T : m_trace.timelines)
        b += T.states.capacity() * sizeof(State) + T.events.capacity() * sizeof(Event) + sizeof(T);
    for (const auto &l : m_lanes)
        b += l.capacity() * sizeof(size_t);
    return b;
}

std::shared_ptr<TraceModel> loadModel(
    const QString &path, QString *error, const std::function<void(int, const QString &)> &progress)
{
    auto report = [&](int p, const QString &s) {
        if (progress) progress(p, s);
    };
    report(0, QStringLiteral("Opening %1").arg(QFileInfo(path).fileName()));
    auto file = mpe::log::LogFile::open(path.toStdString());
    if (!file.ok()) {
        if (error) *error = QString::fromStdString(file.status().to_string());
        return nullptr;
    }
    report(10, QStringLiteral("Decoding %1 chunks").arg(file->index().size()));
    auto trace = mpe::log::load_trace(*file);
    if (!trace.ok()) {
        if (error) *error = QString::fromStdString(trace.status().to_string());
        return nullptr;
    }
    report(80, QStringLiteral("Building the timeline"));
    auto model = std::make_shared<TraceModel>(std::move(trace.value()), file->definitions());
    report(100, QStringLiteral("Loaded"));
    return model;
}

} // namespace upshot
