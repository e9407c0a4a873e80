// The per-rank tables of `mpe waits`, `mpe umq`, `mpe stat` and `mpe report`: in full up to a page
// of ranks, summarised beyond it (min, mean and max over the ranks with the ranks holding them,
// then the top ranks), so that a run of 100,000 ranks prints a page, not 100,000 lines. Text
// only: --json keeps every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mpe::cli {

// A table of more rows than this is summarised.
inline constexpr size_t kPageOfRanks = 32;
// Ranks a summary lists when --top does not say.
inline constexpr size_t kDefaultTopRanks = 10;

class RankTable {
 public:
  struct Column {
    std::string header;
    int width = 12;     // characters, at least the header's
    int precision = 6;  // digits after the point; kText: a text column (left-aligned, no statistics)
    bool sign = false;  // always show the sign (clock offsets)
  };
  static constexpr int kText = -1;
  // One value: a number (NaN when the rank has none, shown "-", left out of the statistics) or,
  // in a text column, text.
  struct Cell {
    Cell(double v) : number(v) {}                // NOLINT: implicit, a table row reads as a list of values
    Cell(std::string t) : text(std::move(t)) {}  // NOLINT
    Cell(const char* t) : text(t) {}             // NOLINT
    double number = 0;
    std::string text;
  };

  // `rank_by`: the column whose largest values make the top ranks of a summary.
  RankTable(std::vector<Column> columns, size_t rank_by);

  // Adds one rank's row, a cell per column.
  void add(uint32_t rank, std::vector<Cell> cells);
  size_t rows() const { return rows_.size(); }
  // True when text() summarises: more rows than a page.
  bool summarised() const { return rows_.size() > kPageOfRanks; }

  // The table: every row up to a page of them, in the order added; else, per numeric column,
  // min (its rank), mean and max (its rank), then the `top` ranks by the rank_by column, largest
  // first, and how many rows were left out. Each line starts with `indent`.
  std::string text(size_t top = kDefaultTopRanks, const std::string& indent = "  ") const;

 private:
  struct Row {
    uint32_t rank;
    std::vector<Cell> cells;
  };
  std::string header_line(const std::string& indent) const;
  std::string row_line(const Row& row, const std::string& indent) const;
  std::string summary(size_t top, const std::string& indent) const;

  std::vector<Column> columns_;
  size_t rank_by_;
  std::vector<Row> rows_;
};

}  // namespace mpe::cli
