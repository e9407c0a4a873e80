// The frame around the plot: the row labels, the ruler, the summary band and the legend, and the
// marks drawn over the plot (search cursor, duration ruler, rubber band).
#include <algorithm>
#include <cmath>

#include "paintlayers.h"
#include "summary.h"

namespace upshot {

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

void paintRuler(QPainter &p, const ViewState &v)
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

// The summary band: per column, the rows in each visible category stacked from the bottom, MPI
// first, the application's states next and rows in no state (light grey) on top.
void paintSummaryBand(QPainter &p, const TraceModel &model, const ViewState &v, const Palette &palette, RenderStats &st)
{
    const std::vector<QRgb> &fill = palette.fill;
    const std::vector<char> &visible = palette.visible;
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

// The legend along the bottom: a swatch and the name of each visible state category that has
// time in the run, most time first, as many as fit.
void paintLegend(QPainter &p, const TraceModel &model, const ViewState &v, const Palette &palette, RenderStats &st)
{
    const std::vector<char> &visible = palette.visible;
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

// The search cursor: a dashed line across the plot (inside the plot's clip).
void paintCursor(QPainter &p, const ViewState &v, const FrameLayout &f)
{
    const QRect &plot = f.plot;
    if (v.cursorTime >= 0) {
        p.setPen(QPen(QColor(0, 120, 255), 1, Qt::DashLine));
        const double x = v.xOf(v.cursorTime);
        p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
}

// A label per visible slot (every few slots when rows are thinner than the font), the rows the
// search is scoped to shaded; a group's label says whether it is expanded and its size.
void paintRowLabels(QPainter &p, const TraceModel &model, const ViewState &v, const FrameLayout &f)
{
    const QRect &plot = f.plot;
    const int firstSlot = f.firstSlot, lastSlot = f.lastSlot;
    QFontMetrics fm(p.font());
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
}

// Overlays: duration ruler and rubber band.
void paintOverlays(QPainter &p, const ViewState &v, const FrameLayout &f)
{
    const QRect &plot = f.plot;
    QFontMetrics fm(p.font());
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

} // namespace upshot
