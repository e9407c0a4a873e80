// The legend of upshot: a table model of the categories the log uses and its counters.
#include "legendmodel.h"

#include "countertracks.h"

namespace upshot {

LegendModel::LegendModel(QObject *parent) : QAbstractTableModel(parent) { }

void LegendModel::setModel(std::shared_ptr<TraceModel> model)
{
    beginResetModel();
    m_model = std::move(model);
    m_rows.clear();
    if (m_model) {
        for (int c = 0; c < m_model->categoryCount(); ++c)
            if (m_model->categoryInfo(c).count > 0) m_rows.push_back(c);
        std::stable_sort(m_rows.begin(), m_rows.end(),
            [&](int a, int b) { return m_model->categoryInfo(a).inclusiveNs > m_model->categoryInfo(b).inclusiveNs; });
    }
    endResetModel();
}

int LegendModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() || !m_model) return 0;
    const CounterTracks *C = m_model->counters();
    return static_cast<int>(m_rows.size() + (C ? C->counters().size() : 0));
}

int LegendModel::counterAt(int row) const
{
    const int k = row - static_cast<int>(m_rows.size());
    return m_model && m_model->counters() && k >= 0 && k < static_cast<int>(m_model->counters()->counters().size())
        ? k
        : -1;
}

// The legend row of a counter: its checkbox shows or hides its tracks.
static QVariant counterData(const CounterInfo &c, int column, int role)
{
    if (column == LegendModel::Name) {
        if (role == Qt::DisplayRole) return c.name;
        if (role == Qt::DecorationRole) return c.color;
        if (role == Qt::CheckStateRole) return c.visible ? Qt::Checked : Qt::Unchecked;
        if (role == Qt::ToolTipRole) return QObject::tr("counter track: %1").arg(c.description);
    } else if (column == LegendModel::Count && role == Qt::DisplayRole) {
        return QVariant::fromValue<qulonglong>(c.samples);
    } else if (column == LegendModel::Inclusive && role == Qt::DisplayRole) {
        return QObject::tr("max %1").arg(c.maxLevel, 0, 'g', 10);
    }
    return {};
}

int LegendModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LegendModel::data(const QModelIndex &index, int role) const
{
    if (!m_model || !index.isValid() || index.row() >= rowCount()) return {};
    if (const int k = counterAt(index.row()); k >= 0)
        return counterData(m_model->counters()->counters()[static_cast<size_t>(k)], index.column(), role);
    const CategoryInfo &c = m_model->categoryInfo(category(index.row()));
    switch (index.column()) {
    case Name:
        if (role == Qt::DisplayRole) return c.name;
        if (role == Qt::DecorationRole) return c.color;
        if (role == Qt::CheckStateRole) return c.visible ? Qt::Checked : Qt::Unchecked;
        if (role == Qt::ToolTipRole) return c.isState ? tr("state") : tr("event");
        break;
    case Searchable:
        if (role == Qt::CheckStateRole) return c.searchable ? Qt::Checked : Qt::Unchecked;
        break;
    case Count:
        if (role == Qt::DisplayRole) return QVariant::fromValue<qulonglong>(c.count);
        break;
    case Inclusive:
        if (role == Qt::DisplayRole) return formatDuration(c.inclusiveNs);
        if (role == Qt::UserRole) return c.inclusiveNs;
        break;
    case Exclusive:
        if (role == Qt::DisplayRole) return formatDuration(c.exclusiveNs);
        if (role == Qt::UserRole) return c.exclusiveNs;
        break;
    }
    if (role == Qt::TextAlignmentRole && index.column() >= Count) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

bool LegendModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!m_model || !index.isValid() || index.row() >= rowCount()) return false;
    if (const int k = counterAt(index.row()); k >= 0) {
        CounterInfo &c = m_model->counters()->counter(k);
        if (role == Qt::CheckStateRole && index.column() == Name)
            c.visible = value.toInt() == Qt::Checked;
        else if (role == Qt::DecorationRole && index.column() == Name && value.canConvert<QColor>())
            c.color = value.value<QColor>();
        else
            return false;
        emit dataChanged(index, index, { role });
        emit countersChanged();
        return true;
    }
    CategoryInfo &c = m_model->categoryInfo(category(index.row()));
    if (role == Qt::CheckStateRole && index.column() == Name)
        c.visible = value.toInt() == Qt::Checked;
    else if (role == Qt::CheckStateRole && index.column() == Searchable)
        c.searchable = value.toInt() == Qt::Checked;
    else if (role == Qt::DecorationRole && index.column() == Name && value.canConvert<QColor>())
        c.color = value.value<QColor>();
    else
        return false;
    emit dataChanged(index, index, { role });
    emit categoriesChanged();
    return true;
}

Qt::ItemFlags LegendModel::flags(const QModelIndex &index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == Name || (index.column() == Searchable && counterAt(index.row()) < 0))
        f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant LegendModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
    static const char *names[] = { "Category", "Search", "Count", "Incl.", "Excl." };
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

} // namespace upshot
