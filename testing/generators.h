// RapidCheck generators for token sequences and whole workloads: the
// bug-finding shapes of checking/recipe.h, drawn through rc::Gen so that a
// failing case shrinks to a few short sequences over tokens near 0.
//
// The same tables drive checking/random_input.h (std::mt19937_64, for
// `kvprefix verify`); these generators are for properties
// (`*GenBatchInput()`), or outside one through the rc::Gen call operator,
// e.g. GenBatchInput()(rc::Random(seed), size).value().
#ifndef KVPREFIX_TESTING_GENERATORS_H_
#define KVPREFIX_TESTING_GENERATORS_H_

#include <rapidcheck.h>

#include <ostream>
#include <string_view>
#include <vector>

#include "checking/differential.h"
#include "checking/recipe.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// RapidCheck prints counterexamples with these (found by ADL, hence the
// namespaces of the types), in the JSON input format of SPEC §4 and the
// harness's "insert [1,2]" form.
void showValue(const BatchInput& input, std::ostream& os);
namespace checking {
void showValue(const Operation& operation, std::ostream& os);
}  // namespace checking

namespace test {

// One token: mostly an extreme value (checking::kExtremeTokens) or a small
// value, sometimes any int32.
rc::Gen<Token> GenToken();

// A per-case alphabet for sequences of `role` (checking::AlphabetSize,
// WithHighBitCopies). Never empty.
rc::Gen<std::vector<Token>> GenAlphabet(
    checking::Role role = checking::Role::kCached);

// A sequence over `alphabet` (not empty) derived from one of `earlier`
// (duplicate, prefix, extension, near-copy, common prefix with another) or
// fresh; `earlier` may be empty. Fresh tokens number 1 to 3 + size / 8;
// derived sequences are longer or shorter than their sources (down to
// empty).
rc::Gen<std::vector<Token>> GenRelatedSequence(SequenceList earlier,
                                               std::vector<Token> alphabet);

// At least one cached sequence, each related to the ones before it, and at
// least one request, each related to the cached sequences. Besides the
// recipes' shrinks, a failing case shrinks by dropping one built sequence
// (down to no cached sequence, but never below one request) or one
// sequence's last token.
rc::Gen<BatchInput> GenBatchInput();

// An online workload (SPEC §3): inserts and matches in any interleaving,
// each operation's tokens related to those of earlier operations.
rc::Gen<std::vector<checking::Operation>> GenOperations();

// A bounded cache and what is done to it (SPEC §8): accesses, inserts and
// matches, each operation's tokens related to those of earlier operations,
// on a cache with a policy, a page size from 1 to 3 and a capacity from 0
// to twice the operations' distinct prefixes in pages (checking/recipe.h's
// cache shapes: about half the cases must evict).
struct CacheWorkload {
  CacheOptions options;
  std::vector<checking::Operation> operations;
};
void showValue(const CacheWorkload& workload, std::ostream& os);

// Cache workloads. Besides the recipes' shrinks (and the capacity
// percentage's, toward 0; policy and page size are weighted choices, which
// do not shrink), a failing case shrinks by dropping one operation or one
// operation's last token, keeping the options as they were.
rc::Gen<CacheWorkload> GenCacheWorkload();

// Where a match ends in the trie of `cached` sequences, one class per match:
//   kRoot:            nothing matched;
//   kPastSequences:   at a leaf: no cached sequence continues past it;
//   kBranchPoint:     at a node with two or more children;
//   kInsideSequence:  at a node with exactly one child, i.e. inside an edge
//                     of a radix trie.
enum class MatchEnd { kRoot, kPastSequences, kBranchPoint, kInsideSequence };

// Classifies the match of `matched_length` tokens of `request` against the
// trie of `cached`. O(total cached tokens).
MatchEnd ClassifyMatchEnd(const SequenceList& cached, TokenSpan request,
                          std::size_t matched_length);

// "root", "past every cached sequence", "branch point", "inside a longer
// cached sequence": the RC_TAG labels.
std::string_view MatchEndName(MatchEnd end);

}  // namespace test
}  // namespace kvprefix

#endif  // KVPREFIX_TESTING_GENERATORS_H_
