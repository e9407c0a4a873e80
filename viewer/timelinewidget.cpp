// The timeline widget's model, view state and navigation (zoom, pan, history, scroll bars);
// painting is delegated to paintTimeline(), input and hover text are in timelineinput.cpp.
#include "timelinewidget.h"

#include "countertracks.h"

#include <QPainter>
#include <QScrollBar>

#include <cmath>

namespace upshot {

static constexpr int kHScrollSteps = 100000;

TimelineWidget::TimelineWidget(QWidget *parent) : QAbstractScrollArea(parent)
{
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    horizontalScrollBar()->setRange(0, 0);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, &TimelineWidget::onHScroll);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &TimelineWidget::onVScroll);
    m_lastWheelPush.start();
}

void TimelineWidget::setModel(std::shared_ptr<TraceModel> model, bool keepView)
{
    m_model = std::move(model);
    m_view.selectedWait = {};
    m_view.waitPattern = -1;
    if (m_model) setCounterRows(m_view, *m_model);
    if (keepView && m_model) {
        // Indices into the old model mean nothing in the new one.
        m_view.selected = {};
        m_view.selectedMessage = -1;
        m_view.highlight = {};
        // Groups hold the preview's counts: made again from the full model, over the same window.
        if (m_view.groups) {
            OpeningOptions o = m_opening;
            o.range = std::make_pair(m_view.scale.t0(), m_view.scale.t1());
            o.summary = m_view.summaryHeight > 0;
            m_view.groups = openingView(*m_model, m_view.size, o).groups;
        }
        changed();
        return;
    }
    m_back.clear();
    m_forward.clear();
    m_view.selected = {};
    m_view.selectedMessage = -1;
    m_view.highlight = {};
    m_view.measure.reset();
    m_view.cursorTime = -1;
    m_view.selectedRows.clear();
    m_view.yOffset = 0;
    m_view.size = viewport()->size();
    m_view.groups.reset();
    if (m_model) {
        // The first picture: the run's work, rows filling the window (grouped when thinner than 3 px).
        QString message;
        m_opening.legend = false; // the Legend dock names the colours
        const ViewState opening = openingView(*m_model, m_view.size, m_opening, &message);
        m_view.scale = opening.scale;
        m_view.groups = opening.groups;
        m_view.summaryHeight = opening.summaryHeight;
        m_view.drawMode = opening.drawMode;
        m_view.rulerNote = opening.rulerNote;
        m_view.rowHeight = std::max(opening.rowHeight, m_view.groups ? 3.0 : 8.0);
        if (!message.isEmpty()) emit groupingMessage(message);
    }
    changed();
    emit historyChanged();
}

QString TimelineWidget::setGrouping(const GroupSpec &spec)
{
    m_opening.group = spec;
    if (!m_model) return {};
    QString message;
    OpeningOptions o = m_opening;
    o.range = std::make_pair(m_view.scale.t0(), m_view.scale.t1());
    o.summary = m_view.summaryHeight > 0 || spec.by != GroupBy::None;
    const ViewState v = openingView(*m_model, m_view.size, o, &message);
    m_view.groups = v.groups;
    m_view.summaryHeight = v.summaryHeight;
    refitRows();
    if (!message.isEmpty()) emit groupingMessage(message);
    return message;
}

void TimelineWidget::refitRows()
{
    if (!m_model) return;
    const double avail = m_view.plotRect().height();
    m_view.rowHeight = std::clamp(avail / std::max(1, m_view.slotCount(*m_model)), m_view.groups ? 3.0 : 8.0, 40.0);
    m_view.yOffset = 0;
    changed();
}

void TimelineWidget::toggleGroup(int group)
{
    if (!m_view.groups) return;
    m_view.groups->toggle(group);
    changed();
}

void TimelineWidget::setDrawMode(DrawMode mode)
{
    m_opening.drawMode = mode;
    m_view.drawMode = mode;
    viewport()->update();
}

void TimelineWidget::setSummaryBand(bool on)
{
    m_opening.summary = on;
    m_view.summaryHeight = on ? ViewState::kSummaryBand : 0;
    changed();
}

void TimelineWidget::setIntraGroupMessages(bool on)
{
    m_view.intraGroupMessages = on;
    viewport()->update();
}

void TimelineWidget::showMessage(size_t m)
{
    if (!m_model || m >= m_model->messages().size()) return;
    const Message &msg = m_model->messages()[m];
    const double a = static_cast<double>(msg.send_time), b = static_cast<double>(msg.recv_time);
    TimeScale sc = m_view.scale;
    if (b - a > sc.visibleSpan() * 0.8 || a < sc.t0() || b > sc.t1())
        sc = TimeScale((a + b) / 2 - sc.visibleSpan() / 2, sc.nsPerPixel(), sc.width());
    m_view.selected = {};
    m_view.selectedMessage = static_cast<long>(m);
    m_view.cursorTime = a;
    setScale(sc, true);
    emit detailsChanged(m_model->describeMessage(m));
}

void TimelineWidget::pushHistory()
{
    m_back.push_back(m_view.scale);
    if (m_back.size() > 200) m_back.erase(m_back.begin());
    m_forward.clear();
    emit historyChanged();
}

void TimelineWidget::setScale(const TimeScale &scale, bool record)
{
    if (record && !(scale == m_view.scale)) pushHistory();
    if (!(scale == m_view.scale)) m_view.rulerNote.clear(); // it explained the opening view only
    m_view.scale = scale;
    m_view.scale.setWidth(m_view.plotRect().width());
    changed();
}

void TimelineWidget::zoomToRange(double t0, double t1, bool record)
{
    if (t1 < t0) std::swap(t0, t1);
    setScale(TimeScale::fit(t0, t1, m_view.plotRect().width()), record);
}

void TimelineWidget::zoomAt(double factor, double viewportX, bool record)
{
    TimeScale s = m_view.scale;
    s.zoom(factor, viewportX - m_view.labelWidth);
    setScale(s, record);
}

void TimelineWidget::zoomVerticalAt(double factor, double viewportY)
{
    const double rowPos = (viewportY - m_view.rowsTop() + m_view.yOffset) / m_view.rowHeight;
    m_view.rowHeight = std::clamp(m_view.rowHeight * factor, 1.0, 400.0);
    m_view.yOffset = rowPos * m_view.rowHeight - (viewportY - m_view.rowsTop());
    clampY();
    changed();
}

void TimelineWidget::fitAll()
{
    if (!m_model) return;
    zoomToRange(m_model->tBegin(), m_model->tEnd());
}

void TimelineWidget::back()
{
    if (m_back.empty()) return;
    m_forward.push_back(m_view.scale);
    m_view.scale = m_back.back();
    m_back.pop_back();
    m_view.scale.setWidth(m_view.plotRect().width());
    changed();
    emit historyChanged();
}

void TimelineWidget::forward()
{
    if (m_forward.empty()) return;
    m_back.push_back(m_view.scale);
    m_view.scale = m_forward.back();
    m_forward.pop_back();
    m_view.scale.setWidth(m_view.plotRect().width());
    changed();
    emit historyChanged();
}

void TimelineWidget::setHighlight(const Highlight &h)
{
    m_view.highlight = h;
    viewport()->update();
}

void TimelineWidget::setCursorTime(double t)
{
    m_view.cursorTime = t;
    viewport()->update();
}

void TimelineWidget::setSelectedRows(std::vector<int> rows)
{
    m_view.selectedRows = std::move(rows);
    viewport()->update();
}

void TimelineWidget::setShowWaits(bool on)
{
    m_view.showWaits = on;
    viewport()->update();
}

void TimelineWidget::countersChanged()
{
    if (m_model) setCounterRows(m_view, *m_model);
    viewport()->update();
}

void TimelineWidget::setShowRma(bool on)
{
    m_view.showRma = on;
    viewport()->update();
}

void TimelineWidget::setWaitPattern(int pattern)
{
    m_view.waitPattern = pattern;
    viewport()->update();
}

void TimelineWidget::showWait(WaitRef w)
{
    const WaitStates *W = m_model ? m_model->waits() : nullptr;
    if (!W || !w.valid() || w.row >= W->rowCount() || w.index >= W->spans(w.row).size()) return;
    const WaitSpan &s = W->span(w);
    if (s.state != WaitSpan::kNone) {
        showState({ w.row, s.state });
    } else {
        TimeScale sc = m_view.scale;
        setScale(TimeScale((s.start + s.end) / 2.0 - sc.visibleSpan() / 2, sc.nsPerPixel(), sc.width()), true);
    }
    m_view.selectedWait = w;
    m_view.cursorTime = static_cast<double>(s.start);
    viewport()->update();
    emit detailsChanged(W->describe(*m_model, w));
}

void TimelineWidget::showState(StateRef s)
{
    if (!m_model || !s.valid()) return;
    m_view.selected = s;
    m_view.selectedMessage = -1;
    m_view.selectedWait = {};
    const double a = m_model->start(s.row, s.index), b = m_model->end(s.row, s.index);
    TimeScale sc = m_view.scale;
    const double span = sc.visibleSpan();
    if (b - a > span * 0.8)
        sc = TimeScale::fit(a - (b - a) * 0.1, b + (b - a) * 0.1, sc.width());
    else
        sc = TimeScale(a + (b - a) / 2 - span / 2, sc.nsPerPixel(), sc.width());
    // A row inside a collapsed group: the group opens to show it.
    if (m_view.groups && !m_view.groups->rowShown(s.row))
        m_view.groups->setExpanded(m_view.groups->groupOfRow(s.row), true);
    const double top = m_view.slotOfRow(s.row) * m_view.rowHeight, plotH = m_view.plotRect().height();
    if (top < m_view.yOffset || top + m_view.rowHeight > m_view.yOffset + plotH) m_view.yOffset = top - plotH / 2;
    clampY();
    m_view.cursorTime = a;
    setScale(sc, true);
    emit detailsChanged(m_model->describeState(s));
}

void TimelineWidget::clampY()
{
    const double total = m_model ? m_view.slotCount(*m_model) * m_view.rowHeight : 0;
    m_view.yOffset = std::clamp(m_view.yOffset, 0.0, std::max(0.0, total - m_view.plotRect().height()));
}

void TimelineWidget::changed()
{
    m_view.size = viewport()->size();
    m_view.scale.setWidth(std::max(1, m_view.plotRect().width()));
    clampY();
    syncScrollBars();
    viewport()->update();
    emit viewChanged(m_view.scale.t0(), m_view.scale.t1());
}

void TimelineWidget::syncScrollBars()
{
    m_syncing = true;
    QScrollBar *h = horizontalScrollBar(), *v = verticalScrollBar();
    if (m_model) {
        const double lo = std::min(m_model->tBegin(), m_view.scale.t0());
        const double hi = std::max(m_model->tEnd(), m_view.scale.t1());
        const double span = hi - lo;
        const int page = std::max(1, static_cast<int>(kHScrollSteps * m_view.scale.visibleSpan() / span));
        h->setRange(0, std::max(0, kHScrollSteps - page));
        h->setPageStep(page);
        h->setSingleStep(std::max(1, page / 10));
        h->setValue(static_cast<int>(std::lround((m_view.scale.t0() - lo) / span * kHScrollSteps)));
        const int total = static_cast<int>(m_view.slotCount(*m_model) * m_view.rowHeight);
        const int plotH = m_view.plotRect().height();
        v->setRange(0, std::max(0, total - plotH));
        v->setPageStep(std::max(1, plotH));
        v->setSingleStep(std::max(1, static_cast<int>(m_view.rowHeight)));
        v->setValue(static_cast<int>(m_view.yOffset));
    } else {
        h->setRange(0, 0);
        v->setRange(0, 0);
    }
    m_syncing = false;
}

void TimelineWidget::onHScroll(int value)
{
    if (m_syncing || !m_model) return;
    const double lo = std::min(m_model->tBegin(), m_view.scale.t0());
    const double hi = std::max(m_model->tEnd(), m_view.scale.t1());
    TimeScale s = m_view.scale;
    s = TimeScale(lo + (hi - lo) * value / kHScrollSteps, s.nsPerPixel(), s.width());
    m_view.scale = s;
    viewport()->update();
    emit viewChanged(s.t0(), s.t1());
}

void TimelineWidget::onVScroll(int value)
{
    if (m_syncing) return;
    m_view.yOffset = value;
    viewport()->update();
}

void TimelineWidget::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    m_view.size = viewport()->size();
    if (!m_model) {
        p.fillRect(rect(), palette().window());
        p.drawText(viewport()->rect(), Qt::AlignCenter, tr("Open a logfile (File ▸ Open, or drop it here)"));
        return;
    }
    const qreal dpr = devicePixelRatioF();
    const QSize pixels = (QSizeF(viewport()->size()) * dpr).toSize();
    if (m_frame.size() != pixels) {
        m_frame = QImage(pixels, QImage::Format_RGB32);
        m_frame.setDevicePixelRatio(dpr);
    }
    QPainter ip(&m_frame);
    paintTimeline(ip, *m_model, m_view);
    ip.end();
    p.drawImage(0, 0, m_frame);
}

void TimelineWidget::resizeEvent(QResizeEvent *e)
{
    QAbstractScrollArea::resizeEvent(e);
    changed();
}

} // namespace upshot
