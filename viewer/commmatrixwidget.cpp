// The communication matrix dock: a heat map of the visible window.
#include "commmatrixwidget.h"

#include <QMouseEvent>
#include <QPainter>

namespace upshot {

CommMatrixWidget::CommMatrixWidget(QWidget *parent) : QWidget(parent)
{
    setMinimumSize(200, 200);
    setToolTip(tr("Sender down, receiver across; click a cell for its first message in the view"));
}

void CommMatrixWidget::setModel(std::shared_ptr<TraceModel> model)
{
    m_model = std::move(model);
    m_groups.reset();
    if (m_model) m_t0 = m_model->tBegin(), m_t1 = m_model->tEnd();
    refresh();
}

void CommMatrixWidget::setRange(double t0, double t1)
{
    m_t0 = t0, m_t1 = t1;
    refresh();
}

void CommMatrixWidget::setGroups(std::shared_ptr<RankGroups> groups)
{
    m_groups = std::move(groups);
    refresh();
}

void CommMatrixWidget::setValue(MatrixValue v)
{
    m_value = v;
    refresh();
}

void CommMatrixWidget::refresh()
{
    // O(messages in the window): only while shown.
    m_stale = true;
    if (!isVisible()) return;
    m_matrix = m_model ? buildCommMatrix(*m_model, m_t0, m_t1, m_value, m_groups.get()) : CommMatrix {};
    m_stale = false;
    update();
}

void CommMatrixWidget::showEvent(QShowEvent *)
{
    if (m_stale) refresh();
}

void CommMatrixWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.drawImage(0, 0, commMatrixImage(m_matrix, size()));
}

void CommMatrixWidget::mousePressEvent(QMouseEvent *e)
{
    if (!m_model) return;
    auto [from, to] = commMatrixCellAt(m_matrix, size(), e->position());
    if (from < 0) return;
    emit messageChosen(m_value == MatrixValue::WaitTime ? -1 : firstMessageOfCell(*m_model, m_matrix, from, to));
}

} // namespace upshot
