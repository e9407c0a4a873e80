// The compare view's diff table: routines and call sites of two runs ranked by their change in
// time (rows from the shared diff model, mpe/diff.h), and where a call site's worst instance is.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <vector>

#include "mpe/diff.h"
#include "tracemodel.h"

namespace upshot {

// One row of the table: a routine over the whole run, or a call site (a routine at a source
// line), as the shared diff model compared it (its name is B's location, or A's for a site only
// in A; its note says when the site moved; its site_a and site_b say where the site is in each run).
struct CompareRow
{
    bool isSite = false;
    mpe::analysis::diff::Row diff;
};

// The routines and the call sites of a comparison in one list, ranked by |B - A| (each list is
// already ranked so; the merge keeps that order).
std::vector<CompareRow> compareRows(const mpe::analysis::diff::Comparison &c);

class CompareTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        Kind,
        Routine,
        Site,
        TimeA,
        TimeB,
        Change,
        ChangePct,
        MostChanged,
        CallsA,
        CallsB,
        Note,
        ColumnCount
    };
    explicit CompareTableModel(QObject *parent = nullptr) : QAbstractTableModel(parent) { }
    // Rows as given (the diff model ranks them by change).
    void setRows(std::vector<CompareRow> rows);
    const CompareRow &row(int i) const { return m_rows[static_cast<size_t>(i)]; }
    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
    }
    int columnCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : ColumnCount; }
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    std::vector<CompareRow> m_rows;
};

// The longest state of routine called from `where` (a call site's innermost frame, as the diff
// model keys it) anywhere in the model, or an invalid ref when there is none. Cost: O(states).
StateRef worstInstance(const TraceModel &model, const QString &routine, const mpe::analysis::diff::Where &where);

// The worst instance of row's site in run A (a = true) or B, at that run's own line (the row's
// site_a or site_b: a site that moved has both): none for a site only in the other run.
StateRef worstInstanceOf(const TraceModel &model, const CompareRow &row, bool a);

} // namespace upshot
