// The data side of upshot's live mode.
#include "livemodel.h"

#include <QStringList>

#include <cmath>
#include <tuple>

#include "mpe/log_defs.h"

namespace upshot {

using mpe::live_stream::NowRow;

QColor liveRoutineColor(const std::string &routine)
{
    if (routine.empty()) return QColor(225, 225, 225);
    return QColor::fromRgb(static_cast<QRgb>(mpe::format::default_mpi_color(routine)));
}

namespace {

QString peerText(const NowRow &r)
{
    if (r.peer == mpe::peer::kAnySource) return QStringLiteral("any");
    if (r.peer >= 0) return QString::number(r.peer);
    if (r.root >= 0) return QStringLiteral("root %1").arg(r.root);
    return {};
}

} // namespace

NowTableModel::NowTableModel(QObject *parent) : QAbstractTableModel(parent) { }

void NowTableModel::setRows(std::vector<NowRow> rows)
{
    // Rows are positions in the sort, as in top: the first `kept` change in place, then rows are
    // added or removed at the end; a view keeps its scroll position and selection of positions.
    sortRows(rows);
    const size_t kept = std::min(m_rows.size(), rows.size());
    if (rows.size() < m_rows.size()) {
        beginRemoveRows({}, static_cast<int>(kept), static_cast<int>(m_rows.size()) - 1);
        m_rows.resize(kept);
        endRemoveRows();
    }
    std::copy(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(kept), m_rows.begin());
    if (kept > 0) emit dataChanged(index(0, 0), index(static_cast<int>(kept) - 1, ColumnCount - 1));
    if (rows.size() > kept) {
        beginInsertRows({}, static_cast<int>(kept), static_cast<int>(rows.size()) - 1);
        m_rows.insert(m_rows.end(), std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(kept)),
            std::make_move_iterator(rows.end()));
        endInsertRows();
    }
}

int NowTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int NowTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant NowTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const NowRow &r = row(index.row());
    if (role == Qt::BackgroundRole) return r.stuck ? QVariant(kStuckColor) : QVariant();
    if (role == Qt::ToolTipRole) return QStringLiteral("rank %1: %2").arg(r.rank).arg(describeNow(r));
    if (role == Qt::TextAlignmentRole && index.column() != Routine && index.column() != CallSite)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Rank:
        return r.rank;
    case Thread:
        return r.thread;
    case Routine:
        return r.in_mpi ? QString::fromStdString(r.routine) : tr("(application)");
    case CallSite:
        return QString::fromStdString(r.callsite);
    case Peer:
        return peerText(r);
    case Tag:
        return r.tag >= 0 ? QVariant(r.tag) : QVariant(QString());
    case Seconds:
        return QString::number(r.seconds, 'f', 2);
    }
    return {};
}

QVariant NowTableModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Rank:
        return tr("Rank");
    case Thread:
        return tr("Thread");
    case Routine:
        return tr("Call");
    case CallSite:
        return tr("Call site");
    case Peer:
        return tr("Peer");
    case Tag:
        return tr("Tag");
    case Seconds:
        return tr("Seconds");
    }
    return {};
}

void NowTableModel::sort(int column, Qt::SortOrder order)
{
    if (column < 0 || column >= ColumnCount) return;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    // Persistent indexes follow their row: remember each by (rank, thread).
    std::vector<std::pair<int32_t, uint32_t>> keys;
    for (const QModelIndex &i : before)
        keys.emplace_back(row(i.row()).rank, row(i.row()).thread);
    m_sortColumn = column;
    m_order = order;
    sortRows(m_rows);
    QModelIndexList after;
    for (size_t k = 0; k < keys.size(); ++k) {
        const auto it = std::find_if(m_rows.begin(), m_rows.end(),
            [&](const NowRow &r) { return r.rank == keys[k].first && r.thread == keys[k].second; });
        after.push_back(index(static_cast<int>(it - m_rows.begin()), before[static_cast<qsizetype>(k)].column()));
    }
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void NowTableModel::sortRows(std::vector<NowRow> &rows) const
{
    // Ties keep rank order, so that rows do not swap places from one refresh to the next.
    auto key = [this](const NowRow &r) {
        switch (m_sortColumn) {
        case Rank:
            return std::tuple(static_cast<double>(r.rank), QString(), 0.0);
        case Thread:
            return std::tuple(0.0, QString(), static_cast<double>(r.thread));
        case Routine:
            return std::tuple(0.0, QString::fromStdString(r.routine), 0.0);
        case CallSite:
            return std::tuple(0.0, QString::fromStdString(r.callsite), 0.0);
        case Peer:
            return std::tuple(static_cast<double>(r.peer), QString(), static_cast<double>(r.root));
        case Tag:
            return std::tuple(static_cast<double>(r.tag), QString(), 0.0);
        case Seconds:
            return std::tuple(r.seconds, QString(), 0.0);
        }
        return std::tuple(0.0, QString(), 0.0);
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const NowRow &a, const NowRow &b) {
        const auto ka = key(a), kb = key(b);
        if (ka != kb) return m_order == Qt::AscendingOrder ? ka < kb : kb < ka;
        return std::pair(a.rank, a.thread) < std::pair(b.rank, b.thread);
    });
}

TrafficMatrix::TrafficMatrix(std::vector<mpe::live_stream::PairTraffic> pairs, int ranks)
    : m_pairs(std::move(pairs)), m_ranks(ranks)
{
    std::sort(m_pairs.begin(), m_pairs.end(),
        [](const auto &a, const auto &b) { return std::pair(a.from, a.to) < std::pair(b.from, b.to); });
    for (const auto &p : m_pairs) {
        m_maxBytes = std::max(m_maxBytes, p.bytes);
        m_ranks = std::max({ m_ranks, p.from + 1, p.to + 1 });
    }
}

const mpe::live_stream::PairTraffic *TrafficMatrix::at(int from, int to) const
{
    const auto it = std::lower_bound(m_pairs.begin(), m_pairs.end(), std::pair(from, to),
        [](const auto &p, const std::pair<int, int> &k) { return std::pair(p.from, p.to) < k; });
    return it != m_pairs.end() && it->from == from && it->to == to ? &*it : nullptr;
}

QColor TrafficMatrix::color(uint64_t bytes) const
{
    if (bytes == 0 || m_maxBytes == 0) return Qt::white;
    // Log scale: a pair with a thousandth of the heaviest pair's bytes still shows.
    const double f = std::log1p(static_cast<double>(bytes)) / std::log1p(static_cast<double>(m_maxBytes));
    const double t = std::clamp(f, 0.0, 1.0);
    return QColor::fromRgbF(
        static_cast<float>(0.85 - 0.8 * t), static_cast<float>(0.9 - 0.65 * t), static_cast<float>(1.0 - 0.45 * t));
}

int liveRankCount(const mpe::live_stream::JobView &job)
{
    int n = static_cast<int>(job.world_size());
    if (!job.latest().empty()) n = std::max(n, static_cast<int>(job.latest().rbegin()->first) + 1);
    return n;
}

QString describeNow(const NowRow &r)
{
    return QString::fromStdString(mpe::live_stream::call_text(r));
}

QString diagnosisText(const mpe::live_stream::Diagnosis &d, double stuckSeconds)
{
    QStringList lines;
    for (const mpe::live_stream::Deadlock &dl : d.deadlocks) {
        QStringList ranks;
        for (const NowRow &r : dl.cycle)
            ranks << QString::number(r.rank);
        if (!dl.cycle.empty()) ranks << QString::number(dl.cycle.front().rank);
        lines << QStringLiteral("Deadlock: ranks %1").arg(ranks.join(QStringLiteral(" → ")));
        for (const NowRow &r : dl.cycle)
            lines << QStringLiteral("  rank %1: %2").arg(r.rank).arg(describeNow(r));
    }
    for (const mpe::live_stream::Stuck &s : d.stuck) {
        QStringList held;
        for (int32_t r : s.waiting)
            held << QString::number(r);
        lines << QStringLiteral("Stuck: rank %1 holds rank%2 %3")
                     .arg(s.holder.rank)
                     .arg(held.size() == 1 ? QString() : QStringLiteral("s"))
                     .arg(held.join(QStringLiteral(", ")));
        lines << QStringLiteral("  rank %1: %2").arg(s.holder.rank).arg(describeNow(s.holder));
    }
    if (lines.isEmpty())
        lines << QStringLiteral("No deadlock, and no rank held up by another for more than %1 s.")
                     .arg(QString::number(stuckSeconds, 'g', 3));
    return lines.join('\n');
}

QString liveStatusText(const mpe::live_stream::JobView &job)
{
    QStringList parts;
    parts << QStringLiteral("%1 / %2 ranks seen").arg(job.ranks_seen()).arg(job.world_size());
    parts << QStringLiteral("frames lost %1").arg(job.frames_dropped_by_ranks() + job.frames_lost_in_transit());
    parts << QStringLiteral("events dropped %1").arg(job.events_dropped());
    parts << QStringLiteral("%1 aggregated intervals").arg(job.aggregated_intervals());
    parts << QStringLiteral("%1 rejected messages").arg(job.rejected());
    if (job.ended() && job.job_end().end_message_lost())
        parts << QStringLiteral("job ended (its end message was lost on the way)");
    else if (job.ended())
        parts << QStringLiteral("job ended (exit status %1)").arg(job.job_end().exit_status);
    else if (job.ranks_seen() > 0 && job.ranks_finalized() == job.ranks_seen() && job.ranks_seen() >= job.world_size())
        parts << QStringLiteral("all ranks in MPI_Finalize");
    else
        parts << QStringLiteral("job running");
    return parts.join(QStringLiteral(" · "));
}

nlohmann::json liveSummary(const mpe::live_stream::JobView &job, double stuckSeconds)
{
    const mpe::live_stream::Diagnosis d = job.diagnose(stuckSeconds);
    nlohmann::json deadlocks = nlohmann::json::array(), stuck = nlohmann::json::array();
    for (const mpe::live_stream::Deadlock &dl : d.deadlocks) {
        nlohmann::json cycle = nlohmann::json::array();
        for (const NowRow &r : dl.cycle)
            cycle.push_back(r.rank);
        deadlocks.push_back(cycle);
    }
    for (const mpe::live_stream::Stuck &s : d.stuck)
        stuck.push_back({ { "holder", s.holder.rank }, { "waiting", s.waiting } });
    return {
        { "ranks_seen", job.ranks_seen() },
        { "world_size", job.world_size() },
        { "ended", job.ended() },
        { "frames_lost", job.frames_dropped_by_ranks() + job.frames_lost_in_transit() },
        { "events_dropped", job.events_dropped() },
        { "rejected", job.rejected() },
        { "deadlocks", deadlocks },
        { "stuck", stuck },
    };
}

} // namespace upshot
