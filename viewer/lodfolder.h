// Level of detail for one lane of the timeline: which boxes to paint at the current zoom.
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
// At coarse zoom (a fold spanning whole blocks of TraceModel::kBlock states, the last ending
// within a pixel of the fold's limit) the fold ends at a block boundary found in the per-lane
// block summaries and is coloured by the blocks' dominant categories, so it touches only the
// small block array and two states.
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
        const size_t laneBegin = m_model.lane(row, depth).first;
        size_t nBlocks = 0;
        const TraceModel::Block *blocks = m_model.blocks(row, depth, &nBlocks);
        while (i < e) {
            const double x0 = m_scale.timeToX(m_model.start(row, i));
            const double x1 = m_scale.timeToX(m_model.end(row, i));
            if (x1 - x0 >= m_minPx) {
                out.push_back({ i, i + 1, x0, x1, m_model.category(row, i), false });
                ++i;
                continue;
            }
            const double limit = m_scale.xToTime(x0 + m_minPx);
            // Coarse zoom: when whole blocks fit in the fold, end it at a block boundary found in
            // the (small, cache-resident) block array, and take its colour from the blocks.
            if (foldByBlocks(row, depth, laneBegin, blocks, nBlocks, i, e, x0, limit, out))
                continue;
            // First state starting at or after limit: gallop from i (cache-friendly: the answer
            // is usually near), then bisect the last step.
            size_t lo = i + 1, hi = e, step = 1;
            while (lo + step < e && m_model.start(row, lo + step) < limit)
                lo += step, step *= 2;
            hi = std::min(e, lo + step);
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (m_model.start(row, mid) < limit)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t j = lo;
            if (j - 1 > i && m_scale.durationToWidth(m_model.duration(row, j - 1)) >= m_minPx)
                --j;
            if (j == i + 1) {
                out.push_back({ i, j, x0, std::max(x1, x0 + 1), m_model.category(row, i), false });
                i = j;
                continue;
            }
            const double xe = std::max(m_scale.timeToX(m_model.end(row, j - 1)), x0 + 1);
            out.push_back({ i, j, x0, xe, dominantCategory(row, i, j), true });
            i = j;
        }
    }

    // Folds from state i by whole blocks when the block ending the fold is under a pixel wide;
    // appends the box, advances i and returns true, or returns false to fold state by state.
    bool foldByBlocks(int row, int depth, size_t laneBegin, const TraceModel::Block *blocks, size_t nBlocks,
        size_t &i, size_t e, double x0, double limit, std::vector<LodBox> &out) const
    {
        (void)depth;
        const size_t B = TraceModel::kBlock;
        const size_t bi = (i - laneBegin) / B; // block holding i
        if (nBlocks < 3 || bi + 2 >= nBlocks || static_cast<double>(blocks[bi + 2].start) >= limit)
            return false;
        // First block starting at or after limit, galloping from bi + 2.
        size_t lo = bi + 2, step = 1;
        while (lo + step < nBlocks && static_cast<double>(blocks[lo + step].start) < limit)
            lo += step, step *= 2;
        size_t hi = std::min(nBlocks, lo + step);
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (static_cast<double>(blocks[mid].start) < limit)
                lo = mid + 1;
            else
                hi = mid;
        }
        const size_t j = std::min(e, laneBegin + lo * B);
        // The last block taken must end within a pixel of the limit, and its last state be narrow.
        const double endT = m_model.end(row, j - 1);
        if (m_scale.timeToX(endT) - m_scale.timeToX(limit) > 1
            || m_scale.durationToWidth(m_model.duration(row, j - 1)) >= m_minPx)
            return false;
        int cats[kSamples];
        double time[kSamples];
        int n = 0;
        const size_t nb = lo - (bi + 1), stride = std::max<size_t>(1, nb / kSamples);
        for (size_t k = bi + 1; k < lo; k += stride) {
            const int c = blocks[k].dominant;
            if (!m_model.categoryInfo(c).visible)
                continue;
            int q = 0;
            while (q < n && cats[q] != c)
                ++q;
            if (q == n) {
                if (n == kSamples)
                    continue;
                cats[n] = c, time[n] = 0, ++n;
            }
            time[q] += 1;
        }
        const int dominant = n ? cats[std::max_element(time, time + n) - time] : dominantCategory(row, i, j);
        out.push_back({ i, j, x0, std::max(m_scale.timeToX(endT), x0 + 1), dominant, true });
        i = j;
        return true;
    }

    // Estimates the category taking most time among states [first, last) of a row.
    int dominantCategory(int row, size_t first, size_t last) const
    {
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
            const int c = m_model.category(row, i);
            int k = 0;
            while (k < n && cats[k] != c)
                ++k;
            if (k == n) {
                if (n == kSamples || !m_model.categoryInfo(c).visible) continue;
                cats[n] = c, time[n] = 0, ++n;
            }
            time[k] += m_model.duration(row, i);
        }
        if (n == 0) return -1;
        return cats[std::max_element(time, time + n) - time];
    }

private:
    const TraceModel &m_model;
    TimeScale m_scale;
    double m_minPx;
};

} // namespace upshot
