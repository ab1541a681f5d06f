// Checks that both drivers of the input shapes (checking/recipe.h) really
// produce the inputs that find bugs: the RapidCheck generators
// (testing/generators.h, for properties) and the std::mt19937_64 one
// (checking/random_input.h, for `kvprefix verify`). Matches ending at the
// root, at branch points, inside longer cached sequences and past every
// cached sequence, each often; duplicates, empty sequences, strict prefixes,
// extreme tokens and tokens equal in their low 16 bits. The cache workloads
// of both drivers (GenCacheWorkload, checking::RandomReplayInput) really
// evict: whole chains, hits after an eviction, evicted prefixes coming
// back, and LRU answering otherwise than FIFO. Fractions are measured over a
// fixed set of seeds, so the numbers are reproducible.
#include "testing/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "checking/random_input.h"
#include "engines/registry.h"
#include "reference/reference_trie.h"
#include "testing/property_checks.h"

namespace kvprefix::test {
namespace {

constexpr int kCases = 400;
constexpr double kMinFraction = 0.10;

using Sequence = std::vector<Token>;

BatchInput RapidCheckInput(std::uint64_t seed, int size) {
  return GenBatchInput()(rc::Random(seed), size).value();
}

// A driver of the input shapes: the input for (seed, size), the same every
// time.
struct Driver {
  const char* name;
  BatchInput (*make)(std::uint64_t seed, int size);
};

void PrintTo(const Driver& driver, std::ostream* os) { *os << driver.name; }

class GeneratorsTest : public ::testing::TestWithParam<Driver> {
 protected:
  // Case i of the sample: seeds 1..kCases at sizes cycling over 0..99, as a
  // default RapidCheck run does.
  BatchInput SampleCase(int i) const { return GetParam().make(i + 1, i % 100); }
};

TEST(ClassifyMatchEndTest, SeedExample) {
  const SequenceList cached = {{1, 2}, {1, 2, 3}, {4}, {5, 6}, {5, 7}};
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{1, 2, 9}, 2),
            MatchEnd::kInsideSequence);
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{4, 5}, 1),
            MatchEnd::kPastSequences);
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{9}, 0), MatchEnd::kRoot);
  EXPECT_EQ(ClassifyMatchEnd(cached, Sequence{5, 8}, 1),
            MatchEnd::kBranchPoint);
}

TEST_P(GeneratorsTest, SameSeedSameCase) {
  const BatchInput first = GetParam().make(7, 50);
  const BatchInput again = GetParam().make(7, 50);
  EXPECT_EQ(first.cached_sequences, again.cached_sequences);
  EXPECT_EQ(first.requests, again.requests);
  const BatchInput other = GetParam().make(8, 50);
  EXPECT_NE(first.cached_sequences, other.cached_sequences);
}

// Every class of match end is at least 10% of all requests generated, and
// at least 10% of first requests: the property BatchAgreesWithReference
// tags each case by its first request's class.
TEST_P(GeneratorsTest, MatchEndsAreSpread) {
  std::array<int, 4> all{};
  std::array<int, 4> first{};
  int requests = 0;
  for (int i = 0; i < kCases; ++i) {
    const BatchInput batch = SampleCase(i);
    ReferenceTrie trie;
    for (const TokenSpan sequence : batch.cached_sequences) {
      trie.Insert(sequence);
    }
    ASSERT_FALSE(batch.requests.empty());
    for (std::size_t r = 0; r < batch.requests.size(); ++r) {
      const TokenSpan request = batch.requests[r];
      const std::size_t matched = trie.MatchPrefix(request).matched_length;
      const int end = static_cast<int>(
          ClassifyMatchEnd(batch.cached_sequences, request, matched));
      ++all[end];
      if (r == 0) ++first[end];
      ++requests;
    }
  }
  for (MatchEnd end : {MatchEnd::kRoot, MatchEnd::kPastSequences,
                       MatchEnd::kBranchPoint, MatchEnd::kInsideSequence}) {
    const double of_all =
        static_cast<double>(all[static_cast<int>(end)]) / requests;
    const double of_first =
        static_cast<double>(first[static_cast<int>(end)]) / kCases;
    std::cout << MatchEndName(end) << ": " << of_all * 100 << "% of "
              << requests << " requests, " << of_first * 100 << "% of "
              << kCases << " first requests\n";
    EXPECT_GE(of_all, kMinFraction) << MatchEndName(end);
    EXPECT_GE(of_first, kMinFraction) << MatchEndName(end);
  }
}

bool HasDuplicate(const SequenceList& sequences) {
  std::set<Sequence> distinct;
  for (const TokenSpan s : sequences) distinct.emplace(s.begin(), s.end());
  return distinct.size() < sequences.size();
}

bool HasEmpty(const SequenceList& sequences) {
  for (const TokenSpan s : sequences) {
    if (s.empty()) return true;
  }
  return false;
}

bool HasStrictPrefixPair(const SequenceList& sequences) {
  for (const TokenSpan a : sequences) {
    for (const TokenSpan b : sequences) {
      if (!a.empty() && a.size() < b.size() &&
          std::equal(a.begin(), a.end(), b.begin())) {
        return true;
      }
    }
  }
  return false;
}

std::set<Token> Tokens(const BatchInput& batch) {
  std::set<Token> tokens;
  for (const SequenceList* list : {&batch.cached_sequences, &batch.requests}) {
    for (const TokenSpan sequence : *list) {
      tokens.insert(sequence.begin(), sequence.end());
    }
  }
  return tokens;
}

bool HasExtremeToken(const BatchInput& batch) {
  const std::set<Token> tokens = Tokens(batch);
  return tokens.contains(std::numeric_limits<Token>::min()) ||
         tokens.contains(std::numeric_limits<Token>::max()) ||
         tokens.contains(-1);
}

bool HasLow16Collision(const BatchInput& batch) {
  std::set<std::uint16_t> low;
  for (Token token : Tokens(batch)) {
    if (!low.insert(static_cast<std::uint16_t>(token)).second) return true;
  }
  return false;
}

// Each bug-finding shape appears in at least 10% of cases.
TEST_P(GeneratorsTest, HardShapesAreFrequent) {
  struct Shape {
    const char* name;
    bool (*present)(const BatchInput&);
    int cases = 0;
  };
  Shape shapes[] = {
      {"duplicate cached sequences",
       [](const BatchInput& b) { return HasDuplicate(b.cached_sequences); }},
      {"empty sequence",
       [](const BatchInput& b) {
         return HasEmpty(b.cached_sequences) || HasEmpty(b.requests);
       }},
      {"cached sequence that is a strict prefix of another",
       [](const BatchInput& b) {
         return HasStrictPrefixPair(b.cached_sequences);
       }},
      {"INT32_MIN, INT32_MAX or -1", &HasExtremeToken},
      {"distinct tokens equal in their low 16 bits", &HasLow16Collision},
  };
  for (int i = 0; i < kCases; ++i) {
    const BatchInput batch = SampleCase(i);
    for (Shape& shape : shapes) shape.cases += shape.present(batch);
  }
  for (const Shape& shape : shapes) {
    const double fraction = static_cast<double>(shape.cases) / kCases;
    std::cout << shape.name << ": " << fraction * 100 << "% of cases\n";
    EXPECT_GE(fraction, kMinFraction) << shape.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Drivers, GeneratorsTest,
    ::testing::Values(Driver{"rapidcheck", &RapidCheckInput},
                      Driver{"mt19937", &checking::RandomBatchInput}),
    [](const ::testing::TestParamInfo<Driver>& info) {
      return std::string(info.param.name);
    });

// --- Cache workloads (SPEC §8) ---------------------------------------------

// The replay `RandomReplayInput` draws, as a workload of accesses.
CacheWorkload RandomReplayWorkload(std::uint64_t seed, int size) {
  const ReplayInput replay = checking::RandomReplayInput(seed, size);
  CacheWorkload workload{replay.options, {}};
  for (const TokenSpan request : replay.requests) {
    workload.operations.push_back(
        {checking::Operation::Kind::kAccess, {request.begin(), request.end()}});
  }
  return workload;
}

CacheWorkload RapidCheckWorkload(std::uint64_t seed, int size) {
  return GenCacheWorkload()(rc::Random(seed), size).value();
}

// True if the workload's answers (every match, and what every operation's
// tokens match afterwards) differ between LRU and FIFO at its capacity.
bool PoliciesDiffer(const CacheWorkload& workload) {
  CacheOptions lru = workload.options;
  lru.policy = EvictionPolicy::kLru;
  CacheOptions fifo = workload.options;
  fifo.policy = EvictionPolicy::kFifo;
  const auto a = MakeEngine(ReferenceTrie::kName, lru);
  const auto b = MakeEngine(ReferenceTrie::kName, fifo);
  std::set<Sequence> seen;
  for (const checking::Operation& operation : workload.operations) {
    const TokenSpan tokens(operation.tokens);
    if (a->MatchPrefix(tokens) != b->MatchPrefix(tokens)) return true;
    if (operation.kind != checking::Operation::Kind::kMatch) {
      a->Access(tokens);
      b->Access(tokens);
    }
    seen.insert(operation.tokens);
    for (const Sequence& sequence : seen) {
      if (a->MatchPrefix(sequence) != b->MatchPrefix(sequence)) return true;
    }
  }
  return false;
}

struct CacheDriver {
  const char* name;
  CacheWorkload (*make)(std::uint64_t seed, int size);
};

void PrintTo(const CacheDriver& driver, std::ostream* os) {
  *os << driver.name;
}

class CacheGeneratorsTest : public ::testing::TestWithParam<CacheDriver> {};

TEST_P(CacheGeneratorsTest, SameSeedSameCase) {
  const CacheWorkload first = GetParam().make(7, 50);
  const CacheWorkload again = GetParam().make(7, 50);
  EXPECT_EQ(first.options, again.options);
  ASSERT_EQ(first.operations.size(), again.operations.size());
  for (std::size_t i = 0; i < first.operations.size(); ++i) {
    EXPECT_EQ(first.operations[i].tokens, again.operations[i].tokens);
  }
}

// Most cases evict; some evict a node with its parent in one step, hit
// after an eviction, see an evicted prefix come back, or answer otherwise
// under LRU than under FIFO (what a bug in recency needs); some never evict
// (SPEC §3's answers). Every page size from 1 to 3 and both policies come up.
TEST_P(CacheGeneratorsTest, WorkloadsReallyEvict) {
  struct Shape {
    const char* name;
    double min_fraction;
    int cases = 0;
  };
  Shape evicts{"evicts", 0.30};
  Shape chain{"evicts a chain in one step", 0.10};
  Shape hit{"hits after an eviction", 0.20};
  Shape returned{"an evicted prefix returns", 0.15};
  Shape differ{"LRU and FIFO answer differently", 0.10};
  Shape covers{"capacity >= distinct prefixes", 0.10};
  std::set<std::uint64_t> page_sizes;
  std::set<EvictionPolicy> policies;
  for (int i = 0; i < kCases; ++i) {
    const CacheWorkload workload = GetParam().make(i + 1, i % 100);
    const CacheFacts facts = ObserveCacheWorkload(workload);
    evicts.cases += facts.evicted;
    chain.cases += facts.evicted_chain;
    hit.cases += facts.hit_after_eviction;
    returned.cases += facts.prefix_returned;
    covers.cases += facts.capacity_covers;
    differ.cases += PoliciesDiffer(workload);
    page_sizes.insert(workload.options.page_size);
    policies.insert(workload.options.policy);
  }
  for (const Shape* shape :
       {&evicts, &chain, &hit, &returned, &differ, &covers}) {
    const double fraction = static_cast<double>(shape->cases) / kCases;
    std::cout << shape->name << ": " << fraction * 100 << "% of cases\n";
    EXPECT_GE(fraction, shape->min_fraction) << shape->name;
  }
  EXPECT_EQ(page_sizes, (std::set<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(policies.size(), kEvictionPolicies.size());
}

INSTANTIATE_TEST_SUITE_P(
    Drivers, CacheGeneratorsTest,
    ::testing::Values(CacheDriver{"rapidcheck", &RapidCheckWorkload},
                      CacheDriver{"mt19937", &RandomReplayWorkload}),
    [](const ::testing::TestParamInfo<CacheDriver>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace kvprefix::test
