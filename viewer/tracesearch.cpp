// The model's search: the next or previous state of a category or of the call sites a query
// names, over all rows or a chosen few.
#include "tracemodel.h"

#include <QRegularExpression>

namespace upshot {

std::vector<bool> TraceModel::matchCallSites(const QString &query) const
{
    std::vector<bool> out(m_sites.size() + 1, false);
    const QString q = query.trimmed();
    if (q.isEmpty()) return out;
    static const QRegularExpression fileLine(QStringLiteral("^([^\\s()]+):(\\d+)$"));
    const QRegularExpressionMatch m = fileLine.match(q);
    const std::string file = m.hasMatch() ? m.captured(1).toStdString() : std::string();
    const int line = m.hasMatch() ? m.captured(2).toInt() : 0;
    for (const CallSiteInfo &site : m_sites) {
        bool hit = false;
        if (m.hasMatch()) {
            // Exact: "halo.c:4" must not find the calls at halo.c:42.
            for (const mpe::Frame &f : site.frames)
                hit |= f.line == line && !f.file.empty()
                    && (mpe::base_name(f.file) == file || f.file == file
                        || (f.file.size() > file.size() && f.file.ends_with("/" + file)));
        } else {
            hit = site.text.contains(q, Qt::CaseInsensitive);
        }
        out[site.id] = hit;
    }
    return out;
}

template<class Match>
StateRef TraceModel::findWhere(double t, bool forward, const std::vector<int> &rows, Match match) const
{
    StateRef best;
    double bestT = forward ? 1e300 : -1e300;
    auto scanRow = [&](int row) {
        for (int d = 0; d < laneCount(row); ++d) {
            auto [b, e] = lane(row, d);
            if (forward) {
                for (size_t i = partitionIndex(b, e, [&](size_t k) { return start(row, k) <= t; }); i < e; ++i) {
                    if (start(row, i) >= bestT) break;
                    if (match(row, i)) {
                        bestT = start(row, i);
                        best = { row, i };
                        break;
                    }
                }
            } else {
                for (size_t i = partitionIndex(b, e, [&](size_t k) { return start(row, k) < t; }); i > b;) {
                    --i;
                    if (start(row, i) <= bestT) break;
                    if (match(row, i)) {
                        bestT = start(row, i);
                        best = { row, i };
                        break;
                    }
                }
            }
        }
    };
    if (rows.empty())
        for (int r = 0; r < rowCount(); ++r)
            scanRow(r);
    else
        for (int r : rows)
            if (r >= 0 && r < rowCount()) scanRow(r);
    return best;
}

StateRef TraceModel::find(double t, bool forward, int cat, const std::vector<int> &rows) const
{
    return findWhere(t, forward, rows, [&](int row, size_t i) {
        const int c = category(row, i);
        return cat >= 0 ? c == cat : (m_categories[c].searchable && m_categories[c].visible);
    });
}

StateRef TraceModel::findSite(
    double t, bool forward, const std::vector<bool> &sites, const std::vector<int> &rows) const
{
    if (std::find(sites.begin(), sites.end(), true) == sites.end()) return {};
    return findWhere(t, forward, rows, [&](int row, size_t i) {
        const uint32_t s = site(row, i);
        return s != 0 && s < sites.size() && sites[s] && m_categories[category(row, i)].visible;
    });
}

} // namespace upshot
