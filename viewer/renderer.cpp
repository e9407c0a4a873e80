// Paints the timeline: row backgrounds, LOD boxes per lane, events, Pcontrol strips, arrows
// (bundled when dense), highlights, ruler, labels and overlays.
#include "renderer.h"

#include <QPainterPath>

#include <array>
#include <climits>
#include <cmath>

#include "countertracks.h"
#include "lodfolder.h"
#include "summary.h"

namespace upshot {

using mpe::log::RecordKind;

QColor arrowColor()
{
    return QColor(10, 10, 10);
}

QColor rmaArrowColor()
{
    return QColor(230, 110, 0);
}

namespace {

// Writes straight into an unshared 32-bit QImage painted with no transform, bypassing QPainter's
// per-call overhead (~0.5 us per rect, ~1.5 us per line); falls back to the painter otherwise.
class DirectCanvas
{
public:
    DirectCanvas(QPainter &p, QRect clip) : m_p(p), m_clip(clip)
    {
        QPaintDevice *d = p.device();
        QImage *img = d && d->devType() == QInternal::Image ? static_cast<QImage *>(d) : nullptr;
        if (img && img->isDetached() && p.transform().isIdentity() && img->devicePixelRatio() == 1
            && (img->format() == QImage::Format_RGB32 || img->format() == QImage::Format_ARGB32_Premultiplied
                || img->format() == QImage::Format_ARGB32)) {
            m_bits = const_cast<uchar *>(img->constBits()); // unshared: no detach needed
            m_bpl = img->bytesPerLine();
            m_clip = m_clip.intersected(img->rect());
        }
    }
    bool direct() const { return m_bits != nullptr; }
    // Image row y when direct and inside the clip (clip columns only), else null.
    QRgb *scanline(int y) const
    {
        return m_bits && y >= m_clip.top() && y <= m_clip.bottom() ? reinterpret_cast<QRgb *>(m_bits + y * m_bpl)
                                                                   : nullptr;
    }
    const QRect &clip() const { return m_clip; }
    void fill(const QRect &r0, QRgb rgb)
    {
        if (!m_bits) return m_p.fillRect(r0, QColor::fromRgb(rgb));
        // Clipped inline: called for every box and marker, where QRect::intersected() (out of
        // line) showed in profiles.
        const int x0 = std::max(r0.left(), m_clip.left()), x1 = std::min(r0.right(), m_clip.right());
        const int y0 = std::max(r0.top(), m_clip.top()), y1 = std::min(r0.bottom(), m_clip.bottom());
        if (x0 > x1 || y0 > y1) return;
        const QRgb value = 0xff000000u | rgb;
        for (int y = y0; y <= y1; ++y) {
            auto *line = reinterpret_cast<QRgb *>(m_bits + y * m_bpl);
            std::fill(line + x0, line + x1 + 1, value);
        }
    }
    // The wait-state hatch: diagonal stripes (x + y constant) every 6 px, 2 px of rgb and 1 px
    // of white over what is there: the colour shows on light states, the white on dark ones
    // (a Late Sender's crimson over a red MPI_Wait). Through the painter, a translucent tint
    // (an SVG keeps it as fill-opacity).
    void hatch(const QRect &r0, QRgb rgb)
    {
        if (!m_bits) {
            QColor c = QColor::fromRgb(rgb);
            c.setAlpha(110);
            return m_p.fillRect(r0, c);
        }
        const int x0 = std::max(r0.left(), m_clip.left()), x1 = std::min(r0.right(), m_clip.right());
        const int y0 = std::max(r0.top(), m_clip.top()), y1 = std::min(r0.bottom(), m_clip.bottom());
        const QRgb value = 0xff000000u | rgb;
        const QRgb stripe[3] = { value, value, 0xffffffffu };
        for (int y = y0; y <= y1; ++y) {
            auto *line = reinterpret_cast<QRgb *>(m_bits + y * m_bpl);
            // x, y >= 0 inside the clip: the stripe through x0 starts at x0 - (x0 + y) % 6.
            int x = x0 - (x0 + y) % 6;
            auto clipped = [&] {
                for (int k = 0; k < 3; ++k)
                    if (x + k >= x0 && x + k <= x1) line[x + k] = stripe[k];
            };
            if (x < x0) clipped(), x += 6;
            for (; x + 2 <= x1; x += 6) // the full stripes: three stores each
                line[x] = value, line[x + 1] = value, line[x + 2] = stripe[2];
            if (x <= x1) clipped();
        }
    }
    // A 1-pixel frame just inside r.
    void frame(const QRect &r, QRgb rgb)
    {
        if (!m_bits) {
            m_p.setPen(QPen(QColor::fromRgb(rgb), 0));
            m_p.setBrush(Qt::NoBrush);
            return m_p.drawRect(r.adjusted(0, 0, -1, -1));
        }
        fill(QRect(r.left(), r.top(), r.width(), 1), rgb);
        fill(QRect(r.left(), r.bottom(), r.width(), 1), rgb);
        fill(QRect(r.left(), r.top(), 1, r.height()), rgb);
        fill(QRect(r.right(), r.top(), 1, r.height()), rgb);
    }
    // An event marker: a triangle pointing down, its top edge from x - s to x + s at y and its
    // apex 1.6 s below, filled with rgb and edged in black; scanline spans (a painter polygon
    // costs ~4 us).
    void triangle(double x, double y, double s, QRgb rgb)
    {
        if (!m_bits) {
            m_p.setPen(Qt::black);
            m_p.setBrush(QColor::fromRgb(rgb));
            m_p.drawPolygon(QPolygonF({ QPointF(x - s, y), QPointF(x + s, y), QPointF(x, y + s * 1.6) }));
            m_p.setBrush(Qt::NoBrush);
            return;
        }
        const QRgb edge = qRgb(0, 0, 0);
        const int h = std::max(1, static_cast<int>(s * 1.6));
        for (int k = 0; k <= h; ++k) {
            const double half = s * (1.0 - static_cast<double>(k) / h);
            const int xa = static_cast<int>(std::lround(x - half)), xb = static_cast<int>(std::lround(x + half));
            const int yy = static_cast<int>(y) + k;
            fill(QRect(xa, yy, xb - xa + 1, 1), k == 0 ? edge : rgb);
            fill(QRect(xa, yy, 1, 1), edge);
            fill(QRect(xb, yy, 1, 1), edge);
        }
    }
    // A 1-pixel line (DDA), clipped per pixel.
    void line(QPointF a, QPointF b, QRgb rgb)
    {
        if (!m_bits) {
            m_p.setPen(QPen(QColor::fromRgb(rgb), 0));
            return m_p.drawLine(a, b);
        }
        // Clip the segment to the canvas first (Liang-Barsky): arrows to far-off times would
        // otherwise walk thousands of invisible pixels.
        double u0 = 0, u1 = 1;
        const double ddx = b.x() - a.x(), ddy = b.y() - a.y();
        auto clipEdge = [&](double p, double q) {
            if (p == 0) return q >= 0;
            const double r = q / p;
            if (p < 0) {
                if (r > u1) return false;
                u0 = std::max(u0, r);
            } else {
                if (r < u0) return false;
                u1 = std::min(u1, r);
            }
            return true;
        };
        if (!clipEdge(-ddx, a.x() - m_clip.left()) || !clipEdge(ddx, m_clip.right() + 1 - a.x())
            || !clipEdge(-ddy, a.y() - m_clip.top()) || !clipEdge(ddy, m_clip.bottom() + 1 - a.y()))
            return;
        b = a + QPointF(ddx * u1, ddy * u1);
        a = a + QPointF(ddx * u0, ddy * u0);
        const double dx = b.x() - a.x(), dy = b.y() - a.y();
        const int n = static_cast<int>(std::ceil(std::max(std::fabs(dx), std::fabs(dy))));
        const QRgb value = 0xff000000u | rgb;
        const double sx = n ? dx / n : 0, sy = n ? dy / n : 0;
        // The clip lies inside the image, so coordinates are >= 0 and truncation is floor; the
        // bounds test stays for the last half pixel that rounding can put outside.
        const int left = m_clip.left(), right = m_clip.right(), top = m_clip.top(), bottom = m_clip.bottom();
        double fx = a.x() + 0.5, fy = a.y() + 0.5;
        for (int i = 0; i <= n; ++i, fx += sx, fy += sy) {
            const int x = static_cast<int>(fx), y = static_cast<int>(fy);
            if (x >= left && x <= right && y >= top && y <= bottom)
                reinterpret_cast<QRgb *>(m_bits + y * m_bpl)[x] = value;
        }
    }

private:
    QPainter &m_p;
    QRect m_clip;
    uchar *m_bits = nullptr;
    qsizetype m_bpl = 0;
};

} // namespace

int ViewState::slotAt(double y, int slotCount) const
{
    if (y < rowsTop()) return -1;
    const int k = static_cast<int>(std::floor((y - rowsTop() + yOffset) / rowHeight));
    return k >= 0 && k < slotCount ? k : -1;
}

int ViewState::rowAt(double y, int rowCount) const
{
    if (!groups) return slotAt(y, rowCount);
    const int k = slotAt(y, static_cast<int>(groups->rowSlots().size()));
    return k >= 0 ? groups->rowSlots()[static_cast<size_t>(k)].row : -1;
}

std::pair<double, double> ViewState::boxY(int row, int depth) const
{
    const double top = rowTop(row);
    const double h = rowHeight - counterBand(row);
    const double pad = h >= 8 ? 1.5 : 0;
    const double inset = std::min(h * 0.12, 4.0) * depth;
    double y0 = top + pad + inset, y1 = top + h - pad - inset;
    if (y1 - y0 < 2) {
        const double c = top + h / 2;
        y0 = c - 1, y1 = c + 1;
    }
    return { y0, y1 };
}

int ViewState::depthAt(int row, double y, int laneCount) const
{
    for (int d = laneCount - 1; d >= 0; --d) {
        auto [y0, y1] = boxY(row, d);
        if (y >= y0 && y <= y1) return d;
    }
    return -1;
}

ViewState fittedView(const TraceModel &model, double t0, double t1, QSize size, const ViewState &like)
{
    ViewState v = like;
    v.size = size;
    v.yOffset = 0;
    if (t1 <= t0) t0 = model.tBegin(), t1 = model.tEnd();
    v.scale = TimeScale::fit(t0, t1, size.width() - v.labelWidth);
    const double avail = v.plotRect().height();
    v.rowHeight = std::clamp(avail / std::max(1, v.slotCount(model)), 1.0, ViewState::kMaxFittedRow);
    setCounterRows(v, model);
    return v;
}

// The first state of category cat among the first (or last) few of row's depth-0 lane, or none.
static std::optional<size_t> stateNearEnd(const TraceModel &model, int row, int cat, bool fromStart)
{
    if (cat < 0 || model.laneCount(row) == 0) return std::nullopt;
    auto [b, e] = model.lane(row, 0);
    for (size_t k = 0; k < 8 && k < e - b; ++k) {
        const size_t i = fromStart ? b + k : e - 1 - k;
        if (model.category(row, i) == cat) return i;
    }
    return std::nullopt;
}

std::pair<double, double> openingRange(const TraceModel &model, QString *note)
{
    const int init = model.findCategory(QStringLiteral("MPI_Init")),
              fin = model.findCategory(QStringLiteral("MPI_Finalize"));
    double initEnd = model.tBegin(), finStart = model.tEnd();
    bool anyInit = false, anyFin = false;
    for (int r = 0; r < model.rowCount(); ++r) {
        if (auto i = stateNearEnd(model, r, init, true)) initEnd = std::max(initEnd, model.end(r, *i)), anyInit = true;
        if (auto i = stateNearEnd(model, r, fin, false))
            finStart = std::min(finStart, model.start(r, *i)), anyFin = true;
    }
    const double run = model.tEnd() - model.tBegin();
    const double setup = (initEnd - model.tBegin()) + (model.tEnd() - finStart);
    if ((anyInit || anyFin) && finStart > initEnd && setup > run / 2) {
        if (note) *note = QStringLiteral("from end of MPI_Init to start of MPI_Finalize; Home for the full run");
        return { initEnd, finStart };
    }
    return { model.tBegin(), model.tEnd() };
}

ViewState openingView(const TraceModel &model, QSize size, const OpeningOptions &options, QString *message)
{
    ViewState v;
    v.size = size;
    v.legendHeight = options.legend ? 20 : 0;
    v.drawMode = options.drawMode;
    std::pair<double, double> range;
    if (options.range)
        range = *options.range;
    else
        range = openingRange(model, &v.rulerNote);
    const double avail = v.plotRect().height();
    const bool thin = model.rowCount() * options.minRowPx > avail;
    if (options.group.by != GroupBy::None && (options.group.by != GroupBy::Auto || thin)) {
        // Group rows of at least 8 px, at most 256 groups.
        const int target = std::clamp(static_cast<int>(avail / 8), 1, 256);
        v.groups = RankGroups::make(model, options.group, range.first, range.second, target);
        if (message) *message = v.groups->message();
    }
    v.summaryHeight = options.summary.value_or(v.groups != nullptr) ? ViewState::kSummaryBand : 0;
    return fittedView(model, range.first, range.second, size, v);
}

QImage renderImage(const TraceModel &model, double t0, double t1, QSize size, RenderStats *stats)
{
    QImage img(size, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    paintTimeline(p, model, fittedView(model, t0, t1, size), stats);
    p.end();
    return img;
}

static double niceStep(double raw)
{
    const double e = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-6))));
    for (double m : { 1.0, 2.0, 5.0, 10.0 })
        if (m * e >= raw) return m * e;
    return 10 * e;
}

static QString rulerLabel(double t, double step)
{
    double unit = 1;
    const char *name = "ns";
    if (step >= 1e9)
        unit = 1e9, name = "s";
    else if (step >= 1e6)
        unit = 1e6, name = "ms";
    else if (step >= 1e3)
        unit = 1e3, name = "µs";
    const double s = step / unit;
    const int decimals = s >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(s) - 1e-9));
    return QString::number(t / unit, 'f', decimals) + QString::fromUtf8(name);
}

static void paintRuler(QPainter &p, const ViewState &v)
{
    const QRect r(v.labelWidth, 0, v.size.width() - v.labelWidth, v.rulerHeight);
    p.fillRect(QRect(0, 0, v.size.width(), v.rulerHeight), QColor(236, 236, 240));
    p.setPen(QColor(60, 60, 60));
    p.drawLine(0, v.rulerHeight - 1, v.size.width(), v.rulerHeight - 1);
    const double step = niceStep(90 * v.scale.nsPerPixel());
    const double first = std::ceil(v.scale.t0() / step) * step;
    QFontMetrics fm(p.font());
    for (double t = first; t <= v.scale.t1(); t += step) {
        const double x = v.xOf(t);
        p.drawLine(QPointF(x, v.rulerHeight - 8), QPointF(x, v.rulerHeight - 1));
        const double minor = step / 5;
        for (int k = 1; k < 5; ++k) {
            const double xm = v.xOf(t + k * minor);
            if (xm < r.right()) p.drawLine(QPointF(xm, v.rulerHeight - 4), QPointF(xm, v.rulerHeight - 1));
        }
        p.drawText(QPointF(x + 3, v.rulerHeight - 10), rulerLabel(t, step));
        if (step / v.scale.nsPerPixel() < 1) break;
    }
    p.setPen(QColor(90, 90, 90));
    const QString span = QStringLiteral("view %1").arg(formatDuration(v.scale.visibleSpan()));
    p.fillRect(QRect(0, 0, v.labelWidth, v.rulerHeight - 1), QColor(236, 236, 240));
    p.drawText(QRect(4, 0, v.labelWidth - 6, v.rulerHeight - 2), Qt::AlignVCenter | Qt::AlignLeft, span);
    if (!v.rulerNote.isEmpty()) {
        const int w = fm.horizontalAdvance(v.rulerNote) + 10;
        const QRect nr(v.size.width() - w, 1, w, v.rulerHeight / 2);
        p.fillRect(nr, QColor(255, 244, 200));
        p.setPen(QColor(90, 60, 0));
        p.drawText(nr, Qt::AlignCenter, v.rulerNote);
    }
}

// The lanes a row shows at the view's row height (the painter's rule for the boxes).
static int shownLanes(const TraceModel &model, const ViewState &v, int row)
{
    return std::min(model.laneCount(row), v.rowHeight >= 8 ? 1 << 20 : (v.rowHeight >= 4 ? 2 : 1));
}

// The wait-state overlay: each pattern's waiting intervals hatched in its colour over the
// states' boxes, with a 2-px bar along the box's bottom so that a 1-px instance still shows,
// and a frame around the instances of the selected pattern. Per row and pattern the coarsest
// coverage level whose gaps are under 2 pixels is drawn (the spans themselves when there is
// none), intervals that touch in pixels merge, and the pixel columns they cover are claimed
// per row (the later pattern winning where several meet) before anything is drawn: each pixel
// is hatched once, and a row costs O(its width) plus a few intervals per pixel, at any zoom.
static void paintWaits(DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const std::vector<int> &rows,
    const QRect &plot, RenderStats &st)
{
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

// One-sided transfers: a dashed orange arrow from the operation on the origin's row to the
// synchronisation that completed it, on the target's first row (never completed: not drawn).
// Transfers are sorted by start, so those starting after t1 end the walk; at most kMaxRma are
// drawn, an even sample beyond that.
static void paintRma(QPainter &p, const TraceModel &model, const ViewState &v, double t0, double t1, int firstSlot,
    int lastSlot, RenderStats &st)
{
    constexpr size_t kMaxRma = 20000;
    const auto &X = model.rmaTransfers();
    const size_t end
        = static_cast<size_t>(std::upper_bound(X.begin(), X.end(), t1, [](double t, const mpe::log::RmaTransfer &x) {
              return t < static_cast<double>(x.start);
          }) - X.begin());
    const size_t stride = std::max<size_t>(1, end / kMaxRma);
    const QPen pen(rmaArrowColor(), 2, Qt::DashLine); // not antialiased: pure colour, as the messages
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(rmaArrowColor());
    for (size_t i = 0; i < end; i += stride) {
        const mpe::log::RmaTransfer &x = X[i];
        if (x.complete < 0 || static_cast<double>(x.complete) < t0) continue;
        const int ro = model.rowOfTimeline(x.origin_timeline), rt = model.rowOf(static_cast<uint32_t>(x.target), 0);
        if (rt < 0) continue;
        const int so = v.slotOfRow(ro), sr = v.slotOfRow(rt);
        if ((so < firstSlot && sr < firstSlot) || (so > lastSlot && sr > lastSlot)) continue;
        const QPointF a(v.xOf(static_cast<double>(x.start)), v.rowCenter(ro));
        const QPointF b(v.xOf(static_cast<double>(x.complete)), v.rowCenter(rt));
        p.setPen(pen);
        p.drawLine(a, b);
        const QPointF d = b - a;
        const double len = std::hypot(d.x(), d.y());
        if (len > 12) {
            const QPointF u = d / len, n(-u.y(), u.x());
            p.setPen(Qt::NoPen);
            p.drawPolygon(QPolygonF({ b, b - u * 8 + n * 3.5, b - u * 8 - n * 3.5 }));
        }
        ++st.rmaArrows;
    }
    p.setBrush(Qt::NoBrush);
}

// Runs of one colour along a pixel row band [y0, y1): colour 0 leaves the background.
class ColumnRuns
{
public:
    ColumnRuns(DirectCanvas &canvas, int y0, int y1) : m_canvas(canvas), m_y0(y0), m_h(y1 - y0) { }
    ~ColumnRuns() { flush(); }
    void put(int x, QRgb rgb)
    {
        if (rgb == m_rgb && x == m_x1 + 1) {
            m_x1 = x;
            return;
        }
        flush();
        m_x0 = m_x1 = x, m_rgb = rgb;
    }

private:
    void flush()
    {
        if (m_rgb != 0 && m_h > 0) m_canvas.fill(QRect(m_x0, m_y0, m_x1 - m_x0 + 1, m_h), m_rgb);
        m_rgb = 0;
    }
    DirectCanvas &m_canvas;
    int m_y0, m_h, m_x0 = 0, m_x1 = -2;
    QRgb m_rgb = 0;
};

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

// The rows of collapsed groups: one colour per column by the draw mode, from the groups'
// per-bin counts at coarse zoom (no member row walked), from the members' states sampled per
// column when bins would be wider than 4 px (summarize(), within a work budget).
static void paintGroupRows(DirectCanvas &canvas, const TraceModel &model, const ViewState &v, int firstSlot,
    int lastSlot, const std::vector<char> &visible, const QRect &plot, int bx0, int bx1, RenderStats &st)
{
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
                    G.groups()[static_cast<size_t>(slot.group)].rows, 4e6 / std::max(1, groupSlots));
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
                G.groups()[static_cast<size_t>(slot.group)].rows, 4e6 / std::max(1, groupSlots));
            for (int x = 0; x < plot.width(); ++x)
                runs.put(plot.left() + x,
                    RankGroups::colourOf(model, band.categoryOfCode,
                        band.counts.data() + static_cast<size_t>(x * band.codes()), v.drawMode, {}));
        }
    }
}

// The summary band: per column, the rows in each visible category stacked from the bottom, MPI
// first, the application's states next and rows in no state (light grey) on top.
static void paintSummaryBand(QPainter &p, const TraceModel &model, const ViewState &v, const std::vector<QRgb> &fill,
    const std::vector<char> &visible, RenderStats &st)
{
    const QRect band(v.labelWidth, v.rulerHeight, v.size.width() - v.labelWidth, static_cast<int>(v.summaryHeight));
    p.fillRect(QRect(0, band.top(), v.size.width(), band.height()), QColor(250, 250, 252));
    const int columns = band.width();
    const bool fromBins = !model.isPreview() && binsServe(*model.rankBins(), v.scale.nsPerPixel());
    const SummaryBand s = fromBins ? model.allRowCounts()->band(0, v.scale.t0(), v.scale.t1(), columns, visible)
                                   : summarize(model, v.scale.t0(), v.scale.t1(), columns, visible);
    // Stacking order of the codes: MPI, application, none.
    std::vector<int> order;
    for (int pass = 0; pass < 2; ++pass)
        for (int k = 1; k < s.codes(); ++k)
            if (model.isMpiCategory(s.categoryOfCode[static_cast<size_t>(k)]) == (pass == 0)) order.push_back(k);
    order.push_back(0);
    DirectCanvas canvas(p, band.adjusted(0, 1, 0, -1));
    const double h = band.height() - 3;
    const double bottom = band.bottom() - 1;
    const double perRow = s.rowsCounted > 0 ? h / s.rowsCounted : 0;
    for (int x = 0; x < columns; ++x) {
        const double t = v.timeAt(band.left() + x + 0.5);
        if (t < model.tBegin() || t >= model.tEnd() || s.rowsCounted <= 0) continue;
        double acc = 0;
        int yPrev = static_cast<int>(bottom + 1);
        for (int k : order) {
            acc += s.count(x, k);
            const int y = static_cast<int>(bottom + 1.5 - acc * perRow); // rounded: the argument is > 0
            if (y < yPrev) {
                const QRgb rgb = k == 0 ? qRgb(215, 215, 220)
                                        : fill[static_cast<size_t>(s.categoryOfCode[static_cast<size_t>(k)])];
                canvas.fill(QRect(band.left() + x, y, 1, yPrev - y), rgb);
                yPrev = y;
            }
        }
    }
    st.summaryColumns = static_cast<size_t>(columns);
    p.setPen(QColor(150, 150, 160));
    p.drawLine(0, band.bottom(), v.size.width(), band.bottom());
    p.setPen(QColor(30, 30, 30));
    p.drawText(QRect(4, band.top(), v.labelWidth - 6, band.height()),
        Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap,
        QStringLiteral("%1 ranks%2").arg(model.worldSize()).arg(s.estimated ? QStringLiteral(" (est.)") : QString()));
}

// A bundle's label: its messages and bytes, "12 msg, 3.1 KB", "1.2k msg, 4.0 MB".
static QString bundleLabel(uint64_t n, uint64_t bytes)
{
    auto count = [](double x) {
        return x < 1000 ? QString::number(x, 'f', 0)
            : x < 1e6   ? QStringLiteral("%1k").arg(x / 1e3, 0, 'f', 1)
                        : QStringLiteral("%1M").arg(x / 1e6, 0, 'f', 1);
    };
    const double b = static_cast<double>(bytes);
    const QString size = b < 1e3 ? QStringLiteral("%1 B").arg(bytes)
        : b < 1e6                ? QStringLiteral("%1 KB").arg(b / 1e3, 0, 'f', 1)
        : b < 1e9                ? QStringLiteral("%1 MB").arg(b / 1e6, 0, 'f', 1)
                                 : QStringLiteral("%1 GB").arg(b / 1e9, 0, 'f', 1);
    return QStringLiteral("%1 msg, %2").arg(count(static_cast<double>(n)), size);
}
constexpr size_t kMaxBundleLabels = 16;

// The legend along the bottom: a swatch and the name of each visible state category that has
// time in the run, most time first, as many as fit.
static void paintLegend(
    QPainter &p, const TraceModel &model, const ViewState &v, const std::vector<char> &visible, RenderStats &st)
{
    const QRect r(0, v.size.height() - v.legendHeight, v.size.width(), v.legendHeight);
    p.fillRect(r, QColor(244, 244, 246));
    p.setPen(QColor(150, 150, 160));
    p.drawLine(r.topLeft(), r.topRight());
    std::vector<int> cats;
    for (int c = 0; c < model.categoryCount(); ++c)
        if (model.categoryInfo(c).isState && visible[static_cast<size_t>(c)] && model.categoryInfo(c).inclusiveNs > 0)
            cats.push_back(c);
    std::stable_sort(cats.begin(), cats.end(),
        [&](int a, int b) { return model.categoryInfo(a).inclusiveNs > model.categoryInfo(b).inclusiveNs; });
    QFontMetrics fm(p.font());
    int x = 6;
    const int sw = std::max(8, v.legendHeight - 8);
    for (int c : cats) {
        const QString &name = model.categoryInfo(c).name;
        const int w = sw + 4 + fm.horizontalAdvance(name) + 14;
        if (x + w > r.right()) break;
        p.fillRect(QRect(x, r.top() + (r.height() - sw) / 2, sw, sw), model.categoryInfo(c).color);
        p.setPen(QColor(30, 30, 30));
        p.drawText(QRect(x + sw + 4, r.top(), w - sw - 4, r.height()), Qt::AlignVCenter | Qt::AlignLeft, name);
        x += w;
        ++st.legendEntries;
    }
}

void paintTimeline(QPainter &p, const TraceModel &model, const ViewState &v, RenderStats *stats)
{
    RenderStats local;
    RenderStats &st = stats ? *stats : local;
    const QRect plot = v.plotRect();
    const int slotTotal = v.slotCount(model);
    const int firstSlot = std::max(0, static_cast<int>(std::floor(v.yOffset / v.rowHeight)));
    const int lastSlot = std::min(slotTotal - 1, static_cast<int>((v.yOffset + plot.height()) / v.rowHeight));
    // The model rows drawn on their own in the visible slots (all of them without groups).
    std::vector<int> shown;
    for (int k = firstSlot; k <= lastSlot; ++k)
        if (!v.groups || !v.groups->rowSlots()[static_cast<size_t>(k)].isGroup())
            shown.push_back(v.groups ? v.groups->rowSlots()[static_cast<size_t>(k)].row : k);
    const double t0 = v.scale.t0(), t1 = v.scale.t1();
    const double runX0 = v.xOf(model.tBegin()), runX1 = v.xOf(model.tEnd());

    p.save();
    p.setClipRect(plot);
    // Opaque fills go straight into the image when the painter allows it: ~1 ns per pixel.
    DirectCanvas canvas(p, plot.intersected(QRect(QPoint(0, 0), v.size)));
    // Row backgrounds over the run's time span, white around them: each plot pixel is filled
    // once (the ruler and the labels paint the rest of the canvas). Edges round as a painter's
    // fill of the fractional rectangle would (pixel centres inside).
    auto pixelEdge = [](double x) { return static_cast<int>(std::floor(x + 0.5)); };
    const int bx0 = std::clamp(pixelEdge(runX0), plot.left(), plot.right() + 1);
    const int bx1 = std::clamp(pixelEdge(runX1), bx0, plot.right() + 1);
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
    // States, lane by lane, through the folder. Fills are batched per depth and colour and
    // issued with one drawRects() each: per-call overhead, not pixels, dominates dense views.
    struct WideBox
    {
        QRect rect;
        int category;
        bool highlighted;
    };
    // Per-frame category lookups: QColor conversions cost more than the boxes they colour.
    struct Palette
    {
        std::vector<QRgb> fill, tick;
        std::vector<char> visible;
    } palette;
    for (int c = 0; c < model.categoryCount(); ++c) {
        const CategoryInfo &info = model.categoryInfo(c);
        palette.fill.push_back(info.color.rgb());
        palette.tick.push_back(info.color.darker(130).rgb());
        palette.visible.push_back(info.visible);
    }
    struct Layer
    {
        std::vector<std::vector<QRect>> fills; // by category
        std::vector<QRect> marks; // drawn over the fills
        std::vector<WideBox> wide;
    };
    std::vector<Layer> layers;
    LodFolder folder(model, v.scale, 3);
    std::vector<LodBox> boxes;
    const bool outline = v.rowHeight >= 10;
    QFontMetrics fm(p.font());
    const QRgb markColor = qRgb(40, 40, 40);
    // Rows under 3 px at coarse zoom: each row one scanline run per column, from the per-row
    // bins (summary.h) straight into the image; the folder below draws the rest.
    const std::vector<int> folded = paintThinRows(canvas, model, v, shown, palette.fill, palette.visible, plot, st);
    for (int r : folded) {
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
    if (v.groups) paintGroupRows(canvas, model, v, firstSlot, lastSlot, palette.visible, plot, bx0, bx1, st);
    if (v.showWaits && model.waits()) paintWaits(canvas, model, v, shown, plot, st);
    st.counterTracks = paintCounterBands(p, model, v, shown);
    for (int r : shown) {
        // Pcontrol strips at the bottom of the row.
        const auto &mk = model.markers(r);
        if (!mk.empty()) {
            const double yb = v.rowTop(r) + v.rowHeight - 3;
            for (size_t k = 0; k < mk.size(); ++k) {
                const double a = v.xOf(mk[k].time), b = v.xOf(k + 1 < mk.size() ? mk[k + 1].time : model.tEnd());
                if (b < plot.left() || a > plot.right()) continue;
                // Straight into the image (a painter fill of a fractional rect costs ~20 us).
                const int xa = static_cast<int>(std::max<double>(a, plot.left() - 1));
                const int xb = static_cast<int>(std::min<double>(b, plot.right() + 1));
                canvas.fill(QRect(xa, static_cast<int>(yb), std::max(1, xb - xa), 3),
                    mk[k].on ? QColor::fromHsv((120 + mk[k].level * 70) % 360, 120, 200).rgb() : qRgb(120, 120, 120));
                canvas.line(QPointF(a, v.rowTop(r)), QPointF(a, v.rowTop(r) + v.rowHeight), qRgb(128, 0, 128));
            }
        }
        // Event markers: at most one per 3 pixels; triangles when sparse, ticks when dense.
        const auto &E = model.eventTicks(r);
        auto [eb, ee] = model.visibleEvents(r, t0, t1);
        if (v.rowHeight < 4) continue; // no room for markers
        const bool triangles = v.rowHeight >= 10 && ee - eb <= static_cast<size_t>(plot.width() / 12);
        const int tick = std::max(2, static_cast<int>(v.rowHeight / 4));
        for (size_t i = eb; i < ee;) {
            const auto &e = E[i];
            const double x = v.xOf(static_cast<double>(e.time));
            // One-sided operations and their completions are the ends of the RMA arrows.
            if (e.kind != RecordKind::kMarker && e.kind != RecordKind::kRmaOp && e.kind != RecordKind::kRmaComplete) {
                const int cat = e.category;
                const double y = v.rowTop(r) + 1;
                if (triangles) {
                    canvas.triangle(x, y, std::min(5.0, v.rowHeight / 3),
                        cat >= 0 ? palette.fill[static_cast<size_t>(cat)] : qRgb(200, 0, 0));
                } else {
                    canvas.fill(QRect(static_cast<int>(x) - 1, static_cast<int>(y), 2, tick),
                        cat >= 0 ? palette.tick[static_cast<size_t>(cat)] : QColor(200, 0, 0).darker(130).rgb());
                }
                ++st.events;
            }
            // The next event at least 3 px on.
            const double next = v.timeAt(x + 3);
            i = gallopFirst(i + 1, ee, [&](size_t k) { return static_cast<double>(E[k].time) < next; });
        }
    }
    // Selected state.
    if (v.selected.valid() && v.selected.row < model.rowCount()
        && std::find(shown.begin(), shown.end(), v.selected.row) != shown.end()) {
        auto [y0, y1] = v.boxY(v.selected.row, model.depth(v.selected.row, v.selected.index));
        const double a = v.xOf(model.start(v.selected.row, v.selected.index));
        const double b = v.xOf(model.end(v.selected.row, v.selected.index));
        p.setPen(QPen(QColor(255, 200, 0), 3));
        p.drawRect(QRectF(a - 1, y0 - 1, std::max(b - a, 1.0) + 2, y1 - y0 + 2));
    }
    // Arrows: one per message when few are visible, else bundled per (rows, 16-pixel cells).
    // Bundles come from at most ~20k messages: when more are candidates, an even sample, read
    // from the model's contiguous arrow sample when that is sparse enough.
    constexpr size_t kMaxBundled = 20000;
    using Arrow = TraceModel::ArrowSample;
    std::vector<Arrow> vis;
    size_t weight = 1; // messages each visited one stands for
    auto consider = [&](const Arrow &m) {
        if (static_cast<double>(m.recv_time) < t0) return;
        const int ss = v.slotOfRow(model.rowOfTimeline(m.send_timeline));
        const int sr = v.slotOfRow(model.rowOfTimeline(m.recv_timeline));
        if ((ss < firstSlot && sr < firstSlot) || (ss > lastSlot && sr > lastSlot)) return;
        // Inside one group's row: drawn only when asked for (View ▸ Messages inside a group).
        if (ss == sr && v.groups && !v.intraGroupMessages && v.groups->rowSlots()[static_cast<size_t>(ss)].isGroup())
            return;
        vis.push_back(m);
    };
    auto [mb, me] = model.candidateMessages(t0, t1);
    const auto &M = model.messages();
    if ((me - mb) / kMaxBundled >= model.arrowSampleStride() && model.arrowSampleStride() > 1) {
        auto [sb, se] = model.candidateSamples(t0, t1);
        const size_t stride = std::max<size_t>(1, (se - sb) / kMaxBundled);
        weight = stride * model.arrowSampleStride();
        const auto &A = model.arrowSample();
        for (size_t i = sb; i < se; i += stride)
            consider(A[i]);
    } else {
        weight = std::max<size_t>(1, (me - mb) / kMaxBundled);
        for (size_t i = mb; i < me; i += weight)
            consider(Arrow { M[i].send_time, M[i].recv_time, M[i].send_timeline, M[i].recv_timeline, M[i].bytes });
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    // Individual arrows while they stay readable (about one per pixel of width, at least 1000).
    if (vis.size() <= static_cast<size_t>(std::max(1000, plot.width()))) {
        const QPen pen(arrowColor(), 0);
        p.setPen(pen);
        p.setBrush(arrowColor());
        for (const Arrow &m : vis) {
            const QPointF a(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline)));
            const QPointF b(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline)));
            canvas.line(a, b, arrowColor().rgb());
            p.setPen(pen);
            const QPointF d = b - a;
            const double len = std::hypot(d.x(), d.y());
            if (len > 12) {
                const QPointF u = d / len, n(-u.y(), u.x());
                p.drawPolygon(QPolygonF({ b, b - u * 7 + n * 3, b - u * 7 - n * 3 }));
            }
            ++st.arrows;
        }
        p.setBrush(Qt::NoBrush);
    } else {
        struct Bundle
        {
            int rs, rr, xs, xr; // slots (rows, or groups' rows), and cells of the two ends
            uint64_t n; // messages
            uint64_t bytes;
            uint64_t key; // rows and cells packed (cells clamped to 16 bits, ~0.5 M px off-screen)
            void pack()
            {
                auto cell16 = [](int c) { return static_cast<uint64_t>(std::clamp(c, -32768, 32767) + 32768); };
                key = (static_cast<uint64_t>(rs & 0xFFFF) << 48) | (static_cast<uint64_t>(rr & 0xFFFF) << 32)
                    | (cell16(xs) << 16) | cell16(xr);
            }
        };
        // Arrows whose ends share rows and cells are one bundle. Cells start 16 px wide and
        // double while the bundles' lines would cost more than kPixelBudget pixels: a line's
        // pixels sit in different image rows (a cache and TLB miss each), so pixels, not
        // bundles, are what a dense frame pays for. Full views of a 64-rank ring end at ~64 px.
        // Sorting and merging neighbours beats a hash map here (no allocation per bundle).
        constexpr double kPixelBudget = 60000;
        double cell = 16;
        std::vector<Bundle> bundles;
        bundles.reserve(vis.size());
        for (const Arrow &m : vis)
            bundles.push_back(
                { v.slotOfRow(model.rowOfTimeline(m.send_timeline)), v.slotOfRow(model.rowOfTimeline(m.recv_timeline)),
                    static_cast<int>(std::floor(v.xOf(static_cast<double>(m.send_time)) / cell)),
                    static_cast<int>(std::floor(v.xOf(static_cast<double>(m.recv_time)) / cell)), weight,
                    m.bytes * weight, 0 });
        auto merge = [&] {
            for (Bundle &b : bundles)
                b.pack();
            std::sort(bundles.begin(), bundles.end(), [](const Bundle &a, const Bundle &b) { return a.key < b.key; });
            size_t out = 0;
            for (size_t i = 0; i < bundles.size(); ++i) {
                if (out > 0 && bundles[out - 1].key == bundles[i].key) {
                    bundles[out - 1].n += bundles[i].n;
                    bundles[out - 1].bytes += bundles[i].bytes;
                } else {
                    bundles[out++] = bundles[i];
                }
            }
            bundles.resize(out);
        };
        merge();
        // A line costs its pixels plus a setup (clipping) worth about 16 of them.
        auto pixels = [&] {
            double sum = 0;
            for (const Bundle &k : bundles)
                sum += 16
                    + std::max(std::fabs(k.xr - k.xs) * cell,
                        std::min<double>(plot.height(), std::fabs(v.slotTop(k.rr) - v.slotTop(k.rs))));
            return sum;
        };
        while (cell < 1024 && pixels() > kPixelBudget) {
            for (Bundle &k : bundles)
                k.xs >>= 1, k.xr >>= 1; // >> floors negative cells too
            merge();
            cell *= 2;
        }
        for (const Bundle &k : bundles) {
            // Opaque (alpha blending lines costs ~3x): lighter grey for thin bundles, black for thick.
            const int grey = std::max(10, 150 - static_cast<int>(30 * std::log2(static_cast<double>(k.n))));
            const double half = v.rowHeight / 2;
            const QPointF a(k.xs * cell + cell / 2, v.slotTop(k.rs) + half),
                b(k.xr * cell + cell / 2, v.slotTop(k.rr) + half);
            canvas.line(a, b, qRgb(grey, grey, grey));
        }
        st.arrowBundles = bundles.size();
        st.arrows = vis.size() * weight;
        for (const Bundle &k : bundles)
            st.bundledMessages += k.n, st.bundledBytes += k.bytes;
        // Bundles between two groups' rows say how many messages and bytes they carry: the
        // heaviest first, where the label fits beside the line without covering another one.
        if (v.groups) {
            std::vector<const Bundle *> between;
            for (const Bundle &k : bundles)
                if (k.rs != k.rr && v.groups->rowSlots()[static_cast<size_t>(k.rs)].isGroup()
                    && v.groups->rowSlots()[static_cast<size_t>(k.rr)].isGroup())
                    between.push_back(&k);
            const size_t top = std::min<size_t>(between.size(), 256);
            std::partial_sort(between.begin(), between.begin() + static_cast<long>(top), between.end(),
                [](const Bundle *a, const Bundle *b) { return a->n > b->n || (a->n == b->n && a->key < b->key); });
            std::vector<QRect> placed;
            const QString approx = weight > 1 ? QStringLiteral("~") : QString();
            const QFontMetrics lfm(p.font());
            for (size_t i = 0; i < top && placed.size() < kMaxBundleLabels; ++i) {
                const Bundle &k = *between[i];
                const QString text = approx + bundleLabel(k.n, k.bytes);
                const double half = v.rowHeight / 2;
                const QPointF mid((k.xs + k.xr + 1) * cell / 2, (v.slotTop(k.rs) + v.slotTop(k.rr)) / 2 + half);
                const QRect r(static_cast<int>(mid.x()) + 3, static_cast<int>(mid.y()) - lfm.height() / 2,
                    lfm.horizontalAdvance(text) + 4, lfm.height());
                if (!plot.contains(r)
                    || std::any_of(placed.begin(), placed.end(), [&](const QRect &o) { return o.intersects(r); }))
                    continue;
                placed.push_back(r);
                p.fillRect(r, QColor(255, 255, 255));
                p.setPen(QColor(40, 40, 40));
                p.drawText(r, Qt::AlignCenter, text);
            }
            st.bundleLabels = placed.size();
        }
    }
    if (v.showRma) paintRma(p, model, v, t0, t1, firstSlot, lastSlot, st);
    if (v.selectedMessage >= 0 && static_cast<size_t>(v.selectedMessage) < M.size()) {
        const Message &m = M[static_cast<size_t>(v.selectedMessage)];
        p.setPen(QPen(QColor(255, 200, 0), 3));
        p.drawLine(QPointF(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline))),
            QPointF(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline))));
    }
    if (const WaitStates *W = model.waits(); W && v.showWaits && v.selectedWait.valid()
        && v.selectedWait.row < W->rowCount() && v.selectedWait.index < W->spans(v.selectedWait.row).size()) {
        // The selected instance: its waiting part framed, and what made it wait (the culprit's
        // state, and for the point-to-point patterns the message's arrow) in its colour.
        const WaitSpan &s = W->span(v.selectedWait);
        const QColor c = waitColor(s.pattern);
        p.setBrush(Qt::NoBrush);
        if (s.state != WaitSpan::kNone) {
            auto [y0, y1] = v.boxY(v.selectedWait.row, model.depth(v.selectedWait.row, s.state));
            const double a = v.xOf(static_cast<double>(s.start)), b = v.xOf(static_cast<double>(s.end));
            p.setPen(QPen(c.darker(170), 2));
            p.drawRect(QRectF(a, y0, std::max(b - a, 1.0), y1 - y0));
        }
        if (s.culpritRow >= 0 && s.culpritState != WaitSpan::kNone) {
            auto [y0, y1] = v.boxY(s.culpritRow, model.depth(s.culpritRow, s.culpritState));
            const double a = v.xOf(model.start(s.culpritRow, s.culpritState));
            const double b = v.xOf(model.end(s.culpritRow, s.culpritState));
            p.setPen(QPen(c, 3));
            p.drawRect(QRectF(a - 1, y0 - 1, std::max(b - a, 1.0) + 2, y1 - y0 + 2));
        }
        if (s.message != WaitSpan::kNone && s.message < M.size()) {
            const Message &m = M[s.message];
            const QPointF a(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline)));
            const QPointF b(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline)));
            p.setPen(QPen(c, 3));
            p.drawLine(a, b);
            const QPointF d = b - a;
            const double len = std::hypot(d.x(), d.y());
            if (len > 12) {
                const QPointF u = d / len, n(-u.y(), u.x());
                p.setPen(QPen(c, 1));
                p.setBrush(c);
                p.drawPolygon(QPolygonF({ b, b - u * 10 + n * 5, b - u * 10 - n * 5 }));
                p.setBrush(Qt::NoBrush);
            }
        }
    }
    if (v.cursorTime >= 0) {
        p.setPen(QPen(QColor(0, 120, 255), 1, Qt::DashLine));
        const double x = v.xOf(v.cursorTime);
        p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
    p.restore();

    // Rank labels.
    p.fillRect(QRect(0, plot.top(), v.labelWidth, plot.height()), QColor(226, 226, 232));
    p.setPen(QColor(30, 30, 30));
    for (int k = firstSlot; k <= lastSlot && v.rowHeight >= 7; ++k) {
        if (v.rowHeight < fm.height() - 4 && k % static_cast<int>(std::ceil((fm.height() - 2) / v.rowHeight)) != 0)
            continue;
        const RankGroups::Slot slot
            = v.groups ? v.groups->rowSlots()[static_cast<size_t>(k)] : RankGroups::Slot { k, -1 };
        const int r = slot.row;
        if (r >= 0 && std::find(v.selectedRows.begin(), v.selectedRows.end(), r) != v.selectedRows.end())
            p.fillRect(QRectF(0, v.slotTop(k), v.labelWidth, v.rowHeight), QColor(170, 200, 255));
        const QRectF lr(4, v.slotTop(k), v.labelWidth - 8, std::max(v.rowHeight, static_cast<double>(fm.height())));
        if (lr.top() < plot.top() - 2) continue;
        QString text;
        if (slot.isGroup()) {
            // ▸ collapsed, ▾ expanded (a click on the label toggles), and the group's size.
            const RankGroup &g = v.groups->groups()[static_cast<size_t>(slot.group)];
            text = QStringLiteral("%1 %2 ×%3")
                       .arg(v.groups->expanded(slot.group) ? QStringLiteral("▾") : QStringLiteral("▸"), g.label)
                       .arg(g.rows.size());
        } else {
            text = (slot.group >= 0 ? QStringLiteral("  ") : QString()) + model.rowLabel(r);
        }
        p.drawText(
            lr, Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(text, Qt::ElideMiddle, static_cast<int>(lr.width())));
    }
    paintRuler(p, v);
    if (v.summaryHeight > 0) paintSummaryBand(p, model, v, palette.fill, palette.visible, st);
    if (v.legendHeight > 0) paintLegend(p, model, v, palette.visible, st);

    // Overlays: duration ruler and rubber band.
    if (v.measure) {
        const double a = v.xOf(v.measure->first), b = v.xOf(v.measure->second);
        p.fillRect(QRectF(std::min(a, b), plot.top(), std::fabs(b - a), plot.height()), QColor(0, 120, 255, 40));
        p.setPen(QPen(QColor(0, 90, 200), 1));
        p.drawLine(QPointF(a, plot.top()), QPointF(a, plot.bottom()));
        p.drawLine(QPointF(b, plot.top()), QPointF(b, plot.bottom()));
        const QString text = formatDuration(std::fabs(v.measure->second - v.measure->first), 4);
        const QRectF tr(std::min(a, b), plot.top() + 2, std::max(std::fabs(b - a), fm.horizontalAdvance(text) + 8.0),
            fm.height() + 2);
        p.fillRect(tr, QColor(255, 255, 255, 220));
        p.drawText(tr, Qt::AlignCenter, text);
    }
    if (!v.rubberBand.isEmpty()) {
        p.fillRect(v.rubberBand, QColor(255, 160, 0, 50));
        p.setPen(QPen(QColor(200, 120, 0), 1, Qt::DashLine));
        p.drawRect(v.rubberBand);
    }
}

long messageAt(const TraceModel &model, const ViewState &v, QPointF pos, double tol)
{
    const double t0 = v.timeAt(pos.x() - 200), t1 = v.timeAt(pos.x() + 200);
    auto [b, e] = model.candidateMessages(t0, t1);
    long best = -1;
    double bestD = tol;
    const auto &M = model.messages();
    for (size_t i = b; i < e && i < b + 200000; ++i) {
        const Message &m = M[i];
        const QPointF a(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline)));
        const QPointF c(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline)));
        const QPointF d = c - a;
        const double len2 = d.x() * d.x() + d.y() * d.y();
        const double t = len2 > 0 ? std::clamp(QPointF::dotProduct(pos - a, d) / len2, 0.0, 1.0) : 0;
        const QPointF q = a + d * t;
        const double dist = std::hypot(pos.x() - q.x(), pos.y() - q.y());
        if (dist < bestD) bestD = dist, best = static_cast<long>(i);
    }
    return best;
}

long eventAt(const TraceModel &model, const ViewState &v, int row, double x, double tol)
{
    if (row < 0 || row >= model.rowCount()) return -1;
    auto [b, e] = model.visibleEvents(row, v.timeAt(x - tol), v.timeAt(x + tol));
    return b < e ? static_cast<long>(b) : -1;
}

} // namespace upshot
