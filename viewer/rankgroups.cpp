// Rank groups: grouping by node, communicator, blocks or behaviour; expansion and slots; draw modes.
#include "rankgroups.h"

#include <QColor>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace upshot {

bool parseGroupSpec(const QString &text, GroupSpec *spec, QString *error)
{
    const QString kind = text.section(QLatin1Char(':'), 0, 0).trimmed().toLower();
    const QString arg = text.section(QLatin1Char(':'), 1).trimmed();
    GroupSpec s;
    bool ok = true;
    if (kind == QLatin1String("none") && arg.isEmpty()) {
        s.by = GroupBy::None;
    } else if (kind == QLatin1String("auto") && arg.isEmpty()) {
        s.by = GroupBy::Auto;
    } else if (kind == QLatin1String("node") && arg.isEmpty()) {
        s.by = GroupBy::Node;
    } else if (kind == QLatin1String("comm") && !arg.isEmpty()) {
        s.by = GroupBy::Communicator;
        s.comm = arg;
    } else if (kind == QLatin1String("blocks")) {
        s.by = GroupBy::Blocks;
        if (!arg.isEmpty()) s.blockSize = arg.toInt(&ok);
        ok = ok && (arg.isEmpty() || s.blockSize >= 1);
    } else if (kind == QLatin1String("behaviour") || kind == QLatin1String("behavior")) {
        s.by = GroupBy::Behaviour;
        if (!arg.isEmpty()) s.clusters = arg.toInt(&ok);
        ok = ok && s.clusters >= 1 && s.clusters <= 256;
    } else {
        ok = false;
    }
    if (!ok) {
        if (error)
            *error = QStringLiteral("bad grouping \"%1\" (want none, auto, node, comm:<id|world>, blocks[:N] or "
                                    "behaviour[:K])")
                         .arg(text);
        return false;
    }
    *spec = s;
    return true;
}

bool parseDrawMode(const QString &text, DrawMode *mode)
{
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("dominant"))
        *mode = DrawMode::Dominant;
    else if (t == QLatin1String("max"))
        *mode = DrawMode::Max;
    else if (t == QLatin1String("mpi-share"))
        *mode = DrawMode::MpiShare;
    else
        return false;
    return true;
}

QString drawModeName(DrawMode mode)
{
    switch (mode) {
    case DrawMode::Dominant:
        return QStringLiteral("dominant");
    case DrawMode::Max:
        return QStringLiteral("max");
    case DrawMode::MpiShare:
        return QStringLiteral("mpi-share");
    }
    return {};
}

std::vector<float> categoryShares(const TraceModel &model, double t0, double t1)
{
    const size_t dims = static_cast<size_t>(model.categoryCount());
    std::vector<float> out(static_cast<size_t>(model.rowCount()) * dims, 0.0f);
    const double span = std::max(t1 - t0, 1e-9);
    for (int r = 0; r < model.rowCount(); ++r) {
        if (model.laneCount(r) == 0) continue;
        auto [b, e] = model.visibleStates(r, 0, t0, t1);
        const TraceModel::RowStates S = model.rowStates(r);
        float *v = out.data() + static_cast<size_t>(r) * dims;
        for (size_t i = b; i < e; ++i)
            v[S.category(i)]
                += static_cast<float>(std::max(0.0, std::min(S.end(i), t1) - std::max(S.start(i), t0)) / span);
    }
    return out;
}

std::vector<int> clusterRows(const std::vector<float> &shares, int rows, int dims, int k)
{
    std::vector<int> cluster(static_cast<size_t>(rows), 0);
    if (rows == 0 || k <= 1 || dims == 0) return cluster;
    k = std::min(k, rows);
    auto at = [&](int r) { return shares.data() + static_cast<size_t>(r) * static_cast<size_t>(dims); };
    auto dist2 = [&](const float *a, const double *c) {
        double s = 0;
        for (int d = 0; d < dims; ++d)
            s += (a[d] - c[d]) * (a[d] - c[d]);
        return s;
    };
    // Deterministic seeding: the row nearest the mean, then farthest-first.
    std::vector<double> mean(static_cast<size_t>(dims), 0.0);
    for (int r = 0; r < rows; ++r)
        for (int d = 0; d < dims; ++d)
            mean[static_cast<size_t>(d)] += at(r)[d] / rows;
    std::vector<std::vector<double>> centres;
    auto centreOf = [&](int r) { return std::vector<double>(at(r), at(r) + dims); };
    int first = 0;
    double best = std::numeric_limits<double>::max();
    for (int r = 0; r < rows; ++r)
        if (const double d = dist2(at(r), mean.data()); d < best) best = d, first = r;
    centres.push_back(centreOf(first));
    std::vector<double> nearest(static_cast<size_t>(rows), std::numeric_limits<double>::max());
    while (static_cast<int>(centres.size()) < k) {
        int far = -1;
        double farD = 0;
        for (int r = 0; r < rows; ++r) {
            double &n = nearest[static_cast<size_t>(r)];
            n = std::min(n, dist2(at(r), centres.back().data()));
            if (n > farD) farD = n, far = r;
        }
        if (far < 0) break; // every row sits on a centre: fewer distinct behaviours than k
        centres.push_back(centreOf(far));
    }
    // Lloyd's iterations.
    const int kc = static_cast<int>(centres.size());
    for (int iter = 0; iter < 50; ++iter) {
        bool moved = false;
        for (int r = 0; r < rows; ++r) {
            int bestC = 0;
            double bestD = std::numeric_limits<double>::max();
            for (int c = 0; c < kc; ++c)
                if (const double d = dist2(at(r), centres[static_cast<size_t>(c)].data()); d < bestD)
                    bestD = d, bestC = c;
            if (cluster[static_cast<size_t>(r)] != bestC || iter == 0)
                moved |= cluster[static_cast<size_t>(r)] != bestC;
            cluster[static_cast<size_t>(r)] = bestC;
        }
        if (!moved && iter > 0) break;
        std::vector<std::vector<double>> sum(
            static_cast<size_t>(kc), std::vector<double>(static_cast<size_t>(dims), 0.0));
        std::vector<int> n(static_cast<size_t>(kc), 0);
        for (int r = 0; r < rows; ++r) {
            const int c = cluster[static_cast<size_t>(r)];
            ++n[static_cast<size_t>(c)];
            for (int d = 0; d < dims; ++d)
                sum[static_cast<size_t>(c)][static_cast<size_t>(d)] += at(r)[d];
        }
        for (int c = 0; c < kc; ++c)
            if (n[static_cast<size_t>(c)] > 0)
                for (int d = 0; d < dims; ++d)
                    centres[static_cast<size_t>(c)][static_cast<size_t>(d)]
                        = sum[static_cast<size_t>(c)][static_cast<size_t>(d)] / n[static_cast<size_t>(c)];
    }
    // Number the non-empty clusters by their lowest row.
    std::vector<int> renumber(static_cast<size_t>(kc), -1);
    int next = 0;
    for (int r = 0; r < rows; ++r) {
        int &m = renumber[static_cast<size_t>(cluster[static_cast<size_t>(r)])];
        if (m < 0) m = next++;
        cluster[static_cast<size_t>(r)] = m;
    }
    return cluster;
}

// Parses a communicator's name: "world", decimal or 0x hex global id; the communicator's index
// in model.communicators() or -1.
static int findCommunicator(const TraceModel &model, const QString &name)
{
    const auto &C = model.communicators();
    if (name.compare(QLatin1String("world"), Qt::CaseInsensitive) == 0) {
        for (size_t i = 0; i < C.size(); ++i)
            if (!C[i].inter && static_cast<int>(C[i].members.size()) == model.worldSize()) return static_cast<int>(i);
        return -1;
    }
    bool ok = false;
    const uint64_t id = name.startsWith(QLatin1String("0x"), Qt::CaseInsensitive) ? name.mid(2).toULongLong(&ok, 16)
                                                                                  : name.toULongLong(&ok, 10);
    if (!ok) return -1;
    for (size_t i = 0; i < C.size(); ++i)
        if (C[i].globalId == id) return static_cast<int>(i);
    return -1;
}

namespace {

// The group of each rank (-1 for none yet) and the groups' labels, as make() assigns them.
struct RankAssignment
{
    int ranks = 0;
    std::vector<int> groupOfRank;
    std::vector<QString> labels;

    // Ranks without a group yet go into blocks of n consecutive ranks.
    void blocks(int n, const QString &suffix)
    {
        std::map<int, int> groupOfBlock;
        for (int r = 0; r < ranks; ++r) {
            if (groupOfRank[static_cast<size_t>(r)] >= 0) continue;
            auto [it, added] = groupOfBlock.try_emplace(r / n, static_cast<int>(labels.size()));
            if (added)
                labels.push_back(QStringLiteral("ranks %1-%2%3")
                                     .arg(r / n * n)
                                     .arg(std::min(ranks, (r / n + 1) * n) - 1)
                                     .arg(suffix));
            groupOfRank[static_cast<size_t>(r)] = it->second;
        }
    }
};

} // namespace

// Auto: by node when the log names more than one host for its ranks, else in blocks.
static GroupBy autoGrouping(const TraceModel &model, int ranks)
{
    bool named = ranks > 0;
    std::map<std::string, int> hosts;
    for (int r = 0; r < ranks && named; ++r) {
        named = !model.host(static_cast<uint32_t>(r)).empty();
        hosts.emplace(model.host(static_cast<uint32_t>(r)), 0);
    }
    return named && hosts.size() > 1 && static_cast<int>(hosts.size()) < ranks ? GroupBy::Node : GroupBy::Blocks;
}

// A group per host; why not, when a rank has no host name ("" when grouped).
static QString groupByNode(const TraceModel &model, RankAssignment &a)
{
    std::map<std::string, int> groupOfHost;
    for (int r = 0; r < a.ranks; ++r) {
        const std::string &h = model.host(static_cast<uint32_t>(r));
        if (h.empty()) return QStringLiteral("the log has no host name for rank %1: grouped in blocks of ranks").arg(r);
        auto [it, added] = groupOfHost.try_emplace(h, static_cast<int>(a.labels.size()));
        if (added) a.labels.push_back(QString::fromStdString(h));
        a.groupOfRank[static_cast<size_t>(r)] = it->second;
    }
    return {};
}

// The communicator named `name` and its siblings (same size, disjoint: the other parts of the
// same split, as the rows of a process grid), one group each; why not, when the log has no such
// communicator ("" when grouped).
static QString groupByCommunicator(const TraceModel &model, const QString &name, RankAssignment &a)
{
    const int c = findCommunicator(model, name);
    if (c < 0) {
        QStringList ids;
        for (size_t i = 0; i < model.communicators().size() && i < 8; ++i)
            ids << QString::number(model.communicators()[i].globalId);
        return QStringLiteral("the log has no communicator \"%1\" (ids: %2%3): grouped in blocks of ranks")
            .arg(name, ids.join(QStringLiteral(", ")),
                model.communicators().size() > 8 ? QStringLiteral(", ...") : QString());
    }
    const auto &C = model.communicators();
    const size_t size = C[static_cast<size_t>(c)].members.size();
    std::vector<size_t> family { static_cast<size_t>(c) };
    for (size_t i = 0; i < C.size(); ++i)
        if (i != static_cast<size_t>(c) && C[i].members.size() == size && !C[i].inter) family.push_back(i);
    // In family order (the chosen one first); one overlapping those taken is not a sibling.
    for (size_t f : family) {
        const auto &M = C[f].members;
        const bool clash = std::any_of(M.begin(), M.end(),
            [&](int32_t m) { return m < 0 || m >= a.ranks || a.groupOfRank[static_cast<size_t>(m)] >= 0; });
        if (clash) continue;
        const int g = static_cast<int>(a.labels.size());
        a.labels.push_back(QStringLiteral("comm %1").arg(C[f].globalId));
        for (int32_t m : M)
            a.groupOfRank[static_cast<size_t>(m)] = g;
    }
    return {};
}

// A group per cluster of rows that spend their time alike (shares: categoryShares()).
static void groupByBehaviour(
    const TraceModel &model, const std::vector<float> &shares, int dims, int clusters, RankAssignment &a)
{
    const int rows = model.rowCount();
    const std::vector<int> cluster = clusterRows(shares, rows, dims, clusters);
    int k = 0;
    for (int r = 0; r < rows; ++r)
        k = std::max(k, cluster[static_cast<size_t>(r)] + 1);
    for (int i = 0; i < k; ++i)
        a.labels.push_back(QStringLiteral("cluster %1").arg(i + 1));
    for (int r = 0; r < rows; ++r) // a rank's first row decides
        if (int &g = a.groupOfRank[model.rank(r)]; g < 0) g = cluster[static_cast<size_t>(r)];
}

// Each group's MPI share range and representative (the row nearest the group's mean behaviour).
static void measureGroups(
    const TraceModel &model, const std::vector<float> &shares, int dims, std::vector<RankGroup> &groups)
{
    for (RankGroup &g : groups) {
        std::vector<double> mean(static_cast<size_t>(dims), 0.0);
        g.minMpiShare = 1, g.maxMpiShare = 0;
        for (int r : g.rows) {
            const float *v = shares.data() + static_cast<size_t>(r) * static_cast<size_t>(dims);
            double mpi = 0;
            for (int d = 0; d < dims; ++d) {
                mean[static_cast<size_t>(d)] += v[d] / static_cast<double>(g.rows.size());
                if (model.isMpiCategory(d)) mpi += v[d];
            }
            g.minMpiShare = std::min(g.minMpiShare, mpi), g.maxMpiShare = std::max(g.maxMpiShare, mpi);
        }
        double best = std::numeric_limits<double>::max();
        for (int r : g.rows) {
            const float *v = shares.data() + static_cast<size_t>(r) * static_cast<size_t>(dims);
            double d2 = 0;
            for (int d = 0; d < dims; ++d)
                d2 += (v[d] - mean[static_cast<size_t>(d)]) * (v[d] - mean[static_cast<size_t>(d)]);
            if (d2 < best) best = d2, g.representative = r;
        }
    }
}

std::shared_ptr<RankGroups> RankGroups::make(
    const TraceModel &model, const GroupSpec &spec, double t0, double t1, int targetGroups)
{
    auto out = std::make_shared<RankGroups>();
    RankGroups &G = *out;
    const int rows = model.rowCount();
    RankAssignment a;
    a.ranks = std::max(1, model.worldSize());
    for (int r = 0; r < rows; ++r)
        a.ranks = std::max(a.ranks, static_cast<int>(model.rank(r)) + 1);
    const int ranks = a.ranks;
    a.groupOfRank.assign(static_cast<size_t>(ranks), -1);
    auto autoBlock = [&] { return std::max(1, (ranks + std::max(1, targetGroups) - 1) / std::max(1, targetGroups)); };
    const GroupBy by = spec.by == GroupBy::Auto ? autoGrouping(model, ranks) : spec.by;
    G.m_by = by;
    const std::vector<float> shares = categoryShares(model, t0, t1);
    const int dims = model.categoryCount();
    switch (by) {
    case GroupBy::Node:
        G.m_message = groupByNode(model, a);
        break;
    case GroupBy::Communicator:
        G.m_message = groupByCommunicator(model, spec.comm, a);
        break;
    case GroupBy::Behaviour:
        groupByBehaviour(model, shares, dims, spec.clusters, a);
        break;
    default:
        break;
    }
    if (!G.m_message.isEmpty()) { // fall back
        std::fill(a.groupOfRank.begin(), a.groupOfRank.end(), -1);
        a.labels.clear();
        G.m_by = GroupBy::Blocks;
    }
    const int n = spec.by == GroupBy::Blocks && spec.blockSize > 0 ? spec.blockSize : autoBlock();
    a.blocks(n, G.m_by == GroupBy::Communicator ? QStringLiteral(" (rest)") : QString());
    // Groups, their rows, spread and representative.
    G.m_groups.resize(a.labels.size());
    for (size_t g = 0; g < a.labels.size(); ++g)
        G.m_groups[g].label = a.labels[g];
    G.m_groupOfRow.assign(static_cast<size_t>(rows), -1);
    for (int r = 0; r < rows; ++r) {
        const int g = a.groupOfRank[model.rank(r)];
        G.m_groupOfRow[static_cast<size_t>(r)] = g;
        if (g >= 0) G.m_groups[static_cast<size_t>(g)].rows.push_back(r);
    }
    G.m_groups.erase(
        std::remove_if(G.m_groups.begin(), G.m_groups.end(), [](const RankGroup &g) { return g.rows.empty(); }),
        G.m_groups.end());
    for (size_t g = 0; g < G.m_groups.size(); ++g)
        for (int r : G.m_groups[g].rows)
            G.m_groupOfRow[static_cast<size_t>(r)] = static_cast<int>(g);
    measureGroups(model, shares, dims, G.m_groups);
    G.m_expanded.assign(G.m_groups.size(), 0);
    G.m_counts = std::make_shared<BinCounts>(model.rankBins(), G.m_groupOfRow, G.groupCount());
    G.layout();
    return out;
}

QString RankGroups::describe(const TraceModel &model, int group) const
{
    const RankGroup &g = m_groups[static_cast<size_t>(group)];
    return QStringLiteral("%1: %2 rows; representative %3; MPI share %4-%5%")
        .arg(g.label)
        .arg(g.rows.size())
        .arg(g.representative >= 0 ? model.rowLabel(g.representative) : QStringLiteral("-"))
        .arg(std::lround(g.minMpiShare * 100))
        .arg(std::lround(g.maxMpiShare * 100));
}

void RankGroups::setExpanded(int group, bool on)
{
    if (group < 0 || group >= groupCount()) return;
    m_expanded[static_cast<size_t>(group)] = on;
    layout();
}

void RankGroups::collapseAll()
{
    std::fill(m_expanded.begin(), m_expanded.end(), 0);
    layout();
}

void RankGroups::layout()
{
    m_slots.clear();
    m_slotOfRow.assign(m_groupOfRow.size(), -1);
    // Groups in order of their first row, rows in no group where they fall between them.
    std::vector<int> order(m_groups.size());
    for (size_t g = 0; g < order.size(); ++g)
        order[g] = static_cast<int>(g);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return m_groups[static_cast<size_t>(a)].rows.front() < m_groups[static_cast<size_t>(b)].rows.front();
    });
    size_t next = 0;
    for (size_t r = 0; r < m_groupOfRow.size(); ++r) {
        if (m_groupOfRow[r] >= 0) {
            // A group's slot comes at its first row.
            while (
                next < order.size() && m_groups[static_cast<size_t>(order[next])].rows.front() <= static_cast<int>(r)) {
                const int g = order[next++];
                const int slot = static_cast<int>(m_slots.size());
                m_slots.push_back({ -1, g });
                for (int row : m_groups[static_cast<size_t>(g)].rows) {
                    m_slotOfRow[static_cast<size_t>(row)] = slot;
                    if (m_expanded[static_cast<size_t>(g)]) {
                        m_slotOfRow[static_cast<size_t>(row)] = static_cast<int>(m_slots.size());
                        m_slots.push_back({ row, g });
                    }
                }
            }
            continue;
        }
        m_slotOfRow[r] = static_cast<int>(m_slots.size());
        m_slots.push_back({ static_cast<int>(r), -1 });
    }
}

QRgb RankGroups::colourOf(const TraceModel &model, const std::vector<int> &categoryOfCode, const double *counts,
    DrawMode mode, const std::vector<char> &visible)
{
    const int codes = static_cast<int>(categoryOfCode.size());
    double total = 0, none = counts[0], mpi = 0;
    int best = -1, bestMpi = -1;
    for (int k = 0; k < codes; ++k) {
        total += counts[k];
        if (k == 0) continue;
        const int cat = categoryOfCode[static_cast<size_t>(k)];
        if (!visible.empty() && !visible[static_cast<size_t>(cat)]) {
            none += counts[k];
            continue;
        }
        if (counts[k] <= 0) continue;
        if (best < 0 || counts[k] > counts[best]) best = k;
        if (model.isMpiCategory(cat)) {
            mpi += counts[k];
            if (bestMpi < 0 || counts[k] > counts[bestMpi]) bestMpi = k;
        }
    }
    if (total <= 0) return 0;
    auto colourOfCode
        = [&](int k) { return 0xff000000u | model.categoryInfo(categoryOfCode[static_cast<size_t>(k)]).color.rgb(); };
    switch (mode) {
    case DrawMode::MpiShare: {
        // White (no member in MPI) to dark red (all of them).
        const double s = mpi / total;
        return qRgb(255 - static_cast<int>(s * 115), static_cast<int>(255 * (1 - s)), static_cast<int>(255 * (1 - s)));
    }
    case DrawMode::Max:
        if (bestMpi > 0) return colourOfCode(bestMpi);
        [[fallthrough]];
    case DrawMode::Dominant:
        break;
    }
    return best > 0 && counts[best] >= none ? colourOfCode(best) : 0;
}

const QRgb *RankGroups::binColours(
    const TraceModel &model, int group, DrawMode mode, const std::vector<char> &visible) const
{
    const int bins = m_counts->bins().binCount();
    if (!m_coloursValid || m_coloursMode != mode || m_coloursVisible != visible) {
        const int codes = m_counts->bins().codes();
        m_colours.assign(static_cast<size_t>(groupCount()) * static_cast<size_t>(bins), 0);
        std::vector<double> n(static_cast<size_t>(codes));
        for (int g = 0; g < groupCount(); ++g)
            for (int b = 0; b < bins; ++b) {
                const uint32_t *c = m_counts->counts(g, b);
                std::copy(c, c + codes, n.begin());
                m_colours[static_cast<size_t>(g) * static_cast<size_t>(bins) + static_cast<size_t>(b)]
                    = colourOf(model, m_counts->bins().categoryOfCode(), n.data(), mode, visible);
            }
        m_coloursMode = mode, m_coloursVisible = visible, m_coloursValid = true;
    }
    return m_colours.data() + static_cast<size_t>(group) * static_cast<size_t>(bins);
}

} // namespace upshot
