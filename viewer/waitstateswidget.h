// The wait-state patterns of the log with their totals over the visible window and the run.
#pragma once

#include <QWidget>

#include <memory>

#include "tracemodel.h"
#include "waitstates.h"

class QLabel;
class QTableWidget;

namespace upshot {

// The wait-state patterns of the log with their totals over the visible window (waiting time
// clipped to it, instances overlapping it) and over the whole run. A click on a pattern selects
// its instances (patternActivated; a second click clears it).
class WaitStatesWidget : public QWidget
{
    Q_OBJECT
public:
    enum Column { PatternColumn, TimeColumn, InstancesColumn, RunColumn, ColumnCount };

    explicit WaitStatesWidget(QWidget *parent = nullptr);
    // Shows the wait states of model (model->waits()), or none yet.
    void setModel(std::shared_ptr<TraceModel> model);
    // A line above the table: "analyzing…", why there are none.
    void setStatus(const QString &text);
    QString status() const;
    // Recomputes the window columns for [t0, t1] (when shown; else once it is).
    void setRange(double t0, double t1);
    const WaitTotals &windowTotals() const { return m_window; }
    QTableWidget *table() const { return m_table; }
    int selectedPattern() const { return m_selected; }
    // Selects pattern (-1 = none) and emits patternActivated.
    void selectPattern(int pattern);

signals:
    void patternActivated(int pattern);

protected:
    void showEvent(QShowEvent *) override;

private:
    void refresh();

    std::shared_ptr<TraceModel> m_model;
    double m_t0 = 0, m_t1 = 0;
    bool m_stale = true;
    int m_selected = -1;
    WaitTotals m_window {};
    QLabel *m_status;
    QTableWidget *m_table;
};

} // namespace upshot
