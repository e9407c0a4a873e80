// The wait-state patterns of the log with their totals over the visible window and the run.
#include "waitstateswidget.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace upshot {

WaitStatesWidget::WaitStatesWidget(QWidget *parent) : QWidget(parent)
{
    m_status = new QLabel(this);
    m_status->setObjectName("waitsStatus");
    m_status->setWordWrap(true);
    m_table = new QTableWidget(kWaitPatterns, ColumnCount, this);
    m_table->setObjectName("waitsTable");
    m_table->setHorizontalHeaderLabels({ tr("Pattern"), tr("In view"), tr("Count"), tr("Whole run") });
    const QString tips[ColumnCount] = { tr("Click a pattern to frame its instances; F3 then steps through them"),
        tr("Waiting time inside the visible window"), tr("Instances overlapping the visible window"),
        tr("Waiting time over the whole run, and its share of the MPI time") };
    for (int c = 0; c < ColumnCount; ++c)
        m_table->horizontalHeaderItem(c)->setToolTip(tips[c]);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    for (int p = 0; p < kWaitPatterns; ++p) {
        auto *name = new QTableWidgetItem(waitPatternName(p));
        name->setData(Qt::DecorationRole, waitColor(p));
        name->setData(Qt::UserRole, p);
        m_table->setItem(p, PatternColumn, name);
        for (int c = TimeColumn; c < ColumnCount; ++c) {
            auto *it = new QTableWidgetItem;
            it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(p, c, it);
        }
    }
    auto *lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    lay->addWidget(m_status);
    lay->addWidget(m_table);
    connect(m_table, &QTableWidget::cellClicked, this,
        [this](int row, int) { selectPattern(row == m_selected ? -1 : row); });
    setModel(nullptr);
}

void WaitStatesWidget::setModel(std::shared_ptr<TraceModel> model)
{
    m_model = std::move(model);
    m_selected = -1;
    m_table->clearSelection();
    if (m_model) m_t0 = m_model->tBegin(), m_t1 = m_model->tEnd();
    const WaitStates *W = m_model ? m_model->waits() : nullptr;
    m_table->setEnabled(W != nullptr);
    if (W)
        setStatus(tr("%1 instances; MPI time %2").arg(W->instanceCount()).arg(formatDuration(W->mpiNs())));
    else
        setStatus(m_model ? tr("Not analyzed") : tr("No logfile"));
    for (int p = 0; p < kWaitPatterns; ++p) {
        QString run;
        if (W) {
            const WaitTotal &t = W->runTotals()[static_cast<size_t>(p)];
            run = t.instances == 0 ? QStringLiteral("–")
                                   : tr("%1 (%2%)")
                                         .arg(formatDuration(t.ns))
                                         .arg(W->mpiNs() > 0 ? 100.0 * t.ns / W->mpiNs() : 0.0, 0, 'f', 1);
            m_table->item(p, RunColumn)->setData(Qt::UserRole, t.ns);
        }
        m_table->item(p, RunColumn)->setText(run);
    }
    m_stale = true;
    refresh();
}

void WaitStatesWidget::setStatus(const QString &text)
{
    m_status->setText(text);
}

QString WaitStatesWidget::status() const
{
    return m_status->text();
}

void WaitStatesWidget::setRange(double t0, double t1)
{
    m_t0 = t0, m_t1 = t1;
    m_stale = true;
    if (isVisible()) refresh();
}

void WaitStatesWidget::showEvent(QShowEvent *e)
{
    QWidget::showEvent(e);
    if (m_stale) refresh();
}

void WaitStatesWidget::refresh()
{
    m_stale = false;
    const WaitStates *W = m_model ? m_model->waits() : nullptr;
    m_window = W ? W->windowTotals(m_t0, m_t1) : WaitTotals {};
    for (int p = 0; p < kWaitPatterns; ++p) {
        const WaitTotal &t = m_window[static_cast<size_t>(p)];
        QTableWidgetItem *time = m_table->item(p, TimeColumn), *n = m_table->item(p, InstancesColumn);
        time->setText(W ? (t.instances ? formatDuration(t.ns) : QStringLiteral("–")) : QString());
        time->setData(Qt::UserRole, t.ns);
        n->setText(W ? QString::number(t.instances) : QString());
        n->setData(Qt::UserRole, QVariant::fromValue<qulonglong>(t.instances));
    }
}

void WaitStatesWidget::selectPattern(int pattern)
{
    m_selected = pattern >= 0 && pattern < kWaitPatterns ? pattern : -1;
    if (m_selected >= 0)
        m_table->selectRow(m_selected);
    else
        m_table->clearSelection();
    emit patternActivated(m_selected);
}

} // namespace upshot
