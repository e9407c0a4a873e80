// The marks on the rows drawn on their own: Pcontrol strips, event markers and the selected state.
#include <algorithm>
#include <cmath>

#include "lodfolder.h"
#include "paintlayers.h"

namespace upshot {

using mpe::format::RecordKind;

// Per row: the Pcontrol strips along its bottom, then its event markers, at most one per 3
// pixels: triangles when sparse, ticks when dense.
void paintRowMarks(
    DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st)
{
    const QRect &plot = f.plot;
    const Palette &palette = f.palette;
    const double t0 = v.scale.t0(), t1 = v.scale.t1();
    for (int r : f.shown) {
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
}

// The selected state, framed in amber, when its row is shown on its own.
void paintSelectedState(QPainter &p, const TraceModel &model, const ViewState &v, const FrameLayout &f)
{
    const std::vector<int> &shown = f.shown;
    if (v.selected.valid() && v.selected.row < model.rowCount()
        && std::find(shown.begin(), shown.end(), v.selected.row) != shown.end()) {
        auto [y0, y1] = v.boxY(v.selected.row, model.depth(v.selected.row, v.selected.index));
        const double a = v.xOf(model.start(v.selected.row, v.selected.index));
        const double b = v.xOf(model.end(v.selected.row, v.selected.index));
        p.setPen(QPen(QColor(255, 200, 0), 3));
        p.drawRect(QRectF(a - 1, y0 - 1, std::max(b - a, 1.0) + 2, y1 - y0 + 2));
    }
}

} // namespace upshot
