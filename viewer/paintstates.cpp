// The rows' layers of a frame: backgrounds, states (thin rows from the per-row bins, the others
// lane by lane through the LodFolder, batched per depth and colour) and the rows of collapsed groups.
#include <algorithm>
#include <cmath>

#include "lodfolder.h"
#include "paintlayers.h"
#include "summary.h"

namespace upshot {

// The pixel edge nearest to x: where a painter's fill of a fractional rectangle ends (pixel
// centres inside).
static int pixelEdge(double x)
{
    return static_cast<int>(std::floor(x + 0.5));
}

FrameLayout frameLayout(const TraceModel &model, const ViewState &v)
{
    FrameLayout f;
    f.plot = v.plotRect();
    const QRect &plot = f.plot;
    const int slotTotal = v.slotCount(model);
    f.firstSlot = std::max(0, static_cast<int>(std::floor(v.yOffset / v.rowHeight)));
    f.lastSlot = std::min(slotTotal - 1, static_cast<int>((v.yOffset + plot.height()) / v.rowHeight));
    // The model rows drawn on their own in the visible slots (all of them without groups).
    for (int k = f.firstSlot; k <= f.lastSlot; ++k)
        if (!v.groups || !v.groups->rowSlots()[static_cast<size_t>(k)].isGroup())
            f.shown.push_back(v.groups ? v.groups->rowSlots()[static_cast<size_t>(k)].row : k);
    const double runX0 = v.xOf(model.tBegin()), runX1 = v.xOf(model.tEnd());
    f.bx0 = std::clamp(pixelEdge(runX0), plot.left(), plot.right() + 1);
    f.bx1 = std::clamp(pixelEdge(runX1), f.bx0, plot.right() + 1);
    for (int c = 0; c < model.categoryCount(); ++c) {
        const CategoryInfo &info = model.categoryInfo(c);
        f.palette.fill.push_back(info.color.rgb());
        f.palette.tick.push_back(info.color.darker(130).rgb());
        f.palette.visible.push_back(info.visible);
    }
    return f;
}

// The lanes a row shows at the view's row height (the painter's rule for the boxes).
int shownLanes(const TraceModel &model, const ViewState &v, int row)
{
    return std::min(model.laneCount(row), v.rowHeight >= 8 ? 1 << 20 : (v.rowHeight >= 4 ? 2 : 1));
}

void paintRowBackgrounds(DirectCanvas &canvas, const ViewState &v, const FrameLayout &f)
{
    const QRect &plot = f.plot;
    const int firstSlot = f.firstSlot, lastSlot = f.lastSlot, bx0 = f.bx0, bx1 = f.bx1;
    // Row backgrounds over the run's time span, white around them: each plot pixel is filled
    // once (the ruler and the labels paint the rest of the canvas). Edges round as a painter's
    // fill of the fractional rectangle would (pixel centres inside).
    const int by0 = std::clamp(pixelEdge(v.slotTop(firstSlot)), plot.top(), plot.bottom() + 1);
    const int by1 = std::clamp(pixelEdge(v.slotTop(lastSlot + 1)), by0, plot.bottom() + 1);
    const QRgb white = qRgb(255, 255, 255);
    canvas.fill(QRect(plot.left(), plot.top(), bx0 - plot.left(), plot.height()), white);
    canvas.fill(QRect(bx1, plot.top(), plot.right() + 1 - bx1, plot.height()), white);
    canvas.fill(QRect(bx0, plot.top(), bx1 - bx0, by0 - plot.top()), white);
    canvas.fill(QRect(bx0, by1, bx1 - bx0, plot.bottom() + 1 - by1), white);
    for (int k = firstSlot; k <= lastSlot; ++k) {
        // Group slots: paintGroupRows() fills them whole when it writes the image directly.
        if (v.groups && canvas.direct() && v.groups->rowSlots()[static_cast<size_t>(k)].isGroup()) continue;
        const int y0 = pixelEdge(v.slotTop(k)), y1 = pixelEdge(v.slotTop(k + 1));
        canvas.fill(QRect(bx0, y0, bx1 - bx0, y1 - y0), k % 2 ? qRgb(238, 238, 242) : qRgb(246, 246, 249));
    }
}

// Rows thinner than 3 px at a zoom where the per-row bins (summary.h) are at most a pixel wide:
// each row drawn column by column from its bins (a point sample per column, no folding): O(rows
// x columns) byte reads, ~2 ms for 1,024 rows of 1 px at 1920 px. Returns the rows left to the folder.
static std::vector<int> paintThinRows(DirectCanvas &canvas, const TraceModel &model, const ViewState &v,
    const std::vector<int> &rows, const std::vector<QRgb> &fill, const std::vector<char> &visible, const QRect &plot,
    RenderStats &st)
{
    if (v.rowHeight >= 3 || rows.empty() || model.isPreview()) return rows;
    const RankBins &bins = *model.rankBins();
    if (bins.binWidth() > v.scale.nsPerPixel()) return rows;
    // Per column, its bin (-1 outside the run); per code, its colour (0 = none or hidden).
    std::vector<int> binOfColumn(static_cast<size_t>(plot.width()));
    for (int x = 0; x < plot.width(); ++x) {
        const double t = v.timeAt(plot.left() + x + 0.5);
        binOfColumn[static_cast<size_t>(x)] = t < model.tBegin() || t >= model.tEnd() ? -1 : bins.binOf(t);
    }
    std::vector<QRgb> colour(static_cast<size_t>(bins.codes()), 0);
    for (int k = 1; k < bins.codes(); ++k) {
        const int c = bins.categoryOfCode()[static_cast<size_t>(k)];
        if (visible[static_cast<size_t>(c)])
            colour[static_cast<size_t>(k)] = 0xff000000u | fill[static_cast<size_t>(c)];
    }
    for (int r : rows) {
        const double top = v.rowTop(r);
        const int y0 = static_cast<int>(std::floor(top + 0.5)),
                  y1 = std::max(y0 + 1, static_cast<int>(std::floor(top + v.rowHeight + 0.5)));
        const uint8_t *codes = bins.row(r);
        ++st.folds;
        if (QRgb *line = canvas.scanline(y0); line && y1 == y0 + 1) {
            // One pixel row: stores straight into the image (~1 ns per column).
            const int xa = std::max(plot.left(), canvas.clip().left()),
                      xb = std::min(plot.right(), canvas.clip().right());
            for (int x = xa; x <= xb; ++x) {
                const int b = binOfColumn[static_cast<size_t>(x - plot.left())];
                const QRgb c = b < 0 ? 0 : colour[codes[b]];
                if (c) line[x] = c;
            }
            continue;
        }
        ColumnRuns runs(canvas, y0, y1);
        for (int x = 0; x < plot.width(); ++x) {
            const int b = binOfColumn[static_cast<size_t>(x)];
            runs.put(plot.left() + x, b < 0 ? 0 : colour[codes[b]]);
        }
    }
    return {};
}

namespace {

struct WideBox
{
    QRect rect;
    int category;
    bool highlighted;
};
struct Layer
{
    std::vector<std::vector<QRect>> fills; // by category
    std::vector<QRect> marks; // drawn over the fills
    std::vector<WideBox> wide;
};

} // namespace

// States, lane by lane, through the folder, into one Layer per depth: narrow boxes and folds of
// one colour that touch become one run, folds get a mark along their top, and boxes wide enough
// for an outline, a name or the highlight are kept for drawLayers().
static std::vector<Layer> foldLanes(QPainter &p, const TraceModel &model, const ViewState &v,
    const std::vector<int> &rows, const Palette &palette, const QRect &plot, RenderStats &st)
{
    std::vector<Layer> layers;
    LodFolder folder(model, v.scale, 3);
    std::vector<LodBox> boxes;
    const bool outline = v.rowHeight >= 10;
    QFontMetrics fm(p.font());
    for (int r : rows) {
        while (static_cast<int>(layers.size()) < model.laneCount(r))
            layers.emplace_back().fills.resize(palette.fill.size());
        // Rows too thin to show nesting draw their outer lanes only.
        const int lanes = shownLanes(model, v, r);
        for (int d = 0; d < lanes; ++d) {
            Layer &layer = layers[static_cast<size_t>(d)];
            boxes.clear();
            folder.fold(r, d, boxes);
            auto [y0, y1] = v.boxY(r, d);
            const int iy0 = static_cast<int>(y0), ih = std::max(1, static_cast<int>(y1) - iy0); // y >= 0 here
            // Narrow boxes and folds of one colour that touch are filled as one run.
            int runX0 = 0, runX1 = -1, runCat = -1;
            bool runFolded = false;
            // Folds are marked by a dark line along their top, one per contiguous stretch.
            int markX0 = 0, markX1 = -1;
            auto flushMark = [&] {
                if (markX1 >= markX0 && ih >= 4) layer.marks.push_back(QRect(markX0, iy0, markX1 - markX0 + 1, 1));
                markX1 = -1;
            };
            auto flush = [&] {
                if (runX1 < runX0) return;
                layer.fills[static_cast<size_t>(runCat)].push_back(QRect(runX0, iy0, runX1 - runX0 + 1, ih));
                if (runFolded) {
                    if (runX0 > markX1 + 1) flushMark(), markX0 = runX0;
                    markX1 = std::max(markX1, runX1);
                }
                runX1 = -1;
            };
            for (const LodBox &b : boxes) {
                if (b.category < 0 || !palette.visible[static_cast<size_t>(b.category)]) continue;
                const double xa = std::max(b.x0, -2.0) + plot.left(),
                             xb = std::min(b.x1, plot.width() + 2.0) + plot.left();
                // xa, xb >= plot.left() - 2 > 0: truncation is floor, and ceil is one more unless exact.
                const int ix0 = static_cast<int>(xa);
                const int ix1 = std::max(ix0, static_cast<int>(xb) + (xb > static_cast<int>(xb)) - 1);
                const bool highlighted = v.highlight.active() && !b.folded
                    && static_cast<size_t>(b.category) < v.highlight.categories.size()
                    && v.highlight.categories[b.category] && model.duration(r, b.first) >= v.highlight.lo
                    && model.duration(r, b.first) < v.highlight.hi
                    && (v.highlight.site < 0 || model.site(r, b.first) == v.highlight.site);
                const bool plain = b.folded || xb - xa < 6;
                if (b.folded)
                    ++st.folds;
                else
                    ++st.boxes;
                if (plain && !highlighted) {
                    if (b.category == runCat && b.folded == runFolded && ix0 <= runX1 + 1) {
                        runX1 = std::max(runX1, ix1);
                        continue;
                    }
                    flush();
                    runX0 = ix0, runX1 = ix1, runCat = b.category, runFolded = b.folded;
                    continue;
                }
                flush();
                const QRect rect(ix0, iy0, ix1 - ix0 + 1, ih);
                auto &fills = layer.fills[static_cast<size_t>(b.category)];
                fills.push_back(rect);
                const bool outlined = outline && rect.width() >= 16;
                if (!outlined && rect.width() >= 3) fills.back().setWidth(rect.width() - 1); // a gap separates it
                if (outlined || highlighted || (rect.width() > 40 && ih >= fm.height() - 2))
                    layer.wide.push_back({ rect, b.category, highlighted });
            }
            flush();
            flushMark();
        }
    }
    return layers;
}

// Draws the layers, outer lanes first: fills batched per colour (one drawRects() each, or
// straight into the image), then fold marks, outlines, names and highlights.
static void drawLayers(QPainter &p, DirectCanvas &canvas, const TraceModel &model, const ViewState &v,
    const std::vector<Layer> &layers, const Palette &palette)
{
    const bool outline = v.rowHeight >= 10;
    QFontMetrics fm(p.font());
    const QRgb markColor = qRgb(40, 40, 40);
    for (const Layer &layer : layers) {
        p.setPen(Qt::NoPen);
        for (size_t c = 0; c < layer.fills.size(); ++c) {
            const QRgb rgb = palette.fill[c];
            const auto &rects = layer.fills[c];
            if (rects.empty()) continue;
            if (canvas.direct()) {
                for (const QRect &r : rects)
                    canvas.fill(r, rgb);
                continue;
            }
            p.setBrush(QColor::fromRgb(rgb));
            p.drawRects(rects.data(), static_cast<int>(rects.size()));
        }
        for (const QRect &r : layer.marks)
            canvas.fill(r, markColor);
        p.setBrush(Qt::NoBrush);
        for (const WideBox &w : layer.wide) {
            const QColor c = model.categoryInfo(w.category).color;
            if (outline && w.rect.width() >= 16) {
                p.setPen(c.darker(150));
                p.drawRect(w.rect.adjusted(0, 0, -1, -1));
            }
            // A name that does not fit whole is left out: a row of "MPI_…" stubs reads as noise.
            const QString &name = model.categoryInfo(w.category).name;
            if (w.rect.width() > 40 && w.rect.height() >= fm.height() - 2
                && fm.horizontalAdvance(name) <= w.rect.width() - 5) {
                p.setPen(c.lightness() > 140 ? Qt::black : Qt::white);
                p.drawText(w.rect.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft, name);
            }
            if (w.highlighted) {
                p.setPen(QPen(QColor(255, 0, 255), 2));
                p.drawRect(w.rect.adjusted(-1, -1, 0, 0));
            }
        }
    }
}

void paintStates(QPainter &p, DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f,
    RenderStats &st)
{
    // Rows under 3 px at coarse zoom: each row one scanline run per column, from the per-row
    // bins (summary.h) straight into the image; the folder below draws the rest.
    const std::vector<int> folded
        = paintThinRows(canvas, model, v, f.shown, f.palette.fill, f.palette.visible, f.plot, st);
    drawLayers(p, canvas, model, v, foldLanes(p, model, v, folded, f.palette, f.plot, st), f.palette);
}

// The rows of collapsed groups: one colour per column by the draw mode, from the groups'
// per-bin counts at coarse zoom (no member row walked), from the members' states sampled per
// column when bins would be wider than 4 px (summarize(), within a work budget).
void paintGroupRows(
    DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st)
{
    const QRect &plot = f.plot;
    const int firstSlot = f.firstSlot, lastSlot = f.lastSlot, bx0 = f.bx0, bx1 = f.bx1;
    const std::vector<char> &visible = f.palette.visible;
    const RankGroups &G = *v.groups;
    const RankBins &bins = G.counts().bins();
    const bool fromBins = binsServe(bins, v.scale.nsPerPixel());
    std::vector<int> binOfColumn(static_cast<size_t>(plot.width()));
    for (int x = 0; x < plot.width(); ++x) {
        const double t = v.timeAt(plot.left() + x + 0.5);
        binOfColumn[static_cast<size_t>(x)] = t < model.tBegin() || t >= model.tEnd() ? -1 : bins.binOf(t);
    }
    int groupSlots = 0;
    for (int k = firstSlot; k <= lastSlot; ++k)
        groupSlots += G.rowSlots()[static_cast<size_t>(k)].isGroup();
    std::vector<QRgb> back(static_cast<size_t>(plot.width())), line;
    for (int k = firstSlot; k <= lastSlot; ++k) {
        const RankGroups::Slot slot = G.rowSlots()[static_cast<size_t>(k)];
        if (!slot.isGroup()) continue;
        const double top = v.slotTop(k);
        const double pad = v.rowHeight >= 8 ? 1.5 : 0;
        const int y0 = static_cast<int>(std::floor(top + pad + 0.5));
        const int y1 = std::max(y0 + 1, static_cast<int>(std::floor(top + v.rowHeight - pad + 0.5)));
        ++st.groupRows;
        if (canvas.direct()) {
            // One scanline of the slot's colours, over its background (the frame's background
            // loop leaves group slots to this), copied to each of its pixel rows: a run per
            // column would cost a clipped fill each, and bins are about a pixel wide.
            const int ys0 = static_cast<int>(std::floor(top + 0.5)),
                      ys1 = static_cast<int>(std::floor(v.slotTop(k + 1) + 0.5));
            const QRgb bg = 0xff000000u | (k % 2 ? qRgb(238, 238, 242) : qRgb(246, 246, 249));
            for (int x = 0; x < plot.width(); ++x) {
                const int cx = plot.left() + x;
                back[static_cast<size_t>(x)] = cx >= bx0 && cx < bx1 ? bg : 0xffffffffu;
            }
            line = back;
            if (fromBins) {
                const QRgb *colour = G.binColours(model, slot.group, v.drawMode, visible);
                for (int x = 0; x < plot.width(); ++x)
                    if (const int b = binOfColumn[static_cast<size_t>(x)]; b >= 0 && colour[b])
                        line[static_cast<size_t>(x)] = 0xff000000u | colour[b];
            } else {
                const SummaryBand band = summarize(model, v.scale.t0(), v.scale.t1(), plot.width(), visible,
                    G.groups()[static_cast<size_t>(slot.group)].rows, kFrameSampleBudget / std::max(1, groupSlots));
                for (int x = 0; x < plot.width(); ++x)
                    if (const QRgb c = RankGroups::colourOf(model, band.categoryOfCode,
                            band.counts.data() + static_cast<size_t>(x * band.codes()), v.drawMode, {}))
                        line[static_cast<size_t>(x)] = 0xff000000u | c;
            }
            const int xa = std::max(plot.left(), canvas.clip().left()),
                      xb = std::min(plot.right(), canvas.clip().right());
            for (int y = std::min(ys0, y0); y < std::max(ys1, y1); ++y)
                if (QRgb *out = canvas.scanline(y); out && xb >= xa) {
                    const std::vector<QRgb> &src = y >= y0 && y < y1 ? line : back;
                    std::copy(src.begin() + (xa - plot.left()), src.begin() + (xb - plot.left() + 1), out + xa);
                }
            continue;
        }
        ColumnRuns runs(canvas, y0, y1);
        if (fromBins) {
            const QRgb *colour = G.binColours(model, slot.group, v.drawMode, visible);
            for (int x = 0; x < plot.width(); ++x) {
                const int b = binOfColumn[static_cast<size_t>(x)];
                runs.put(plot.left() + x, b < 0 ? 0 : colour[b]);
            }
        } else {
            const SummaryBand band = summarize(model, v.scale.t0(), v.scale.t1(), plot.width(), visible,
                G.groups()[static_cast<size_t>(slot.group)].rows, kFrameSampleBudget / std::max(1, groupSlots));
            for (int x = 0; x < plot.width(); ++x)
                runs.put(plot.left() + x,
                    RankGroups::colourOf(model, band.categoryOfCode,
                        band.counts.data() + static_cast<size_t>(x * band.codes()), v.drawMode, {}));
        }
    }
}

} // namespace upshot
