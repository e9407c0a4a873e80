// The compare view: A over the difference band over B warped onto A's time, and its window.
#include "compareview.h"

#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "timelinewidget.h"

namespace upshot {

WarpedTimeline::WarpedTimeline(QWidget *parent) : QWidget(parent)
{
    setMinimumHeight(80);
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void WarpedTimeline::setScene(std::shared_ptr<TraceModel> model, const AlignedTime &map)
{
    m_model = std::move(model);
    m_map = map;
    m_view.selected = {};
    refit();
}

void WarpedTimeline::refit()
{
    if (!m_model) return;
    OpeningOptions opening;
    opening.legend = false;
    opening.range = std::make_pair(m_view.scale.t0(), m_view.scale.t1());
    const ViewState keep = m_view;
    m_view = openingView(*m_model, size(), opening);
    m_view.scale = TimeScale(keep.scale.t0(), keep.scale.nsPerPixel(), std::max(1, width() - keep.labelWidth));
    m_view.labelWidth = keep.labelWidth;
    m_view.selected = keep.selected;
    update();
}

void WarpedTimeline::followView(const ViewState &aligned)
{
    m_view.labelWidth = aligned.labelWidth;
    m_view.scale = TimeScale(aligned.scale.t0(), aligned.scale.nsPerPixel(), std::max(1, width() - aligned.labelWidth));
    update();
}

std::pair<double, double> WarpedTimeline::windowB() const
{
    return { m_map.toB(m_view.scale.t0()), m_map.toB(m_view.scale.t1()) };
}

void WarpedTimeline::setSelected(StateRef s)
{
    m_view.selected = s;
    // Scroll the rows (when they do not all fit) so that the state's row shows.
    if (s.valid() && m_model) {
        const double top = m_view.rowTop(s.row) + m_view.yOffset - m_view.rowsTop();
        const double visible = m_view.plotRect().height();
        if (top < m_view.yOffset || top + m_view.rowHeight > m_view.yOffset + visible)
            m_view.yOffset = std::max(0.0, top - visible / 2);
    }
    update();
}

QString WarpedTimeline::describeAt(QPointF pos) const
{
    if (!m_model) return {};
    const int row = m_view.rowAt(pos.y(), m_model->rowCount());
    if (row < 0 || pos.x() < m_view.labelWidth) return {};
    const double t = warpedTimeAt(m_view, m_map, pos.x());
    const double perPixel = std::fabs(warpedTimeAt(m_view, m_map, pos.x() + 1) - t);
    const StateRef s = m_model->stateAt(row, t, 2 * perPixel);
    return s.valid() ? QStringLiteral("B: %1").arg(m_model->describeState(s)) : QString();
}

void WarpedTimeline::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    if (!m_model) {
        p.fillRect(rect(), Qt::white);
        return;
    }
    // Into an image first: paintTimeline() then writes the boxes directly.
    QImage frame(size(), QImage::Format_RGB32);
    frame.fill(Qt::white);
    {
        QPainter q(&frame);
        ViewState v = m_view;
        v.size = size();
        paintWarped(q, *m_model, v, m_map);
    }
    p.drawImage(0, 0, frame);
}

void WarpedTimeline::resizeEvent(QResizeEvent *)
{
    refit();
}

void WarpedTimeline::wheelEvent(QWheelEvent *e)
{
    emit zoomRequested(std::pow(1.0015, e->angleDelta().y()), e->position().x());
    e->accept();
}

void WarpedTimeline::mousePressEvent(QMouseEvent *e)
{
    m_pressPos = m_lastPos = e->position();
    m_dragging = false;
}

void WarpedTimeline::mouseMoveEvent(QMouseEvent *e)
{
    if (!(e->buttons() & Qt::LeftButton)) return;
    if (!m_dragging && (e->position() - m_pressPos).manhattanLength() > 3) m_dragging = true;
    if (m_dragging) emit panRequested(-(e->position().x() - m_lastPos.x()));
    m_lastPos = e->position();
}

void WarpedTimeline::mouseReleaseEvent(QMouseEvent *e)
{
    if (m_dragging || !m_model) return;
    const int row = m_view.rowAt(e->position().y(), m_model->rowCount());
    if (row >= 0 && e->position().x() >= m_view.labelWidth) {
        const double t = warpedTimeAt(m_view, m_map, e->position().x());
        const double perPixel = std::fabs(warpedTimeAt(m_view, m_map, e->position().x() + 1) - t);
        setSelected(m_model->stateAt(row, t, 2 * perPixel));
    }
    const QString text = describeAt(e->position());
    if (!text.isEmpty()) emit detailsChanged(text);
}

DiffBandWidget::DiffBandWidget(QWidget *parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void DiffBandWidget::setBand(const DiffBand &band, const QString &note)
{
    m_band = band;
    m_note = note;
    m_saturation = bandSaturation(band);
    setFixedHeight(sizeHint().height());
    update();
}

QSize DiffBandWidget::sizeHint() const
{
    return QSize(400, bandHeight(m_band.ranks) + kLegend);
}

void DiffBandWidget::followView(const ViewState &aligned)
{
    m_view = aligned;
    update();
}

void DiffBandWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const int h = height() - kLegend;
    paintBand(p, QRect(0, 0, width(), h), m_band, m_view, m_saturation);
    paintBandLegend(p, QRect(0, h, width(), kLegend), m_saturation, m_note);
}

bool DiffBandWidget::event(QEvent *e)
{
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto *help = static_cast<QHelpEvent *>(e);
    const int h = height() - kLegend;
    if (m_band.ranks <= 0 || help->pos().y() >= h || help->pos().x() < m_view.labelWidth) {
        QToolTip::hideText();
        return true;
    }
    const int rank = std::clamp(help->pos().y() * m_band.ranks / std::max(1, h), 0, m_band.ranks - 1);
    const double t = m_view.timeAt(help->pos().x());
    for (int k = 0; k < m_band.iterations; ++k) {
        const DiffBand::Cell &c = m_band.cell(rank, k);
        if (t >= c.a0 && t < c.a1) {
            QToolTip::showText(help->globalPos(),
                tr("rank %1, iteration %2: A %3, B %4 (%5%6%)")
                    .arg(rank)
                    .arg(k)
                    .arg(formatDuration(c.durationA), formatDuration(c.durationB))
                    .arg(c.relative() >= 0 ? "+" : "")
                    .arg(100 * c.relative(), 0, 'f', 1),
                this);
            return true;
        }
    }
    QToolTip::hideText();
    return true;
}

CompareView::CompareView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_captionA = new QLabel(this);
    m_captionB = new QLabel(this);
    for (QLabel *l : { m_captionA, m_captionB }) {
        l->setContentsMargins(6, 2, 6, 2);
        l->setAutoFillBackground(true);
        l->setStyleSheet(QStringLiteral("background: #d2d6e2;"));
    }
    m_a = new TimelineWidget(this);
    m_a->setObjectName("compareA");
    m_band = new DiffBandWidget(this);
    m_band->setObjectName("compareBand");
    m_b = new WarpedTimeline(this);
    m_b->setObjectName("compareB");
    layout->addWidget(m_captionA);
    layout->addWidget(m_a, 1);
    layout->addWidget(m_band);
    layout->addWidget(m_captionB);
    layout->addWidget(m_b, 1);
    // Aligned time is A's: B and the band follow every change of A's view.
    connect(m_a, &TimelineWidget::viewChanged, this, [this] {
        m_band->followView(m_a->view());
        m_b->followView(m_a->view());
    });
    connect(m_b, &WarpedTimeline::zoomRequested, m_a, [this](double f, double x) { m_a->zoomAt(f, x); });
    connect(m_b, &WarpedTimeline::panRequested, m_a, [this](double dx) {
        TimeScale s = m_a->view().scale;
        s.pan(dx);
        m_a->setScale(s, false);
    });
    connect(m_a, &TimelineWidget::detailsChanged, this, [this](const QString &t) { emit detailsChanged("A: " + t); });
    connect(m_b, &WarpedTimeline::detailsChanged, this, &CompareView::detailsChanged);
}

void CompareView::setData(std::shared_ptr<const CompareData> data)
{
    m_data = std::move(data);
    const CompareScene &s = m_data->scene;
    m_captionA->setText(tr("A: %1").arg(s.nameA));
    m_captionB->setText(tr("B: %1 — iteration k drawn under iteration k of A").arg(s.nameB));
    m_a->setModel(s.a);
    m_band->setBand(s.band, s.note);
    m_b->setScene(s.b, s.map);
    m_band->followView(m_a->view());
    m_b->followView(m_a->view());
}

bool CompareView::showRow(const CompareRow &row, StateRef *inA, StateRef *inB)
{
    if (!m_data) return false;
    const CompareScene &s = m_data->scene;
    const StateRef a = worstInstanceOf(*s.a, row, true);
    const StateRef b = worstInstanceOf(*s.b, row, false);
    const QString routine = QString::fromStdString(row.diff.routine), site = QString::fromStdString(row.diff.name);
    if (inA) *inA = a;
    if (inB) *inB = b;
    if (!a.valid() && !b.valid()) {
        emit statusMessage(row.isSite ? tr("No %1 at %2 in either run").arg(routine, site)
                                      : tr("Pick a call site's row to see its longest instance"));
        return false;
    }
    // One aligned window holding both instances (B's mapped to A's time), with a margin.
    double t0 = INFINITY, t1 = -INFINITY;
    if (a.valid()) t0 = s.a->start(a.row, a.index), t1 = s.a->end(a.row, a.index);
    if (b.valid()) {
        t0 = std::min(t0, s.map.toA(s.b->start(b.row, b.index)));
        t1 = std::max(t1, s.map.toA(s.b->end(b.row, b.index)));
    }
    const double pad = std::max(0.25 * (t1 - t0), 1000.0);
    if (a.valid()) m_a->showState(a);
    m_a->zoomToRange(t0 - pad, t1 + pad);
    m_b->setSelected(b);
    emit statusMessage(tr("Longest %1 at %2: A %3, B %4")
                           .arg(routine, site, a.valid() ? formatDuration(s.a->duration(a.row, a.index)) : tr("none"),
                               b.valid() ? formatDuration(s.b->duration(b.row, b.index)) : tr("none")));
    return true;
}

CompareWindow::CompareWindow(QWidget *parent) : QMainWindow(parent, Qt::Window)
{
    setObjectName("compareWindow");
    setAttribute(Qt::WA_DeleteOnClose);
    resize(1280, 900);
    m_view = new CompareView(this);
    setCentralWidget(m_view);
    m_rows = new CompareTableModel(this);
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    m_tableNote = new QLabel(page);
    m_tableNote->setWordWrap(true);
    m_tableNote->hide();
    m_table = new QTableView(page);
    m_table->setObjectName("compareTable");
    m_table->setModel(m_rows);
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_tableNote);
    layout->addWidget(m_table, 1);
    auto *dock = new QDockWidget(tr("Differences (B − A)"), this);
    dock->setObjectName("compareTableDock");
    dock->setWidget(page);
    addDockWidget(Qt::BottomDockWidgetArea, dock);
    auto *details = new QPlainTextEdit(this);
    details->setReadOnly(true);
    details->setMaximumBlockCount(200);
    auto *detailsDock = new QDockWidget(tr("Details"), this);
    detailsDock->setObjectName("compareDetailsDock");
    detailsDock->setWidget(details);
    addDockWidget(Qt::RightDockWidgetArea, detailsDock);
    connect(m_view, &CompareView::detailsChanged, details, &QPlainTextEdit::appendPlainText);
    connect(
        m_view, &CompareView::statusMessage, this, [this](const QString &t) { statusBar()->showMessage(t, 15000); });
    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex &i) {
        if (i.isValid()) m_view->showRow(m_rows->row(i.row()));
    });
}

void CompareWindow::setData(std::shared_ptr<const CompareData> data)
{
    m_rows->setRows(data->rows);
    m_table->resizeColumnsToContents();
    m_tableNote->setText(data->rowsNote);
    m_tableNote->setVisible(!data->rowsNote.isEmpty());
    setWindowTitle(tr("%1 vs %2 — upshot compare").arg(data->scene.nameA, data->scene.nameB));
    statusBar()->showMessage(data->scene.note);
    m_view->setData(std::move(data));
}

void CompareWindow::load(const QString &aPath, std::shared_ptr<TraceModel> aModel, const QString &bPath)
{
    statusBar()->showMessage(tr("Comparing with %1…").arg(bPath));
    auto result = std::make_shared<mpe::StatusOr<std::shared_ptr<CompareData>>>(mpe::Status());
    QThread *worker = QThread::create([=] { *result = loadCompare(aPath, aModel, bPath); });
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    QPointer<CompareWindow> self(this);
    connect(worker, &QThread::finished, this, [self, result, bPath] {
        if (!self) return;
        if (!result->ok()) {
            emit self->failed(bPath, QString::fromStdString(result->status().to_string()));
            self->close();
            return;
        }
        self->setData(**result);
        self->show();
        emit self->loaded(bPath);
    });
    worker->start();
}

} // namespace upshot
