// The layers paintTimeline() paints, in order, and what one frame's layers share (the painter's
// own header; front ends call renderer.h). Each layer only paints: what it shows comes from
// TraceModel, LodFolder and the ViewState.
#pragma once

#include <QPainter>
#include <QRect>

#include <vector>

#include "directcanvas.h"
#include "renderer.h"

namespace upshot {

// Per-frame category lookups: QColor conversions cost more than the boxes they colour.
struct Palette
{
    std::vector<QRgb> fill, tick;
    std::vector<char> visible;
};

// What the layers of one frame share: the plot area, the slots in view, the rows drawn on their
// own and the run's pixel columns.
struct FrameLayout
{
    QRect plot;
    int firstSlot = 0, lastSlot = -1;
    std::vector<int> shown; // the model rows drawn on their own in the visible slots
    int bx0 = 0, bx1 = 0; // the run's time span in pixel columns, clamped to the plot
    Palette palette;
};

// Lays out one frame of the model.
FrameLayout frameLayout(const TraceModel &model, const ViewState &v);

// The lanes a row shows at the view's row height (the painter's rule for the boxes).
int shownLanes(const TraceModel &model, const ViewState &v, int row);

// Row backgrounds over the run's time span, white around them (paintstates.cpp).
void paintRowBackgrounds(DirectCanvas &canvas, const ViewState &v, const FrameLayout &f);
// The states of the rows shown on their own: thin rows from the per-row bins, the others lane by
// lane through the LodFolder (paintstates.cpp).
void paintStates(QPainter &p, DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f,
    RenderStats &st);
// The rows of collapsed groups (paintstates.cpp).
void paintGroupRows(
    DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st);
// The wait-state overlay over the rows shown (paintwaits.cpp).
void paintWaits(
    DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st);
// Pcontrol strips and event markers of the rows shown, then the selected state (paintmarks.cpp).
void paintRowMarks(
    DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st);
void paintSelectedState(QPainter &p, const TraceModel &model, const ViewState &v, const FrameLayout &f);
// Message arrows, one by one or bundled, then one-sided transfers (paintmessages.cpp).
void paintMessages(QPainter &p, DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f,
    RenderStats &st);
void paintRma(QPainter &p, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st);
// The selected message, the selected wait-state instance with its culprit (paintmessages.cpp).
void paintSelectedMessage(QPainter &p, const TraceModel &model, const ViewState &v);
void paintSelectedWait(QPainter &p, const TraceModel &model, const ViewState &v);
// Outside the plot's clip: row labels, the ruler, the summary band, the legend, and over
// everything the search cursor, the duration ruler and the rubber band (paintmargins.cpp).
void paintCursor(QPainter &p, const ViewState &v, const FrameLayout &f);
void paintRowLabels(QPainter &p, const TraceModel &model, const ViewState &v, const FrameLayout &f);
void paintRuler(QPainter &p, const ViewState &v);
void paintSummaryBand(
    QPainter &p, const TraceModel &model, const ViewState &v, const Palette &palette, RenderStats &st);
void paintLegend(QPainter &p, const TraceModel &model, const ViewState &v, const Palette &palette, RenderStats &st);
void paintOverlays(QPainter &p, const ViewState &v, const FrameLayout &f);

} // namespace upshot
