// RapidCheck properties of every engine (SPEC §1-§3), run by ctest: each
// RC_GTEST_PROP checks every registered engine (engines/all_engines.h, so
// new engines are picked up without an edit here) and the mutants' correct
// baseline. The bodies live in property_checks.cc, shared with the teeth
// test. Reproducing a failure and long campaigns: tests/README.md.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "engines/all_engines.h"
#include "testing/property_checks.h"

namespace kvprefix::test {
namespace {

// The properties below cover every optimized engine of all_engines.h.
TEST(EngineProperties, CoverEveryOptimizedEngine) {
  const EngineNameList covered = EnginesUnderTest();
  OptimizedEngines::ForEach([&]<typename E>() {
    EXPECT_NE(std::find(covered.begin(), covered.end(), E::kName),
              covered.end())
        << E::kName;
  });
}

// Differential: the batch job equals the reference's, match by match.
RC_GTEST_PROP(EngineProperties, BatchAgreesWithReference, ()) {
  InputShape shape;
  CheckBatchAgreesWithReference(EnginesUnderTest(), &shape);
}

// Stateful: random interleavings of insert and match (rc::state commands).
RC_GTEST_PROP(EngineProperties, OnlineAgreesWithReference, ()) {
  InputShape shape;
  CheckOnlineAgreesWithReference(EnginesUnderTest(), &shape);
}

// Metamorphic relations, on the reference too.
RC_GTEST_PROP(EngineProperties, MatchSplitsRequest, ()) {
  InputShape shape;
  CheckMatchSplitsRequest(EnginesWithReference(), &shape);
}

RC_GTEST_PROP(EngineProperties, NodeCountIsDistinctPrefixes, ()) {
  InputShape shape;
  CheckNodeCountIsDistinctPrefixes(EnginesWithReference(), &shape);
}

RC_GTEST_PROP(EngineProperties, ReinsertCreatesNoNode, ()) {
  InputShape shape;
  CheckReinsertCreatesNoNode(EnginesWithReference(), &shape);
}

RC_GTEST_PROP(EngineProperties, InsertedRequestMatchesInFull, ()) {
  InputShape shape;
  CheckInsertedRequestMatchesInFull(EnginesWithReference(), &shape);
}

RC_GTEST_PROP(EngineProperties, NodeIdsNeverChange, ()) {
  InputShape shape;
  CheckNodeIdsNeverChange(EnginesWithReference(), &shape);
}

RC_GTEST_PROP(EngineProperties, MatchingNeverChangesIndex, ()) {
  InputShape shape;
  CheckMatchingNeverChangesIndex(EnginesWithReference(), &shape);
}

// Bounded caches (SPEC §8): generated capacity, policy and page size.
TEST(CacheProperties, CoverEveryOptimizedEngine) {
  const EngineNameList covered = CacheEnginesUnderTest();
  OptimizedEngines::ForEach([&]<typename E>() {
    EXPECT_NE(std::find(covered.begin(), covered.end(), E::kName),
              covered.end())
        << E::kName;
  });
}

// Stateful differential: accesses, inserts and matches against the
// reference as the model, each checked as it runs (with eviction counts and
// the evicted pages); the tags show how often the generator evicts.
RC_GTEST_PROP(CacheProperties, CacheAgreesWithReference, ()) {
  InputShape shape;
  CheckCacheAgreesWithReference(CacheEnginesUnderTest(), &shape);
}

// Each engine alone, the reference too: at most C nodes, prefix-closed, IDs
// never given twice.
RC_GTEST_PROP(CacheProperties, CacheInvariantsHold, ()) {
  InputShape shape;
  CheckCacheInvariantsHold(CacheEnginesWithReference(), &shape);
}

RC_GTEST_PROP(CacheProperties, LargeCapacityGivesUnboundedAnswers, ()) {
  InputShape shape;
  CheckLargeCapacityGivesUnboundedAnswers(CacheEnginesWithReference(), &shape);
}

// The LRU curve (SPEC §8): one pass equals direct LRU replay at every
// capacity from 0 to the distinct prefixes + 1, page sizes 1 to 3, over the
// reference and the radix engine.
RC_GTEST_PROP(CurveProperties, LruCurveEqualsReplay, ()) {
  InputShape shape;
  CheckLruCurveEqualsReplay(CurvesUnderTest(), &shape);
}

}  // namespace
}  // namespace kvprefix::test
