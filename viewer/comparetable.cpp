// The compare view's diff table model and the worst instance of a call site.
#include "comparetable.h"

#include <algorithm>
#include <cmath>

namespace upshot {

void CompareTableModel::setRows(std::vector<CompareRow> rows)
{
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

std::vector<CompareRow> compareRows(const mpe::analysis::diff::Comparison &c)
{
    std::vector<CompareRow> out;
    for (const auto &r : c.routines)
        out.push_back({ false, r });
    for (const auto &r : c.sites)
        out.push_back({ true, r });
    std::stable_sort(out.begin(), out.end(),
        [](const CompareRow &x, const CompareRow &y) { return std::fabs(x.diff.delta()) > std::fabs(y.diff.delta()); });
    return out;
}

QVariant CompareTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const CompareRow &row = m_rows[static_cast<size_t>(index.row())];
    const mpe::analysis::diff::Row &r = row.diff;
    const double pct = mpe::analysis::diff::pct_change(r.ns_a, r.ns_b);
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Kind:
            return row.isSite ? tr("site") : tr("routine");
        case Routine:
            return QString::fromStdString(row.isSite ? r.routine : r.name);
        case Site:
            return row.isSite ? QString::fromStdString(r.name) : QString();
        case TimeA:
            return formatDuration(r.ns_a);
        case TimeB:
            return formatDuration(r.ns_b);
        case Change:
            return (r.delta() >= 0 ? QStringLiteral("+") : QStringLiteral("−")) + formatDuration(std::fabs(r.delta()));
        case ChangePct:
            return std::isfinite(pct) ? QStringLiteral("%1%2%").arg(pct >= 0 ? "+" : "").arg(pct, 0, 'f', 1)
                                      : QStringLiteral("new");
        case MostChanged:
            return r.rank >= 0 ? tr("rank %1 (%2%3)")
                                     .arg(r.rank)
                                     .arg(r.rank_delta >= 0 ? "+" : "−")
                                     .arg(formatDuration(std::fabs(r.rank_delta)))
                               : QString();
        case CallsA:
            return QVariant::fromValue(r.calls_a);
        case CallsB:
            return QVariant::fromValue(r.calls_b);
        case Note:
            return QString::fromStdString(r.note);
        }
    } else if (role == Qt::TextAlignmentRole && index.column() >= TimeA && index.column() <= CallsB) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    } else if (role == Qt::ToolTipRole && row.isSite) {
        return tr("Click: show the longest %1 of this site in A and in B").arg(QString::fromStdString(r.routine));
    }
    return {};
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char *const kNames[ColumnCount] = { "", "Routine", "Call site", "Time A", "Time B", "B − A", "Change",
        "Most changed", "Calls A", "Calls B", "" };
    return section >= 0 && section < ColumnCount ? tr(kNames[section]) : QVariant();
}

StateRef worstInstance(const TraceModel &model, const QString &routine, const mpe::analysis::diff::Where &where)
{
    const int category = model.findCategory(routine);
    if (category < 0) return {};
    // The model's sites at `where` (several when outer frames differ), by the diff model's own
    // reading of their frames; site 0 holds the states without a known call site.
    std::vector<bool> sites(static_cast<size_t>(model.callSiteCount()) + 1, false);
    sites[0] = mpe::analysis::diff::where_of({}) == where;
    for (int id = 1; id <= model.callSiteCount(); ++id)
        sites[static_cast<size_t>(id)]
            = mpe::analysis::diff::where_of(model.callSite(static_cast<uint32_t>(id)).frames) == where;
    StateRef best;
    int64_t longest = -1;
    for (int row = 0; row < model.rowCount(); ++row)
        for (size_t i = 0; i < model.stateCount(row); ++i) {
            if (model.category(row, i) != category) continue;
            const uint32_t site = model.site(row, i);
            if (site >= sites.size() || !sites[site]) continue;
            if (model.durationNs(row, i) > longest) {
                longest = model.durationNs(row, i);
                best = StateRef { row, i };
            }
        }
    return best;
}

StateRef worstInstanceOf(const TraceModel &model, const CompareRow &row, bool a)
{
    if (!row.isSite) return {};
    const mpe::analysis::diff::Where &where = a ? row.diff.site_a : row.diff.site_b;
    if (where.location.empty()) return {}; // the site is only in the other run
    return worstInstance(model, QString::fromStdString(row.diff.routine), where);
}

} // namespace upshot
