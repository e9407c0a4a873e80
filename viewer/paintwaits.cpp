// The wait-state overlay: each pattern's waiting intervals hatched over the states' boxes.
#include <array>
#include <climits>

#include "lodfolder.h"
#include "paintlayers.h"
#include "waitstates.h"

namespace upshot {

// The wait-state overlay: each pattern's waiting intervals hatched in its colour over the
// states' boxes, with a 2-px bar along the box's bottom so that a 1-px instance still shows,
// and a frame around the instances of the selected pattern. Per row and pattern the coarsest
// coverage level whose gaps are under 2 pixels is drawn (the spans themselves when there is
// none), intervals that touch in pixels merge, and the pixel columns they cover are claimed
// per row (the later pattern winning where several meet) before anything is drawn: each pixel
// is hatched once, and a row costs O(its width) plus a few intervals per pixel, at any zoom.
void paintWaits(
    DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st)
{
    const std::vector<int> &rows = f.shown;
    const QRect &plot = f.plot;
    const WaitStates &W = *model.waits();
    const double t0 = v.scale.t0(), t1 = v.scale.t1(), nsPerPixel = v.scale.nsPerPixel();
    std::array<QRgb, kWaitPatterns> rgb {}, dark {};
    for (int k = 0; k < kWaitPatterns; ++k) {
        rgb[k] = waitColor(k).rgb();
        dark[k] = waitColor(k).darker(170).rgb();
    }
    struct Run
    {
        int x0 = 0, x1 = -1, depth = 0;
    };
    // Columns plot.left() - 2 .. plot.right() + 2: 0, or pattern + 1 and the lane << 3.
    const int colBase = plot.left() - 2;
    std::vector<uint16_t> owner(static_cast<size_t>(plot.width() + 5), 0);
    for (int r : rows) {
        if (r >= W.rowCount() || W.spans(r).empty()) continue;
        const int lanes = std::max(1, std::min(shownLanes(model, v, r), 8191));
        std::array<Run, kWaitPatterns> runs {};
        int lo = INT_MAX, hi = -1; // the columns claimed
        auto claim = [&](int k, const Run &run) {
            const auto value = static_cast<uint16_t>((k + 1) | (run.depth << 3));
            std::fill(owner.begin() + (run.x0 - colBase), owner.begin() + (run.x1 - colBase) + 1, value);
            lo = std::min(lo, run.x0), hi = std::max(hi, run.x1);
        };
        auto add = [&](int k, int64_t a, int64_t b, int depth) {
            depth = std::min(depth, lanes - 1);
            const double xa = std::max(v.xOf(static_cast<double>(a)), plot.left() - 2.0);
            const double xb = std::min(v.xOf(static_cast<double>(b)), plot.right() + 2.0);
            if (xb < xa) return;
            // xa, xb >= plot.left() - 2 > 0: truncation is floor, and ceil is one more unless exact.
            const int ix0 = static_cast<int>(xa);
            const int ix1
                = std::min(plot.right() + 2, std::max(ix0, static_cast<int>(xb) + (xb > static_cast<int>(xb)) - 1));
            Run &run = runs[static_cast<size_t>(k)];
            if (run.x1 >= run.x0 && run.depth == depth && ix0 <= run.x1 + 1) {
                run.x1 = std::max(run.x1, ix1);
                return;
            }
            if (run.x1 >= run.x0) claim(k, run);
            run = { ix0, ix1, depth };
        };
        std::array<const std::vector<WaitStates::Cover> *, kWaitPatterns> level {};
        bool fromSpans = false;
        // Gaps up to 2 px are bridged: the hatch's period is 6 px, a narrower gap does not show.
        for (int k = 0; k < kWaitPatterns; ++k) {
            for (const WaitStates::CoverLevel &l : W.coverLevels(r, k))
                if (l.gap <= 2 * nsPerPixel) level[static_cast<size_t>(k)] = &l.items;
            fromSpans |= level[static_cast<size_t>(k)] == nullptr && W.count(r, k) > 0;
        }
        if (fromSpans) {
            const auto &S = W.spans(r);
            auto [b, e] = W.visible(r, t0, t1);
            const bool disjoint = W.disjoint(r);
            for (size_t i = b; i < e;) {
                const size_t k = S[i].pattern;
                if (level[k]) {
                    ++i;
                    continue;
                }
                add(S[i].pattern, S[i].start, S[i].end, S[i].depth);
                if (!disjoint) {
                    ++i;
                    continue;
                }
                // The spans starting before the column after this run lie inside the run, but
                // for the last of them, which may reach past it: gallop to it (a few steps per
                // pixel instead of one per span on a dense row at coarse zoom).
                const double next = v.timeAt(runs[k].x1 + 1);
                const size_t j
                    = gallopFirst(i + 1, e, [&](size_t q) { return static_cast<double>(S[q].start) < next; });
                if (j > i + 1 && !level[S[j - 1].pattern])
                    add(S[j - 1].pattern, S[j - 1].start, S[j - 1].end, S[j - 1].depth);
                i = j;
            }
        }
        for (int k = 0; k < kWaitPatterns; ++k) {
            if (!level[static_cast<size_t>(k)]) continue;
            // Disjoint intervals: gallop past those inside the run, as for the spans.
            const auto &C = *level[static_cast<size_t>(k)];
            const size_t e
                = partitionIndex(0, C.size(), [&](size_t j) { return static_cast<double>(C[j].start) < t1; });
            for (size_t i = partitionIndex(0, e, [&](size_t j) { return static_cast<double>(C[j].end) <= t0; });
                 i < e;) {
                add(k, C[i].start, C[i].end, C[i].depth);
                const double next = v.timeAt(runs[static_cast<size_t>(k)].x1 + 1);
                const size_t j
                    = gallopFirst(i + 1, e, [&](size_t q) { return static_cast<double>(C[q].start) < next; });
                if (j > i + 1) add(k, C[j - 1].start, C[j - 1].end, C[j - 1].depth);
                i = j;
            }
        }
        for (int k = 0; k < kWaitPatterns; ++k)
            if (runs[static_cast<size_t>(k)].x1 >= runs[static_cast<size_t>(k)].x0)
                claim(k, runs[static_cast<size_t>(k)]);
        // Draw the claimed columns, one rectangle per stretch of one pattern and lane.
        for (int x = lo; x <= hi;) {
            const uint16_t value = owner[static_cast<size_t>(x - colBase)];
            int end = x + 1;
            while (end <= hi && owner[static_cast<size_t>(end - colBase)] == value)
                ++end;
            if (value != 0) {
                const int k = (value & 7) - 1;
                auto [y0, y1] = v.boxY(r, value >> 3);
                const int iy0 = static_cast<int>(y0), ih = std::max(1, static_cast<int>(y1) - iy0); // as the boxes
                const QRect rect(x, iy0, end - x, ih);
                canvas.hatch(rect, rgb[k]);
                if (ih >= 6) canvas.fill(QRect(rect.left(), rect.bottom() - 1, rect.width(), 2), rgb[k]);
                if (k == v.waitPattern && rect.width() >= 3) canvas.frame(rect, dark[k]);
                ++st.waitRuns;
            }
            x = end;
        }
        if (hi >= lo) std::fill(owner.begin() + (lo - colBase), owner.begin() + (hi - colBase) + 1, 0);
    }
}

} // namespace upshot
