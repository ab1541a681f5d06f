// Every engine's structures grow geometrically: n inserts of distinct
// single-token sequences (each a new leaf; with a capacity above n nothing is
// evicted, so the leaves pile up, as in a cache that has not filled yet)
// allocate O(n log n) bytes at most, never a copy of a whole structure per
// insert. Counted, not timed: this program replaces the global operator new
// and counts the bytes requested from it. The engines' large arrays grown
// with realloc (double-array) are not counted; glibc moves them with mremap
// and the engine tests check their faults.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/memory.h"
#include "kvprefix/types.h"
#include "testing/engine_types.h"

namespace {

// Bytes requested from the global operator new so far, by every thread.
std::atomic<std::uint64_t> allocated_bytes{0};

void* CountedAllocate(std::size_t size, std::size_t alignment) {
  allocated_bytes.fetch_add(size, std::memory_order_relaxed);
  const std::size_t bytes = size == 0 ? 1 : size;
  void* data = alignment <= alignof(std::max_align_t)
                   ? std::malloc(bytes)
                   : std::aligned_alloc(alignment, (bytes + alignment - 1) /
                                                       alignment * alignment);
  if (data == nullptr) throw std::bad_alloc();
  return data;
}

}  // namespace

// The array and nothrow forms call these in libstdc++.
void* operator new(std::size_t size) {
  return CountedAllocate(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return CountedAllocate(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* data) noexcept { std::free(data); }
void operator delete(void* data, std::size_t) noexcept { std::free(data); }
void operator delete(void* data, std::align_val_t) noexcept { std::free(data); }
void operator delete(void* data, std::size_t, std::align_val_t) noexcept {
  std::free(data);
}

namespace kvprefix {
namespace {

using ::kvprefix::test::EngineTypeName;
using ::kvprefix::test::GtestTypes;

// The bytes that `count` pushes allocate when each is preceded by
// `reserve(vector)`.
template <typename Reserve>
std::uint64_t BytesOfPushes(std::size_t count, Reserve reserve) {
  std::vector<std::uint64_t> vector;
  const std::uint64_t before = allocated_bytes.load();
  for (std::size_t i = 0; i < count; ++i) {
    reserve(vector);
    vector.push_back(i);
  }
  const std::uint64_t bytes = allocated_bytes.load() - before;
  EXPECT_EQ(vector.back(), count - 1);
  return bytes;
}

// The counter sees the quadratic pattern (so the engine test below can fail)
// and ReserveGeometric, the engines' fix for it, is linear.
TEST(AllocationCountTest, ExactReservesAreQuadraticGeometricOnesLinear) {
  constexpr std::size_t kPushes = 4096;
  const std::uint64_t exact =
      BytesOfPushes(kPushes, [](auto& v) { v.reserve(v.size() + 1); });
  // 8 bytes * (1 + 2 + ... + n) = 4 n (n + 1).
  EXPECT_EQ(exact, 4 * kPushes * (kPushes + 1));
  const std::uint64_t geometric = BytesOfPushes(
      kPushes, [](auto& v) { ReserveGeometric(v, v.size() + 1); });
  // Doubling from 1 to 4096: 8 bytes * (2 * 4096 - 1).
  EXPECT_EQ(geometric, 8 * (2 * kPushes - 1));
  // A limit caps the doubling; a need above the limit still gets room.
  std::vector<int> capped;
  capped.reserve(6);
  ReserveGeometric(capped, 7, 10);
  EXPECT_EQ(capped.capacity(), 10u);
  ReserveGeometric(capped, 11, 10);
  EXPECT_EQ(capped.capacity(), 11u);
}

template <typename E>
class GrowthTest : public ::testing::Test {
 protected:
  // Bytes that inserting the sequences {1}, {2}, ..., {n} into a fresh
  // engine with `options` requests from operator new (the constructor's own
  // allocations excluded).
  static std::uint64_t BytesOfDistinctInserts(const CacheOptions& options,
                                              std::size_t n) {
    E engine(options);
    const std::uint64_t before = allocated_bytes.load();
    for (std::size_t i = 1; i <= n; ++i) {
      const Token token = static_cast<Token>(i);
      engine.Insert(TokenSpan(&token, 1));
    }
    const std::uint64_t bytes = allocated_bytes.load() - before;
    EXPECT_EQ(engine.node_count(), n) << "nothing may be evicted";
    return bytes;
  }
};
TYPED_TEST_SUITE_P(GrowthTest);

// Linear growth allocates 4x the bytes for 4x the inserts, n log n about
// 4.7x; a copy of the leaf list per insert (the double-array's leaf heap
// once grew by one entry per insert) about 16x.
TYPED_TEST_P(GrowthTest, PilingUpLeavesAllocatesQuasiLinearBytes) {
  constexpr std::size_t kInserts = 5000;
  constexpr std::uint64_t kHugeCapacity = 1'000'000'000;
  const CacheOptions unbounded;
  const CacheOptions lru{.capacity = kHugeCapacity,
                         .policy = EvictionPolicy::kLru};
  const CacheOptions fifo{.capacity = kHugeCapacity,
                          .policy = EvictionPolicy::kFifo};
  for (const CacheOptions* options : {&unbounded, &lru, &fifo}) {
    const std::uint64_t small =
        TestFixture::BytesOfDistinctInserts(*options, kInserts);
    const std::uint64_t large =
        TestFixture::BytesOfDistinctInserts(*options, 4 * kInserts);
    EXPECT_GT(large, 0u);
    EXPECT_LT(large, 6 * small)
        << (options->bounded() ? EvictionPolicyName(options->policy)
                               : "unbounded")
        << ": " << small << " bytes for " << kInserts << " inserts, " << large
        << " for " << 4 * kInserts;
  }
}

REGISTER_TYPED_TEST_SUITE_P(GrowthTest,
                            PilingUpLeavesAllocatesQuasiLinearBytes);
INSTANTIATE_TYPED_TEST_SUITE_P(All, GrowthTest, GtestTypes<AllEngines>::type,
                               EngineTypeName);

}  // namespace
}  // namespace kvprefix
