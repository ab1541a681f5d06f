// PinTable (kvprefix/pins.h): counts, the first-pin and last-unpin hooks,
// Copy, and the running table, over both count stores.
#include "kvprefix/pins.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kvprefix {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

template <typename Counts>
class PinTableTest : public ::testing::Test {};

using CountStores = ::testing::Types<HashedPinCounts<std::uint64_t>,
                                     DensePinCounts<std::uint64_t>>;
TYPED_TEST_SUITE(PinTableTest, CountStores);

TYPED_TEST(PinTableTest, HooksRunOnTheFirstPinAndTheLastUnpinOnly) {
  PinTable<std::uint64_t, int, TypeParam> pins;
  std::vector<std::uint64_t> firsts;
  std::vector<std::uint64_t> lasts;
  const auto first = [&](std::uint64_t key) { firsts.push_back(key); };
  const auto last = [&](std::uint64_t key) { lasts.push_back(key); };
  pins.Pin(7, first);
  pins.Pin(7, first);
  pins.Pin(3, first);
  EXPECT_THAT(firsts, ElementsAre(7, 3));
  EXPECT_EQ(pins.count(7), 2u);
  EXPECT_EQ(pins.count(3), 1u);
  EXPECT_EQ(pins.count(5), 0u);
  EXPECT_EQ(pins.pinned(), 2u);
  pins.Unpin(7, last);
  EXPECT_THAT(lasts, IsEmpty());
  EXPECT_TRUE(pins.is_pinned(7));
  pins.Unpin(7, last);
  pins.Unpin(3, last);
  EXPECT_THAT(lasts, ElementsAre(7, 3));
  EXPECT_FALSE(pins.is_pinned(7));
  EXPECT_EQ(pins.pinned(), 0u);
  // A key pinned again after its last unpin is a first pin again.
  pins.Pin(7, first);
  EXPECT_THAT(firsts, ElementsAre(7, 3, 7));
  EXPECT_EQ(pins.pinned(), 1u);
}

TYPED_TEST(PinTableTest, CopyGivesTheCountWithoutHooks) {
  PinTable<std::uint64_t, int, TypeParam> pins;
  pins.Pin(4);
  pins.Pin(4);
  pins.Copy(4, 9);  // sglang's split: the new node takes the child's locks
  pins.Copy(1, 8);  // no pin: nothing
  EXPECT_EQ(pins.count(9), 2u);
  EXPECT_EQ(pins.count(8), 0u);
  EXPECT_EQ(pins.pinned(), 2u);
  int unpinned = 0;
  pins.Unpin(9, [&](std::uint64_t) { ++unpinned; });
  pins.Unpin(9, [&](std::uint64_t) { ++unpinned; });
  EXPECT_EQ(unpinned, 1);
  EXPECT_EQ(pins.count(4), 2u);
  EXPECT_EQ(pins.pinned(), 1u);
}

TYPED_TEST(PinTableTest, AdmitRecordsAndFinishExtracts) {
  PinTable<std::uint64_t, std::vector<std::uint64_t>, TypeParam> pins;
  pins.Admit(0, {1, 2, 3});
  pins.Admit(5, {4});
  EXPECT_EQ(pins.running_count(), 2u);
  pins.running(5).push_back(6);
  EXPECT_THAT(pins.Finish(5), ElementsAre(4, 6));
  EXPECT_EQ(pins.running_count(), 1u);
  EXPECT_THROW(pins.running(5), std::out_of_range);
  EXPECT_THAT(pins.Finish(0), ElementsAre(1, 2, 3));
  EXPECT_EQ(pins.running_count(), 0u);
}

TEST(DensePinCountsTest, GrowsToTheLargestKeyOnly) {
  DensePinCounts<std::uint64_t> counts;
  EXPECT_EQ(counts.memory_bytes(), 0u);
  EXPECT_EQ(counts.Get(1000), 0u);
  EXPECT_EQ(counts.memory_bytes(), 0u);  // reading allocates nothing
  EXPECT_EQ(counts.Add(10), 0u);
  EXPECT_EQ(counts.Add(10), 1u);
  EXPECT_EQ(counts.Get(10), 2u);
  EXPECT_GE(counts.memory_bytes(), 11 * sizeof(std::uint64_t));
  EXPECT_EQ(counts.Subtract(10), 1u);
}

}  // namespace
}  // namespace kvprefix
