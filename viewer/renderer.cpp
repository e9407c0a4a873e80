// Paints the timeline: one function per layer (paintlayers.h), painted in order here, under the
// plot's clip first (backgrounds, states, group rows, waits, counters, marks, arrows, cursor),
// then the frame around it (labels, ruler, summary band, legend) and the overlays.
#include "renderer.h"

#include "countertracks.h"
#include "paintlayers.h"

namespace upshot {

QColor arrowColor()
{
    return QColor(10, 10, 10);
}

QColor rmaArrowColor()
{
    return QColor(230, 110, 0);
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

void paintTimeline(QPainter &p, const TraceModel &model, const ViewState &v, RenderStats *stats)
{
    RenderStats local;
    RenderStats &st = stats ? *stats : local;
    const FrameLayout f = frameLayout(model, v);

    p.save();
    p.setClipRect(f.plot);
    // Opaque fills go straight into the image when the painter allows it: ~1 ns per pixel.
    DirectCanvas canvas(p, f.plot.intersected(QRect(QPoint(0, 0), v.size)));
    paintRowBackgrounds(canvas, v, f);
    paintStates(p, canvas, model, v, f, st);
    if (v.groups) paintGroupRows(canvas, model, v, f, st);
    if (v.showWaits && model.waits()) paintWaits(canvas, model, v, f, st);
    st.counterTracks = paintCounterBands(p, model, v, f.shown);
    paintRowMarks(canvas, model, v, f, st);
    paintSelectedState(p, model, v, f);
    paintMessages(p, canvas, model, v, f, st);
    if (v.showRma) paintRma(p, model, v, f, st);
    paintSelectedMessage(p, model, v);
    paintSelectedWait(p, model, v);
    paintCursor(p, v, f);
    p.restore();

    paintRowLabels(p, model, v, f);
    paintRuler(p, v);
    if (v.summaryHeight > 0) paintSummaryBand(p, model, v, f.palette, st);
    if (v.legendHeight > 0) paintLegend(p, model, v, f.palette, st);
    paintOverlays(p, v, f);
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
