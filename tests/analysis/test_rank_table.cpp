// The per-rank tables of the commands (cli/rank_table.h): in full up to a page of ranks, beyond it
// min / mean / max with their ranks and the top ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "rank_table.h"

namespace {

using mpe::cli::kPageOfRanks;
using mpe::cli::RankTable;

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Rank r waits r seconds, except rank 5, which has no value.
RankTable waiting(uint32_t nranks) {
  RankTable t({{"host", 6, RankTable::kText}, {"waiting (s)", 12, 3}}, 1);
  for (uint32_t r = 0; r < nranks; ++r) t.add(r, {"node" + std::to_string(r / 16), r == 5 ? NAN : r * 1.0});
  return t;
}

TEST(RankTable, UpToAPageEveryRankIsARowInOrder) {
  const RankTable t = waiting(kPageOfRanks);
  EXPECT_FALSE(t.summarised());
  const std::string text = t.text();
  EXPECT_EQ(lines(text), kPageOfRanks + 1);  // the header and one row per rank
  EXPECT_EQ(text.substr(0, text.find('\n')), "     rank host    waiting (s)");
  EXPECT_NE(text.find("\n        0 node0         0.000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n        5 node0             -\n"), std::string::npos) << text;  // no value
  EXPECT_NE(text.find("\n       31 node1        31.000\n"), std::string::npos) << text;
}

TEST(RankTable, BeyondAPageMinMeanMaxWithTheirRanksThenTheTopRanks) {
  const RankTable t = waiting(1000);
  ASSERT_TRUE(t.summarised());
  const std::string text = t.text(3);
  // Rank 5 has no value: the mean is over the 999 others, (0 + ... + 999 - 5) / 999.
  char stats[128];
  std::snprintf(stats, sizeof stats, "  waiting (s)        0.000       0      %.3f      999.000     999\n",
                (999.0 * 1000 / 2 - 5) / 999);
  EXPECT_NE(text.find("  1000 ranks: min, mean and max over the ranks, then the top ranks\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(stats), std::string::npos) << text;
  EXPECT_EQ(text.find("  host "), std::string::npos) << text;  // a text column has no statistics
  EXPECT_NE(
      text.find(
          "  top 3 by waiting (s):\n     rank host    waiting (s)\n"
          "      999 node62      999.000\n      998 node62      998.000\n      997 node62      997.000\n"
          "  (997 more ranks left out; --top N shows more, --json has every rank)\n"),
      std::string::npos)
      << text;
  EXPECT_LT(lines(text), 12u);
}

TEST(RankTable, TiesKeepRankOrderAndTopIsCappedByTheRows) {
  RankTable t({{"n", 4, 0}}, 0);
  for (uint32_t r = 0; r < 40; ++r) t.add(r, {r % 2 ? 7.0 : 1.0});
  const std::string text = t.text(100);
  EXPECT_NE(text.find("  n          1       0       4.00          7       1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("top 40 by n:\n     rank    n\n        1    7\n        3    7\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(0 more ranks left out"), std::string::npos) << text;
}

}  // namespace
