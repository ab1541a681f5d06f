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

#include <array>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include "checking/differential.h"
#include "checking/recipe.h"
#include "checking/routing_check.h"
#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/request.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// RapidCheck prints counterexamples with these (found by ADL, hence the
// namespaces of the types), in the JSON input format of SPEC §4 and the
// harness's "insert [1,2]" form.
void showValue(const BatchInput& input, std::ostream& os);
// A SPEC §10 document, as AppendServeDocumentJson writes it.
void showValue(const ServeInput& input, std::ostream& os);
namespace checking {
void showValue(const Operation& operation, std::ostream& os);
// A SPEC §11.1 routed document, as AppendRoutedDocumentJson writes it.
void showValue(const RoutedInput& routed, std::ostream& os);
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

// --- Adversarial token distributions (memory) --------------------------------
//
// Workloads where an engine's memory could blow up: tokens spread over int32
// so that a double-array's base offsets jump (Aoe 1989: a child sits at
// base + token), a hash table's keys collide in their low bits, or a radix
// trie's runs are all one token long; and fan-outs from 2 to thousands.

// How an adversarial workload's tokens spread over int32.
enum class TokenSpread {
  kMultiplesOf2To16,  // k * 2^16: all equal in their low 16 bits
  kMultiplesOf2To18,  // k * 2^18
  kSparse,            // uniform over int32 (splitmix64)
  kAlternatingSigns,  // 1, -1, 2, -2, ...: negatives next to positives
};
inline constexpr std::array<TokenSpread, 4> kTokenSpreads = {
    TokenSpread::kMultiplesOf2To16, TokenSpread::kMultiplesOf2To18,
    TokenSpread::kSparse, TokenSpread::kAlternatingSigns};
// "multiples of 2^16", "multiples of 2^18", "sparse over int32",
// "alternating signs".
std::string_view TokenSpreadName(TokenSpread spread);

// A trie of `parents` nodes under the root, each with the same `fanout`
// children, each child followed by a chain of `tail` more nodes: the
// sequences [p, c, t_1, ..., t_tail] for every parent p and child c. The
// i-th parent, child and chain token are the spread's tokens number i
// (+ salt), so every parent's children have the same tokens and collide
// where an engine indexes by token (the double array's old blow-up, 300
// parents x 300 children of k * 65536: optimized/double_array_trie.h).
// Nodes: parents * (1 + fanout * (1 + tail)).
struct AdversarialWorkload {
  TokenSpread spread;
  std::size_t parents;
  std::size_t fanout;
  std::size_t tail;
  std::uint64_t salt;

  std::uint64_t nodes() const { return parents * (1 + fanout * (1 + tail)); }
};
void showValue(const AdversarialWorkload& workload, std::ostream& os);

// The workload's sequences, parent by parent. O(nodes).
SequenceList BuildAdversarial(const AdversarialWorkload& workload);

// Adversarial workloads of at least `min_nodes` nodes (fixed overheads then
// weigh little per node): any spread; fan-outs wide (500 to 3,000 children,
// under 1-2 parents), medium (16 to 300) or narrow (2 to 8, under many
// parents); chains of 0 to 3; parents as many as reach min_nodes (at most
// about min_nodes + 12,000 nodes in all).
rc::Gen<AdversarialWorkload> GenAdversarialWorkload(std::size_t min_nodes);

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

// Cache options of any model with options SPEC §9.4 admits: pages of 1 to 4
// tokens, mostly a capacity of 0 to 9 (1 in 5 unbounded), every policy,
// match limit and trigger its model takes.
rc::Gen<CacheOptions> GenServingCacheOptions();

// Small SPEC §10 documents (GenServingCacheOptions' caches): up to 13
// requests of up to 7 tokens over {1, 2, 3}, so that prefixes are shared,
// caches fill and requests wait; arrivals 0, 1, 2 or 5 µs apart; output
// lengths 0 to 4; max_running 1 to 4; prefill 0-2, decode 0-2, overhead
// 0-1 µs; output "none" or "unique".
rc::Gen<ServeInput> GenServeInput();

// Small SPEC §11 documents for `policy`: GenServeInput's documents on 1 to
// 4 workers, the policy's parameters drawn by checking::RandomRouterSpec
// (the values around its rules' edges), a seed 0 to 255.
rc::Gen<checking::RoutedInput> GenRoutedInput(RouterPolicy policy);

}  // namespace test
}  // namespace kvprefix

#endif  // KVPREFIX_TESTING_GENERATORS_H_
