// The legend of upshot: a table model of the categories the log uses and its counters.
#pragma once

#include <QAbstractTableModel>

#include <memory>

#include "tracemodel.h"

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

} // namespace upshot
