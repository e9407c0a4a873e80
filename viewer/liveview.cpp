// upshot's live mode: painters and widgets.
#include "liveview.h"

#include <QApplication>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cmath>
#include <unordered_set>

namespace upshot {

namespace {

// The ruler's step in seconds: the smallest that leaves room for a label.
double rulerStepSeconds(double nsPerPixel)
{
    for (double s : { 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0 })
        if (s * 1e9 / nsPerPixel >= 60) return s;
    return 300;
}

QString relativeSeconds(double s)
{
    return std::fabs(s) < 0.05 ? QStringLiteral("now") : QStringLiteral("%1 s").arg(s, 0, 'f', 0);
}

} // namespace

void paintLiveTimeline(QPainter &p, const mpe::live_stream::JobView &job, const LiveTimeWindow &window, QSize size,
    LiveTimelineStats *stats)
{
    LiveTimelineStats local;
    LiveTimelineStats &st = stats ? *stats : local;
    p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    const LiveTimelineLayout L { size, liveRankCount(job) };
    const QRect plot = L.plotRect();
    if (L.ranks == 0 || plot.width() < 2 || plot.height() < 2) {
        p.setPen(Qt::darkGray);
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, QStringLiteral("Waiting for the first frame…"));
        return;
    }
    const double now = static_cast<double>(job.now_ns());
    const TimeScale scale = window.scale(now, plot.width());
    const double t0 = scale.t0(), t1 = scale.t1();
    auto xOf = [&](double t) { return plot.left() + scale.timeToX(t); };

    p.save();
    p.setClipRect(plot);
    const double rh = L.rowHeight();
    const double gap = rh >= 6 ? 1 : 0;
    for (const mpe::live_stream::LiveState &s : job.states()) {
        if (s.rank < 0 || s.rank >= L.ranks) continue;
        const double a = static_cast<double>(s.start_ns), b = static_cast<double>(s.end_ns);
        if (b < t0 || a > t1) continue;
        const double x0 = std::max(xOf(a), plot.left() - 1.0), x1 = std::min(xOf(b), plot.right() + 1.0);
        p.fillRect(
            QRectF(x0, L.rowTop(s.rank) + gap, std::max(1.0, x1 - x0), rh - 2 * gap), liveRoutineColor(s.routine));
        ++st.states;
    }
    p.setRenderHint(QPainter::Antialiasing, true);
    const QPen matched(QColor(20, 20, 20, 170), 1), open(QColor(200, 30, 30), 1.5);
    // One arrow per pair of ranks per kArrowBucket pixels of send time: thousands of messages a
    // second between the same ranks would otherwise paint a solid block, and cost a line each.
    constexpr double kArrowBucket = 6;
    const uint64_t buckets = static_cast<uint64_t>(plot.width() / kArrowBucket) + 2;
    std::unordered_set<uint64_t> drawn;
    for (const mpe::live_stream::Arrow &a : job.arrows()) {
        if (a.from < 0 || a.from >= L.ranks || a.to < 0 || a.to >= L.ranks) continue;
        const double ts = static_cast<double>(a.send_ns);
        const double tr = a.recv_ns ? static_cast<double>(a.recv_ns) : ts;
        if (std::max(ts, tr) < t0 || std::min(ts, tr) > t1) continue;
        const auto bucket = static_cast<uint64_t>(
            std::clamp(scale.timeToX(ts) / kArrowBucket + 1, 0.0, static_cast<double>(buckets - 1)));
        const uint64_t pair
            = static_cast<uint64_t>(a.from) * static_cast<uint64_t>(L.ranks) + static_cast<uint64_t>(a.to);
        if (!drawn.insert((pair * 2 + (a.recv_ns ? 1 : 0)) * buckets + bucket).second) {
            ++st.bundled;
            continue;
        }
        const QPointF from(xOf(ts), L.rowCenter(a.from));
        if (a.recv_ns) {
            p.setPen(matched);
            p.drawLine(from, QPointF(xOf(tr), L.rowCenter(a.to)));
            ++st.arrows;
        } else {
            // A send whose receive has not come: a short tick towards the receiver.
            const double dy = std::clamp(L.rowCenter(a.to) - from.y(), -rh, rh) * 0.6;
            p.setPen(open);
            p.drawLine(from, from + QPointF(4, dy));
            ++st.openArrows;
        }
    }
    p.restore();

    // Ruler: seconds relative to the newest data.
    p.setPen(QColor(90, 90, 90));
    p.drawLine(plot.left(), plot.top() - 1, plot.right(), plot.top() - 1);
    const double step = rulerStepSeconds(scale.nsPerPixel());
    for (double s = std::ceil((t0 - now) / 1e9 / step) * step; s * 1e9 + now <= t1 + 1; s += step) {
        const double x = xOf(now + s * 1e9);
        p.drawLine(QPointF(x, plot.top() - 5), QPointF(x, plot.top() - 1));
        // Centred on its tick, but not past the right edge, where "now" is.
        const double left = std::min(x - 40, plot.right() - 79.0);
        p.drawText(QRectF(left, 0, 80, plot.top() - 5), Qt::AlignCenter, relativeSeconds(s));
    }
    if (!window.following()) {
        p.setPen(QColor(200, 30, 30));
        p.drawText(QRect(0, 0, LiveTimelineLayout::kLabelWidth, plot.top()), Qt::AlignCenter, QStringLiteral("paused"));
    }
    // Rank labels, thinned to what fits.
    p.setPen(Qt::black);
    const int every = std::max(1, static_cast<int>(std::ceil(12 / std::max(rh, 0.01))));
    for (int r = 0; r < L.ranks; r += every)
        p.drawText(QRectF(2, L.rowCenter(r) - 7, LiveTimelineLayout::kLabelWidth - 6, 14),
            Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("rank %1").arg(r));
}

double TrafficMatrixLayout::cell() const
{
    if (ranks <= 0) return 0;
    return std::max(0.0, std::min(size.width(), size.height()) - kMargin - 4.0) / ranks;
}

QRectF TrafficMatrixLayout::cellRect(int from, int to) const
{
    const double c = cell();
    return QRectF(kMargin + to * c, kMargin + from * c, c, c);
}

std::pair<int, int> TrafficMatrixLayout::cellAt(QPointF pos) const
{
    const double c = cell();
    if (c <= 0) return { -1, -1 };
    const int to = static_cast<int>(std::floor((pos.x() - kMargin) / c));
    const int from = static_cast<int>(std::floor((pos.y() - kMargin) / c));
    if (from < 0 || to < 0 || from >= ranks || to >= ranks) return { -1, -1 };
    return { from, to };
}

void paintTrafficMatrix(QPainter &p, const TrafficMatrix &m, QSize size)
{
    p.fillRect(QRect(QPoint(0, 0), size), QColor(245, 245, 245));
    const TrafficMatrixLayout L { size, m.ranks() };
    const double c = L.cell();
    if (m.ranks() == 0 || c <= 0) {
        p.setPen(Qt::darkGray);
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, QStringLiteral("No traffic yet"));
        return;
    }
    const QRectF grid(L.kMargin, L.kMargin, c * m.ranks(), c * m.ranks());
    p.fillRect(grid, Qt::white);
    for (const mpe::live_stream::PairTraffic &t : m.pairs()) {
        // At least a pixel, so that one pair among thousands of ranks still shows.
        QRectF r = L.cellRect(t.from, t.to);
        r.setSize(r.size().expandedTo(QSizeF(1, 1)));
        p.fillRect(r, m.color(t.bytes));
    }
    if (c >= 6) {
        p.setPen(QColor(225, 225, 225));
        for (int i = 0; i <= m.ranks(); ++i) {
            p.drawLine(QPointF(grid.left() + i * c, grid.top()), QPointF(grid.left() + i * c, grid.bottom()));
            p.drawLine(QPointF(grid.left(), grid.top() + i * c), QPointF(grid.right(), grid.top() + i * c));
        }
    }
    p.setPen(QColor(120, 120, 120));
    p.drawRect(grid);
    p.setPen(Qt::black);
    const int every = std::max(1, static_cast<int>(std::ceil(14 / c)));
    for (int i = 0; i < m.ranks(); i += every) {
        const QRectF r = L.cellRect(i, i);
        p.drawText(QRectF(0, r.top(), L.kMargin - 3, c), Qt::AlignRight | Qt::AlignVCenter, QString::number(i));
        p.drawText(QRectF(r.left() - 10, L.kMargin - 14, c + 20, 12), Qt::AlignCenter, QString::number(i));
    }
    p.drawText(QRectF(0, 0, size.width(), 14), Qt::AlignLeft | Qt::AlignVCenter,
        QStringLiteral("from ↓  to →   max %1 B").arg(m.maxBytes()));
}

LiveTimelineWidget::LiveTimelineWidget(QWidget *parent) : QWidget(parent)
{
    setMinimumSize(200, 120);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void LiveTimelineWidget::setJob(std::shared_ptr<const mpe::live_stream::JobView> job)
{
    m_job = std::move(job);
    update();
}

void LiveTimelineWidget::setSpanSeconds(double seconds)
{
    const double before = m_window.span();
    m_window.setSpan(seconds * 1e9);
    if (m_window.span() != before) emit spanChanged(m_window.span() / 1e9);
    update();
}

void LiveTimelineWidget::setPaused(bool paused)
{
    if (paused == !m_window.following()) return;
    if (paused)
        m_window.pause(nowNs());
    else
        m_window.resume();
    emit pausedChanged(paused);
    update();
}

void LiveTimelineWidget::scrollBy(double dt)
{
    const bool wasFollowing = m_window.following();
    m_window.scroll(dt, oldestNs(), nowNs());
    if (wasFollowing) emit pausedChanged(true);
    update();
}

double LiveTimelineWidget::oldestNs() const
{
    double oldest = nowNs();
    if (!m_job) return oldest;
    for (const mpe::live_stream::LiveState &s : m_job->states())
        oldest = std::min(oldest, static_cast<double>(s.start_ns));
    if (!m_job->arrows().empty()) oldest = std::min(oldest, static_cast<double>(m_job->arrows().front().send_ns));
    return oldest;
}

void LiveTimelineWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    if (!m_job) {
        p.fillRect(rect(), Qt::white);
        return;
    }
    paintLiveTimeline(p, *m_job, m_window, size());
}

void LiveTimelineWidget::wheelEvent(QWheelEvent *e)
{
    const double steps = e->angleDelta().y() / 120.0;
    if (e->modifiers() & Qt::ControlModifier)
        setSpanSeconds(m_window.span() / 1e9 * std::pow(1.25, -steps));
    else
        scrollBy(-steps * m_window.span() / 10);
    e->accept();
}

void LiveTimelineWidget::mousePressEvent(QMouseEvent *e)
{
    m_dragX = e->position().x();
}

void LiveTimelineWidget::mouseMoveEvent(QMouseEvent *e)
{
    if (!(e->buttons() & Qt::LeftButton) || m_dragX < 0) return;
    const double plotWidth = std::max(1, width() - LiveTimelineLayout::kLabelWidth);
    const double dx = e->position().x() - m_dragX;
    m_dragX = e->position().x();
    scrollBy(-dx * m_window.span() / plotWidth);
}

TrafficMatrixWidget::TrafficMatrixWidget(QWidget *parent) : QWidget(parent)
{
    setMinimumSize(160, 160);
    setMouseTracking(true);
}

void TrafficMatrixWidget::setMatrix(TrafficMatrix m)
{
    m_matrix = std::move(m);
    update();
}

void TrafficMatrixWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    paintTrafficMatrix(p, m_matrix, size());
}

bool TrafficMatrixWidget::event(QEvent *e)
{
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto *help = static_cast<QHelpEvent *>(e);
    const auto [from, to] = TrafficMatrixLayout { size(), m_matrix.ranks() }.cellAt(help->pos());
    const mpe::live_stream::PairTraffic *t = from >= 0 ? m_matrix.at(from, to) : nullptr;
    if (from < 0)
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(),
            tr("rank %1 → rank %2: %3 messages, %4 bytes")
                .arg(from)
                .arg(to)
                .arg(t ? t->count : 0)
                .arg(t ? t->bytes : 0),
            this);
    return true;
}

// The controls above the timeline: its span, pause, and when a rank counts as stuck.
QHBoxLayout *LiveView::makeControls()
{
    m_span = new QSpinBox(this);
    m_span->setObjectName("liveSpan");
    m_span->setRange(
        static_cast<int>(LiveTimeWindow::kMinSpan / 1e9), static_cast<int>(LiveTimeWindow::kMaxSpan / 1e9));
    m_span->setValue(static_cast<int>(LiveTimeWindow::kDefaultSpan / 1e9));
    m_span->setSuffix(tr(" s"));
    m_span->setToolTip(tr("How many seconds the timeline shows (Ctrl+wheel on it too)"));
    m_pause = new QToolButton(this);
    m_pause->setObjectName("livePause");
    m_pause->setText(tr("Pause"));
    m_pause->setCheckable(true);
    m_pause->setToolTip(tr("Stop following now, to scroll back through what arrived (wheel or drag)"));
    m_stuck = new QDoubleSpinBox(this);
    m_stuck->setObjectName("liveStuck");
    m_stuck->setRange(0.1, 3600);
    m_stuck->setDecimals(1);
    m_stuck->setSingleStep(0.5);
    m_stuck->setValue(1.0);
    m_stuck->setSuffix(tr(" s"));
    m_stuck->setToolTip(tr("A rank in a blocking call longer than this is stuck"));
    auto *controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Window"), this));
    controls->addWidget(m_span);
    controls->addWidget(m_pause);
    controls->addSpacing(16);
    controls->addWidget(new QLabel(tr("Stuck after"), this));
    controls->addWidget(m_stuck);
    controls->addStretch(1);
    return controls;
}

// The bar that says the job ended and offers its merged log once written; hidden until then.
void LiveView::makeEndBar()
{
    m_endBar = new QFrame(this);
    m_endBar->setObjectName("liveEndBar");
    m_endBar->setFrameShape(QFrame::StyledPanel);
    m_endBar->setAutoFillBackground(true);
    QPalette pal = m_endBar->palette();
    pal.setColor(QPalette::Window, QColor(255, 248, 200));
    m_endBar->setPalette(pal);
    m_endText = new QLabel(m_endBar);
    m_openLog = new QPushButton(tr("Open the merged log"), m_endBar);
    m_openLog->setObjectName("liveOpenLog");
    auto *endLayout = new QHBoxLayout(m_endBar);
    endLayout->setContentsMargins(8, 4, 8, 4);
    endLayout->addWidget(m_endText, 1);
    endLayout->addWidget(m_openLog);
    m_endBar->hide();
    connect(m_openLog, &QPushButton::clicked, this, [this] { emit openLogRequested(m_mergedLog); });
    m_logWatch = new QTimer(this);
    m_logWatch->setInterval(1000);
    connect(m_logWatch, &QTimer::timeout, this, &LiveView::updateEndBar);
}

LiveView::LiveView(QWidget *parent) : QWidget(parent)
{
    QHBoxLayout *controls = makeControls();
    makeEndBar();
    m_refreshTimer = new QTimer(this);
    m_refreshTimer->setSingleShot(true);
    m_refreshTimer->setInterval(kRefreshMs);
    connect(m_refreshTimer, &QTimer::timeout, this, &LiveView::refresh);

    m_timeline = new LiveTimelineWidget(this);
    m_timeline->setObjectName("liveTimeline");
    m_matrix = new TrafficMatrixWidget(this);
    m_matrix->setObjectName("liveMatrix");
    m_matrixTitle = new QLabel(this);
    m_cumulative = new QCheckBox(tr("since attached"), this);
    m_cumulative->setObjectName("liveMatrixCumulative");
    m_cumulative->setToolTip(
        tr("Sum the traffic since upshot attached, instead of the last %1 s").arg(kLiveTrafficSeconds));
    auto *matrixBox = new QWidget(this);
    auto *matrixLayout = new QVBoxLayout(matrixBox);
    matrixLayout->setContentsMargins(0, 0, 0, 0);
    auto *matrixHead = new QHBoxLayout;
    matrixHead->addWidget(m_matrixTitle, 1);
    matrixHead->addWidget(m_cumulative);
    matrixLayout->addLayout(matrixHead);
    matrixLayout->addWidget(m_matrix, 1);
    m_nowModel = new NowTableModel(this);
    m_nowView = new QTableView(this);
    m_nowView->setObjectName("liveNowTable");
    m_nowView->setModel(m_nowModel);
    m_nowView->verticalHeader()->hide();
    // Narrow columns for the numbers, room for the call and its site.
    QHeaderView *header = m_nowView->horizontalHeader();
    const int digit = m_nowView->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    for (auto [column, digits] : { std::pair { NowTableModel::Rank, 6 }, { NowTableModel::Thread, 6 },
             { NowTableModel::Routine, 15 }, { NowTableModel::CallSite, 24 }, { NowTableModel::Peer, 7 },
             { NowTableModel::Tag, 5 }, { NowTableModel::Seconds, 8 } })
        header->resizeSection(column, digits * digit + 12);
    header->setStretchLastSection(true);
    m_nowView->setSortingEnabled(true);
    m_nowView->sortByColumn(NowTableModel::Seconds, Qt::DescendingOrder);
    m_nowView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_diagnosis = new QPlainTextEdit(this);
    m_diagnosis->setObjectName("liveDiagnosis");
    m_diagnosis->setReadOnly(true);
    m_diagnosis->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_status = new QLabel(this);
    m_status->setObjectName("liveStatus");
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(matrixBox);
    bottom->addWidget(m_nowView);
    bottom->addWidget(m_diagnosis);
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 3);
    bottom->setStretchFactor(2, 2);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_timeline);
    split->addWidget(bottom);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_endBar);
    layout->addWidget(split, 1);
    layout->addWidget(m_status);

    connect(m_span, &QSpinBox::valueChanged, m_timeline, [this](int s) { m_timeline->setSpanSeconds(s); });
    connect(m_timeline, &LiveTimelineWidget::spanChanged, m_span, [this](double s) {
        const QSignalBlocker block(m_span);
        m_span->setValue(static_cast<int>(std::lround(s)));
    });
    connect(m_pause, &QToolButton::toggled, m_timeline, &LiveTimelineWidget::setPaused);
    connect(m_timeline, &LiveTimelineWidget::pausedChanged, m_pause, &QToolButton::setChecked);
    connect(m_stuck, &QDoubleSpinBox::valueChanged, this, &LiveView::refresh);
    connect(m_cumulative, &QCheckBox::toggled, this, &LiveView::refresh);
    m_timeline->setSpanSeconds(m_span->value());
    refresh();
}

void LiveView::setJob(std::shared_ptr<const mpe::live_stream::JobView> job)
{
    m_job = std::move(job);
    m_timeline->setJob(m_job);
    m_mergedLog.clear();
    refresh();
}

void LiveView::setSource(const QString &text)
{
    m_source = text;
    refresh();
}

void LiveView::setStuckSeconds(double seconds)
{
    m_stuck->setValue(seconds);
}

double LiveView::stuckSeconds() const
{
    return m_stuck->value();
}

QString LiveView::diagnosis() const
{
    return m_diagnosis->toPlainText();
}

QString LiveView::status() const
{
    return m_status->text();
}

bool LiveView::offersLog() const
{
    return !m_endBar->isHidden() && !m_openLog->isHidden();
}

void LiveView::refresh()
{
    const QString source = m_source.isEmpty() ? QString() : m_source + QStringLiteral(" · ");
    if (!m_job) {
        m_status->setText(source + tr("Not attached"));
        return;
    }
    const double stuck = stuckSeconds();
    m_nowModel->setRows(m_job->now_table(stuck));
    const mpe::live_stream::Diagnosis d = m_job->diagnose(stuck);
    const QString text = diagnosisText(d, stuck);
    // Rewritten only when it changed, so that a selection in it survives the refreshes.
    if (text != m_diagnosis->toPlainText()) {
        m_diagnosis->setPlainText(text);
        QPalette pal = m_diagnosis->palette();
        pal.setColor(QPalette::Text, d.deadlocks.empty() ? QColor(Qt::black) : QColor(170, 0, 0));
        m_diagnosis->setPalette(pal);
    }
    const bool cumulative = m_cumulative->isChecked();
    m_matrix->setMatrix(TrafficMatrix(m_job->traffic_pairs(cumulative), liveRankCount(*m_job)));
    m_matrixTitle->setText(
        cumulative ? tr("Bytes sent since attached") : tr("Bytes sent in the last %1 s").arg(kLiveTrafficSeconds));
    const QString note = m_job->ranks_seen() == 0 && !m_job->ended() ? tr(" · no message yet") : QString();
    m_status->setText(source + liveStatusText(*m_job) + note);
    m_timeline->update();
    updateEndBar();
}

void LiveView::scheduleRefresh()
{
    if (!m_refreshTimer->isActive()) m_refreshTimer->start();
}

void LiveView::updateEndBar()
{
    if (!m_job || !m_job->ended()) {
        m_endBar->hide();
        m_logWatch->stop();
        return;
    }
    const QString log = QString::fromStdString(m_job->job_end().mpelog);
    const bool exists = !log.isEmpty() && QFileInfo::exists(log);
    m_mergedLog = exists ? log : QString();
    if (m_job->job_end().end_message_lost())
        m_endText->setText(tr("The job ended; its end message was lost on the way (this viewer was behind)."));
    else if (log.isEmpty())
        m_endText->setText(tr("The job ended (exit status %1).").arg(m_job->job_end().exit_status));
    else if (exists)
        m_endText->setText(
            tr("The job ended (exit status %1); its merged log is %2.").arg(m_job->job_end().exit_status).arg(log));
    else
        m_endText->setText(tr("The job ended (exit status %1); waiting for its merged log %2…")
                               .arg(m_job->job_end().exit_status)
                               .arg(log));
    m_openLog->setVisible(exists);
    m_endBar->show();
    if (!log.isEmpty() && !exists)
        m_logWatch->start();
    else
        m_logWatch->stop();
}

QImage LiveView::snapshot(QSize size)
{
    // Exactly the size asked for, even below what the controls and panels would like.
    layout()->setSizeConstraint(QLayout::SetNoConstraint);
    setMinimumSize(0, 0);
    resize(size);
    if (!isVisible()) {
        setAttribute(Qt::WA_DontShowOnScreen);
        show();
    }
    QApplication::processEvents();
    refresh();
    return grab().toImage();
}

} // namespace upshot
