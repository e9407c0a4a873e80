// Wait states on the timeline: layout of the analysis's instances, window totals, coverage
// levels, Find and descriptions. The design comment is in waitstates.h.
#include "waitstates.h"

#include <algorithm>
#include <new>
#include <numeric>
#include <tuple>

#include "lodfolder.h"

namespace upshot {

namespace {

using mpe::analysis::waits::Pattern;

// Where a state is: its index in the row and its lane.
struct Found
{
    uint32_t index = WaitSpan::kNone;
    uint8_t depth = 0;
};

// Finds states by their interval: the deepest state of a row spanning exactly [s, e] (the
// analysis gives the call's own interval, and a user state may enclose it), else the deepest
// containing t. Queries sorted by (row, s) cost a gallop from the last answer per lane, not a
// bisection of the whole lane (a cache miss per step on a large log); others still work.
class StateFinder
{
public:
    explicit StateFinder(const TraceModel &m) : m_model(m) { }

    Found find(int row, int64_t s, int64_t e, int64_t t)
    {
        if (row < 0 || row >= m_model.rowCount()) return {};
        if (row != m_row) {
            m_row = row;
            m_cursor.assign(static_cast<size_t>(m_model.laneCount(row)), 0);
            for (int d = 0; d < m_model.laneCount(row); ++d)
                m_cursor[static_cast<size_t>(d)] = m_model.lane(row, d).first;
        }
        for (int d = m_model.laneCount(row) - 1; d >= 0; --d) {
            auto [b, en] = m_model.lane(row, d);
            size_t &c = m_cursor[static_cast<size_t>(d)];
            if (c > b && m_model.startNs(row, c - 1) >= s) c = b; // a query behind the last one
            c = gallopFirst(c, en, [&](size_t k) { return m_model.startNs(row, k) < s; });
            if (c < en && m_model.startNs(row, c) == s && m_model.startNs(row, c) + m_model.durationNs(row, c) == e)
                return { static_cast<uint32_t>(c), static_cast<uint8_t>(std::min(d, 255)) };
        }
        for (int d = m_model.laneCount(row) - 1; d >= 0; --d) {
            auto [b, en] = m_model.visibleStates(row, d, static_cast<double>(t), static_cast<double>(t));
            if (b < en) return { static_cast<uint32_t>(b), static_cast<uint8_t>(std::min(d, 255)) };
        }
        return {};
    }

private:
    const TraceModel &m_model;
    int m_row = -1;
    std::vector<size_t> m_cursor; // per lane of m_row
};

// Finds the model's message from row `from` (entering the send at sendTime) to row `to`
// (completing at recvTime); queries sorted by sendTime gallop from the last answer.
class MessageFinder
{
public:
    explicit MessageFinder(const TraceModel &m) : m_messages(m.messages()) { }

    uint32_t find(int from, int to, int64_t sendTime, int64_t recvTime)
    {
        if (from < 0 || to < 0) return WaitSpan::kNone;
        if (m_cursor > 0 && m_messages[m_cursor - 1].send_time >= sendTime) m_cursor = 0;
        m_cursor
            = gallopFirst(m_cursor, m_messages.size(), [&](size_t k) { return m_messages[k].send_time < sendTime; });
        for (size_t k = m_cursor; k < m_messages.size() && m_messages[k].send_time == sendTime; ++k)
            if (m_messages[k].recv_time == recvTime && static_cast<int>(m_messages[k].send_timeline) == from
                && static_cast<int>(m_messages[k].recv_timeline) == to)
                return static_cast<uint32_t>(k);
        return WaitSpan::kNone;
    }

private:
    const std::vector<Message> &m_messages;
    size_t m_cursor = 0;
};

} // namespace

QColor waitColor(int pattern)
{
    // Dark, saturated and apart from each other and from the default MPI palette's pastels.
    static const QRgb kColors[kWaitPatterns] = {
        qRgb(220, 20, 60), // Late Sender: crimson
        qRgb(255, 110, 0), // Late Receiver: orange
        qRgb(120, 0, 170), // Wait at Barrier: purple
        qRgb(0, 70, 200), // Wait at N×N: blue
        qRgb(0, 130, 110), // Late Broadcast: teal
        qRgb(130, 70, 10), // Early Reduce: brown
    };
    return pattern >= 0 && pattern < kWaitPatterns ? QColor::fromRgb(kColors[pattern]) : QColor(Qt::black);
}

QString waitPatternName(int pattern)
{
    if (pattern < 0 || pattern >= kWaitPatterns) return {};
    return QString::fromUtf8(mpe::analysis::waits::pattern_name(static_cast<Pattern>(pattern)));
}

WaitStates::WaitStates(const TraceModel &model, mpe::analysis::waits::Report &&report)
    : m_rows(static_cast<size_t>(model.rowCount())), m_mpiNs(static_cast<double>(report.mpi_ns))
{
    // The analysis orders its instances by (rank, thread, start): then a row's are one
    // consecutive run, and nothing needs to remember where each span came from.
    using mpe::analysis::waits::by_timeline;
    if (!std::is_sorted(report.instances.begin(), report.instances.end(), by_timeline))
        std::stable_sort(report.instances.begin(), report.instances.end(), by_timeline);
    for (int p = 0; p < kWaitPatterns; ++p) {
        m_runTotals[static_cast<size_t>(p)].ns = static_cast<double>(report.patterns[static_cast<size_t>(p)].ns);
        m_runTotals[static_cast<size_t>(p)].instances = report.patterns[static_cast<size_t>(p)].instances;
    }
    const auto &I = report.instances; // a row's from first[row] on
    std::vector<size_t> first(m_rows.size(), 0), perRow(m_rows.size(), 0);
    for (size_t k = 0; k < I.size(); ++k) {
        const int row = model.rowOf(I[k].rank, I[k].thread);
        if (row < 0) continue;
        if (perRow[static_cast<size_t>(row)]++ == 0) first[static_cast<size_t>(row)] = k;
    }
    // Rows first, each allocated once at its size.
    for (size_t r = 0; r < m_rows.size(); ++r)
        m_rows[r].spans.reserve(perRow[r]);
    for (const mpe::analysis::waits::Instance &in : I) {
        const int row = model.rowOf(in.rank, in.thread);
        if (row < 0) {
            ++m_unplaced;
            continue;
        }
        WaitSpan s {};
        s.start = in.start;
        s.end = in.end;
        s.culpritTime = in.culprit_time;
        s.pattern = static_cast<uint8_t>(in.pattern);
        s.culpritRow = in.culprit >= 0 ? model.rowOf(static_cast<uint32_t>(in.culprit), in.culprit_thread) : -1;
        s.state = s.culpritState = s.message = WaitSpan::kNone;
        m_rows[static_cast<size_t>(row)].spans.push_back(s);
        ++m_instances;
    }
    // Sorted by start, and the waiting states found in that order. The later lookups sort
    // plain keys (no indirection in the comparisons: a cache miss each on a large log).
    struct Ref
    {
        int64_t key;
        int32_t row; // of the culprit, then of the waiting span
        uint32_t waiter; // the waiting span's row
        uint32_t span;
        uint32_t inst;
    };
    std::vector<Ref> refs;
    refs.reserve(m_instances);
    StateFinder waiting(model);
    for (size_t r = 0; r < m_rows.size(); ++r) {
        auto &S = m_rows[r].spans;
        auto earlier = [](const WaitSpan &a, const WaitSpan &b) {
            return a.start != b.start ? a.start < b.start : a.end < b.end;
        };
        std::vector<uint32_t> order(S.size());
        std::iota(order.begin(), order.end(), 0u);
        // The analysis sorts its instances by start: usually nothing to do here.
        if (!std::is_sorted(S.begin(), S.end(), earlier)) {
            std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return earlier(S[a], S[b]); });
            std::vector<WaitSpan> sorted(S.size());
            for (size_t i = 0; i < order.size(); ++i)
                sorted[i] = S[order[i]];
            S = std::move(sorted);
        }
        for (size_t i = 0; i < S.size(); ++i) {
            const uint32_t k = static_cast<uint32_t>(first[r] + order[i]);
            const mpe::analysis::waits::Instance &in = I[k];
            const Found f
                = waiting.find(static_cast<int>(r), in.state_start, in.state_end, in.start + (in.end - in.start) / 2);
            S[i].state = f.index;
            S[i].depth = f.depth;
            if (S[i].culpritRow >= 0)
                refs.push_back(
                    { in.culprit_state_start, S[i].culpritRow, static_cast<uint32_t>(r), static_cast<uint32_t>(i), k });
        }
    }
    // The culprits' states, by (culprit's row, state start).
    std::sort(refs.begin(), refs.end(),
        [](const Ref &a, const Ref &b) { return a.row != b.row ? a.row < b.row : a.key < b.key; });
    StateFinder culprits(model);
    for (const Ref &x : refs) {
        const mpe::analysis::waits::Instance &in = I[x.inst];
        m_rows[x.waiter].spans[x.span].culpritState
            = culprits.find(x.row, in.culprit_state_start, in.culprit_state_end, in.culprit_time).index;
    }
    // The messages of the point-to-point patterns, by send time.
    size_t kept = 0;
    for (const Ref &x : refs) {
        const auto p = static_cast<Pattern>(m_rows[x.waiter].spans[x.span].pattern);
        if (p == Pattern::kLateSender || p == Pattern::kLateReceiver)
            refs[kept++] = { I[x.inst].send_time, x.row, x.waiter, x.span, x.inst };
    }
    refs.resize(kept);
    std::sort(refs.begin(), refs.end(), [](const Ref &a, const Ref &b) { return a.key < b.key; });
    MessageFinder messages(model);
    for (const Ref &x : refs) {
        WaitSpan &s = m_rows[x.waiter].spans[x.span];
        const mpe::analysis::waits::Instance &in = I[x.inst];
        const int row = static_cast<int>(x.waiter);
        s.message = s.pattern == static_cast<uint8_t>(Pattern::kLateSender)
            ? messages.find(s.culpritRow, row, in.send_time, in.recv_time)
            : messages.find(row, s.culpritRow, in.send_time, in.recv_time);
    }
    for (Row &r : m_rows)
        finishRow(r);
}

void WaitStates::finishRow(Row &r)
{
    auto &S = r.spans; // sorted by (start, end)
    S.shrink_to_fit();
    bool overlapping = false;
    for (size_t i = 1; i < S.size() && !overlapping; ++i)
        overlapping = S[i].start < S[i - 1].end;
    if (overlapping) {
        r.reach.resize(S.size());
        int64_t m = INT64_MIN;
        for (size_t i = 0; i < S.size(); ++i)
            r.reach[i] = m = std::max(m, S[i].end);
    }
    r.prefix.resize(S.size() / kBlock + 1);
    BlockSum acc;
    for (size_t i = 0; i < S.size(); ++i) {
        if (i % kBlock == 0) r.prefix[i / kBlock] = acc;
        acc.ns[S[i].pattern] += S[i].end - S[i].start;
        ++acc.n[S[i].pattern];
    }
    if (S.size() % kBlock == 0) r.prefix[S.size() / kBlock] = acc;
    for (int p = 0; p < kWaitPatterns; ++p)
        r.counts[static_cast<size_t>(p)] = acc.n[static_cast<size_t>(p)];
    // Coverage levels per pattern: each from the last kept one (or the spans), kept when it
    // halves the count.
    for (int p = 0; p < kWaitPatterns; ++p) {
        std::vector<Cover> base;
        for (const WaitSpan &s : S)
            if (s.pattern == p) base.push_back({ s.start, s.end, s.depth });
        if (base.empty()) continue;
        // Overlapping spans merge at every level, so each kept level is disjoint and sorted. A
        // pattern with less than half of the row's spans always gets a level (gap 0, its spans
        // merged where they overlap): a frame then walks the row's spans only for its main
        // pattern, never thousands of them to find a rare one.
        size_t lastKept = base.size();
        const std::vector<Cover> *from = &base;
        const bool minority = base.size() * 2 < S.size();
        for (double gap = minority ? 0 : 64; gap < 1e13; gap = gap == 0 ? 64 : gap * 4) {
            std::vector<Cover> merged;
            for (const Cover &c : *from) {
                if (!merged.empty() && static_cast<double>(c.start - merged.back().end) < gap) {
                    merged.back().end = std::max(merged.back().end, c.end);
                    merged.back().depth = std::min(merged.back().depth, c.depth);
                } else {
                    merged.push_back(c);
                }
            }
            if (merged.size() * 2 > lastKept && gap > 0) continue;
            merged.shrink_to_fit();
            lastKept = merged.size();
            r.covers[static_cast<size_t>(p)].push_back({ gap, std::move(merged) });
            from = &r.covers[static_cast<size_t>(p)].back().items;
            if (lastKept == 1) break;
        }
    }
}

std::pair<size_t, size_t> WaitStates::visible(int row, double t0, double t1) const
{
    const Row &r = m_rows[static_cast<size_t>(row)];
    const auto &S = r.spans;
    const size_t first = r.reach.empty()
        ? partitionIndex(0, S.size(), [&](size_t i) { return static_cast<double>(S[i].end) <= t0; })
        : partitionIndex(0, S.size(), [&](size_t i) { return static_cast<double>(r.reach[i]) <= t0; });
    return { first, partitionIndex(first, S.size(), [&](size_t i) { return static_cast<double>(S[i].start) < t1; }) };
}

WaitStates::BlockSum WaitStates::prefixAt(const Row &r, size_t i) const
{
    BlockSum s = r.prefix[i / kBlock];
    for (size_t k = i / kBlock * kBlock; k < i; ++k) {
        s.ns[r.spans[k].pattern] += r.spans[k].end - r.spans[k].start;
        ++s.n[r.spans[k].pattern];
    }
    return s;
}

WaitTotals WaitStates::windowTotals(double t0, double t1) const
{
    WaitTotals out {};
    auto clipped = [&](const WaitSpan &s) {
        return std::max(0.0, std::min(static_cast<double>(s.end), t1) - std::max(static_cast<double>(s.start), t0));
    };
    for (int row = 0; row < rowCount(); ++row) {
        const Row &r = m_rows[static_cast<size_t>(row)];
        auto [b, e] = visible(row, t0, t1);
        if (b >= e) continue;
        if (!r.reach.empty()) {
            // Overlapping spans: any of them may straddle an edge; clip each.
            for (size_t i = b; i < e; ++i) {
                const WaitSpan &s = r.spans[i];
                if (static_cast<double>(s.end) <= t0) continue;
                out[s.pattern].ns += clipped(s);
                ++out[s.pattern].instances;
            }
            continue;
        }
        // Disjoint spans: only the first may start before t0 and only the last end after t1.
        const BlockSum hi = prefixAt(r, e), lo = prefixAt(r, b);
        for (int p = 0; p < kWaitPatterns; ++p) {
            out[p].ns += static_cast<double>(hi.ns[p] - lo.ns[p]);
            out[p].instances += hi.n[p] - lo.n[p];
        }
        for (size_t i : { b, e - 1 }) {
            const WaitSpan &s = r.spans[i];
            out[s.pattern].ns -= static_cast<double>(s.end - s.start) - clipped(s);
            if (e - 1 == b) break; // one span: clipped once
        }
    }
    return out;
}

WaitRef WaitStates::find(double t, WaitRef from, bool forward, int pattern, const std::vector<int> &rows) const
{
    // Keys (start, row, index); an invalid `from` sits before every row at time t.
    using Key = std::tuple<double, int, size_t>;
    const Key fromKey(t, from.valid() ? from.row : -1, from.valid() ? from.index : 0);
    WaitRef best;
    Key bestKey(forward ? 1e300 : -1e300, 0, 0);
    auto matches = [&](const WaitSpan &s) { return pattern < 0 || s.pattern == pattern; };
    auto scanRow = [&](int row) {
        const auto &S = m_rows[static_cast<size_t>(row)].spans;
        if (forward) {
            for (size_t i = partitionIndex(0, S.size(), [&](size_t k) { return static_cast<double>(S[k].start) < t; });
                 i < S.size(); ++i) {
                const Key k(static_cast<double>(S[i].start), row, i);
                if (k >= bestKey) break;
                if (k <= fromKey || !matches(S[i])) continue;
                bestKey = k, best = { row, i };
                break;
            }
        } else {
            for (size_t i = partitionIndex(0, S.size(), [&](size_t k) { return static_cast<double>(S[k].start) <= t; });
                 i > 0;) {
                --i;
                const Key k(static_cast<double>(S[i].start), row, i);
                if (k <= bestKey) break;
                if (k >= fromKey || !matches(S[i])) continue;
                bestKey = k, best = { row, i };
                break;
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

WaitRef WaitStates::atState(const TraceModel &model, int row, size_t index) const
{
    if (row < 0 || row >= rowCount() || row >= model.rowCount() || index >= model.stateCount(row)) return {};
    const auto &S = m_rows[static_cast<size_t>(row)].spans;
    // Its spans start inside it.
    const int64_t a = model.startNs(row, index), b = a + model.durationNs(row, index);
    for (size_t i = partitionIndex(0, S.size(), [&](size_t k) { return S[k].start < a; });
         i < S.size() && S[i].start <= b; ++i)
        if (S[i].state == index) return { row, i };
    return {};
}

QString WaitStates::describe(const TraceModel &model, WaitRef r, bool withSite) const
{
    if (!r.valid() || r.row >= rowCount() || r.index >= spans(r.row).size()) return {};
    const WaitSpan &s = span(r);
    const QString call = s.state != WaitSpan::kNone ? model.categoryInfo(model.category(r.row, s.state)).name
                                                    : QStringLiteral("an MPI call");
    QString text
        = QStringLiteral("%1: %2 waited %3 in %4\nwaiting %5 .. %6")
              .arg(waitPatternName(s.pattern), model.rowLabel(r.row),
                  formatDuration(static_cast<double>(s.end - s.start), 4), call,
                  formatDuration(static_cast<double>(s.start), 6), formatDuration(static_cast<double>(s.end), 6));
    if (s.culpritRow >= 0) {
        const QString what = s.culpritState != WaitSpan::kNone
            ? model.categoryInfo(model.category(s.culpritRow, s.culpritState)).name
            : QStringLiteral("its call");
        QString verb;
        switch (static_cast<Pattern>(s.pattern)) {
        case Pattern::kLateSender:
            verb = QStringLiteral("for %1, which entered %2 at %3");
            break;
        case Pattern::kLateReceiver:
            verb = QStringLiteral("for %1 to post the receive (%2) at %3");
            break;
        case Pattern::kEarlyReduce:
            verb = QStringLiteral("for %1, the first member to enter %2, at %3");
            break;
        default:
            verb = QStringLiteral("for %1, which entered %2 at %3");
            break;
        }
        text += QLatin1Char('\n')
            + verb.arg(model.rowLabel(s.culpritRow), what, formatDuration(static_cast<double>(s.culpritTime), 6));
    }
    if (s.message != WaitSpan::kNone) text += QLatin1Char('\n') + model.describeMessage(s.message).section('\n', 0, 1);
    if (withSite && s.state != WaitSpan::kNone && model.site(r.row, s.state) != 0)
        text += QLatin1Char('\n') + model.describeCallSite(model.site(r.row, s.state));
    return text;
}

size_t WaitStates::memoryBytes() const
{
    size_t b = m_rows.capacity() * sizeof(Row);
    for (const Row &r : m_rows) {
        b += r.spans.capacity() * sizeof(WaitSpan) + r.reach.capacity() * sizeof(int64_t)
            + r.prefix.capacity() * sizeof(BlockSum);
        for (const auto &levels : r.covers) {
            b += levels.capacity() * sizeof(CoverLevel);
            for (const CoverLevel &l : levels)
                b += l.items.capacity() * sizeof(Cover);
        }
    }
    return b;
}

mpe::analysis::waits::Options waitOverlayOptions()
{
    mpe::analysis::waits::Options options;
    options.keep_instances = true;
    options.keep_blame = false;
    return options;
}

mpe::StatusOr<std::shared_ptr<const WaitStates>> layOutWaits(
    const TraceModel &model, mpe::StatusOr<mpe::analysis::waits::Report> &&report)
{
    if (!report.ok()) return report.status();
    try {
        // The report goes as soon as its spans are laid out: it is the larger of the two.
        mpe::analysis::waits::Report instances = std::move(*report);
        return std::shared_ptr<const WaitStates>(std::make_shared<const WaitStates>(model, std::move(instances)));
    } catch (const std::bad_alloc &) {
        return mpe::Status::out_of_memory();
    }
}

mpe::StatusOr<std::shared_ptr<const WaitStates>> analyzeWaits(
    const mpe::format::LogFile &file, const TraceModel &model, std::function<bool()> keepGoing)
{
    mpe::analysis::waits::Options options = waitOverlayOptions();
    options.keep_going = std::move(keepGoing);
    mpe::StatusOr<mpe::analysis::waits::Report> report = mpe::Status::out_of_memory();
    try {
        report = mpe::analysis::waits::analyze(file, options);
    } catch (const std::bad_alloc &) {
        return mpe::Status::out_of_memory();
    }
    return layOutWaits(model, std::move(report));
}

} // namespace upshot
