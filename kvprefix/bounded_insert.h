// InsertBounded: SPEC §8's bounded insert of one request (steps 1-4, and
// the "first C nodes" shortcut), written once for the optimized tries (hash,
// double-array, radix) over the few primitives each provides.
//
// The steps, in the order this function takes them:
//   a. stored: how many of the sequence's nodes the insert stores. All of
//      them, or, where the shortcut holds, its first min(length, C): under a
//      policy whose kKeepsFirstCapacityNodes holds (lru, fifo) every node off
//      the path leaves before any node of the path, and the path's new nodes
//      leave deepest first, so a request longer than C keeps exactly its
//      first C nodes (SPEC §8). A pin held by a running request (SPEC §10.4)
//      breaks the premise, since a pinned node off the path cannot leave, so
//      the shortcut needs a trie with no pin held (a trie without pins()
//      never holds one).
//   b. limits: the trie throws CapacityError, before changing anything, if
//      its own limits (32-bit slots, edges) cannot hold the stored nodes, and
//      makes any room its bookkeeping needs (std::bad_alloc, also before any
//      change).
//   c. the stamp r: the trie's clock ticks (kvprefix/cache_core.h).
//   d. step 1, the walk over the stored prefix, touching (step 3) the nodes
//      present as it goes where the trie touches while walking; on_walk sees
//      where it stopped, before anything else changes.
//   e. step 2 (and step 3 for what d did not touch): Grow creates the missing
//      stored nodes below the walk's end, each with the next ID and the
//      state of a node created and touched by r, and records the leaf whose
//      key changed. A trie may take some of step 4's first victims here,
//      before creating, when they are victims step 4 would take anyway
//      (kvprefix/cache_model.h's EvictLeavesBelow), so that the new nodes
//      reuse the freed room; no victim and no order changes.
//   f. the tail never stored: its IDs are used up and it counts as evicted.
//   g. step 4: evict while more than C nodes are present. Without the
//      shortcut the path's own nodes may go, and the deepest node of the
//      path still present is found again.
//   h. the trie tidies its bookkeeping (rebuilds an overfull leaf heap,
//      compacts its arena), then the evictions are reported to the listener:
//      the stored nodes evicted, then the tail never stored (the multiset of
//      evicted tokens is what SPEC §8 fixes, not the order of the calls).
// The reference (reference/reference_trie.h) transliterates SPEC §8 on its
// own and judges this function; the models (models/) follow §9's systems,
// whose steps differ.
//
// What a trie T provides, to this function only (it befriends it; none of
// these is public):
//   T::Path: where a walk stopped, with a member `matched` (tokens followed).
//   options(), node_count(), Tick(), CountEvicted(n), FlushEvicted(),
//     ReportEvicted(tokens): CacheCore's, and the nodes present.
//   optionally pinned(): nodes with a pin (kvprefix/pins.h).
//   CheckRoom<Policy>(sequence, stored): b (double-array reserves a heap
//     entry here).
//   WalkTouching<Policy>(prefix, stamp) -> Path: d; a trie whose touch must
//     follow its creations (radix: a split copies an edge's state) touches
//     nothing here and touches the path in Grow.
//   MatchAt(path) -> Match: the match a walk ending at `path` records.
//   Grow<Policy>(path, tokens, stamp): e, `tokens` possibly empty (then only
//     the touch and the re-keyed leaf); leaves `path` at the new deepest
//     node (path.matched the stored length).
//   SkipIds(n): f's IDs.
//   EvictLeaves<Policy>(count): g, kvprefix/cache_model.h's EvictLeaves over
//     the trie's leaves.
//   DeepestLeft(sequence, path) -> Path: the end of the path still present
//     after g took nodes of it (a walk again, or a climb from `path`).
//   Tidy<Policy>(): h's bookkeeping.
// Each trie's header says how its primitives realise the steps (hash frees
// room before creating so that a new chain fills freed slots in ascending
// runs; double-array creates first, since its slots are placed by its
// parents' bases; radix cuts an edge and appends runs, then touches).
//
// Complexity: the primitives' (each trie's Insert says it), plus O(1).
// Errors: what the primitives throw (CapacityError at b, before any change;
// std::bad_alloc; NoEvictableLeafError at g, which no policy of SPEC §8
// reaches; what the listener throws at g or h, once the eviction it reports
// is complete: the reports after it are lost, the counts are not).
// Thread safety: none; the trie's Insert holds exclusive access.
// Source: SPEC §8; the shape (one algorithm over a structure's primitives,
// parametrised by a policy type) follows Abseil's raw_hash_set and its
// policy traits.
#ifndef KVPREFIX_KVPREFIX_BOUNDED_INSERT_H_
#define KVPREFIX_KVPREFIX_BOUNDED_INSERT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kvprefix/cache_model.h"
#include "kvprefix/types.h"

namespace kvprefix {

// What a bounded insert answers: step 1's match, and the ID of the deepest
// node of the sequence's path still present afterwards (kRootNode if none).
struct BoundedInsertResult {
  Match match;
  NodeId deepest;
};

// The walk hook that does nothing; also the tries' do-nothing visitor of
// the nodes a walk passes.
struct IgnoreWalk {
  template <typename Seen>
  void operator()(const Seen&) const {}
};

// True if `trie`, under Policy, may store only a long request's first C
// nodes (a. above): the policy allows it and no pin is held. O(1).
template <CachePolicy Policy, typename Trie>
bool KeepsFirstCapacityNodes(const Trie& trie) {
  if constexpr (!Policy::kKeepsFirstCapacityNodes) {
    return false;
  } else if constexpr (requires { trie.pinned(); }) {
    return trie.pinned() == 0;
  } else {
    return true;
  }
}

// SPEC §8 steps 1-4 for `sequence` on the bounded `trie`, under Policy (the
// trie's policy type): the steps a-h above. on_walk(path) is called once,
// after step 1's walk and before step 2 (radix's lru curve reads the stamps
// its walk did not change). Returns step 1's match and the deepest node.
template <CachePolicy Policy, typename Trie, typename OnWalk = IgnoreWalk>
BoundedInsertResult InsertBounded(Trie& trie, TokenSpan sequence,
                                  OnWalk&& on_walk = {}) {
  const std::uint64_t capacity = trie.options().capacity;
  const bool keeps_first = KeepsFirstCapacityNodes<Policy>(trie);
  const std::size_t stored = keeps_first && capacity < sequence.size()
                                 ? static_cast<std::size_t>(capacity)
                                 : sequence.size();
  trie.template CheckRoom<Policy>(sequence, stored);
  const std::uint64_t stamp = trie.Tick();
  // Under the shortcut no node deeper than C is ever stored, so the walk over
  // the stored prefix finds step 1's whole match.
  typename Trie::Path path =
      trie.template WalkTouching<Policy>(sequence.first(stored), stamp);
  on_walk(path);
  const Match match = trie.MatchAt(path);
  trie.template Grow<Policy>(
      path, sequence.subspan(path.matched, stored - path.matched), stamp);
  const std::size_t never_stored = sequence.size() - stored;
  trie.SkipIds(never_stored);
  trie.CountEvicted(never_stored);
  if (trie.node_count() > capacity) {
    trie.template EvictLeaves<Policy>(trie.node_count() - capacity);
    if (!keeps_first) path = trie.DeepestLeft(sequence, path);
  }
  trie.template Tidy<Policy>();
  const BoundedInsertResult result{match, trie.MatchAt(path).cache_node};
  trie.FlushEvicted();
  if (never_stored > 0) trie.ReportEvicted(sequence.subspan(stored));
  return result;
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_BOUNDED_INSERT_H_
