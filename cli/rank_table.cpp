// Per-rank tables, in full or summarised (rank_table.h).
#include "rank_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

#include "mpe/spread.h"

namespace mpe::cli {

namespace {

constexpr int kRankWidth = 7;

std::string padded(const std::string& s, int width, bool left) {
  const size_t w = static_cast<size_t>(std::max(width, 0));
  if (s.size() >= w) return s;
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

// One number in a column `width` wide; "-" for none.
std::string number(double v, int width, int precision, bool sign) {
  if (std::isnan(v)) return padded("-", width, false);
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+*.*f" : "%*.*f", width, precision, v);
  return buf;
}

}  // namespace

RankTable::RankTable(std::vector<Column> columns, size_t rank_by)
    : columns_(std::move(columns)), rank_by_(rank_by) {
  for (Column& c : columns_) c.width = std::max(c.width, static_cast<int>(c.header.size()));
}

void RankTable::add(uint32_t rank, std::vector<Cell> cells) {
  cells.resize(columns_.size(), Cell(NAN));
  rows_.push_back(Row{rank, std::move(cells)});
}

std::string RankTable::header_line(const std::string& indent) const {
  std::string s = indent + padded("rank", kRankWidth, false);
  for (const Column& c : columns_) s += " " + padded(c.header, c.width, c.precision == kText);
  return s + "\n";
}

std::string RankTable::row_line(const Row& row, const std::string& indent) const {
  std::string s = indent + padded(std::to_string(row.rank), kRankWidth, false);
  for (size_t k = 0; k < columns_.size(); ++k) {
    const Column& c = columns_[k];
    s += " " + (c.precision == kText ? padded(row.cells[k].text, c.width, true)
                                     : number(row.cells[k].number, c.width, c.precision, c.sign));
  }
  return s + "\n";
}

std::string RankTable::text(size_t top, const std::string& indent) const {
  if (summarised()) return summary(top, indent);
  std::string s = header_line(indent);
  for (const Row& row : rows_) s += row_line(row, indent);
  return s;
}

std::string RankTable::summary(size_t top, const std::string& indent) const {
  // Per numeric column: min, mean and max over the ranks that have a value (mpe/spread.h), with
  // the first rank holding the min and the max.
  size_t label = 0;
  for (const Column& c : columns_) label = std::max(label, c.header.size());
  int w = 10;  // the statistics share one width: the widest column's, 10 at least
  for (const Column& c : columns_) w = std::max(w, c.width);
  char line[256];
  std::snprintf(line, sizeof line, "%zu ranks: min, mean and max over the ranks, then the top ranks\n",
                rows_.size());
  std::string s = indent + line;
  s += indent + padded("", static_cast<int>(label), true) + " " + padded("min", w, false) + " " +
       padded("at rank", kRankWidth, false) + " " + padded("mean", w, false) + " " + padded("max", w, false) +
       " " + padded("at rank", kRankWidth, false) + "\n";
  for (size_t k = 0; k < columns_.size(); ++k) {
    const Column& c = columns_[k];
    if (c.precision == kText) continue;
    Spread spread;
    for (const Row& row : rows_)
      if (!std::isnan(row.cells[k].number)) spread.add(row.cells[k].number, row.rank);
    s += indent + padded(c.header, static_cast<int>(label), true) + " ";
    if (!spread.n) {
      s += padded("-", w, false) + "\n";
      continue;
    }
    s += number(spread.min, w, c.precision, c.sign) + " " +
         padded(std::to_string(spread.min_rank), kRankWidth, false) + " " +
         number(spread.mean(), w, std::max(c.precision, 2), c.sign) + " " +
         number(spread.max, w, c.precision, c.sign) + " " +
         padded(std::to_string(spread.max_rank), kRankWidth, false) + "\n";
  }
  // The top ranks by the rank_by column, largest first (ranks without a value last), ties in
  // the order added.
  std::vector<size_t> order(rows_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const size_t shown = std::min(top, rows_.size());
  auto value = [&](size_t i) {
    const double v = rows_[i].cells[rank_by_].number;
    return std::isnan(v) ? -INFINITY : v;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                    [&](size_t a, size_t b) { return value(a) != value(b) ? value(a) > value(b) : a < b; });
  std::snprintf(line, sizeof line, "top %zu by %s:\n", shown, columns_[rank_by_].header.c_str());
  s += indent + line + header_line(indent);
  for (size_t i = 0; i < shown; ++i) s += row_line(rows_[order[i]], indent);
  std::snprintf(line, sizeof line, "(%zu more ranks left out; --top N shows more, --json has every rank)\n",
                rows_.size() - shown);
  return s + indent + line;
}

}  // namespace mpe::cli
