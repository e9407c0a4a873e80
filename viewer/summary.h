// The summary timeline of many ranks: how many rows are in each category at each pixel column,
// computed from the model's states or from per-row category samples precomputed once.
//
// Design.
//   A row's category at time t is the category of its depth-0 state containing t; a row with no
//   depth-0 state there (or one of a category hidden in the legend) counts as "no state" (code 0):
//   application time outside any logged state. A column counts every row at the time of its
//   centre (a point sample, as Vampir's summary timeline and Paraver's "last value" mode), so a
//   column's counts always add up to the number of rows counted.
//
//   summarize() samples the states directly: per row, one galloping search per column from the
//   previous one, O(rows x columns x log k) whatever the number of records in view; above a work
//   budget it counts every k-th row and scales the counts (an estimate, said in the band).
//
//   RankBins samples every row once, at the centres of B fixed bins over the run (B = 2048, fewer
//   when rows x B bytes would pass 64 MiB), in one pass over the depth-0 states: O(records +
//   rows x B), built once after loading. BinCounts adds those samples up per group of rows
//   (the summary band is the group of all rows; rank groups, rankgroups.h, are others), so a full
//   view costs O(groups x columns x categories) and never walks a member row. Columns narrower
//   than a bin show the bin under their centre; once bins would be wider than 4 px, the frame
//   samples the states instead (summarize()).
//
// Codes: 0 = no state, 1 + k = the k-th category seen at depth 0 (at most 254, further ones are
// counted as no state).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tracemodel.h"

namespace upshot {

// Counts of rows per category per column of [t0, t1].
struct SummaryBand
{
    double t0 = 0, t1 = 0;
    int columns = 0;
    std::vector<int> categoryOfCode; // code -> category index; [0] = -1 (no state)
    std::vector<double> counts; // [column * codes() + code]
    double rowsCounted = 0; // rows each column's counts add up to
    bool estimated = false; // every k-th row counted, scaled by k

    int codes() const { return static_cast<int>(categoryOfCode.size()); }
    double count(int column, int code) const { return counts[static_cast<size_t>(column * codes() + code)]; }
    // The count of category index cat (-1 = no state) in a column.
    double countOfCategory(int column, int cat) const;
};

// The category index of row's depth-0 state containing t, or -1.
int categoryAt(const TraceModel &model, int row, double t);

// Row-columns a frame samples for the summary band, and as much again for the groups' rows: the
// two take about 35 ms on this machine's cores at this budget (4,096 rows zoomed in, where bins
// no longer serve), within a 50 ms frame.
constexpr double kFrameSampleBudget = 2e6;

// Counts, per column of [t0, t1] split into `columns`, the rows (all when rows is empty) in
// each category at the column's centre, from the states. Categories with visible[c] == 0 count
// as no state (visible empty = all visible). Above maxWork row-columns, every k-th row.
SummaryBand summarize(const TraceModel &model, double t0, double t1, int columns, const std::vector<char> &visible = {},
    const std::vector<int> &rows = {}, double maxWork = kFrameSampleBudget);

// Every row's category code at the centres of fixed bins over the run.
class RankBins
{
public:
    // Samples model's rows; bins <= 0 picks 2048, fewer above 64 MiB.
    explicit RankBins(const TraceModel &model, int bins = 0);
    int binCount() const { return m_bins; }
    int rowCount() const { return m_rows; }
    double t0() const { return m_t0; }
    double binWidth() const { return m_binWidth; }
    // The bin holding t, clamped to the run.
    int binOf(double t) const;
    const uint8_t *row(int r) const { return m_codes.data() + static_cast<size_t>(r) * static_cast<size_t>(m_bins); }
    const std::vector<int> &categoryOfCode() const { return m_categoryOfCode; }
    int codes() const { return static_cast<int>(m_categoryOfCode.size()); }
    size_t memoryBytes() const { return m_codes.capacity(); }

private:
    int m_bins = 0, m_rows = 0;
    double m_t0 = 0, m_binWidth = 1;
    std::vector<uint8_t> m_codes; // row-major
    std::vector<int> m_categoryOfCode { -1 };
};

// Per group of rows, per bin, how many of its rows are in each code: RankBins summed by group.
class BinCounts
{
public:
    // groupOfRow[r] in [0, groups) or -1 (not counted).
    BinCounts(std::shared_ptr<const RankBins> bins, const std::vector<int> &groupOfRow, int groups);
    // All rows as one group.
    explicit BinCounts(std::shared_ptr<const RankBins> bins);
    int groupCount() const { return m_groups; }
    const uint32_t *counts(int group, int bin) const
    {
        return m_counts.data()
            + (static_cast<size_t>(group) * static_cast<size_t>(m_bins) + static_cast<size_t>(bin))
            * static_cast<size_t>(m_codes);
    }
    uint32_t members(int group) const { return m_members[static_cast<size_t>(group)]; }
    const RankBins &bins() const { return *m_rankBins; }
    // The band of one group over [t0, t1]: each column takes the bin under its centre.
    SummaryBand band(int group, double t0, double t1, int columns, const std::vector<char> &visible = {}) const;
    size_t memoryBytes() const { return m_counts.capacity() * sizeof(uint32_t); }

private:
    std::shared_ptr<const RankBins> m_rankBins;
    int m_groups = 0, m_bins = 0, m_codes = 0;
    std::vector<uint32_t> m_counts;
    std::vector<uint32_t> m_members;
};

// True when bins are fine enough for a view of nsPerPixel: at most 4 px per bin.
inline bool binsServe(const RankBins &bins, double nsPerPixel)
{
    return bins.binWidth() <= 4 * nsPerPixel;
}

} // namespace upshot
