// ReferenceTrie: the oracle every other engine is judged by.
//
// It is simple on purpose. It follows SPEC §1 and §8 line by line, takes no
// shortcuts and skips no case. A node is an entry in a vector indexed by its
// ID, and its children are a std::map from token to child ID: exactly the
// seed's hints ("a dictionary can map a token to a child node ID; list
// length can supply the next sequential node ID"). A bounded cache adds to
// each node its parent, token and stamp, keeps an evicted node's entry as a
// tombstone (IDs are never given again, so the vector only grows), and keeps
// the set of leaves ordered by the policy's key, from which SPEC §8 step 4
// takes the first. Nothing here is recursive, so a 200,000-token sequence or
// a 100,000-deep chain costs no stack.
//
// When this engine and an optimized one disagree, this one is right unless
// it contradicts docs/SPEC.md; fix it only with a test quoting the contract.
#ifndef KVPREFIX_REFERENCE_REFERENCE_TRIE_H_
#define KVPREFIX_REFERENCE_REFERENCE_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/cache_core.h"
#include "kvprefix/page_events.h"
#include "kvprefix/pins.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

class ReferenceTrie : public CacheCore {
 public:
  static constexpr std::string_view kName = "reference";

  // An unbounded index holding only the root (node 0).
  ReferenceTrie() : CacheCore(CacheOptions{}) {}
  // A cache with options.capacity and options.policy (SPEC §8). Throws
  // std::invalid_argument if options.page_size != 1.
  explicit ReferenceTrie(const CacheOptions& options);

  // Inserts `sequence` (SPEC §1): follows the edge for each token, creating a
  // node with the next unused ID where the edge is missing. Bounded: then
  // touches the path and evicts (SPEC §8 steps 2-4). Returns the deepest node
  // of the sequence's path still present (the node its last token reaches
  // when nothing on it was evicted), kRootNode for an empty sequence.
  // O(length * log(nodes)), plus O(log(nodes)) per eviction. Throws
  // std::bad_alloc; the trie then holds the nodes created before the
  // failure, still a valid trie (and possibly above capacity). Throws
  // NoEvictableLeafError (kvprefix/cache.h) if it must evict and no leaf
  // is left, which lru and fifo never reach (SPEC §8).
  NodeId Insert(TokenSpan sequence);

  // The longest prefix of `request` that is a path from the root, and the
  // node it ends at. Never modifies the index (no touch). O(matched *
  // log(nodes)).
  Match MatchPrefix(TokenSpan request) const;

  // SPEC §8 steps 1-4 (SPEC §3 when unbounded): the request admitted and
  // finished at one instant (SPEC §10.7), which is MatchPrefix cut by the
  // match limit, then Insert.
  Match Access(TokenSpan request);

  // SPEC §10.4, model spec: a request's life while others run (the
  // members of kvprefix/request.h's ServingCache). Admit always starts:
  // the match (cut by the match limit) is recorded and every node of its
  // path gets one more pin, and a pinned node is never evicted. Finish
  // releases the pins, then inserts `stored` as Insert does (stamp: the
  // finishes so far). `stored_length` is not needed by this model. Costs
  // as MatchPrefix and Insert; the request's state is its path.
  Attempt Admit(RequestId id, TokenSpan prompt, std::uint64_t stored_length);
  void PrefillEnd(RequestId, TokenSpan) {}
  void Finish(RequestId id, TokenSpan stored);
  // The match Admit would record now (the match limit applied).
  Match PeekMatch(TokenSpan request) const;
  // Nodes with a pin. O(1).
  std::uint64_t pinned() const { return pins_.pinned(); }
  // Nodes present and evicted: node_count(), evicted_count().
  std::uint64_t cached_pages() const { return present_; }
  std::uint64_t evicted_pages() const { return evicted_count(); }

  // Access that first reports each node of the request's matched path, root
  // first, as on_run(stamp, 1) with the node's stamp before this request:
  // the per-node stack distances of LruCurve (kvprefix/lru_curve.h). A
  // bounded cache only (an unbounded one keeps no stamps).
  template <typename OnRun>
  Match Access(TokenSpan request, OnRun&& on_run) {
    const Match match = MatchPrefix(request);
    NodeId node = kRootNode;
    for (std::size_t i = 0; i < match.matched_length; ++i) {
      node = nodes_[node].children.at(request[i]);
      on_run(nodes_[node].stamp, std::uint64_t{1});
    }
    Insert(request);
    return match;
  }

  // Nodes present, root excluded. O(1).
  std::uint64_t node_count() const { return present_; }
  // The children of node `id` (an ID MatchPrefix returned since the last
  // change: a present node, or kRootNode): 0 for a leaf, 1 inside what a
  // radix trie holds as one edge, 2 or more at a branch. For statistics of
  // what inputs exercise (`kvprefix verify`). O(1).
  std::size_t child_count(NodeId id) const {
    return nodes_[id].children.size();
  }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h). evicted_count(): nodes evicted so
  // far; the listener gets each evicted node's token, one call a node.
  // Reports every node (a page of one token) as it is created and evicted
  // (kvprefix/page_events.h); null: none. Set on an empty trie; `listener`
  // must outlive the trie's changes.
  void SetPageEventListener(PageEventListener* listener) {
    page_events_ = listener;
  }

  // Heap bytes: the node vector, one red-black-tree chunk per edge, and when
  // bounded one per leaf. O(1).
  std::size_t memory_bytes() const;

 private:
  struct Node {
    std::map<Token, NodeId> children;
    // Bounded only: where the node hangs, and its last touch.
    NodeId parent = kRootNode;
    Token token = 0;
    std::uint64_t stamp = 0;  // the last request (Insert) whose path held it
    std::uint64_t count = 0;  // lfu: how many requests' paths held it
    std::uint64_t page = 0;   // its handle from page_events_
  };
  // The key SPEC §8 step 4 orders leaves by, compared first by first.
  using Key = std::pair<std::uint64_t, std::uint64_t>;

  // (stamp, 0) for lru, (ID, 0) for fifo, (count, stamp) for lfu.
  Key LeafKey(NodeId id) const;
  // In leaves_: a leaf (not the root) with no pin, so evictable.
  bool Evictable(NodeId id) const {
    return id != kRootNode && nodes_[id].children.empty() &&
           !pins_.is_pinned(id);
  }
  void Touch(const std::vector<NodeId>& path);
  void EvictLeaf();

  std::vector<Node> nodes_ = std::vector<Node>(1);  // [id]; [0] is the root
  std::uint64_t present_ = 0;                       // nodes present, root out
  // Bounded only:
  std::set<std::pair<Key, NodeId>> leaves_;  // (LeafKey, ID), Evictable
  PageEventListener* page_events_ = nullptr;
  // SPEC §10.4: each node's pin count (kvprefix/pins.h), and the matched
  // path of each running request.
  PinTable<NodeId, std::vector<NodeId>, DensePinCounts<NodeId>> pins_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_REFERENCE_REFERENCE_TRIE_H_
