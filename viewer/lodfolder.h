// Level of detail: which boxes of a lane to paint at the current zoom (LodFolder), and which
// messages the arrows are drawn from (sampleMessages()).
#pragma once

#include <algorithm>
#include <vector>

#include "timescale.h"
#include "tracemodel.h"

namespace upshot {

// One box to paint: states [first, last) of a lane, spanning x0..x1 pixels. A folded box stands
// for a run of states each narrower than the folding width.
struct LodBox
{
    size_t first = 0, last = 0;
    double x0 = 0, x1 = 0;
    int category = 0; // the state's category, or the dominant one of a fold
    bool folded = false;
};

// The first index in [from, end) for which before(i) is false, before being true on a prefix:
// gallops from `from`, then bisects the last step. Cheap on the cache when the answer is near,
// as it is from one fold (or event marker) to the next.
template<class Before> [[gnu::always_inline]] inline size_t gallopFirst(size_t from, size_t end, Before before)
{
    size_t lo = from, step = 1;
    while (lo + step < end && before(lo + step))
        lo += step, step *= 2;
    return partitionIndex(lo, std::min(end, lo + step), before);
}

// LodFolder turns the states of one lane into at most ~width/minPx boxes.
//
// Invariant: within a lane (one row, one depth) states do not overlap, so both starts and ends
// are sorted; every visible state is covered by exactly one box and boxes come out in time order.
// A state at least minPx wide is its own box; a narrower one opens a fold that swallows every
// state starting before x0 + minPx (found by binary search, so the states inside are never
// visited), except a last one that is itself wide. The fold's colour is its dominant category,
// estimated from kSamples states (two runs of consecutive ones, at 1/4 and 3/4 of the fold); the exact per-category
// time and count come from TraceModel::summarize() when the user points at the fold.
//
// At coarse zoom (a fold spanning whole blocks of TraceModel::blockSize() states, the last ending
// within a pixel of the fold's limit) the fold ends at a block boundary found in the per-lane
// block summaries and is coloured by the blocks' dominant categories, so it touches only the
// small block array and two states. Once a fold ends on a block boundary and the next block's
// longest state is narrow too, the next fold is made from the blocks alone (each block knows its
// start, end and longest state), touching no state at all: full views of 100 M-event logs. Each
// lane uses one level of blocks per frame: 16 states, or 256 once folds hold 512 states or more.
//
// Cost: O(B log k) per lane and frame for B boxes (B <= width/minPx + wide states) and k states
// per fold (galloping search from the previous fold), independent of how many states the view
// holds; plus kSamples per fold. Cache misses dominate: a few per fold.
//
// Failure modes: the dominant colour is a sample and can miss a rare but long category in a
// huge fold (the hover summary is exact); a fold may extend past x0 + minPx by the length of its
// last state, so neighbouring boxes can overlap by up to minPx; hidden categories are skipped
// as single boxes but still counted inside folds.
class LodFolder
{
public:
    static constexpr int kSamples = 8;

    LodFolder(const TraceModel &model, const TimeScale &scale, double minPx = 3)
        : m_model(model), m_scale(scale), m_minPx(minPx)
    { }

    // Appends the boxes of lane (row, depth) visible in the scale to out.
    void fold(int row, int depth, std::vector<LodBox> &out) const
    {
        auto [i, e] = m_model.visibleStates(row, depth, m_scale.t0(), m_scale.t1());
        if (i == e) return;
        const TraceModel::RowStates S = m_model.rowStates(row);
        const size_t laneBegin = m_model.lane(row, depth).first;
        // The block level: coarse when a fold holds two coarse blocks or more on average.
        const double statesPerFold = static_cast<double>(e - i) * m_minPx / std::max(1.0, m_scale.width());
        const int level = statesPerFold >= 2.0 * TraceModel::blockSize(1) ? 1 : 0;
        const size_t B = TraceModel::blockSize(level);
        size_t nBlocks = 0;
        const TraceModel::Block *blocks = m_model.blocks(row, depth, &nBlocks, level);
        while (i < e) {
            if (foldAlignedBlocks(row, laneBegin, blocks, nBlocks, B, i, e, out)) continue;
            const double x0 = m_scale.timeToX(S.start(i));
            const double x1 = m_scale.timeToX(S.end(i));
            if (x1 - x0 >= m_minPx) {
                out.push_back({ i, i + 1, x0, x1, S.category(i), false });
                ++i;
                continue;
            }
            const double limit = m_scale.xToTime(x0 + m_minPx);
            // Coarse zoom: when whole blocks fit in the fold, end it at a block boundary found in
            // the (small, cache-resident) block array, and take its colour from the blocks.
            if (foldByBlocks(row, laneBegin, blocks, nBlocks, B, i, e, x0, limit, out)) continue;
            // First state starting at or after limit.
            size_t j = gallopFirst(i + 1, e, [&](size_t k) { return S.start(k) < limit; });
            if (j - 1 > i && m_scale.durationToWidth(S.duration(j - 1)) >= m_minPx) --j;
            if (j == i + 1) {
                out.push_back({ i, j, x0, std::max(x1, x0 + 1), S.category(i), false });
                i = j;
                continue;
            }
            const double xe = std::max(m_scale.timeToX(S.end(j - 1)), x0 + 1);
            out.push_back({ i, j, x0, xe, dominantCategory(row, i, j), true });
            i = j;
        }
    }

    // Coarse zoom, from a block boundary: when block k's states are all narrower than minPx, the
    // fold's extent and colour come from the block array alone and no state is touched, so a
    // frame costs O(folds) reads of a small sequential array instead of a cache miss per fold.
    // Returns false (nothing appended) when the fold would span fewer than two blocks, or its
    // last block holds a wide state or ends more than a pixel past the fold's limit.
    // blocks: one level's, of B states each.
    bool foldAlignedBlocks(int row, size_t laneBegin, const TraceModel::Block *blocks, size_t nBlocks, size_t B,
        size_t &i, size_t e, std::vector<LodBox> &out) const
    {
        if ((i - laneBegin) % B != 0) return false;
        const TraceModel::RowStates S = m_model.rowStates(row);
        const size_t k = (i - laneBegin) / B;
        if (k + 2 >= nBlocks || m_scale.durationToWidth(blocks[k].maxDuration) >= m_minPx) return false;
        const double x0 = m_scale.timeToX(static_cast<double>(blocks[k].start));
        const double limit = m_scale.xToTime(x0 + m_minPx);
        if (static_cast<double>(blocks[k + 2].start) >= limit) return false;
        const size_t lo = firstBlockFrom(blocks, nBlocks, k + 2, limit);
        const TraceModel::Block &last = blocks[lo - 1];
        const size_t j = std::min(e, laneBegin + lo * B);
        const double endT = j == laneBegin + lo * B ? static_cast<double>(last.end) : S.end(j - 1);
        if (m_scale.durationToWidth(last.maxDuration) >= m_minPx || m_scale.timeToX(endT) - m_scale.timeToX(limit) > 1)
            return false;
        const int dominant = dominantOfBlocks(blocks, k, lo, row, i, j);
        out.push_back({ i, j, x0, std::max(m_scale.timeToX(endT), x0 + 1), dominant, true });
        i = j;
        return true;
    }

    // Folds from state i by whole blocks when the block ending the fold is under a pixel wide;
    // appends the box, advances i and returns true, or returns false to fold state by state.
    bool foldByBlocks(int row, size_t laneBegin, const TraceModel::Block *blocks, size_t nBlocks, size_t B, size_t &i,
        size_t e, double x0, double limit, std::vector<LodBox> &out) const
    {
        const size_t bi = (i - laneBegin) / B; // block holding i
        const TraceModel::RowStates S = m_model.rowStates(row);
        if (nBlocks < 3 || bi + 2 >= nBlocks || static_cast<double>(blocks[bi + 2].start) >= limit) return false;
        const size_t lo = firstBlockFrom(blocks, nBlocks, bi + 2, limit);
        const size_t j = std::min(e, laneBegin + lo * B);
        // The last block taken must end within a pixel of the limit, and its last state be narrow.
        const double endT = S.end(j - 1);
        if (m_scale.timeToX(endT) - m_scale.timeToX(limit) > 1 || m_scale.durationToWidth(S.duration(j - 1)) >= m_minPx)
            return false;
        const int dominant = dominantOfBlocks(blocks, bi + 1, lo, row, i, j);
        out.push_back({ i, j, x0, std::max(m_scale.timeToX(endT), x0 + 1), dominant, true });
        i = j;
        return true;
    }

    // The first block at or after `from` starting at or after limit.
    static size_t firstBlockFrom(const TraceModel::Block *blocks, size_t nBlocks, size_t from, double limit)
    {
        return gallopFirst(from, nBlocks, [&](size_t k) { return static_cast<double>(blocks[k].start) < limit; });
    }

    // The most frequent visible dominant category among up to kSamples of blocks [from, to);
    // when none is visible, the estimate from states [first, last) of the row.
    int dominantOfBlocks(
        const TraceModel::Block *blocks, size_t from, size_t to, int row, size_t first, size_t last) const
    {
        int cats[kSamples];
        double time[kSamples];
        int n = 0;
        const size_t stride = std::max<size_t>(1, (to - from) / kSamples);
        for (size_t k = from; k < to; k += stride) {
            const int c = blocks[k].dominant;
            if (!m_model.categoryInfo(c).visible) continue;
            int q = 0;
            while (q < n && cats[q] != c)
                ++q;
            if (q == n) {
                if (n == kSamples) continue;
                cats[n] = c, time[n] = 0, ++n;
            }
            time[q] += 1;
        }
        return n ? cats[std::max_element(time, time + n) - time] : dominantCategory(row, first, last);
    }

    // Estimates the category taking most time among states [first, last) of a row.
    int dominantCategory(int row, size_t first, size_t last) const
    {
        const TraceModel::RowStates S = m_model.rowStates(row);
        int cats[kSamples];
        double time[kSamples];
        int n = 0;
        // Two runs of kSamples/2 consecutive states, at 1/4 and 3/4 of the fold: few cache lines.
        const size_t count = last - first;
        size_t idx[kSamples];
        int m = 0;
        if (count <= static_cast<size_t>(kSamples)) {
            for (size_t i = first; i < last; ++i)
                idx[m++] = i;
        } else {
            for (size_t base : { first + count / 4, first + 3 * count / 4 })
                for (size_t k = 0; k < kSamples / 2 && base + k < last; ++k)
                    idx[m++] = base + k;
        }
        for (int q = 0; q < m; ++q) {
            const size_t i = idx[q];
            const int c = S.category(i);
            int k = 0;
            while (k < n && cats[k] != c)
                ++k;
            if (k == n) {
                if (n == kSamples || !m_model.categoryInfo(c).visible) continue;
                cats[n] = c, time[n] = 0, ++n;
            }
            time[k] += S.duration(i);
        }
        if (n == 0) return -1;
        return cats[std::max_element(time, time + n) - time];
    }

private:
    const TraceModel &m_model;
    TimeScale m_scale;
    double m_minPx;
};

// Which messages the arrows of [t0, t1] are drawn from: every candidate while they are at most
// ~maxCount (kMaxArrowSample), else an even sample of maxCount or so, read from the model's
// contiguous arrow sample (TraceModel::arrowSample()) when that is sparse enough, from the
// messages otherwise. Calls visit(const TraceModel::ArrowSample &) for each chosen message in
// time order and returns how many messages each one stands for (1 when none are skipped).
//
// Cost: O(maxCount) visits whatever the window holds; the arrow sample keeps them on a few
// cache lines at coarse zoom. Failure mode: a sample can miss a rare pair of ranks (the bundle
// counts it reports are estimates, and say so).
constexpr size_t kMaxArrowSample = 20000;
template<class Visit> size_t sampleMessages(const TraceModel &model, double t0, double t1, size_t maxCount, Visit visit)
{
    auto [mb, me] = model.candidateMessages(t0, t1);
    if (model.messagesSampled()
        || ((me - mb) / maxCount >= model.arrowSampleStride() && model.arrowSampleStride() > 1)) {
        auto [sb, se] = model.candidateSamples(t0, t1);
        const size_t stride = std::max<size_t>(1, (se - sb) / maxCount);
        const auto &A = model.arrowSample();
        for (size_t i = sb; i < se; i += stride)
            visit(A[i]);
        return stride * model.arrowSampleStride();
    }
    const auto &M = model.messages();
    const size_t weight = std::max<size_t>(1, (me - mb) / maxCount);
    for (size_t i = mb; i < me; i += weight)
        visit(TraceModel::ArrowSample {
            M[i].send_time, M[i].recv_time, M[i].send_timeline, M[i].recv_timeline, M[i].bytes });
    return weight;
}

} // namespace upshot
