// Unit tests of what libmpestack and `mpe run` share without MPI: MPE_STACK's entries
// (mpe/stack_list.h) and the rank the launcher gives a process (mpe/config.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mpe/config.h"
#include "mpe/stack_list.h"

namespace {

std::vector<std::string> entries(std::string_view listed) {
  std::vector<std::string> out;
  std::string_view entry;
  while (mpe::stack::next_entry(listed, &entry)) out.emplace_back(entry);
  return out;
}

TEST(StackList, EntriesInOrder) {
  EXPECT_EQ(entries("/a/libA.so,mpe,/b/libB.so"),
            (std::vector<std::string>{"/a/libA.so", "mpe", "/b/libB.so"}));
  EXPECT_EQ(entries("mpe"), std::vector<std::string>{"mpe"});
}

// Both readers skipped empty entries before they shared one: a stray comma names no layer.
TEST(StackList, EmptyEntriesSkipped) {
  EXPECT_TRUE(entries("").empty());
  EXPECT_TRUE(entries(",,,").empty());
  EXPECT_EQ(entries(",A.so,,B.so,"), (std::vector<std::string>{"A.so", "B.so"}));
}

// The variables in the order they are asked; each test starts and ends with none of them set.
class LauncherRank : public ::testing::Test {
 protected:
  static constexpr const char* kNames[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name : kNames) unsetenv(name);
  }
};

TEST_F(LauncherRank, NoneIsMinusOne) { EXPECT_EQ(mpe::config::launcher_rank(), -1); }

TEST_F(LauncherRank, EachLauncherRead) {
  for (const char* name : kNames) {
    clear();
    setenv(name, "7", 1);
    EXPECT_EQ(mpe::config::launcher_rank(), 7) << name;
  }
}

// An empty variable is no rank: the next one is asked.
TEST_F(LauncherRank, EmptySkipped) {
  setenv("PMI_RANK", "", 1);
  setenv("PMIX_RANK", "3", 1);
  EXPECT_EQ(mpe::config::launcher_rank(), 3);
}

}  // namespace
