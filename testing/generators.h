// RapidCheck generators for token sequences and whole workloads, built to
// find bugs in prefix indexes rather than to cover easy cases.
//
// Random independent sequences almost never share a prefix, so they never
// reach the code that matters (splits, siblings, IDs on shared paths). Here
// every sequence is derived from an earlier one: a duplicate, a prefix (down
// to the empty sequence), an extension, a near-copy with one token changed,
// the common prefix of two that branch apart, or a fresh sequence. Tokens come
// from a small per-case alphabet (so siblings collide), drawn from extreme
// values (0, -1, INT32_MIN, INT32_MAX, ...) and from values that differ from
// each other only in their high bits (so 16-bit truncation or a weak hash
// shows).
//
// A sequence is generated as a recipe (derivation kind, source index, cut
// position, alphabet indices) and built afterwards, so RapidCheck shrinks
// recipes and alphabets independently: counterexamples shrink to a few
// short sequences over tokens near 0.
//
// Generators may be used in properties (`*GenBatchCase()`) or outside one
// (`GenerateBatchCase(seed, size)`), e.g. to feed external implementations.
#ifndef KVPREFIX_TESTING_GENERATORS_H_
#define KVPREFIX_TESTING_GENERATORS_H_

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"
#include "testing/differential.h"

namespace kvprefix::testing {

using Sequence = std::vector<Token>;
using Sequences = std::vector<Sequence>;

// The input of the batch job (SPEC §2).
struct BatchCase {
  Sequences cached_sequences;
  Sequences requests;
};

// RapidCheck prints counterexamples with these (found by ADL), in the JSON
// input format of SPEC §4 and the harness's "insert [1,2]" form.
void showValue(const BatchCase& batch, std::ostream& os);
void showValue(const Operation& operation, std::ostream& os);

// Flat copy of `sequences`, for SequenceList-based APIs. O(total tokens).
SequenceList ToSequenceList(const Sequences& sequences);

// One token: mostly an extreme value (0, ±1, INT32_MIN, INT32_MAX, powers of
// two around 2^16 and 2^31) or a small value, sometimes any int32.
rc::Gen<Token> GenToken();

// A per-case alphabet: 1 to 4 tokens most of the time (siblings collide),
// up to 64 sometimes (wide nodes); half the time each token also comes with
// copies that differ only in bit 16 or bit 31. Never empty.
rc::Gen<std::vector<Token>> GenAlphabet();

// A sequence over `alphabet` (not empty) derived from one of `earlier`
// (duplicate, prefix, extension, near-copy, common prefix with another) or
// fresh; `earlier` may be empty.
// Fresh tokens number 1 to 3 + size / 8; derived sequences are longer or
// shorter than their sources (down to empty).
rc::Gen<Sequence> GenRelatedSequence(Sequences earlier,
                                     std::vector<Token> alphabet);

// At least one cached sequence, each related to the ones before it, and at
// least one request, each related to the cached sequences. Besides the
// recipes' shrinks, a failing case shrinks by dropping one built sequence
// (down to no cached sequence, but never below one request) or one
// sequence's last token.
rc::Gen<BatchCase> GenBatchCase();

// An online workload (SPEC §3): inserts and matches in any interleaving,
// each operation's tokens related to those of earlier operations.
rc::Gen<std::vector<Operation>> GenOperations();

// GenBatchCase() run outside a property: the same (seed, size) always gives
// the same case. `size` is RapidCheck's size (0..100 in a default run;
// larger gives more and longer sequences).
BatchCase GenerateBatchCase(std::uint64_t seed, int size);

// Where a match ends in the trie of `cached` sequences, one class per match:
//   kRoot:            nothing matched;
//   kPastSequences:   at a leaf: no cached sequence continues past it;
//   kBranchPoint:     at a node with two or more children;
//   kInsideSequence:  at a node with exactly one child, i.e. inside an edge
//                     of a radix trie.
enum class MatchEnd { kRoot, kPastSequences, kBranchPoint, kInsideSequence };

// Classifies the match of `matched_length` tokens of `request` against the
// trie of `cached`. O(total cached tokens).
MatchEnd ClassifyMatchEnd(const Sequences& cached, TokenSpan request,
                          std::size_t matched_length);

// "root", "past every cached sequence", "branch point", "inside a longer
// cached sequence": the RC_TAG labels.
std::string_view MatchEndName(MatchEnd end);

}  // namespace kvprefix::testing

#endif  // KVPREFIX_TESTING_GENERATORS_H_
