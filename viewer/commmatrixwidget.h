// The communication matrix dock: a heat map of the visible window.
#pragma once

#include <QWidget>

#include <memory>

#include "commmatrix.h"
#include "tracemodel.h"

namespace upshot {

// The communication matrix dock: a heat map of bytes, messages or wait time between ranks (or
// groups, or blocks of ranks above 256) for the visible window; clicking a cell selects its
// first message in the window.
class CommMatrixWidget : public QWidget
{
    Q_OBJECT
public:
    explicit CommMatrixWidget(QWidget *parent = nullptr);
    void setModel(std::shared_ptr<TraceModel> model);
    void setRange(double t0, double t1);
    void setGroups(std::shared_ptr<RankGroups> groups);
    void setValue(MatrixValue v);
    const CommMatrix &matrix() const { return m_matrix; }

signals:
    // The first message of a clicked cell (-1: none in the window).
    void messageChosen(long message);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;
    void showEvent(QShowEvent *) override;

private:
    void refresh();
    std::shared_ptr<TraceModel> m_model;
    std::shared_ptr<RankGroups> m_groups;
    double m_t0 = 0, m_t1 = 0;
    MatrixValue m_value = MatrixValue::Bytes;
    CommMatrix m_matrix;
    bool m_stale = true;
};

} // namespace upshot
