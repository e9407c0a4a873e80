// The model's statistics over a window: the histogram of state durations, time per category and
// per call site, bytes between ranks, and the summary of a fold.
#include "tracemodel.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace upshot {

std::pair<double, double> Histogram::binRange(int i) const
{
    const int n = static_cast<int>(counts.size());
    if (logBins && lo > 0) {
        const double a = std::log(lo), b = std::log(hi);
        return { std::exp(a + (b - a) * i / n), std::exp(a + (b - a) * (i + 1) / n) };
    }
    return { lo + (hi - lo) * i / n, lo + (hi - lo) * (i + 1) / n };
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

} // namespace upshot
