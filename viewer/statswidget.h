// The statistics of the visible window: load balance, time per call site, communication matrix.
#pragma once

#include <QWidget>

#include <memory>

#include "tracemodel.h"

class QCheckBox;
class QTableWidget;
class QTabWidget;

namespace upshot {

// Time per category per rank, time per call site and the communication matrix of the visible
// window.
class StatsWidget : public QWidget
{
    Q_OBJECT
public:
    // Columns of the call-site table (a row per call site and routine, most time first).
    enum SiteColumn { SiteTextColumn, SiteRoutineColumn, SiteCallsColumn, SiteTimeColumn, SiteColumnCount };
    static constexpr int kMaxSiteRows = 1000;

    explicit StatsWidget(QWidget *parent = nullptr);
    void setModel(std::shared_ptr<TraceModel> model);
    void setRange(double t0, double t1);
    // Shows the call-site tab, over the visible window or the whole run, and fills it.
    void showCallSites(bool wholeRun);
    QTableWidget *loadTable() const { return m_load; }
    QTableWidget *matrixTable() const { return m_matrix; }
    QTableWidget *callSiteTable() const { return m_sites; }

signals:
    // A row of the call-site table was double-clicked.
    void callSiteActivated(uint32_t site);

protected:
    void showEvent(QShowEvent *) override;

private:
    // Fills the call-site table: a pass over the window's states, so only when it is shown.
    void updateCallSites();

    std::shared_ptr<TraceModel> m_model;
    double m_t0 = 0, m_t1 = 0;
    QTabWidget *m_tabs;
    QTableWidget *m_load, *m_matrix, *m_sites;
    QWidget *m_sitePage;
    QCheckBox *m_wholeRun;
    bool m_sitesStale = true;
    std::vector<SiteTime> m_runSites; // whole-run totals, computed once per model
};

} // namespace upshot
