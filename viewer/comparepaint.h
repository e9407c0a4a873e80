// Paints the compare view's parts for the widgets and for headless export: run B's timeline warped
// onto the aligned time axis (run A's), the difference band, and the whole picture (A over the
// band over B) as a PNG or SVG; only paints, through paintTimeline() (renderer.h).
#pragma once

#include <QImage>
#include <QPainter>
#include <QString>

#include <functional>
#include <memory>
#include <vector>

#include "comparemap.h"
#include "renderer.h"
#include "tracemodel.h"

namespace upshot {

// Paints model B for a view whose scale is in aligned time (A's): each linear piece of map over
// the visible window is painted by paintTimeline() with its own scale, clipped to its columns, so
// that iteration k of B lands under iteration k of A. Pieces narrower than minPiecePx are merged
// (linear over the merged span) to bound the cost at coarse zoom.
void paintWarped(QPainter &p, const TraceModel &b, const ViewState &aligned, const AlignedTime &map,
    double minPiecePx = 6, RenderStats *stats = nullptr);

// B's time under canvas x of an aligned view (inverse of what paintWarped() draws there).
double warpedTimeAt(const ViewState &aligned, const AlignedTime &map, double x);

// The difference band over an area: one strip per rank (or, with more ranks than pixel rows, per
// pixel row the rank of largest change), each iteration's cell drawn over its span in A's time
// with bandColor(). The label column says "B vs A"; labelWidth and scale come from aligned.
void paintBand(QPainter &p, const QRect &area, const DiffBand &band, const ViewState &aligned, double saturation);
// The saturation the band uses: its largest change, between 10% and 100%.
double bandSaturation(const DiffBand &band);
// One line: the two colours and what they mean, the saturation, and note (the alignment).
void paintBandLegend(QPainter &p, const QRect &area, double saturation, const QString &note);

// Everything one compare picture shows.
struct CompareScene
{
    std::shared_ptr<TraceModel> a, b;
    QString nameA, nameB;
    AlignedTime map;
    DiffBand band;
    QString note; // how the runs were aligned (alignIterations())
};

// A picture of the scene: A's opening window (its rows fitted) over the band over B warped.
// Parts: each painted into its own rectangle in local coordinates.
struct ComparePart
{
    QRect rect;
    std::function<void(QPainter &)> paint;
};
std::vector<ComparePart> compareParts(
    const CompareScene &scene, QSize size, RenderStats *statsA = nullptr, RenderStats *statsB = nullptr);
// The parts rendered into one image.
QImage renderCompare(
    const CompareScene &scene, QSize size, RenderStats *statsA = nullptr, RenderStats *statsB = nullptr);
// The parts written as an SVG drawing; false when the file cannot be written.
bool exportCompareSvg(const CompareScene &scene, QSize size, const QString &path);

// Heights in compareParts(): the caption over each timeline and the band (per rank, bounded).
constexpr int kCompareCaption = 18;
int bandHeight(int ranks);

} // namespace upshot
