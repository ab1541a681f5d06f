// The batch job of SPEC §2 (the seed's function) and its input: insert every
// cached sequence in input order, then match every request, in request order.
#ifndef KVPREFIX_KVPREFIX_BATCH_H_
#define KVPREFIX_KVPREFIX_BATCH_H_

#include <vector>

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

// The same, for a whole BatchInput.
template <typename Index>
std::vector<Match> FindPrefixMatches(Index& index, const BatchInput& input) {
  return FindPrefixMatches(index, input.cached_sequences, input.requests);
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_BATCH_H_
