// The summary timeline: per-column category counts from the states, and from per-row bins.
#include "summary.h"

#include <algorithm>
#include <cmath>

#include "lodfolder.h"

namespace upshot {

double SummaryBand::countOfCategory(int column, int cat) const
{
    for (int k = 0; k < codes(); ++k)
        if (categoryOfCode[static_cast<size_t>(k)] == cat) return count(column, k);
    return 0;
}

int categoryAt(const TraceModel &model, int row, double t)
{
    if (model.laneCount(row) == 0) return -1;
    auto [b, e] = model.lane(row, 0);
    const TraceModel::RowStates S = model.rowStates(row);
    // Ends are sorted in a lane: the first state ending after t is the only one that can hold it.
    const size_t i = partitionIndex(b, e, [&](size_t k) { return S.end(k) <= t; });
    return i < e && S.start(i) <= t ? S.category(i) : -1;
}

// Calls out(k, category or -1) for the times t0 + (k + 0.5) * step, k = 0..n-1, on a row's
// depth-0 lane: one gallop per sample from the previous state.
template<class Out> static void sampleRow(const TraceModel &model, int row, double t0, double step, int n, Out out)
{
    if (model.laneCount(row) == 0) {
        for (int k = 0; k < n; ++k)
            out(k, -1);
        return;
    }
    auto [i, e] = model.lane(row, 0);
    const TraceModel::RowStates S = model.rowStates(row);
    for (int k = 0; k < n; ++k) {
        const double t = t0 + (k + 0.5) * step;
        i = gallopFirst(i, e, [&](size_t q) { return S.end(q) <= t; });
        out(k, i < e && S.start(i) <= t ? S.category(i) : -1);
    }
}

SummaryBand summarize(const TraceModel &model, double t0, double t1, int columns, const std::vector<char> &visible,
    const std::vector<int> &rows, double maxWork)
{
    SummaryBand band;
    band.t0 = t0, band.t1 = t1, band.columns = std::max(0, columns);
    band.categoryOfCode = { -1 };
    std::vector<int> codeOf(static_cast<size_t>(model.categoryCount()), -1);
    for (int c = 0; c < model.categoryCount(); ++c)
        if (model.categoryInfo(c).isState && (visible.empty() || visible[static_cast<size_t>(c)])) {
            codeOf[static_cast<size_t>(c)] = band.codes();
            band.categoryOfCode.push_back(c);
        }
    const int codes = band.codes();
    band.counts.assign(static_cast<size_t>(band.columns) * static_cast<size_t>(codes), 0.0);
    const size_t n = rows.empty() ? static_cast<size_t>(model.rowCount()) : rows.size();
    if (n == 0 || band.columns == 0) return band;
    const size_t stride
        = std::max<size_t>(1, static_cast<size_t>(std::ceil(n * static_cast<double>(columns) / maxWork)));
    band.estimated = stride > 1;
    const double step = (t1 - t0) / columns;
    for (size_t k = 0; k < n; k += stride) {
        const int row = rows.empty() ? static_cast<int>(k) : rows[k];
        sampleRow(model, row, t0, step, columns, [&](int col, int cat) {
            const int code = cat >= 0 ? codeOf[static_cast<size_t>(cat)] : 0;
            band.counts[static_cast<size_t>(col * codes + std::max(code, 0))] += static_cast<double>(stride);
        });
        band.rowsCounted += static_cast<double>(stride);
    }
    return band;
}

RankBins::RankBins(const TraceModel &model, int bins) : m_rows(model.rowCount()), m_t0(model.tBegin())
{
    constexpr size_t kMaxBytes = size_t { 64 } << 20;
    m_bins = bins > 0 ? bins : static_cast<int>(std::clamp<size_t>(kMaxBytes / std::max(1, m_rows), 256, 2048));
    m_binWidth = std::max(1e-3, (model.tEnd() - model.tBegin()) / m_bins);
    m_codes.assign(static_cast<size_t>(m_rows) * static_cast<size_t>(m_bins), 0);
    std::vector<int> codeOf(static_cast<size_t>(model.categoryCount()), -1);
    for (int r = 0; r < m_rows; ++r) {
        uint8_t *out = m_codes.data() + static_cast<size_t>(r) * static_cast<size_t>(m_bins);
        sampleRow(model, r, m_t0, m_binWidth, m_bins, [&](int k, int cat) {
            if (cat < 0) return;
            int &code = codeOf[static_cast<size_t>(cat)];
            if (code < 0 && m_categoryOfCode.size() < 255) {
                code = static_cast<int>(m_categoryOfCode.size());
                m_categoryOfCode.push_back(cat);
            }
            out[k] = static_cast<uint8_t>(std::max(code, 0));
        });
    }
}

int RankBins::binOf(double t) const
{
    return std::clamp(static_cast<int>(std::floor((t - m_t0) / m_binWidth)), 0, m_bins - 1);
}

BinCounts::BinCounts(std::shared_ptr<const RankBins> bins, const std::vector<int> &groupOfRow, int groups)
    : m_rankBins(std::move(bins)), m_groups(groups), m_bins(m_rankBins->binCount()), m_codes(m_rankBins->codes())
{
    m_counts.assign(static_cast<size_t>(m_groups) * static_cast<size_t>(m_bins) * static_cast<size_t>(m_codes), 0);
    m_members.assign(static_cast<size_t>(m_groups), 0);
    for (int r = 0; r < m_rankBins->rowCount() && r < static_cast<int>(groupOfRow.size()); ++r) {
        const int g = groupOfRow[static_cast<size_t>(r)];
        if (g < 0 || g >= m_groups) continue;
        ++m_members[static_cast<size_t>(g)];
        const uint8_t *codes = m_rankBins->row(r);
        uint32_t *base
            = m_counts.data() + static_cast<size_t>(g) * static_cast<size_t>(m_bins) * static_cast<size_t>(m_codes);
        for (int b = 0; b < m_bins; ++b)
            ++base[static_cast<size_t>(b) * static_cast<size_t>(m_codes) + codes[b]];
    }
}

BinCounts::BinCounts(std::shared_ptr<const RankBins> bins)
    : BinCounts(bins, std::vector<int>(static_cast<size_t>(bins->rowCount()), 0), 1)
{ }

SummaryBand BinCounts::band(int group, double t0, double t1, int columns, const std::vector<char> &visible) const
{
    SummaryBand band;
    band.t0 = t0, band.t1 = t1, band.columns = std::max(0, columns);
    band.categoryOfCode = m_rankBins->categoryOfCode();
    band.rowsCounted = members(group);
    band.counts.assign(static_cast<size_t>(band.columns) * static_cast<size_t>(m_codes), 0.0);
    const double step = (t1 - t0) / std::max(1, columns);
    const double runEnd = m_rankBins->t0() + m_rankBins->binWidth() * m_bins;
    for (int c = 0; c < band.columns; ++c) {
        const double t = t0 + (c + 0.5) * step;
        double *out = band.counts.data() + static_cast<size_t>(c) * static_cast<size_t>(m_codes);
        if (t < m_rankBins->t0() || t >= runEnd) { // outside the run: no state
            out[0] = band.rowsCounted;
            continue;
        }
        const uint32_t *n = counts(group, m_rankBins->binOf(t));
        for (int k = 0; k < m_codes; ++k) {
            const int cat = band.categoryOfCode[static_cast<size_t>(k)];
            const bool shown = k == 0 || visible.empty() || visible[static_cast<size_t>(cat)];
            out[shown ? k : 0] += n[k];
        }
    }
    return band;
}

} // namespace upshot
