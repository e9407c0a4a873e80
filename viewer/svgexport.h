// SVG export of the timeline without Qt SVG: a minimal paint device that turns the painter's
// rectangles, lines, polygons and text into SVG elements.
#pragma once

#include <QPainter>
#include <QString>

#include <functional>

#include "renderer.h"

namespace upshot {

// Paints the view into an SVG file; returns false when the file cannot be written.
bool exportSvg(const TraceModel &model, const ViewState &view, const QString &path);

// The SVG elements (no <svg> wrapper) that paint draws on a canvas of the given size; the compare
// view (comparepaint.h) puts several into one file.
QString svgBody(QSize size, const std::function<void(QPainter &)> &paint);

} // namespace upshot
