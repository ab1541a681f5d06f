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
#include "kvprefix/types.h"

namespace kvprefix {

class ReferenceTrie {
 public:
  static constexpr std::string_view kName = "reference";

  // An unbounded index holding only the root (node 0).
  ReferenceTrie() = default;
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

  // SPEC §8 steps 1-4 (SPEC §3 when unbounded): MatchPrefix, then Insert.
  Match Access(TokenSpan request);

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
  // Nodes evicted so far. O(1).
  std::uint64_t evicted_count() const { return evicted_; }
  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
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
  };
  // The key SPEC §8 step 4 orders leaves by, compared first by first.
  using Key = std::pair<std::uint64_t, std::uint64_t>;

  // (stamp, 0) for lru, (ID, 0) for fifo, (count, stamp) for lfu.
  Key LeafKey(NodeId id) const;
  void Touch(const std::vector<NodeId>& path);
  void EvictLeaf();

  CacheOptions options_;
  std::vector<Node> nodes_ = std::vector<Node>(1);  // [id]; [0] is the root
  std::uint64_t present_ = 0;                       // nodes present, root out
  // Bounded only:
  std::set<std::pair<Key, NodeId>> leaves_;  // (LeafKey, ID)
  std::uint64_t stamp_ = 0;                  // stamps given so far
  std::uint64_t evicted_ = 0;
  EvictionListener listener_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_REFERENCE_REFERENCE_TRIE_H_
