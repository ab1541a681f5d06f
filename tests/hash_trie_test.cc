// Tests of what is particular to the hash engine (optimized/hash_trie.h),
// mostly its capacity-bounded cache (SPEC §8): slots reused after eviction
// without breaking or faking implicit next-node edges, IDs never given twice
// and past 2^32, requests longer than the capacity, C = 0, LRU against FIFO,
// the storage limit, and seeded randomized differential tests against the
// reference (plain and paged), eviction reports included. The behaviour
// shared by all engines is in the typed suites (engine_test.cc, and
// cache_test.cc for SPEC §8 with the capacity documents).
//
// Every comparison with the reference goes through the differential
// harness (checking/differential.h, via testing/engine_checker.h); a
// failing one prints its seed, the cache options and the operations so far.
#include "optimized/hash_trie.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "checking/differential.h"
#include "kvprefix/cache_model.h"
#include "testing/engine_checker.h"

namespace kvprefix {
namespace {

using checking::DifferentialChecker;
using checking::EvictedPages;
using checking::FormatCacheOptions;
using checking::Operation;
using test::Agrees;

// A braced token list as a span argument: trie.Insert(Tokens{1, 2}).
using Tokens = std::vector<Token>;

CacheOptions Lru(std::uint64_t capacity) {
  return CacheOptions{.capacity = capacity, .policy = EvictionPolicy::kLru};
}
CacheOptions Fifo(std::uint64_t capacity) {
  return CacheOptions{.capacity = capacity, .policy = EvictionPolicy::kFifo};
}

// --- Hand-worked bounded cases ----------------------------------------------

TEST(HashTrieTest, UnboundedByDefaultWithSlotsAsIds) {
  HashTrie trie;
  EXPECT_FALSE(trie.options().bounded());
  EXPECT_EQ(trie.Access(Tokens{1, 2, 3}), (Match{0, 0}));
  EXPECT_EQ(trie.Access(Tokens{1, 2, 4}), (Match{2, 2}));
  EXPECT_EQ(trie.Insert(Tokens{1, 5}), 5u);
  EXPECT_EQ(trie.node_count(), 5u);
  EXPECT_EQ(trie.evicted_count(), 0u);
  EXPECT_EQ(trie.branch_count(), 2u);  // [1,2,4] and [1,5] left a path
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 4, 9}), (Match{3, 4}));
}

TEST(HashTrieTest, BadOptionsAreRejected) {
  EXPECT_THROW(HashTrie(CacheOptions{.page_size = 2}), std::invalid_argument);
  EXPECT_THROW(HashTrie(Lru(5), 0), std::invalid_argument);
  EXPECT_THROW(HashTrie(Lru(5), HashTrie::kMaxNodes + 1),
               std::invalid_argument);
}

// A node evicted from the end of an implicit chain frees its slot; the next
// node created below the same parent reuses it and is an implicit next-node
// edge again, with another token: the old token must not match.
TEST(HashTrieTest, EvictionBreaksAndReusesAnImplicitChain) {
  for (const CacheOptions& options : {Lru(3), Fifo(3)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    HashTrie trie(options);
    EXPECT_EQ(trie.Insert(Tokens{1, 2, 3}), 3u);
    EXPECT_EQ(trie.branch_count(), 0u);  // root -> 1 -> 2 -> 3 all implicit
    EXPECT_EQ(trie.Insert(Tokens{1, 2, 4}), 4u);  // evicts node 3
    EXPECT_EQ(trie.node_count(), 3u);
    EXPECT_EQ(trie.evicted_count(), 1u);
    EXPECT_EQ(trie.branch_count(), 0u);  // node 4 took slot 3, after node 2
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3}), (Match{2, 2}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 4}), (Match{3, 4}));
  }
}

// A reused slot that is not right after its parent is a branch entry, and
// the stale next-node bit of the slot must not make it a child of the node
// before it.
TEST(HashTrieTest, ReusedSlotNotAfterItsParentIsABranch) {
  HashTrie trie(Lru(3));
  trie.Insert(Tokens{1, 2, 3});           // slots 1, 2, 3
  EXPECT_EQ(trie.Insert(Tokens{5}), 4u);  // evicts 3; node 4 in slot 3
  EXPECT_EQ(trie.branch_count(), 1u);     // root -> slot 3
  // Evicts node 2 (stamp 1; node 1 is then a leaf of stamp 1 but the
  // capacity is met); node 5 takes slot 2, below slot 3.
  EXPECT_EQ(trie.Insert(Tokens{5, 6}), 5u);
  EXPECT_EQ(trie.branch_count(), 2u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 6}), (Match{1, 1}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{1, 1}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{5, 6, 7}), (Match{2, 5}));
  // Node 1 (stamp 1) goes next: [7] takes its slot 1, an implicit edge of
  // the root again.
  EXPECT_EQ(trie.Insert(Tokens{7}), 6u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{1}), (Match{0, 0}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{7}), (Match{1, 6}));
  EXPECT_EQ(trie.branch_count(), 2u);
}

// A whole chain evicted deepest first and a new chain of the same length:
// the freed slots come back in ascending order, so the new chain is
// implicit again and needs no branch entry.
TEST(HashTrieTest, FreedChainIsReusedAsAnImplicitChain) {
  HashTrie trie(Lru(4));
  trie.Insert(Tokens{1, 2, 3, 4});
  EXPECT_EQ(trie.Insert(Tokens{5, 6, 7, 8}), 8u);
  EXPECT_EQ(trie.evicted_count(), 4u);
  EXPECT_EQ(trie.branch_count(), 0u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{5, 6, 7, 8}), (Match{4, 8}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{0, 0}));
}

TEST(HashTrieTest, PrefixEvictedAndInsertedAgainGetsNewIds) {
  for (const CacheOptions& options : {Lru(2), Fifo(2)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    HashTrie trie(options);
    EXPECT_EQ(trie.Access(Tokens{1, 2}), (Match{0, 0}));
    EXPECT_EQ(trie.Access(Tokens{3}), (Match{0, 0}));  // evicts node 2
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{1, 1}));
    // Node 2 comes back as node 4 (LRU and FIFO both evict node 3 then).
    EXPECT_EQ(trie.Access(Tokens{1, 2}), (Match{1, 1}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{2, 4}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{3}), (Match{0, 0}));
    EXPECT_EQ(trie.evicted_count(), 2u);
  }
}

TEST(HashTrieTest, CapacityZeroStoresNothingButCountsEverything) {
  for (const CacheOptions& options : {Lru(0), Fifo(0)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    HashTrie trie(options);
    EvictedPages evicted;
    trie.SetEvictionListener(evicted.Listener(1));
    EXPECT_EQ(trie.Access(Tokens{1, 2, 3}), (Match{0, 0}));
    EXPECT_EQ(trie.Insert(Tokens{1, 2}), kRootNode);
    EXPECT_EQ(trie.Access(Tokens{1, 2, 3}), (Match{0, 0}));
    EXPECT_EQ(trie.Access(Tokens{}), (Match{0, 0}));
    EXPECT_EQ(trie.node_count(), 0u);
    EXPECT_EQ(trie.evicted_count(), 8u);
    EXPECT_EQ(test::TakeSorted(evicted),
              "evicted {[1],[1],[1],[2],[2],[2],[3],[3]}");
    EXPECT_EQ(trie.branch_count(), 0u);
  }
}

// SPEC §8: "A request longer than C keeps only its first C nodes"; the rest
// get IDs, count as evicted and reach the listener, without being stored.
TEST(HashTrieTest, RequestLongerThanCapacityKeepsItsFirstNodes) {
  for (const CacheOptions& options : {Lru(3), Fifo(3)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    HashTrie trie(options);
    EvictedPages evicted;
    trie.SetEvictionListener(evicted.Listener(1));
    EXPECT_EQ(trie.Insert(Tokens{9}), 1u);
    // Node 1 is evicted (off the path), nodes 2-4 stay, 5-6 are dropped.
    EXPECT_EQ(trie.Insert(Tokens{1, 2, 3, 4, 5}), 4u);
    EXPECT_EQ(trie.node_count(), 3u);
    EXPECT_EQ(trie.evicted_count(), 3u);
    EXPECT_EQ(test::TakeSorted(evicted), "evicted {[4],[5],[9]}");
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3, 4, 5}), (Match{3, 4}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{9}), (Match{0, 0}));
    // The next node is 7: the dropped ones used IDs 5 and 6.
    EXPECT_EQ(trie.Access(Tokens{1, 2, 7}), (Match{2, 3}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 7}), (Match{3, 7}));
    // Fully matched from the root to depth C: nothing new is stored.
    EXPECT_EQ(trie.Access(Tokens{1, 2, 7, 8, 9}), (Match{3, 7}));
    EXPECT_EQ(trie.node_count(), 3u);
    EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 7, 8}), (Match{3, 7}));
    EXPECT_EQ(trie.evicted_count(), 6u);
  }
}

// SPEC §10.4: while a running request pins a node off the new path, the
// first-C-nodes shortcut of lru and fifo is off (kvprefix/bounded_insert.h's
// KeepsFirstCapacityNodes): the pinned [1] cannot leave, so the new path's
// own deepest nodes go, and Insert returns the deepest one left. With the
// shortcut on, the insert would store [2] and [2,3] and find no leaf to
// evict (NoEvictableLeafError).
TEST(HashTrieTest, APinHeldTurnsTheFirstCapacityNodesShortcutOff) {
  for (const CacheOptions& options : {Lru(2), Fifo(2)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    HashTrie trie(options);
    EvictedPages evicted;
    trie.SetEvictionListener(evicted.Listener(1));
    EXPECT_EQ(trie.Insert(Tokens{1}), 1u);
    EXPECT_EQ(trie.Admit(7, Tokens{1}, 1).match, (Match{1, 1}));
    EXPECT_EQ(trie.Insert(Tokens{2, 3, 4}), 2u);
    EXPECT_EQ(trie.node_count(), 2u);
    EXPECT_EQ(trie.evicted_count(), 2u);
    EXPECT_EQ(test::TakeSorted(evicted), "evicted {[3],[4]}");
    EXPECT_EQ(trie.MatchPrefix(Tokens{2, 3, 4}), (Match{1, 2}));
    // Once the pin is gone the shortcut is back: [5,6,7] keeps [5] and
    // [5,6] (IDs 5 and 6, 7 never stored), the nodes off its path going
    // first.
    trie.Finish(7, Tokens{1});
    EXPECT_EQ(trie.pinned(), 0u);
    EXPECT_EQ(trie.Insert(Tokens{5, 6, 7}), 6u);
    EXPECT_EQ(trie.MatchPrefix(Tokens{5, 6, 7}), (Match{2, 6}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{1}), (Match{0, 0}));
    EXPECT_EQ(trie.evicted_count(), 5u);
  }
}

// SPEC §8's lfu example (C = 2; [1], [1], [2,3,4]): the request's new
// count-1 tail leaves before the count-2 leaf [1], so lfu holds IDs 1 and 2
// where lru holds 2 and 3, and Insert returns the deepest node left (2).
// Former bug: where the policy stores whole requests Insert returned the
// last matched node when nothing was evicted (capacity 1, [65536]: 0).
TEST(HashTrieTest, LfuStoresTheWholeRequestThenEvicts) {
  const CacheOptions lfu{.capacity = 2, .policy = EvictionPolicy::kLfu};
  HashTrie trie(lfu);
  EvictedPages evicted;
  trie.SetEvictionListener(evicted.Listener(1));
  EXPECT_EQ(trie.Insert(Tokens{1}), 1u);
  EXPECT_EQ(trie.Insert(Tokens{1}), 1u);
  EXPECT_EQ(trie.Insert(Tokens{2, 3, 4}), 2u);
  EXPECT_EQ(trie.node_count(), 2u);
  EXPECT_EQ(trie.evicted_count(), 2u);
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[3],[4]}");
  EXPECT_EQ(trie.MatchPrefix(Tokens{1}), (Match{1, 1}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{2, 3, 4}), (Match{1, 2}));

  HashTrie one(CacheOptions{.capacity = 1, .policy = EvictionPolicy::kLfu});
  EXPECT_EQ(one.Insert(Tokens{65536}), 1u);
  EXPECT_EQ(one.MatchPrefix(Tokens{65536}), (Match{1, 1}));
}

// Node 1's whole chain is evicted; LRU keeps the recently touched node 1.
TEST(HashTrieTest, LruAndFifoDiffer) {
  HashTrie lru(Lru(2)), fifo(Fifo(2));
  for (const Tokens& request : {Tokens{1}, Tokens{2}, Tokens{1}, Tokens{3}}) {
    lru.Access(request);
    fifo.Access(request);
  }
  EXPECT_EQ(lru.MatchPrefix(Tokens{1}), (Match{1, 1}));
  EXPECT_EQ(lru.MatchPrefix(Tokens{2}), (Match{0, 0}));
  EXPECT_EQ(fifo.MatchPrefix(Tokens{1}), (Match{0, 0}));
  EXPECT_EQ(fifo.MatchPrefix(Tokens{2}), (Match{1, 2}));
  EXPECT_EQ(lru.MatchPrefix(Tokens{3}), (Match{1, 3}));
  EXPECT_EQ(fifo.MatchPrefix(Tokens{3}), (Match{1, 3}));
}

// The upper part of a chain touched later than its tail: LRU evicts the
// tail first, then (later) the upper part, never a node with children.
TEST(HashTrieTest, ChainTouchedAboveItsTail) {
  HashTrie trie(Lru(3));
  trie.Access(Tokens{1, 2, 3});  // stamps 1
  trie.Access(Tokens{1});        // node 1: stamp 2
  trie.Access(Tokens{4});        // evicts node 3
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2, 3}), (Match{2, 2}));
  trie.Access(Tokens{5});  // evicts node 2 (stamp 1) before node 1 (2)
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 2}), (Match{1, 1}));
  trie.Access(Tokens{6});  // evicts node 1 (stamp 2) before node 4 (3)
  EXPECT_EQ(trie.MatchPrefix(Tokens{1}), (Match{0, 0}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{4}), (Match{1, 4}));
  EXPECT_EQ(trie.evicted_count(), 3u);
}

// LRU: touching a leaf leaves a stale heap entry behind. 30 leaves touched
// in an order unlike their slots' order, then one more leaf touched 400
// times, pile stale entries up past the rebuild threshold (2 * nodes + 64),
// so the 30 leaves' only valid entries are the rebuilt ones; the evictions
// that follow must still take them in stamp order.
TEST(HashTrieTest, StaleLeafEntriesPileUpAndTheHeapIsRebuilt) {
  for (const CacheOptions& options : {Lru(32), Fifo(32)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    std::vector<Tokens> requests;
    for (Token c = 0; c < 30; ++c) requests.push_back({c});
    for (Token c = 0; c < 30; ++c) requests.push_back({c * 7 % 30});
    for (int i = 0; i < 400; ++i) requests.push_back({-1});
    for (Token c = 30; c < 60; ++c) requests.push_back({c, 7});
    // Each access, then a match of [c, 7] for every c used, through the
    // harness (answers, counts and evicted pages).
    DifferentialChecker checker = test::CheckerOf<HashTrie>(options);
    for (const Tokens& request : requests) {
      ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kAccess, request})));
      for (Token c = -1; c < 60; ++c) {
        ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kMatch, {c, 7}})));
      }
    }
  }
}

// The storage limit counts nodes present, not IDs: with max_nodes 4 a
// capacity of 10 can hold only 4, and the insert that would store a fifth
// throws, changing nothing (not even a stamp).
TEST(HashTrieTest, StorageLimitThrowsAndChangesNothing) {
  HashTrie trie(Lru(10), /*max_nodes=*/4);
  EXPECT_EQ(trie.Access(Tokens{1, 2}), (Match{0, 0}));  // nodes 1, 2
  EXPECT_EQ(trie.Access(Tokens{3}), (Match{0, 0}));     // node 3
  EXPECT_THROW(trie.Access(Tokens{1, 5, 6}), CapacityError);
  EXPECT_EQ(trie.node_count(), 3u);
  EXPECT_EQ(trie.evicted_count(), 0u);
  EXPECT_EQ(trie.MatchPrefix(Tokens{1, 5}), (Match{1, 1}));
  // The failed access used no ID: [4] is node 4, the fourth node stored.
  EXPECT_EQ(trie.Access(Tokens{4}), (Match{0, 0}));
  EXPECT_EQ(trie.MatchPrefix(Tokens{4}), (Match{1, 4}));
  EXPECT_EQ(trie.Access(Tokens{1, 2}), (Match{2, 2}));
  EXPECT_EQ(trie.Access(Tokens{3}), (Match{1, 3}));
  // A capacity within the limit never throws: it evicts.
  HashTrie small(Fifo(4), /*max_nodes=*/4);
  for (Token token = 0; token < 10; ++token) {
    small.Access(Tokens{token, token});
  }
  EXPECT_EQ(small.node_count(), 4u);
  // Unbounded, the limit is on IDs, as before.
  HashTrie unbounded(CacheOptions{}, /*max_nodes=*/3);
  EXPECT_EQ(unbounded.Insert(Tokens{1, 2, 3}), 3u);
  EXPECT_THROW(unbounded.Insert(Tokens{1, 2, 3, 4}), CapacityError);
  EXPECT_EQ(unbounded.node_count(), 3u);
  EXPECT_EQ(unbounded.MatchPrefix(Tokens{1, 2, 3, 4}), (Match{3, 3}));
}

// Bounded, IDs are 64-bit: a request of 2^32 + 5 tokens at capacity 1 stores
// one node and drops the rest (IDs 2 to 2^32 + 5), so the next node gets ID
// 2^32 + 6. The request is a read-only mapping of zero pages, which the
// engine never reads past its first token: nothing of it is allocated.
TEST(HashTrieTest, BoundedIdsPass32Bits) {
  constexpr std::uint64_t kLength = (std::uint64_t{1} << 32) + 5;
  void* zeros = mmap(nullptr, kLength * sizeof(Token), PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (zeros == MAP_FAILED) GTEST_SKIP() << "cannot map 16 GiB of zero pages";
  const TokenSpan huge(static_cast<const Token*>(zeros), kLength);
  for (const CacheOptions& options : {Lru(1), Fifo(1)}) {
    SCOPED_TRACE(FormatCacheOptions(options));
    HashTrie trie(options);
    EXPECT_EQ(trie.Access(huge), (Match{0, 0}));
    EXPECT_EQ(trie.node_count(), 1u);
    EXPECT_EQ(trie.evicted_count(), kLength - 1);
    EXPECT_EQ(trie.MatchPrefix(Tokens{0, 0}), (Match{1, 1}));
    EXPECT_EQ(trie.Insert(Tokens{7}), kLength + 1);
    EXPECT_EQ(trie.MatchPrefix(Tokens{7}), (Match{1, kLength + 1}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{0}), (Match{0, 0}));
    EXPECT_EQ(trie.Access(Tokens{7, 8}), (Match{1, kLength + 1}));
    EXPECT_EQ(trie.MatchPrefix(Tokens{7, 8}), (Match{1, kLength + 1}));
  }
  munmap(zeros, kLength * sizeof(Token));
}

// A capacity at least the number of distinct prefixes gives SPEC §3's
// answers: LRU and FIFO caches of 2^40 nodes answer every access as the
// unbounded reference does, with its node counts, and evict nothing.
TEST(HashTrieTest, LargeCapacityEqualsUnbounded) {
  std::vector<std::unique_ptr<PrefixIndex>> caches;
  caches.push_back(
      std::make_unique<EngineAdapter<HashTrie>>(Lru(std::uint64_t{1} << 40)));
  caches.push_back(
      std::make_unique<EngineAdapter<HashTrie>>(Fifo(std::uint64_t{1} << 40)));
  DifferentialChecker checker(CacheOptions{}, std::move(caches));
  std::mt19937_64 rng(14);
  std::vector<Tokens> seen = {{}};
  for (int step = 0; step < 3000; ++step) {
    Tokens request = seen[rng() % seen.size()];
    request.resize(rng() % (request.size() + 1));
    for (std::uint64_t extra = rng() % 6; extra > 0; --extra) {
      request.push_back(static_cast<Token>(rng() % 4));
    }
    seen.push_back(request);
    ASSERT_TRUE(Agrees(checker.Apply({Operation::Kind::kAccess, request})));
  }
  for (const auto& cache : checker.engines()) {
    EXPECT_EQ(cache->evicted_count(), 0u);
  }
}

// A moved cache keeps its state and its listener.
TEST(HashTrieTest, MovedCacheKeepsWorking) {
  EvictedPages evicted;
  HashTrie first(Lru(2));
  first.SetEvictionListener(evicted.Listener(1));
  first.Access(Tokens{1, 2});
  HashTrie second = std::move(first);
  EXPECT_EQ(second.Access(Tokens{3}), (Match{0, 0}));
  EXPECT_EQ(second.MatchPrefix(Tokens{1, 2}), (Match{1, 1}));
  EXPECT_EQ(test::TakeSorted(evicted), "evicted {[2]}");
}

// --- Randomized differential against the reference ---------------------------

// Random requests with heavy prefix sharing: most start with a random
// prefix of an earlier request and continue over a small alphabet.
class RequestStream {
 public:
  RequestStream(std::uint64_t seed, std::vector<Token> alphabet,
                std::size_t max_extra)
      : rng_(seed), alphabet_(std::move(alphabet)), max_extra_(max_extra) {}

  Tokens Next() {
    Tokens request;
    if (!recent_.empty() && rng_() % 4 != 0) {
      const Tokens& base = recent_[rng_() % recent_.size()];
      request.assign(base.begin(), base.begin() + rng_() % (base.size() + 1));
    }
    for (std::size_t extra = rng_() % (max_extra_ + 1); extra > 0; --extra) {
      request.push_back(alphabet_[rng_() % alphabet_.size()]);
    }
    if (recent_.size() < 48) {
      recent_.push_back(request);
    } else {
      recent_[rng_() % recent_.size()] = request;
    }
    return request;
  }
  std::uint64_t Below(std::uint64_t n) { return rng_() % n; }

 private:
  std::mt19937_64 rng_;
  std::vector<Token> alphabet_;
  std::size_t max_extra_;
  std::vector<Tokens> recent_;
};

const std::vector<std::vector<Token>>& Alphabets() {
  static const auto* alphabets = new std::vector<std::vector<Token>>{
      {0, 1},
      {INT32_MIN, -1, 0, INT32_MAX},
      {0, 1, 2, 3, 4, 5, 6, 7},
      {INT32_MIN, INT32_MIN + 1, -2, -1, 0, 1, 255, 256, INT32_MAX - 1,
       INT32_MAX},
  };
  return *alphabets;
}

// Runs `steps` random operations (mostly Access, some Insert, some
// MatchPrefix probes) on the hash engine built with `options` (PagedIndex
// over it when the page size is not 1) through the differential harness:
// every answer, the node and eviction counts and the evicted pages are the
// reference's. Stops at the first disagreement (a test failure).
void Differential(const CacheOptions& options, std::uint64_t seed,
                  const std::vector<Token>& alphabet, std::size_t max_extra,
                  int steps) {
  DifferentialChecker checker = test::CheckerOf<HashTrie>(options);
  RequestStream stream(seed, alphabet, max_extra);
  for (int step = 0; step < steps; ++step) {
    Tokens request = stream.Next();
    const std::uint64_t kind = stream.Below(10);
    const Operation::Kind operation = kind < 7   ? Operation::Kind::kAccess
                                      : kind < 9 ? Operation::Kind::kInsert
                                                 : Operation::Kind::kMatch;
    ASSERT_TRUE(Agrees(checker.Apply({operation, std::move(request)})))
        << "seed " << seed;
  }
}

TEST(HashTrieTest, DifferentialSmallCapacities) {
  std::uint64_t seed = 1;
  for (std::uint64_t capacity = 0; capacity <= 64; ++capacity) {
    for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
      const EvictionPolicy policy = entry.policy;
      for (const auto& alphabet : Alphabets()) {
        Differential(CacheOptions{.capacity = capacity, .policy = policy},
                     seed++, alphabet, 8, 150);
        if (HasFailure()) return;
      }
    }
  }
}

TEST(HashTrieTest, DifferentialLargerCapacitiesAndLongStreams) {
  std::uint64_t seed = 1000;
  for (std::uint64_t capacity : {100, 257, 1000, 5000}) {
    for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
      const EvictionPolicy policy = entry.policy;
      for (const auto& alphabet : Alphabets()) {
        Differential(CacheOptions{.capacity = capacity, .policy = policy},
                     seed++, alphabet, 24, 1500);
        if (HasFailure()) return;
      }
    }
  }
  // Unbounded, for the shared code path.
  Differential(CacheOptions{}, seed++, Alphabets()[1], 12, 1000);
}

TEST(HashTrieTest, DifferentialPaged) {
  std::uint64_t seed = 5000;
  for (std::uint64_t page_size : {2, 3}) {
    for (std::uint64_t capacity : {0, 1, 2, 3, 5, 8, 13, 40, 200}) {
      for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
        const EvictionPolicy policy = entry.policy;
        for (const auto& alphabet : Alphabets()) {
          Differential(CacheOptions{.capacity = capacity,
                                    .policy = policy,
                                    .page_size = page_size},
                       seed++, alphabet, 12, 300);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// --- Memory ------------------------------------------------------------------

// mallinfo2() sees the heap only when glibc's malloc serves it, not under a
// sanitizer's allocator (-DKVPREFIX_SANITIZE=address or thread).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

std::size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// Over a long stream the cache's memory follows the capacity, not the IDs
// given, and memory_bytes() stays honest (within 15% of the heap growth).
TEST(HashTrieTest, MemoryProportionalToCapacityOverALongStream) {
  constexpr std::uint64_t kCapacity = 1000;
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    const EvictionPolicy policy = entry.policy;
    SCOPED_TRACE(EvictionPolicyName(policy));
    RequestStream stream(77, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 20);
    std::vector<Tokens> requests(100000);
    for (Tokens& request : requests) request = stream.Next();
    const std::size_t before = HeapInUse();
    auto trie = std::make_unique<HashTrie>(
        CacheOptions{.capacity = kCapacity, .policy = policy});
    // Halfway, the slot arrays and the branch table have long reached
    // their size (lfu's whole requests take up to 20 slots more than C,
    // which can double the table once, late).
    std::size_t bytes_halfway = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      trie->Access(requests[i]);
      ASSERT_LE(trie->node_count(), kCapacity);
      if (i + 1 == requests.size() / 2) bytes_halfway = trie->memory_bytes();
    }
    const std::size_t growth = HeapInUse() - before;
    const std::size_t bytes = trie->memory_bytes();
    EXPECT_GT(trie->evicted_count(), 10 * kCapacity);
    EXPECT_EQ(trie->node_count(), kCapacity);
    // lru's 8-byte key takes 128 bytes a node; a wider key (lfu's count and
    // stamp) adds its width to the state and to up to two heap entries a
    // leaf, and more slots: 4 times the extra width, as the memory property
    // allows (testing/property_checks.cc).
    const std::size_t per_node =
        128 + VisitPolicy(policy, []<typename P>(P) {
          return 4 * (sizeof(typename P::Key) - sizeof(LruPolicy::Key));
        });
    EXPECT_LE(bytes, per_node * kCapacity)
        << "bytes per node over " << per_node;
    EXPECT_LE(bytes, bytes_halfway * 5 / 4) << "memory still growing";
    if (kGlibcHeap) {
      EXPECT_NEAR(static_cast<double>(bytes) / static_cast<double>(growth), 1.0,
                  0.15)
          << "memory_bytes() " << bytes << " vs heap growth " << growth;
    }
  }
}

// At most 64 bytes a node unbounded (kMaxBytesPerNode, the bound the memory
// property holds hash to, testing/property_checks.h), whatever the shape:
// here the worst one, every node a branch (a wide root).
TEST(HashTrieTest, UnboundedWorstCaseBytesPerNode) {
  for (std::uint32_t nodes : {1000u, 30000u, 100000u, 229376u, 229377u}) {
    HashTrie trie;
    for (std::uint32_t i = 0; i < nodes; ++i) {
      trie.Insert(Tokens{static_cast<Token>(i * 2654435761u)});
    }
    EXPECT_LE(trie.memory_bytes(), 64u * nodes) << nodes << " nodes";
  }
}

}  // namespace
}  // namespace kvprefix
