// The host's call table: ids are never 0, an ended entry's id misses after its slot is reused,
// references survive later inserts.
#include "../../src/local/slot_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using cppless::local::slot_table;

TEST(SlotTable, InsertFindTake) {
  slot_table<std::string> t;
  const auto a = t.insert("a"), b = t.insert("b");
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.at(a), "a");
  EXPECT_EQ(t.size(), 2u);
  auto taken = t.take(a);
  ASSERT_TRUE(taken);
  EXPECT_EQ(*taken, "a");
  EXPECT_EQ(t.find(a), nullptr);
  EXPECT_FALSE(t.take(a));
  EXPECT_THROW(t.at(a), std::out_of_range);
  EXPECT_TRUE(t.erase(b));
  EXPECT_FALSE(t.erase(b));
  EXPECT_EQ(t.size(), 0u);
}

TEST(SlotTable, AStaleIdMissesTheEntryThatReusesItsSlot) {
  slot_table<int> t;
  const auto old_id = t.insert(1);
  t.erase(old_id);
  const auto new_id = t.insert(2);
  EXPECT_EQ(static_cast<std::uint32_t>(old_id), static_cast<std::uint32_t>(new_id));  // same slot
  EXPECT_NE(old_id, new_id);
  EXPECT_EQ(t.find(old_id), nullptr);
  EXPECT_EQ(t.at(new_id), 2);
  EXPECT_EQ(t.find(0), nullptr);
  EXPECT_EQ(t.find(~std::uint64_t{0}), nullptr);
}

TEST(SlotTable, ReferencesSurviveGrowth) {
  slot_table<std::vector<int>> t;
  const auto first = t.insert({1, 2, 3});
  std::vector<int>& ref = t.at(first);
  for (int i = 0; i < 10000; ++i) t.insert({i});
  EXPECT_EQ(&ref, &t.at(first));
  EXPECT_EQ(ref.size(), 3u);
}

}  // namespace
