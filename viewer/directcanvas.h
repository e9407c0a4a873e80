// DirectCanvas: opaque fills, hatches, frames, triangles and lines written straight into the
// frame's image when the painter allows it, through the painter otherwise; ColumnRuns: runs of
// one colour along a band of pixel rows. Shared by the painter's layers (paintlayers.h).
#pragma once

#include <QImage>
#include <QPainter>
#include <QRect>

#include <algorithm>
#include <cmath>

namespace upshot {

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

} // namespace upshot
