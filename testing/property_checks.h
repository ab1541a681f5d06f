// The RapidCheck property suite, as plain functions over a set of engines.
//
// Each property draws its own input (`*GenBatchInput()` and friends from
// testing/generators.h) and fails through RC_ASSERT/RC_FAIL, so it runs
// both inside RC_GTEST_PROP (tests/property/engine_properties_test.cc: every
// registered engine) and under rc::detail::checkTestable (teeth_test.cc: every
// mutant of testing/mutants.h, which the suite must catch).
//
// Engine-versus-reference comparisons go through the one differential
// harness, checking/differential.h. The metamorphic relations compare an
// engine with itself, so they also run on the reference.
#ifndef KVPREFIX_TESTING_PROPERTY_CHECKS_H_
#define KVPREFIX_TESTING_PROPERTY_CHECKS_H_

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "kvprefix/prefix_index.h"

namespace kvprefix::test {

// Engine names: registered engines (engines/registry.h) or mutants
// (testing/mutants.h).
using EngineNameList = std::vector<std::string_view>;

// A new, empty engine named `name`, registered or mutant. Throws
// std::invalid_argument for an unknown name.
std::unique_ptr<PrefixIndex> MakeEngineOrMutant(std::string_view name);

// Every registered engine except the reference, plus the mutants' correct
// baseline (so the suite is exercised before any optimized engine exists,
// and a mutant's failure is known to come from its bug alone).
EngineNameList EnginesUnderTest();

// EnginesUnderTest() plus the reference: the metamorphic relations hold for
// every engine, the oracle included.
EngineNameList EnginesWithReference();

// The size of the input a property last ran on: how many sequences
// (cached sequences, requests or operations) and the longest one's tokens.
// Properties set it before checking, so after a failure it describes the
// (shrunk) counterexample.
struct InputShape {
  std::size_t sequences = 0;
  std::size_t max_tokens = 0;
};

// A property of the suite: draws an input, records its shape in `*shape`,
// checks `engines` on it.
struct Property {
  std::string_view name;
  void (*check)(const EngineNameList& engines, InputShape* shape);
};

// Differential (SPEC §2): the batch job's matches equal the reference's,
// match by match, and inserts return the reference's node IDs. Tags each
// case with where its first request's match ends (MatchEndName()).
void CheckBatchAgreesWithReference(const EngineNameList& engines,
                                   InputShape* shape);

// Stateful, model-based (SPEC §3): rc::state commands insert and match in
// random interleavings; the harness's reference is the model and every
// command is checked as it runs.
void CheckOnlineAgreesWithReference(const EngineNameList& engines,
                                    InputShape* shape);

// Metamorphic relations, each engine against itself:
// The matched part is a cached prefix of the request ending at the reported
// node, and the uncached suffix starts with a token not cached there.
void CheckMatchSplitsRequest(const EngineNameList& engines, InputShape* shape);
// node_count() equals the number of distinct non-empty prefixes inserted.
void CheckNodeCountIsDistinctPrefixes(const EngineNameList& engines,
                                      InputShape* shape);
// Re-inserting an inserted sequence or any prefix of one creates no node and
// returns the node the prefix matches.
void CheckReinsertCreatesNoNode(const EngineNameList& engines,
                                InputShape* shape);
// After inserting a request, it matches in full at the returned node.
void CheckInsertedRequestMatchesInFull(const EngineNameList& engines,
                                       InputShape* shape);
// A node's ID never changes as more sequences are inserted.
void CheckNodeIdsNeverChange(const EngineNameList& engines, InputShape* shape);
// Matching never changes the index: node count, memory and every later
// answer (including the IDs the next inserts get) are as without it.
void CheckMatchingNeverChangesIndex(const EngineNameList& engines,
                                    InputShape* shape);

// Every property above, differential first.
const std::vector<Property>& AllProperties();

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_PROPERTY_CHECKS_H_
