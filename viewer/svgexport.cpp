// A QPaintEngine that writes SVG: enough of one for paintTimeline() (fills, lines, polygons,
// text; clipping to the plot area is kept as one clip path per clip rectangle).
#include "svgexport.h"

#include <QFile>
#include <QPaintEngine>
#include <QPainter>
#include <QTextStream>

namespace upshot {

namespace {

QString colorAttr(const QColor &c)
{
    return c.name(QColor::HexRgb);
}

QString esc(QString s)
{
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    return s;
}

class SvgEngine : public QPaintEngine
{
public:
    explicit SvgEngine(QString *out) : QPaintEngine(QPaintEngine::AllFeatures), m_out(out) { }
    bool begin(QPaintDevice *) override { return true; }
    bool end() override
    {
        closeClip();
        return true;
    }
    Type type() const override { return QPaintEngine::User; }
    void updateState(const QPaintEngineState &s) override
    {
        if (s.state() & DirtyPen) m_pen = s.pen();
        if (s.state() & DirtyBrush) m_brush = s.brush();
        if (s.state() & DirtyFont) m_font = s.font();
        if (s.state() & (DirtyClipRegion | DirtyClipPath | DirtyClipEnabled)) {
            const QRect clip
                = s.isClipEnabled() && s.state() & DirtyClipRegion ? s.clipRegion().boundingRect() : QRect();
            if (clip != m_clip) {
                closeClip();
                m_clip = clip;
                if (!clip.isEmpty()) {
                    const int id = ++m_clipIds;
                    *m_out += QStringLiteral("<clipPath id=\"c%1\"><rect x=\"%2\" y=\"%3\" width=\"%4\" "
                                             "height=\"%5\"/></clipPath>\n<g clip-path=\"url(#c%1)\">\n")
                                  .arg(id)
                                  .arg(clip.x())
                                  .arg(clip.y())
                                  .arg(clip.width())
                                  .arg(clip.height());
                    m_open = true;
                }
            }
        }
    }
    void drawRects(const QRectF *rects, int n) override
    {
        const bool fill = m_brush.style() != Qt::NoBrush, stroke = m_pen.style() != Qt::NoPen;
        for (int i = 0; i < n; ++i) {
            const QRectF &r = rects[i];
            *m_out += QStringLiteral("<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" %5/>\n")
                          .arg(r.x())
                          .arg(r.y())
                          .arg(r.width())
                          .arg(r.height())
                          .arg(style(fill, stroke));
        }
    }
    void drawRects(const QRect *rects, int n) override
    {
        for (int i = 0; i < n; ++i) {
            const QRectF r(rects[i]);
            drawRects(&r, 1);
        }
    }
    void drawLines(const QLineF *lines, int n) override
    {
        for (int i = 0; i < n; ++i)
            *m_out += QStringLiteral("<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%4\" %5/>\n")
                          .arg(lines[i].x1())
                          .arg(lines[i].y1())
                          .arg(lines[i].x2())
                          .arg(lines[i].y2())
                          .arg(style(false, true));
    }
    void drawLines(const QLine *lines, int n) override
    {
        for (int i = 0; i < n; ++i) {
            const QLineF l(lines[i]);
            drawLines(&l, 1);
        }
    }
    void drawPolygon(const QPointF *pts, int n, PolygonDrawMode mode) override
    {
        QString p;
        for (int i = 0; i < n; ++i)
            p += QStringLiteral("%1,%2 ").arg(pts[i].x()).arg(pts[i].y());
        *m_out += QStringLiteral("<%1 points=\"%2\" %3/>\n")
                      .arg(mode == PolylineMode ? "polyline" : "polygon", p.trimmed(),
                          style(mode != PolylineMode && m_brush.style() != Qt::NoBrush, m_pen.style() != Qt::NoPen));
    }
    void drawPolygon(const QPoint *pts, int n, PolygonDrawMode mode) override
    {
        QList<QPointF> f;
        for (int i = 0; i < n; ++i)
            f.append(QPointF(pts[i]));
        drawPolygon(f.constData(), n, mode);
    }
    void drawTextItem(const QPointF &p, const QTextItem &item) override
    {
        *m_out
            += QStringLiteral("<text x=\"%1\" y=\"%2\" font-family=\"%3\" font-size=\"%4px\" fill=\"%5\">%6</text>\n")
                   .arg(p.x())
                   .arg(p.y())
                   .arg(esc(m_font.family()))
                   .arg(item.font().pixelSize() > 0 ? item.font().pixelSize() : item.font().pointSizeF() * 4 / 3)
                   .arg(colorAttr(m_pen.color()), esc(item.text()));
    }
    void drawPixmap(const QRectF &, const QPixmap &, const QRectF &) override { }

private:
    QString style(bool fill, bool stroke) const
    {
        QString s
            = fill ? QStringLiteral("fill=\"%1\"").arg(colorAttr(m_brush.color())) : QStringLiteral("fill=\"none\"");
        if (fill && m_brush.color().alpha() < 255)
            s += QStringLiteral(" fill-opacity=\"%1\"").arg(m_brush.color().alphaF());
        if (stroke) {
            s += QStringLiteral(" stroke=\"%1\" stroke-width=\"%2\"")
                     .arg(colorAttr(m_pen.color()))
                     .arg(std::max(1.0, m_pen.widthF()));
            if (m_pen.color().alpha() < 255) s += QStringLiteral(" stroke-opacity=\"%1\"").arg(m_pen.color().alphaF());
        }
        return s;
    }
    void closeClip()
    {
        if (m_open) *m_out += QStringLiteral("</g>\n");
        m_open = false;
    }

    QString *m_out;
    QPen m_pen;
    QBrush m_brush;
    QFont m_font;
    QRect m_clip;
    bool m_open = false;
    int m_clipIds = 0;
};

class SvgDevice : public QPaintDevice
{
public:
    SvgDevice(QSize size, QString *out) : m_size(size), m_engine(out) { }
    QPaintEngine *paintEngine() const override { return &m_engine; }

protected:
    int metric(PaintDeviceMetric m) const override
    {
        switch (m) {
        case PdmWidth:
            return m_size.width();
        case PdmHeight:
            return m_size.height();
        case PdmDpiX:
        case PdmDpiY:
        case PdmPhysicalDpiX:
        case PdmPhysicalDpiY:
            return 96;
        case PdmDepth:
            return 32;
        case PdmDevicePixelRatio:
            return 1;
        case PdmDevicePixelRatioScaled:
            return static_cast<int>(QPaintDevice::devicePixelRatioFScale());
        case PdmWidthMM:
            return m_size.width() * 254 / 960;
        case PdmHeightMM:
            return m_size.height() * 254 / 960;
        default:
            return 1;
        }
    }

private:
    QSize m_size;
    mutable SvgEngine m_engine;
};

} // namespace

QString svgBody(QSize size, const std::function<void(QPainter &)> &paint)
{
    QString body;
    SvgDevice device(size, &body);
    QPainter p(&device);
    paint(p);
    p.end();
    return body;
}

bool exportSvg(const TraceModel &model, const ViewState &view, const QString &path)
{
    QString body;
    SvgDevice device(view.size, &body);
    QPainter p(&device);
    paintTimeline(p, model, view);
    p.end();
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    QTextStream s(&f);
    s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << QStringLiteral("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%1\" height=\"%2\" viewBox=\"0 0 %1 %2\">\n")
             .arg(view.size.width())
             .arg(view.size.height())
      << body << "</svg>\n";
    return s.status() == QTextStream::Ok;
}

} // namespace upshot
