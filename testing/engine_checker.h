// Unit tests' way onto the one differential harness (checking/differential.h)
// for a single engine type: a checker of that engine against the reference,
// the engine's own counters after the run, a GoogleTest assertion of the
// harness's report, the seed of a randomized test, and what an eviction
// listener reported in a hand-worked test. The per-engine tests
// (tests/*_trie_test.cc) compare with the reference only through these, so
// a comparison is never written twice.
#ifndef KVPREFIX_TESTING_ENGINE_CHECKER_H_
#define KVPREFIX_TESTING_ENGINE_CHECKER_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "checking/differential.h"
#include "kvprefix/cache.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/prefix_index.h"

namespace kvprefix::test {

// The seed of a randomized test: $KVPREFIX_TEST_SEED when set, else one
// drawn from std::random_device. Printed ("KVPREFIX_TEST_SEED=N") on
// stdout, so that a failure can be rerun with it. Not thread-safe (getenv).
inline std::uint64_t TestSeed() {
  std::uint64_t seed = 0;
  if (const char* env = std::getenv("KVPREFIX_TEST_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  } else {
    seed = std::random_device{}();
  }
  std::printf("KVPREFIX_TEST_SEED=%llu\n",
              static_cast<unsigned long long>(seed));
  return seed;
}

// A checker of one engine of type E against the reference, both built with
// `options` (SPEC §8): E(options) at page size 1, else
// PagedIndex<E, PageHash>(options), as MakeEngine builds a registered engine
// (a PageHash that sends every page to one bucket makes the pages be told
// apart by their content). With a finite capacity the checker compares the
// evicted pages too. Throws what E's constructor throws.
template <typename E, typename PageHash = PageContentHash>
checking::DifferentialChecker CheckerOf(const CacheOptions& options = {}) {
  std::vector<std::unique_ptr<PrefixIndex>> engines;
  if (options.page_size == 1) {
    engines.push_back(std::make_unique<EngineAdapter<E>>(options));
  } else {
    engines.push_back(
        std::make_unique<EngineAdapter<PagedIndex<E, PageHash>>>(options));
  }
  return checking::DifferentialChecker(options, std::move(engines));
}

// The engine under test of a CheckerOf<E>(options) at page size 1, for what
// only E reports (relocations, compactions, edges). Valid while `checker`
// lives. Throws std::bad_cast if the checker's first engine is not an E.
template <typename E>
const E& EngineOf(const checking::DifferentialChecker& checker) {
  return dynamic_cast<const EngineAdapter<E>&>(*checker.engines().at(0))
      .engine();
}

// Success when `report`, what DifferentialChecker::Apply, ApplyBatch or
// ApplyReplay returned, is nullopt; else a failure carrying the report
// (engine, options, operations, expected versus actual):
//   ASSERT_TRUE(Agrees(checker.Apply(operation))) << "seed " << seed;
inline ::testing::AssertionResult Agrees(
    const std::optional<std::string>& report) {
  if (!report) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << *report;
}

// What `evicted` recorded since it was last cleared, sorted (the eviction
// listener's contract fixes only the multiset of pages, kvprefix/cache.h),
// as EvictedPages::Format gives it, e.g. "evicted {[1],[1],[2]}"; then
// forgets it. O(pages log pages).
inline std::string TakeSorted(checking::EvictedPages& evicted) {
  evicted.Sort();
  std::string pages = evicted.Format();
  evicted.Clear();
  return pages;
}

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_ENGINE_CHECKER_H_
