// Paints run B warped onto aligned time, the difference band and the whole compare picture.
#include "comparepaint.h"

#include <QFile>
#include <QTextStream>

#include <algorithm>
#include <cmath>

#include "svgexport.h"

namespace upshot {

namespace {

// The linear pieces of the aligned window, merged until each is at least minPx wide, in canvas x.
struct ScreenPiece
{
    double x0, x1; // canvas columns
    double b0, b1; // B's times at them
};

std::vector<ScreenPiece> screenPieces(const ViewState &v, const AlignedTime &map, double minPx)
{
    std::vector<ScreenPiece> out;
    for (const AlignedTime::Piece &pc : map.pieces(v.scale.t0(), v.scale.t1())) {
        const ScreenPiece s { v.xOf(pc.a0), v.xOf(pc.a1), pc.b0, pc.b1 };
        if (!out.empty() && out.back().x1 - out.back().x0 < minPx) {
            out.back().x1 = s.x1;
            out.back().b1 = s.b1;
        } else {
            out.push_back(s);
        }
    }
    // A narrow last piece joins the one before it.
    if (out.size() > 1 && out.back().x1 - out.back().x0 < minPx) {
        out[out.size() - 2].x1 = out.back().x1;
        out[out.size() - 2].b1 = out.back().b1;
        out.pop_back();
    }
    return out;
}

void addStats(RenderStats *to, const RenderStats &s)
{
    if (!to) return;
    to->boxes += s.boxes;
    to->folds += s.folds;
    to->arrows += s.arrows;
    to->events += s.events;
    to->waitRuns += s.waitRuns;
}

} // namespace

void paintWarped(QPainter &p, const TraceModel &b, const ViewState &aligned, const AlignedTime &map, double minPiecePx,
    RenderStats *stats)
{
    const std::vector<ScreenPiece> pieces = screenPieces(aligned, map, minPiecePx);
    const int height = aligned.size.height();
    for (size_t i = 0; i < pieces.size(); ++i) {
        const ScreenPiece &s = pieces[i];
        // Whole columns: piece i owns [x0, x1); the first one also paints the labels left of it.
        const int x0 = static_cast<int>(std::lround(s.x0)), x1 = static_cast<int>(std::lround(s.x1));
        if (x1 <= x0) continue;
        ViewState v = aligned;
        v.labelWidth = x0;
        v.size.setWidth(x1);
        v.scale = TimeScale(s.b0, (s.b1 - s.b0) / (x1 - x0), x1 - x0);
        v.legendHeight = 0;
        v.rulerNote.clear(); // A's caption says where the window starts; once per piece would repeat it
        p.save();
        p.setClipRect(QRect(i == 0 ? 0 : x0, 0, x1 - (i == 0 ? 0 : x0), height));
        RenderStats st;
        paintTimeline(p, b, v, &st);
        p.restore();
        addStats(stats, st);
    }
    // The cut between pieces: a faint tick under the ruler at each iteration boundary.
    p.save();
    p.setPen(QPen(QColor(120, 120, 120, 110), 1, Qt::DotLine));
    for (double k : map.knotsA()) {
        const double x = aligned.xOf(k);
        if (x > aligned.labelWidth && x < aligned.size.width())
            p.drawLine(QPointF(x, 0), QPointF(x, aligned.rulerHeight));
    }
    p.restore();
}

double warpedTimeAt(const ViewState &aligned, const AlignedTime &map, double x)
{
    return map.toB(aligned.timeAt(x));
}

double bandSaturation(const DiffBand &band)
{
    return std::clamp(band.maxRelative(), 0.10, 1.0);
}

int bandHeight(int ranks)
{
    return std::clamp(ranks * 6, 24, 120);
}

void paintBand(QPainter &p, const QRect &area, const DiffBand &band, const ViewState &aligned, double saturation)
{
    p.save();
    p.fillRect(area, QColor(246, 246, 249));
    const QRect labels(area.left(), area.top(), aligned.labelWidth, area.height());
    p.fillRect(labels, QColor(226, 226, 232));
    p.setPen(QColor(40, 40, 40));
    p.drawText(labels.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft,
        band.ranks > 0 ? QStringLiteral("B vs A\n%1 ranks").arg(band.ranks) : QStringLiteral("B vs A"));
    const QRect plot(area.left() + aligned.labelWidth, area.top(), area.width() - aligned.labelWidth, area.height());
    if (band.ranks > 0 && band.iterations > 0 && plot.height() > 0) {
        p.setClipRect(plot);
        const int H = plot.height();
        // Rank r covers pixel rows [r * H / ranks, (r + 1) * H / ranks); with more ranks than rows,
        // each pixel row shows its ranks' largest change.
        for (int y = 0; y < H;) {
            const int r0 = static_cast<int>(static_cast<int64_t>(y) * band.ranks / H);
            const int r1 = std::max(r0 + 1, static_cast<int>(static_cast<int64_t>(y + 1) * band.ranks / H));
            int y1 = y + 1;
            while (y1 < H && static_cast<int>(static_cast<int64_t>(y1) * band.ranks / H) == r0 && r1 == r0 + 1)
                ++y1;
            for (int k = 0; k < band.iterations; ++k) {
                const DiffBand::Cell *worst = &band.cell(r0, k);
                for (int r = r0 + 1; r < r1 && r < band.ranks; ++r)
                    if (std::fabs(band.cell(r, k).relative()) > std::fabs(worst->relative())) worst = &band.cell(r, k);
                const double xa = aligned.xOf(worst->a0), xb = aligned.xOf(worst->a1);
                if (xb < plot.left() || xa > plot.right()) continue;
                const int ix0 = static_cast<int>(std::floor(std::max(xa, plot.left() - 1.0)));
                const int ix1 = static_cast<int>(std::ceil(std::min(xb, plot.right() + 1.0)));
                p.fillRect(QRect(ix0, plot.top() + y, std::max(1, ix1 - ix0), y1 - y),
                    bandColor(worst->relative(), saturation));
            }
            y = y1;
        }
    }
    p.restore();
}

void paintBandLegend(QPainter &p, const QRect &area, double saturation, const QString &note)
{
    p.save();
    p.fillRect(area, QColor(236, 236, 240));
    QFontMetrics fm(p.font());
    int x = area.left() + 6;
    const int sw = 14, y = area.top() + (area.height() - sw) / 2;
    auto swatch = [&](const QColor &c, const QString &text) {
        p.fillRect(QRect(x, y, sw, sw), c);
        p.setPen(QColor(40, 40, 40));
        p.drawRect(QRect(x, y, sw, sw));
        x += sw + 4;
        p.drawText(QRect(x, area.top(), fm.horizontalAdvance(text) + 2, area.height()), Qt::AlignVCenter, text);
        x += fm.horizontalAdvance(text) + 14;
    };
    swatch(slowerColor(), QStringLiteral("B slower than A"));
    swatch(fasterColor(), QStringLiteral("B faster than A"));
    const QString scale
        = QStringLiteral("per rank and iteration; full colour at ±%1%").arg(std::lround(saturation * 100));
    p.drawText(QRect(x, area.top(), area.right() - x, area.height()), Qt::AlignVCenter, scale);
    x += fm.horizontalAdvance(scale) + 14;
    if (!note.isEmpty() && x < area.right()) {
        p.setPen(QColor(90, 60, 0));
        p.drawText(QRect(x, area.top(), area.right() - x, area.height()), Qt::AlignVCenter | Qt::AlignLeft, note);
    }
    p.restore();
}

std::vector<ComparePart> compareParts(const CompareScene &scene, QSize size, RenderStats *statsA, RenderStats *statsB)
{
    const int W = size.width(), bandH = bandHeight(scene.band.ranks), legendH = 22;
    const int timelineH = std::max(40, (size.height() - 2 * kCompareCaption - bandH - legendH) / 2);
    OpeningOptions opening;
    opening.legend = false;
    const ViewState viewA = openingView(*scene.a, QSize(W, timelineH), opening);
    ViewState viewB = openingView(*scene.b, QSize(W, timelineH), opening);
    viewB.scale = viewA.scale; // aligned time: A's
    viewB.labelWidth = viewA.labelWidth;
    const double saturation = bandSaturation(scene.band);
    std::vector<ComparePart> parts;
    int y = 0;
    auto caption = [&](const QString &text) {
        parts.push_back({ QRect(0, y, W, kCompareCaption), [text, W](QPainter &p) {
                             p.fillRect(QRect(0, 0, W, kCompareCaption), QColor(210, 214, 226));
                             p.setPen(Qt::black);
                             p.drawText(QRect(6, 0, W - 12, kCompareCaption), Qt::AlignVCenter | Qt::AlignLeft, text);
                         } });
        y += kCompareCaption;
    };
    caption(QStringLiteral("A: %1").arg(scene.nameA));
    parts.push_back({ QRect(0, y, W, timelineH),
        [&scene, viewA, statsA](QPainter &p) { paintTimeline(p, *scene.a, viewA, statsA); } });
    y += timelineH;
    parts.push_back({ QRect(0, y, W, bandH), [&scene, viewA, saturation, W, bandH](QPainter &p) {
                         paintBand(p, QRect(0, 0, W, bandH), scene.band, viewA, saturation);
                     } });
    y += bandH;
    parts.push_back({ QRect(0, y, W, legendH), [&scene, saturation, W, legendH](QPainter &p) {
                         paintBandLegend(p, QRect(0, 0, W, legendH), saturation, scene.note);
                     } });
    y += legendH;
    caption(QStringLiteral("B: %1 (iteration k drawn under iteration k of A)").arg(scene.nameB));
    parts.push_back({ QRect(0, y, W, timelineH),
        [&scene, viewB, statsB](QPainter &p) { paintWarped(p, *scene.b, viewB, scene.map, 6, statsB); } });
    return parts;
}

QImage renderCompare(const CompareScene &scene, QSize size, RenderStats *statsA, RenderStats *statsB)
{
    const std::vector<ComparePart> parts = compareParts(scene, size, statsA, statsB);
    int height = 0;
    for (const ComparePart &part : parts)
        height = std::max(height, part.rect.bottom() + 1);
    QImage out(QSize(size.width(), std::max(height, size.height())), QImage::Format_RGB32);
    out.fill(Qt::white);
    QPainter p(&out);
    for (const ComparePart &part : parts) {
        // Each part in its own image: paintTimeline() writes an untransformed image directly.
        QImage img(part.rect.size(), QImage::Format_RGB32);
        img.fill(Qt::white);
        {
            QPainter q(&img);
            part.paint(q);
        }
        p.drawImage(part.rect.topLeft(), img);
    }
    return out;
}

bool exportCompareSvg(const CompareScene &scene, QSize size, const QString &path)
{
    const std::vector<ComparePart> parts = compareParts(scene, size);
    QString body;
    int height = size.height();
    for (size_t i = 0; i < parts.size(); ++i) {
        const ComparePart &part = parts[i];
        height = std::max(height, part.rect.bottom() + 1);
        // Each part's clip paths get their own ids in the shared file.
        QString b = svgBody(part.rect.size(), part.paint);
        const QString prefix = QStringLiteral("p%1").arg(i);
        b.replace(QLatin1String("id=\"c"), QStringLiteral("id=\"%1c").arg(prefix));
        b.replace(QLatin1String("url(#c"), QStringLiteral("url(#%1c").arg(prefix));
        body += QStringLiteral("<g transform=\"translate(%1,%2)\">\n").arg(part.rect.x()).arg(part.rect.y()) + b
            + QStringLiteral("</g>\n");
    }
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    QTextStream s(&f);
    s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << QStringLiteral("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%1\" height=\"%2\" viewBox=\"0 0 %1 %2\">\n")
             .arg(size.width())
             .arg(height)
      << body << "</svg>\n";
    return s.status() == QTextStream::Ok;
}

} // namespace upshot
