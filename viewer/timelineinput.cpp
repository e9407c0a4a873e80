// The timeline widget's input: the wheel and keys (zoom, pan, history), the mouse (pan, rubber
// band, duration ruler, selection, group labels) and the hover text.
#include "timelinewidget.h"

#include <QCursor>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>

#include "countertracks.h"
#include "lodfolder.h"

namespace upshot {

void TimelineWidget::wheelEvent(QWheelEvent *e)
{
    if (!m_model) return;
    const double steps = e->angleDelta().y() / 120.0;
    const QPointF pos = e->position();
    if (e->modifiers() & Qt::ControlModifier) {
        zoomVerticalAt(std::pow(1.2, steps), pos.y());
    } else if (e->modifiers() & Qt::ShiftModifier) {
        TimeScale s = m_view.scale;
        s.pan(-steps * m_view.plotRect().width() / 10);
        setScale(s, false);
    } else {
        const bool record = m_lastWheelPush.elapsed() > 600;
        zoomAt(std::pow(1.25, steps), pos.x(), record);
        m_lastWheelPush.restart();
    }
    e->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent *e)
{
    if (!m_model) return QAbstractScrollArea::keyPressEvent(e);
    const double cx = m_view.labelWidth + m_view.plotRect().width() / 2.0;
    TimeScale s = m_view.scale;
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        if (e->modifiers() & Qt::ControlModifier)
            zoomVerticalAt(1.25, m_view.plotRect().center().y());
        else
            zoomAt(2, cx);
        break;
    case Qt::Key_Minus:
        if (e->modifiers() & Qt::ControlModifier)
            zoomVerticalAt(0.8, m_view.plotRect().center().y());
        else
            zoomAt(0.5, cx);
        break;
    case Qt::Key_Left:
        if (e->modifiers() & Qt::AltModifier) return back();
        s.pan(-s.width() / 8);
        setScale(s, false);
        break;
    case Qt::Key_Right:
        if (e->modifiers() & Qt::AltModifier) return forward();
        s.pan(s.width() / 8);
        setScale(s, false);
        break;
    case Qt::Key_Up:
        m_view.yOffset -= m_view.rowHeight;
        changed();
        break;
    case Qt::Key_Down:
        m_view.yOffset += m_view.rowHeight;
        changed();
        break;
    case Qt::Key_Home:
        fitAll();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter: {
        // Expands or collapses the group under the mouse.
        const int k = m_view.slotAt(mapFromGlobal(QCursor::pos()).y(), m_view.slotCount(*m_model));
        if (k >= 0 && m_view.groups) toggleGroup(m_view.groups->rowSlots()[static_cast<size_t>(k)].group);
        break;
    }
    case Qt::Key_Backspace:
        back();
        break;
    case Qt::Key_Escape:
        m_view.measure.reset();
        m_view.selected = {};
        m_view.selectedMessage = -1;
        m_view.selectedWait = {};
        viewport()->update();
        break;
    default:
        QAbstractScrollArea::keyPressEvent(e);
    }
}

void TimelineWidget::mousePressEvent(QMouseEvent *e)
{
    m_pressPos = m_lastPos = e->position();
    m_pressMods = e->modifiers();
    m_pressButton = e->button();
    m_drag = Drag::Pending;
    setFocus();
}

void TimelineWidget::mouseMoveEvent(QMouseEvent *e)
{
    const QPointF pos = e->position();
    if (m_drag == Drag::Pending && (pos - m_pressPos).manhattanLength() > 4) {
        if (m_pressButton == Qt::RightButton || (m_pressMods & Qt::ControlModifier))
            m_drag = Drag::Rubber;
        else if (m_pressMods & Qt::ShiftModifier)
            m_drag = Drag::Measure;
        else
            m_drag = Drag::Pan;
    }
    switch (m_drag) {
    case Drag::Pan: {
        TimeScale s = m_view.scale;
        s.pan(m_lastPos.x() - pos.x());
        m_view.yOffset += m_lastPos.y() - pos.y();
        clampY();
        setScale(s, false);
        break;
    }
    case Drag::Rubber:
        m_view.rubberBand = QRectF(m_pressPos, pos).normalized().toRect();
        viewport()->update();
        break;
    case Drag::Measure:
        m_view.measure = std::make_pair(m_view.timeAt(m_pressPos.x()), m_view.timeAt(pos.x()));
        viewport()->update();
        break;
    case Drag::None:
        if (m_model) {
            const QString text = describeAt(pos);
            emit hoverChanged(text);
            if (!text.isEmpty())
                QToolTip::showText(e->globalPosition().toPoint(), text, this);
            else
                QToolTip::hideText();
        }
        break;
    default:
        break;
    }
    m_lastPos = pos;
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent *e)
{
    const QPointF pos = e->position();
    const Drag drag = m_drag;
    m_drag = Drag::None;
    if (!m_model) return;
    if (drag == Drag::Rubber) {
        m_view.rubberBand = QRect();
        const double a = m_view.timeAt(std::min(m_pressPos.x(), pos.x()));
        const double b = m_view.timeAt(std::max(m_pressPos.x(), pos.x()));
        if (b > a)
            zoomToRange(a, b);
        else
            viewport()->update();
    } else if (drag == Drag::Measure) {
        emit detailsChanged(
            tr("duration ruler: %1").arg(formatDuration(std::fabs(m_view.measure->second - m_view.measure->first), 4)));
    } else if (drag == Drag::Pending && m_pressButton == Qt::LeftButton && pos.x() < m_view.labelWidth) {
        // A click on a group's label expands or collapses it.
        if (const int k = m_view.slotAt(pos.y(), m_view.slotCount(*m_model));
            k >= 0 && m_view.groups && m_view.groups->rowSlots()[static_cast<size_t>(k)].isGroup()) {
            toggleGroup(m_view.groups->rowSlots()[static_cast<size_t>(k)].group);
            return;
        }
        // A click on a rank label selects that row for search (Ctrl adds or removes it).
        const int row = m_view.rowAt(pos.y(), m_model->rowCount());
        auto &sel = m_view.selectedRows;
        const auto it = std::find(sel.begin(), sel.end(), row);
        if (!(m_pressMods & Qt::ControlModifier)) {
            const bool only = sel.size() == 1 && it != sel.end();
            sel.clear();
            if (row >= 0 && !only) sel.push_back(row);
        } else if (it != sel.end()) {
            sel.erase(it);
        } else if (row >= 0) {
            sel.push_back(row);
        }
        viewport()->update();
    } else if (drag == Drag::Pending && m_pressButton == Qt::LeftButton) {
        const int row = m_view.rowAt(pos.y(), m_model->rowCount());
        const QString text = describeAt(pos);
        if (row >= 0) {
            const int d = m_view.depthAt(row, pos.y(), m_model->laneCount(row));
            StateRef s = m_model->stateAt(row, m_view.timeAt(pos.x()), m_view.scale.nsPerPixel() * 2);
            if (d >= 0 && s.valid()) m_view.selected = s;
            m_view.selectedMessage = messageAt(*m_model, m_view, pos);
            if (m_view.selectedMessage >= 0) m_view.selected = {};
            // A state that waits: its instance is selected too, to show what made it wait.
            const WaitStates *W = m_model->waits();
            m_view.selectedWait = W && m_view.showWaits && m_view.selected.valid()
                ? W->atState(*m_model, m_view.selected.row, m_view.selected.index)
                : WaitRef {};
        }
        m_view.cursorTime = m_view.timeAt(pos.x());
        if (!text.isEmpty()) emit detailsChanged(text);
        if (m_clickZooms && pos.x() > m_view.labelWidth && pos.y() > m_view.rowsTop())
            zoomAt((m_pressMods & Qt::ShiftModifier) ? 0.5 : 2, pos.x());
        else
            viewport()->update();
    }
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent *e)
{
    if (!m_model) return;
    const QPointF pos = e->position();
    const int row = m_view.rowAt(pos.y(), m_model->rowCount());
    StateRef s = m_model->stateAt(row, m_view.timeAt(pos.x()), m_view.scale.nsPerPixel() * 2);
    if (!s.valid()) return;
    // Undo the zoom of the first click of the double click, then zoom to the state.
    if (m_clickZooms && !m_back.empty()) {
        m_view.scale = m_back.back();
        m_back.pop_back();
    }
    const double a = m_model->start(s.row, s.index), b = m_model->end(s.row, s.index);
    const double pad = std::max((b - a) * 0.05, 1.0);
    m_view.selected = s;
    zoomToRange(a - pad, b + pad);
    emit detailsChanged(m_model->describeState(s));
}

QString TimelineWidget::describeAt(QPointF pos) const
{
    if (!m_model) return {};
    if (m_view.groups) {
        const int k = m_view.slotAt(pos.y(), m_view.slotCount(*m_model));
        if (k >= 0 && m_view.groups->rowSlots()[static_cast<size_t>(k)].isGroup())
            return m_view.groups->describe(*m_model, m_view.groups->rowSlots()[static_cast<size_t>(k)].group)
                + (pos.x() < m_view.labelWidth ? tr("\nclick to expand or collapse (or Enter)") : QString());
    }
    if (pos.x() < m_view.labelWidth) return {};
    const int row = m_view.rowAt(pos.y(), m_model->rowCount());
    const long msg = messageAt(*m_model, m_view, pos, 3);
    if (msg >= 0) return m_model->describeMessage(static_cast<size_t>(msg));
    if (row < 0) return {};
    // The counter band: every visible track's value at the mouse's time.
    if (const CounterTracks *C = m_model->counters();
        C && pos.y() >= m_view.rowTop(row) + m_view.rowHeight - m_view.counterBand(row))
        return C->describe(row, m_view.timeAt(pos.x()));
    if (pos.y() < m_view.rowTop(row) + std::min(8.0, m_view.rowHeight / 3)) {
        const long ev = eventAt(*m_model, m_view, row, pos.x(), 4);
        if (ev >= 0) return m_model->describeEvent(row, static_cast<size_t>(ev));
    }
    const int d = m_view.depthAt(row, pos.y(), m_model->laneCount(row));
    if (d < 0) return {};
    // Find the LOD box under x in that lane, so a fold is described as a fold.
    TimeScale sc = m_view.scale;
    const double x = pos.x() - m_view.labelWidth;
    sc = TimeScale(sc.xToTime(x - 4), sc.nsPerPixel(), 8);
    std::vector<LodBox> boxes;
    LodFolder(*m_model, sc, 3).fold(row, d, boxes);
    for (int dd = d; dd >= 0 && boxes.empty(); --dd)
        LodFolder(*m_model, sc, 3).fold(row, dd, boxes);
    for (const LodBox &b : boxes) {
        if (b.x0 <= 4.5 && b.x1 >= 3.5) {
            if (b.folded) return m_model->describeFold(row, m_model->summarize(row, b.first, b.last));
            const QString text = m_model->describeState({ row, b.first });
            // A state that waits first says how long, and for whom (its site ends the state's text).
            if (const WaitStates *W = m_model->waits(); W && m_view.showWaits)
                if (const WaitRef w = W->atState(*m_model, row, b.first); w.valid())
                    return W->describe(*m_model, w, false) + QLatin1Char('\n') + text;
            return text;
        }
    }
    return {};
}

} // namespace upshot
