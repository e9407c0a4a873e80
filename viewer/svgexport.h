// SVG export of the timeline without Qt SVG: a minimal paint device that turns the painter's
// rectangles, lines, polygons and text into SVG elements.
#pragma once

#include <QString>

#include "renderer.h"

namespace upshot {

// Paints the view into an SVG file; returns false when the file cannot be written.
bool exportSvg(const TraceModel &model, const ViewState &view, const QString &path);

} // namespace upshot
