// The batch job of SPEC §2 (the seed's function) and its input: insert every
// cached sequence in input order, then match every request, in request order.
#ifndef KVPREFIX_KVPREFIX_BATCH_H_
#define KVPREFIX_KVPREFIX_BATCH_H_

#include <optional>
#include <string>
#include <vector>

#include "kvprefix/namespaces.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/sequence_list.h"
#include "kvprefix/types.h"

namespace kvprefix {

// The input of the batch job: the two members of a SPEC §4 document. The one
// batch-input type of the project: io reads and writes it, the CLI, verify,
// the generators, the benchmarks and the Python module build it.
struct BatchInput {
  SequenceList cached_sequences;  // inserted in order
  SequenceList requests;          // matched in order; they insert nothing
  // SPEC §8.1: one namespace per cached sequence, and one per request; an
  // empty vector puts every one in the default namespace "".
  std::vector<std::string> cached_namespaces = {};
  std::vector<std::string> namespaces = {};

  friend bool operator==(const BatchInput&, const BatchInput&) = default;
};

// Inserts `cached_sequences` into `index` (which may already hold sequences),
// then returns one Match per request, in request order; requests insert
// nothing. `Index` is a PrefixIndexEngine or a PrefixIndex.
// Cost: one Insert per cached token plus one MatchPrefix per request.
// Throws whatever Insert throws (CapacityError, std::bad_alloc); `index` then
// holds the sequences inserted before the failure.
template <typename Index>
std::vector<Match> FindPrefixMatches(Index& index,
                                     const SequenceList& cached_sequences,
                                     const SequenceList& requests) {
  for (TokenSpan sequence : cached_sequences) index.Insert(sequence);
  std::vector<Match> matches;
  matches.reserve(requests.size());
  for (TokenSpan request : requests) {
    matches.push_back(index.MatchPrefix(request));
  }
  return matches;
}

// `input` as the engines see it (SPEC §8.1): when some namespace of either
// list is not "", both lists folded by one NamespaceFolder
// (kvprefix/namespaces.h) with the namespaces left out; nullopt when every
// namespace is "" (the engines then take `input` as it is). Throws
// std::invalid_argument for a namespace list of the wrong length, and what
// the folder throws. O(tokens).
inline std::optional<BatchInput> FoldedBatch(const BatchInput& input) {
  if (!HasNamespaces(input.cached_namespaces) &&
      !HasNamespaces(input.namespaces)) {
    return std::nullopt;
  }
  NamespaceFolder folder;
  return BatchInput{
      .cached_sequences =
          folder.Folded(input.cached_sequences, input.cached_namespaces),
      .requests = folder.Folded(input.requests, input.namespaces)};
}

// The same, for a whole BatchInput, each sequence in its namespace
// (FoldedBatch; O(tokens) more when some namespace is not ""). Also throws
// what FoldedBatch throws.
template <typename Index>
std::vector<Match> FindPrefixMatches(Index& index, const BatchInput& input) {
  const std::optional<BatchInput> folded = FoldedBatch(input);
  const BatchInput& sequences = folded ? *folded : input;
  return FindPrefixMatches(index, sequences.cached_sequences,
                           sequences.requests);
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_BATCH_H_
