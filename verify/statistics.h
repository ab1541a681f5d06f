// What the checked inputs exercised, as RapidCheck's RC_CLASSIFY reports the
// classes of a property's inputs: empty matches, full hits, matches that end
// inside what a radix trie holds as one edge, and for replay documents
// evictions, policies and page sizes. `kvprefix verify` prints them after
// "OK", so that a user sees whether the inputs reached the cases that break
// real implementations.
#ifndef KVPREFIX_VERIFY_STATISTICS_H_
#define KVPREFIX_VERIFY_STATISTICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "kvprefix/batch.h"
#include "kvprefix/cache.h"
#include "kvprefix/replay.h"
#include "kvprefix/request.h"

namespace kvprefix::verify {

// Counts over inputs, from the reference's answers (so they describe the
// inputs, whatever the implementation under test does). Not thread-safe;
// one per thread, then Merge.
struct InputStatistics {
  std::uint64_t requests = 0;
  // Matches of 0 tokens.
  std::uint64_t empty_matches = 0;
  // Non-empty matches of every whole page the match limit lets a match
  // cover (SPEC §8 drops a trailing partial page; with page size 1 and
  // match limit all, the whole request; SPEC §9.1's all-but-last, n - 1
  // tokens in whole pages).
  std::uint64_t full_hits = 0;
  // Non-empty matches ending at a node with exactly one child: inside an
  // edge of a radix trie holding the same nodes (not at a branch or a
  // leaf), where a radix engine must stop in the middle of a run. Counted
  // among the trie_requests only: those of batch inputs and of documents of
  // model spec (a vllm block ID or an sglang node ID is no trie node).
  std::uint64_t inside_edge = 0;
  std::uint64_t trie_requests = 0;
  // Replay documents only:
  std::uint64_t documents = 0;
  std::uint64_t evicting_documents = 0;  // evicted at least one node
  std::uint64_t evicted_nodes = 0;
  // Documents per policy, at the policy's position in kEvictionPolicies.
  std::array<std::uint64_t, kEvictionPolicies.size()> policy_documents{};
  std::map<std::uint64_t, std::uint64_t> page_sizes;  // page size -> documents

  // Adds the input's requests: the reference trie holding its cached
  // sequences matches each one. O(tokens * log fan-out).
  void Add(const BatchInput& input);
  // Adds the document: the reference of its model replays it (SPEC §8,
  // §9), each request's match taken at step 1 (under the match limit).
  // O(tokens * log fan-out) plus O(log nodes) per eviction.
  void Add(const ReplayInput& input);
  // A serving document (SPEC §10) adds its sequential replay (the §8/§9
  // document without its §10 members), as above: what its requests share
  // and evict one at a time.
  void Add(const ServeInput& input) { Add(input.replay); }
  void Merge(const InputStatistics& other);

  // One line per kind of input seen, each ending in a newline ("" when
  // nothing was added):
  //   "exercised: 2345 requests: 31.2% empty matches, 12.0% full hits,
  //    40.1% end inside an edge\n" (the last of the trie_requests: left
  //    out if there are none, followed by " (of the 1234 of model spec)" if
  //    some requests are not)
  //   "exercised: 100 replay documents: 76.0% evict (1234 nodes), policy
  //    lru 51.0% fifo 49.0%, page size 1 52.0% 2 24.0% 3 24.0%\n"
  // Every policy of kEvictionPolicies is listed, in its order, 0.0% too.
  // Percentages with one decimal. O(policies + page sizes).
  std::string Format() const;
};

}  // namespace kvprefix::verify

#endif  // KVPREFIX_VERIFY_STATISTICS_H_
