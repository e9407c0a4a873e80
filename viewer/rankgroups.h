// Rank groups for logs with more ranks than pixel rows: rows grouped by node, by communicator,
// in blocks of consecutive ranks or by behaviour (clusters of alike ranks), each group shown as
// one row that expands in place into its ranks. The model of the grouping only; renderer.cpp paints it.
//
// Design.
//   A group holds model rows (all threads of its ranks). Its row is drawn from BinCounts
//   (summary.h): per bin, how many members are in each category, summed once when the grouping
//   is made, so a frame never walks a member row at coarse zoom. The draw mode picks one colour
//   per column from those counts (DrawMode). Each group also knows, over the window it was made
//   for, its members' MPI share (time in MPI functions / window) range, and a representative:
//   the member nearest the group's mean per-category time vector.
//
//   Behaviour clustering: every row's vector of time per state category at depth 0 over the
//   window, as fractions of the window (so vectors are comparable whatever the window's length),
//   is clustered by k-means (Lloyd's iterations, at most 50, squared Euclidean distance).
//   Deterministic: the first centre is the row nearest the mean, each next one the row farthest
//   from the centres chosen so far (lowest row on ties); empty clusters are dropped. Cost
//   O(records in the window + rows x k x categories x iterations).
//
//   Bad input (a communicator the log does not have, host names missing) falls back to blocks of
//   ranks and says why in message().
#pragma once

#include <QRgb>
#include <QString>

#include <memory>
#include <vector>

#include "summary.h"
#include "tracemodel.h"

namespace upshot {

enum class GroupBy { None, Auto, Node, Communicator, Blocks, Behaviour };

// How a group's row shows its members at each column.
enum class DrawMode {
    Dominant, // the category most members are in (no state when that is most)
    Max, // MPI first: the MPI category most members are in when any member is in MPI, else Dominant
    MpiShare, // the share of members in MPI, white (none) to dark red (all)
};

struct GroupSpec
{
    GroupBy by = GroupBy::Auto;
    QString comm; // Communicator: "world", a global id in decimal or 0x hex
    int blockSize = 0; // Blocks: ranks per block, 0 = to fit the target number of groups
    int clusters = 4; // Behaviour: k
};

// Parses "none", "auto", "node", "comm:<id|world>", "blocks[:N]", "behaviour[:K]" (or
// "behavior"); false with *error set otherwise.
bool parseGroupSpec(const QString &text, GroupSpec *spec, QString *error);
// Parses "dominant", "max", "mpi-share".
bool parseDrawMode(const QString &text, DrawMode *mode);
QString drawModeName(DrawMode mode);

struct RankGroup
{
    QString label; // "node00003", "comm 12", "ranks 0-15", "cluster 2"
    std::vector<int> rows; // model rows, ascending
    int representative = -1; // row nearest the group's mean behaviour
    double minMpiShare = 0, maxMpiShare = 0; // over the members, in the window the groups were made for
};

class RankGroups
{
public:
    // A slot is one drawn row: a group's row (row = -1) or a model row (group = its group, or -1
    // when the row is in no group).
    struct Slot
    {
        int row = -1;
        int group = -1;
        bool isGroup() const { return row < 0; }
    };

    // Groups model's rows as spec says, over the window [t0, t1] (behaviour and spread); at most
    // about targetGroups groups for automatic block sizes. Bad input falls back to blocks (message()).
    static std::shared_ptr<RankGroups> make(
        const TraceModel &model, const GroupSpec &spec, double t0, double t1, int targetGroups = 128);

    GroupBy by() const { return m_by; }
    // Why the requested grouping was not used, "" when it was.
    const QString &message() const { return m_message; }
    const std::vector<RankGroup> &groups() const { return m_groups; }
    int groupCount() const { return static_cast<int>(m_groups.size()); }
    // The group of a model row, or -1.
    int groupOfRow(int row) const { return m_groupOfRow[static_cast<size_t>(row)]; }
    // A short description: label, size, representative and MPI share range.
    QString describe(const TraceModel &model, int group) const;

    // Expanding shows a group's member rows under its row; collapsing hides them again.
    bool expanded(int group) const { return m_expanded[static_cast<size_t>(group)]; }
    void setExpanded(int group, bool on);
    void toggle(int group) { setExpanded(group, !expanded(group)); }
    void collapseAll();

    // The drawn rows, top to bottom.
    const std::vector<Slot> &rowSlots() const { return m_slots; }
    // The slot a model row is drawn in: its own, or its collapsed group's.
    int slotOfRow(int row) const { return m_slotOfRow[static_cast<size_t>(row)]; }
    // True when the row has a slot of its own (its group is expanded).
    bool rowShown(int row) const { return m_slots[static_cast<size_t>(slotOfRow(row))].row == row; }

    // Per group, per bin, members per category (summary.h).
    const BinCounts &counts() const { return *m_counts; }
    // The colour of a group's row at bin b: per the draw mode over the categories visible[c]
    // (empty = all); 0 (transparent) when members are mostly in no state. Cached per mode and visibility.
    QRgb binColour(const TraceModel &model, int group, int bin, DrawMode mode, const std::vector<char> &visible) const
    {
        return binColours(model, group, mode, visible)[bin];
    }
    // A group's colours for every bin (binColour() of bins 0..), valid until the mode or
    // visibility changes: a frame checks the cache once per group, not once per column.
    const QRgb *binColours(const TraceModel &model, int group, DrawMode mode, const std::vector<char> &visible) const;
    // The same from counts per code (a column of a SummaryBand).
    static QRgb colourOf(const TraceModel &model, const std::vector<int> &categoryOfCode, const double *counts,
        DrawMode mode, const std::vector<char> &visible);

private:
    void layout();

    GroupBy m_by = GroupBy::None;
    QString m_message;
    std::vector<RankGroup> m_groups;
    std::vector<int> m_groupOfRow;
    std::vector<char> m_expanded;
    std::vector<Slot> m_slots;
    std::vector<int> m_slotOfRow;
    std::shared_ptr<BinCounts> m_counts;
    // binColour()'s cache: groups x bins, for one mode and visibility.
    mutable std::vector<QRgb> m_colours;
    mutable DrawMode m_coloursMode = DrawMode::Dominant;
    mutable std::vector<char> m_coloursVisible;
    mutable bool m_coloursValid = false;
};

// Every row's time per state category at depth 0 inside [t0, t1], as fractions of t1 - t0:
// [row * categories + category]; the features behaviour clustering uses.
std::vector<float> categoryShares(const TraceModel &model, double t0, double t1);
// Clusters rows by their shares (k-means, deterministic, see above): cluster per row, 0..k'-1
// (k' <= k, no empty cluster), numbered by their lowest row.
std::vector<int> clusterRows(const std::vector<float> &shares, int rows, int dims, int k);

} // namespace upshot
