// The side panels of upshot: the legend (a table model), the histogram of state durations and
// the statistics of the visible window (load balance, time per call site, communication matrix).
#pragma once

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>

#include "commmatrix.h"
#include "tracemodel.h"
#include "waitstates.h"

class QCheckBox;
class QLabel;
class QComboBox;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace upshot {

// One row per category the log uses (largest inclusive time first): name (visible checkbox,
// colour swatch), searchable, count, inclusive and exclusive time. Then one row per counter track
// counter (countertracks.h): name (visible checkbox, colour), samples, and its largest level.
class LegendModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Name, Searchable, Count, Inclusive, Exclusive, ColumnCount };
    explicit LegendModel(QObject *parent = nullptr);
    void setModel(std::shared_ptr<TraceModel> model);
    // The category index shown on a legend row.
    int categoryAt(int row) const { return row >= 0 && row < static_cast<int>(m_rows.size()) ? category(row) : -1; }
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

signals:
    // Colours or visibility changed: the timeline repaints.
    void categoriesChanged();
    // A counter was shown or hidden: the timeline lays its bands out again.
    void countersChanged();

public:
    // The counter (index into TraceModel::counters()) shown on a legend row, or -1.
    int counterAt(int row) const;

private:
    int category(int row) const { return m_rows[static_cast<size_t>(row)]; }
    std::shared_ptr<TraceModel> m_model;
    std::vector<int> m_rows; // category index per legend row: categories the log uses, by time
};

// Histogram of the durations of the chosen states in the visible window.
class HistogramWidget : public QWidget
{
    Q_OBJECT
public:
    explicit HistogramWidget(QWidget *parent = nullptr);
    void setModel(std::shared_ptr<TraceModel> model);
    // Recomputes for the window [t0, t1] (the range follows the view).
    void setRange(double t0, double t1);
    void setCategory(int category); // -1 = all visible states
    void setCallSite(int64_t site); // -1 = all call sites
    int64_t callSite() const { return m_site; }
    void setBins(int bins);
    void setLogX(bool on);
    void setLogY(bool on);
    const Histogram &histogram() const { return m_hist; }
    // The bar under widget x in the chart, or -1.
    int barAt(double x) const;
    // Selects bar i: emits the highlight of its instances.
    void selectBar(int i);

signals:
    void highlightRequested(const upshot::Highlight &h);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;

private:
    void recompute();
    QRect chartRect() const;
    std::vector<bool> selection() const;

    std::shared_ptr<TraceModel> m_model;
    Histogram m_hist;
    double m_t0 = 0, m_t1 = 0;
    int m_category = -1, m_selectedBar = -1;
    int64_t m_site = -1;
    QComboBox *m_cats;
    QComboBox *m_sites; // hidden when the log has no call sites
    QSpinBox *m_bins;
    QCheckBox *m_logX, *m_logY;
};

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
