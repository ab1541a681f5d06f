// The bounded-cache conformance suite (SPEC §8): capacity, LRU and FIFO
// eviction and page size, for every engine, the reference included.
// Expected values are worked by hand from SPEC §8 or come from a brute-force
// model that knows nothing of tries: a table from each present prefix to its
// ID and stamp, evicting by scanning every present prefix.
#include "kvprefix/cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engines/all_engines.h"
#include "engines/registry.h"
#include "kvprefix/cache_model.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/replay.h"
#include "testing/engine_types.h"
#include "testing/shared_cases.h"

namespace kvprefix {
namespace {

using ::kvprefix::test::EngineTypeName;
using ::kvprefix::test::GtestTypes;
using Tokens = std::vector<Token>;

// The policy list: every entry's name parses back to it, names are exact
// (case matters), and the message text lists every name.
TEST(EvictionPolicyListTest, NamesParseBackAndChoicesListThemAll) {
  for (std::size_t i = 0; i < kEvictionPolicies.size(); ++i) {
    const EvictionPolicyEntry& entry = kEvictionPolicies[i];
    EXPECT_EQ(EvictionPolicyIndex(entry.policy), i);
    EXPECT_EQ(EvictionPolicyName(entry.policy), entry.name);
    EXPECT_EQ(ParseEvictionPolicy(entry.name), entry.policy);
  }
  EXPECT_EQ(EvictionPolicyName(EvictionPolicy::kLru), "lru");
  EXPECT_EQ(EvictionPolicyName(EvictionPolicy::kFifo), "fifo");
  EXPECT_EQ(EvictionPolicyName(EvictionPolicy::kLfu), "lfu");
  EXPECT_EQ(ParseEvictionPolicy("LRU"), std::nullopt);
  EXPECT_EQ(ParseEvictionPolicy(""), std::nullopt);
  EXPECT_EQ(EvictionPolicyChoices('\''), "'lru', 'fifo' or 'lfu'");
  EXPECT_EQ(EvictionPolicyChoices('"'), "\"lru\", \"fifo\" or \"lfu\"");
  EXPECT_TRUE(KeepsNodeState(EvictionPolicy::kLru));
  EXPECT_FALSE(KeepsNodeState(EvictionPolicy::kFifo));
  EXPECT_TRUE(KeepsNodeState(EvictionPolicy::kLfu));
}

constexpr CacheOptions Lru(std::uint64_t capacity,
                           std::uint64_t page_size = 1) {
  return {.capacity = capacity,
          .policy = EvictionPolicy::kLru,
          .page_size = page_size};
}
constexpr CacheOptions Fifo(std::uint64_t capacity,
                            std::uint64_t page_size = 1) {
  return {.capacity = capacity,
          .policy = EvictionPolicy::kFifo,
          .page_size = page_size};
}

// The step-1 matches of replaying `requests` on a fresh cache of `options`.
template <typename E>
std::vector<Match> ReplayMatches(const CacheOptions& options,
                                 const std::vector<Tokens>& requests) {
  PagedIndex<E> cache(options);
  std::vector<Match> matches;
  for (const Tokens& request : requests) {
    matches.push_back(cache.Access(request));
  }
  return matches;
}

template <typename E>
class CacheTest : public ::testing::Test {};
TYPED_TEST_SUITE_P(CacheTest);

// Every replay document of tests/data/cases/capacity/ gives its expected
// matches, directly and through the registry.
TYPED_TEST_P(CacheTest, CapacityCases) {
  const std::vector<ReplayCaseFile> cases = test::LoadCapacityCases();
  ASSERT_EQ(cases.size(), 16u);
  for (const ReplayCaseFile& shared : cases) {
    PagedIndex<TypeParam> cache(shared.input.options);
    const auto by_name = MakeEngine(TypeParam::kName, shared.input.options);
    for (std::size_t i = 0; i < shared.input.requests.size(); ++i) {
      const TokenSpan request = shared.input.requests[i];
      EXPECT_EQ(cache.Access(request), shared.expected[i])
          << shared.name << " request " << i;
      EXPECT_EQ(by_name->Access(request), shared.expected[i])
          << shared.name << " request " << i;
    }
  }
}

// tests/data/cases/capacity/hand-01: capacity 3, LRU.
TYPED_TEST_P(CacheTest, LruEvictsTheOldestLeafAndNeverReusesIds) {
  TypeParam cache(Lru(3));
  // Nodes 1 (1), 2 (1,2), 3 (1,2,3), stamp 1.
  EXPECT_EQ(cache.Access(Tokens{1, 2, 3}), (Match{0, 0}));
  // Matches 1,2; creates node 4 (1,2,4); 4 nodes > 3: the leaves are 3
  // (stamp 1) and 4 (stamp 2), so node 3 goes.
  EXPECT_EQ(cache.Access(Tokens{1, 2, 4}), (Match{2, 2}));
  // Creates node 5 (5); the leaves are 4 (stamp 2) and 5: node 4 goes.
  EXPECT_EQ(cache.Access(Tokens{5}), (Match{0, 0}));
  // Matches 1,2 (node 3 was evicted); the new (1,2,3) is node 6, not 3;
  // then node 5 (stamp 3) goes.
  EXPECT_EQ(cache.Access(Tokens{1, 2, 3}), (Match{2, 2}));
  EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2, 3}), (Match{3, 6}));
  EXPECT_EQ(cache.MatchPrefix(Tokens{5}), (Match{0, 0}));
  EXPECT_EQ(cache.node_count(), 3u);
  EXPECT_EQ(cache.evicted_count(), 3u);
}

TYPED_TEST_P(CacheTest, CapacityZeroKeepsNothingButCountsIds) {
  TypeParam cache(Lru(0));
  EXPECT_EQ(cache.Access(Tokens{1, 2}), (Match{0, 0}));
  EXPECT_EQ(cache.node_count(), 0u);
  EXPECT_EQ(cache.Access(Tokens{1, 2}), (Match{0, 0}));
  EXPECT_EQ(cache.Insert(Tokens{1, 2, 3}), kRootNode);
  EXPECT_EQ(cache.evicted_count(), 7u);
  // IDs 1..7 were given and evicted: the next node is 8.
  TypeParam fifo(Fifo(0));
  for (int i = 0; i < 3; ++i) fifo.Insert(Tokens{4});
  EXPECT_EQ(fifo.evicted_count(), 3u);
  EXPECT_EQ(fifo.MatchPrefix(Tokens{4}), (Match{0, 0}));
}

TYPED_TEST_P(CacheTest, RequestLongerThanCapacityKeepsItsFirstNodes) {
  for (const CacheOptions& options : {Lru(2), Fifo(2)}) {
    TypeParam cache(options);
    EXPECT_EQ(cache.Insert(Tokens{9}), 1u);
    // Nodes 2..6; the request's own tail and node 1 are evicted, deepest of
    // the request first once node 1 is gone: 2 and 3 stay.
    EXPECT_EQ(cache.Insert(Tokens{1, 2, 3, 4, 5}), 3u);
    EXPECT_EQ(cache.node_count(), 2u);
    EXPECT_EQ(cache.evicted_count(), 4u);
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2, 3, 4, 5}), (Match{2, 3}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{9}), (Match{0, 0}));
    // The next node is 7: IDs 4, 5 and 6 were given to the evicted tail.
    EXPECT_EQ(cache.Insert(Tokens{1, 2, 8}), 3u);
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2}), (Match{2, 3}));
  }
}

TYPED_TEST_P(CacheTest, LruAndFifoDiffer) {
  // [1,2] makes nodes 1, 2; [3] node 3; [1,2] again touches 1 and 2; [4]
  // makes node 4, one too many. The leaves are 2 (stamp 3, ID 2), 3 (stamp
  // 2, ID 3) and 4: LRU evicts 3, FIFO evicts 2.
  const std::vector<Tokens> requests = {{1, 2}, {3}, {1, 2}, {4}};
  for (const bool lru : {true, false}) {
    TypeParam cache(lru ? Lru(3) : Fifo(3));
    for (const Tokens& request : requests) cache.Access(request);
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2}),
              lru ? (Match{2, 2}) : (Match{1, 1}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{3}),
              lru ? (Match{0, 0}) : (Match{1, 3}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{4}), (Match{1, 4}));
  }
}

TYPED_TEST_P(CacheTest, ChainTouchedAboveItsTailLosesTheTailFirst) {
  // [1,2,3,4]: nodes 1-4, stamp 1. [1,2]: stamp 2 on nodes 1, 2 only.
  // [5,6]: nodes 5, 6 (stamp 3), two too many at C = 4. LRU: the leaves are
  // 4 (stamp 1) and 6; 4 goes, then 3 (now a leaf, stamp 1). FIFO: 4 and 6
  // are the leaves, 4 goes, then 3 (ID 3 < 6).
  for (const CacheOptions& options : {Lru(4), Fifo(4)}) {
    TypeParam cache(options);
    cache.Access(Tokens{1, 2, 3, 4});
    EXPECT_EQ(cache.Access(Tokens{1, 2}), (Match{2, 2}));
    cache.Access(Tokens{5, 6});
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2, 3, 4}), (Match{2, 2}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{5, 6}), (Match{2, 6}));
  }
  // Only node 1 touched later: [7] (node 4) at C = 3 evicts leaf 3, then [8]
  // (node 5) evicts 2, which became a leaf with stamp 1; node 1 stays.
  for (const CacheOptions& options : {Lru(3), Fifo(3)}) {
    TypeParam cache(options);
    for (const Tokens& request :
         std::vector<Tokens>{{1, 2, 3}, {1}, {7}, {8}}) {
      cache.Access(request);
    }
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2, 3}), (Match{1, 1}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{7}), (Match{1, 4}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{8}), (Match{1, 5}));
  }
}

TYPED_TEST_P(CacheTest, EvictedPrefixInsertedAgainGetsNewIds) {
  TypeParam cache(Fifo(2));
  EXPECT_EQ(cache.Insert(Tokens{7, 7}), 2u);
  EXPECT_EQ(cache.Insert(Tokens{8}), 3u);     // evicts node 2
  EXPECT_EQ(cache.Insert(Tokens{7, 7}), 4u);  // evicts node 3, then 4 stays
  EXPECT_EQ(cache.MatchPrefix(Tokens{7, 7}), (Match{2, 4}));
  EXPECT_EQ(cache.MatchPrefix(Tokens{8}), (Match{0, 0}));
}

TYPED_TEST_P(CacheTest, ExactlyAtCapacityEvictsNothing) {
  // Four distinct prefixes: C = 4 keeps them all, C = 3 loses one.
  const std::vector<Tokens> requests = {{1, 2}, {1, 3}, {4}, {1, 2}, {4}};
  const auto full = ReplayMatches<TypeParam>(Lru(4), requests);
  EXPECT_EQ(full[3], (Match{2, 2}));
  EXPECT_EQ(full[4], (Match{1, 4}));
  // C = 3: [4] evicts node 2, the oldest leaf; [1,2] then makes node 5 and
  // evicts node 3, so [4] still hits.
  const auto short_by_one = ReplayMatches<TypeParam>(Lru(3), requests);
  EXPECT_EQ(short_by_one[3], (Match{1, 1}));
  EXPECT_EQ(short_by_one[4], (Match{1, 4}));
}

TYPED_TEST_P(CacheTest, LargeCapacityGivesTheUnboundedReplay) {
  const std::vector<Tokens> requests = {
      {1, 2, 3}, {1, 2, 4}, {5}, {1, 2, 3, 6}, {5, 5}, {1}, {}, {1, 2, 4, 7}};
  TypeParam unbounded;
  std::vector<Match> expected;
  for (const Tokens& request : requests) {
    expected.push_back(unbounded.MatchPrefix(request));
    unbounded.Insert(request);
  }
  EXPECT_EQ(ReplayMatches<TypeParam>(Lru(12), requests), expected);
  EXPECT_EQ(ReplayMatches<TypeParam>(Fifo(12), requests), expected);
  EXPECT_EQ(ReplayMatches<TypeParam>(Lru(kUnbounded - 1), requests), expected);
  EXPECT_EQ(ReplayMatches<TypeParam>(CacheOptions{}, requests), expected);
}

// tests/data/cases/capacity/hand-02, and page size 3 with partial pages.
TYPED_TEST_P(CacheTest, PagesDropThePartialLastPage) {
  EXPECT_EQ(ReplayMatches<TypeParam>({.page_size = 2},
                                     {{1, 2, 3, 4}, {1, 2, 3, 9}, {1, 2}}),
            (std::vector<Match>{{0, 0}, {2, 1}, {2, 1}}));
  // (1,2,3) is node 1; 4,5 is a partial page, dropped. (4,5,6) is node 2.
  EXPECT_EQ(
      ReplayMatches<TypeParam>({.page_size = 3}, {{1, 2, 3, 4, 5},
                                                  {1, 2, 3, 4, 5, 6},
                                                  {1, 2, 3, 4, 5, 6, 7, 8},
                                                  {1, 2},
                                                  {1, 2, 3, 4, 5, 9}}),
      (std::vector<Match>{{0, 0}, {3, 1}, {6, 2}, {0, 0}, {3, 1}}));
  // With a capacity, counted in pages: (1,2) and (3,4) fill C = 2; (5,6)
  // evicts (3,4) under LRU and FIFO alike.
  for (const CacheOptions& options : {Lru(2, 2), Fifo(2, 2)}) {
    EXPECT_EQ(ReplayMatches<TypeParam>(options,
                                       {{1, 2, 3, 4, 9}, {5, 6}, {1, 2, 3, 4}}),
              (std::vector<Match>{{0, 0}, {0, 0}, {2, 1}}));
  }
}

TYPED_TEST_P(CacheTest, ReplaySummaryCountsPartialPagesAndPeakNodes) {
  PagedIndex<TypeParam> cache(Lru(3, 2));
  SequenceList trace = {{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, {9, 9, 9}};
  const ReplaySummary summary = Replay(cache, trace);
  EXPECT_EQ(summary.requests, 3u);
  EXPECT_EQ(summary.request_tokens, 13u);  // the dropped tokens included
  EXPECT_EQ(summary.matched_tokens, 4u);   // two pages of the second request
  EXPECT_EQ(summary.peak_nodes, 3u);
  EXPECT_EQ(cache.evicted_count(), 0u);
}

// Pages are compared by content: with a hash that sends every page to the
// same value, distinct pages still get distinct symbols.
struct ConstantHash {
  std::size_t operator()(TokenSpan) const { return 42; }
};

TYPED_TEST_P(CacheTest, PagesOnOneHashAreStillComparedByContent) {
  for (const CacheOptions& options :
       {CacheOptions{.page_size = 2}, Lru(4, 2)}) {
    PagedIndex<TypeParam, ConstantHash> cache(options);
    cache.Access(Tokens{1, 2, 3, 4});
    EXPECT_EQ(cache.Access(Tokens{1, 2, 4, 3}), (Match{2, 1}));
    EXPECT_EQ(cache.Access(Tokens{2, 1}), (Match{0, 0}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2, 3, 4}), (Match{4, 2}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{1, 2, 4, 3}), (Match{4, 3}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{2, 1}), (Match{2, 4}));
    EXPECT_EQ(cache.MatchPrefix(Tokens{3, 4}), (Match{0, 0}));
  }
}

// --- Exhaustive small world against a brute-force model ---------------------

// SPEC §8 with nothing but a table: each present prefix (as pages) has an ID,
// a stamp and a count; a leaf is a present prefix that no present prefix
// extends by one page; step 4 scans every present prefix for the smallest leaf.
class CacheModel {
 public:
  explicit CacheModel(const CacheOptions& options) : options_(options) {}

  Match Access(const Tokens& request) {
    const std::vector<Tokens> pages = Pages(request);
    const Match match = MatchPages(pages);
    ++stamp_;
    for (std::size_t depth = 1; depth <= pages.size(); ++depth) {
      const std::vector<Tokens> prefix(pages.begin(), pages.begin() + depth);
      auto [it, created] = nodes_.try_emplace(prefix, Node{next_id_, 0, 0});
      if (created) ++next_id_;
      it->second.stamp = stamp_;
      ++it->second.count;
    }
    while (nodes_.size() > options_.capacity) {
      auto victim = nodes_.end();
      for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
        if (HasChild(it->first)) continue;
        if (victim == nodes_.end() || Key(it->second) < Key(victim->second)) {
          victim = it;
        }
      }
      nodes_.erase(victim);
      ++evicted_;
    }
    return match;
  }
  std::uint64_t node_count() const { return nodes_.size(); }
  std::uint64_t evicted_count() const { return evicted_; }

 private:
  struct Node {
    NodeId id;
    std::uint64_t stamp;
    std::uint64_t count;
  };

  std::vector<Tokens> Pages(const Tokens& tokens) const {
    std::vector<Tokens> pages;
    for (std::size_t i = 0; i + options_.page_size <= tokens.size();
         i += options_.page_size) {
      pages.emplace_back(tokens.begin() + i,
                         tokens.begin() + i + options_.page_size);
    }
    return pages;
  }
  Match MatchPages(const std::vector<Tokens>& pages) const {
    Match match;
    for (std::size_t depth = 1; depth <= pages.size(); ++depth) {
      auto it = nodes_.find({pages.begin(), pages.begin() + depth});
      if (it == nodes_.end()) break;
      match = {depth * options_.page_size, it->second.id};
    }
    return match;
  }
  bool HasChild(const std::vector<Tokens>& prefix) const {
    auto it = nodes_.upper_bound(prefix);  // extensions sort right after
    return it != nodes_.end() && it->first.size() > prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), it->first.begin());
  }
  std::pair<std::uint64_t, std::uint64_t> Key(const Node& node) const {
    switch (options_.policy) {
      case EvictionPolicy::kLru:
        return {0, node.stamp};
      case EvictionPolicy::kFifo:
        return {0, node.id};
      case EvictionPolicy::kLfu:
        return {node.count, node.stamp};
    }
    return {0, node.id};  // not reached: every policy has a case
  }

  CacheOptions options_;
  std::map<std::vector<Tokens>, Node> nodes_;
  NodeId next_id_ = 1;
  std::uint64_t stamp_ = 0;
  std::uint64_t evicted_ = 0;
};

// All sequences over {0, 1} of length 0..max_length.
std::vector<Tokens> AllSequences(int max_length) {
  std::vector<Tokens> all;
  for (int length = 0; length <= max_length; ++length) {
    for (int bits = 0; bits < (1 << length); ++bits) {
      Tokens sequence;
      for (int i = 0; i < length; ++i) sequence.push_back((bits >> i) & 1);
      all.push_back(sequence);
    }
  }
  return all;
}

// Every list of `count` requests from `sequences`, capacities 0-6, every
// policy: every Access, node count and eviction count equal the model's.
template <typename E>
void CheckEveryList(const std::vector<Tokens>& sequences, int count,
                    std::uint64_t page_size) {
  std::vector<std::size_t> list(count, 0);
  for (;;) {
    for (std::uint64_t capacity = 0; capacity <= 6; ++capacity) {
      for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
        const EvictionPolicy policy = entry.policy;
        const CacheOptions options{capacity, policy, page_size};
        PagedIndex<E> cache(options);
        CacheModel model(options);
        for (std::size_t step = 0; step < list.size(); ++step) {
          const Tokens& request = sequences[list[step]];
          ASSERT_EQ(cache.Access(request), model.Access(request))
              << "C=" << capacity << " " << EvictionPolicyName(policy)
              << " P=" << page_size << " step " << step;
          ASSERT_EQ(cache.node_count(), model.node_count());
          ASSERT_EQ(cache.evicted_count(), model.evicted_count());
        }
      }
    }
    // The next list, as a number in base sequences.size().
    std::size_t i = 0;
    while (i < list.size() && ++list[i] == sequences.size()) list[i++] = 0;
    if (i == list.size()) return;
  }
}

TYPED_TEST_P(CacheTest, ExhaustiveSmallWorldAgainstBruteForce) {
  // Page size 1: every list of 4 requests of up to 3 tokens (50,625 lists).
  CheckEveryList<TypeParam>(AllSequences(3), 4, 1);
  // Page size 2: every list of 3 requests of up to 4 tokens (29,791 lists).
  CheckEveryList<TypeParam>(AllSequences(4), 3, 2);
}

REGISTER_TYPED_TEST_SUITE_P(
    CacheTest, CapacityCases, LruEvictsTheOldestLeafAndNeverReusesIds,
    CapacityZeroKeepsNothingButCountsIds,
    RequestLongerThanCapacityKeepsItsFirstNodes, LruAndFifoDiffer,
    ChainTouchedAboveItsTailLosesTheTailFirst,
    EvictedPrefixInsertedAgainGetsNewIds, ExactlyAtCapacityEvictsNothing,
    LargeCapacityGivesTheUnboundedReplay, PagesDropThePartialLastPage,
    ReplaySummaryCountsPartialPagesAndPeakNodes,
    PagesOnOneHashAreStillComparedByContent,
    ExhaustiveSmallWorldAgainstBruteForce);
INSTANTIATE_TYPED_TEST_SUITE_P(Engine, CacheTest, GtestTypes<AllEngines>::type,
                               EngineTypeName);

// Former bug: PagedIndex built its engine from the capacity, policy and match
// limit alone, dropping the model, so PagedIndex<RadixTrie> with model vllm
// or sglang answered SPEC §8 where RadixTrie refuses it; exported as a
// plugin (KVPREFIX_EXPORT_PLUGIN), it then answered §8 for every model
// plugin ABI 2 gives it. The engine gets the model now, and refuses it.
TEST(PagedIndexTest, AnEngineOverPagesRefusesTheModelsItDoesNotImplement) {
  AllEngines::ForEach([]<typename E>() {
    for (const std::uint64_t page_size : {1, 3}) {
      const CacheOptions vllm{.page_size = page_size,
                              .model = ::kvprefix::CacheModel::kVllm,
                              .match_limit = MatchLimit::kAllButLast};
      const CacheOptions sglang{.page_size = page_size,
                                .model = ::kvprefix::CacheModel::kSglang};
      EXPECT_THROW(PagedIndex<E>{vllm}, std::invalid_argument) << E::kName;
      EXPECT_THROW(PagedIndex<E>{sglang}, std::invalid_argument) << E::kName;
      // Model spec, with either match limit, is every trie's.
      PagedIndex<E> spec(CacheOptions{.page_size = page_size,
                                      .match_limit = MatchLimit::kAllButLast});
      EXPECT_EQ(spec.Access(Tokens{1, 2, 3, 4, 5, 6}), (Match{0, 0}));
      EXPECT_EQ(spec.Access(Tokens{1, 2, 3, 4, 5, 6}).matched_length,
                page_size == 1 ? 5u : 3u);
    }
  });
  try {
    PagedIndex<RadixTrie> cache(
        CacheOptions{.model = ::kvprefix::CacheModel::kSglang});
    ADD_FAILURE() << "PagedIndex<RadixTrie> took model sglang";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "radix: a trie engine follows model \"spec\"; model "
                 "\"sglang\" is its own structure's");
  }
}

}  // namespace
}  // namespace kvprefix
