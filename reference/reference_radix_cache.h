// ReferenceRadixCache: the oracle of model `sglang` (SPEC §9.3), SGLang's
// RadixCache replayed one request at a time.
//
// Simple on purpose, like ReferenceTrie: a node is an entry in a vector
// indexed by its ID (IDs are never reused, so an evicted node's entry stays
// as a tombstone), its edge a std::vector of tokens (whole pages), its
// children a std::map from an edge's first page to the child. One clock
// gives every match, insert and new node the next time, in the order SPEC
// §9.3's steps run. evict(D) collects its candidates by scanning every node
// present: O(nodes) per eviction, which an oracle can afford and which
// leaves nothing to keep in step.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_REFERENCE_REFERENCE_RADIX_CACHE_H_
#define KVPREFIX_REFERENCE_REFERENCE_RADIX_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/types.h"

namespace kvprefix {

class ReferenceRadixCache {
 public:
  static constexpr std::string_view kName = "reference";

  // A model engine of kvprefix/prefix_index.h for model sglang: its members
  // mean what that header says of sglang. Costs for n tokens: Access
  // O(n log(children)) plus O(nodes log(nodes)) when it evicts; Insert and
  // MatchPrefix O(n log(children)); the counts O(1).
  ReferenceRadixCache();  // unbounded, over tokens (P = 1), after-insert
  // options.capacity pages of options.page_size tokens (SPEC §9.3), with
  // options.policy (lru or fifo), options.match_limit and options.trigger.
  explicit ReferenceRadixCache(const CacheOptions& options);

  Match Access(TokenSpan request);
  NodeId Insert(TokenSpan sequence);
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return present_; }
  std::uint64_t evicted_count() const { return evicted_; }
  const CacheOptions& options() const { return options_; }
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
  }
  // The tree's size: tokens on the edges of the nodes present. O(1).
  std::uint64_t size_tokens() const { return size_; }
  // The node vector, edges and the children maps' nodes. O(nodes).
  std::size_t memory_bytes() const;

 private:
  struct Node {
    std::vector<Token> edge;  // whole pages; empty for the root
    std::map<std::vector<Token>, NodeId> children;  // by the edge's 1st page
    NodeId parent = kRootNode;
    std::uint64_t access = 0;    // a
    std::uint64_t creation = 0;  // c
    std::uint64_t locks = 0;     // on-allocate only
    bool present = true;
  };
  // Where a walk of `key` ended: the tokens walked and the node.
  struct Walk {
    std::size_t tokens = 0;
    NodeId node = kRootNode;
  };

  std::uint64_t Tick() { return ++clock_; }
  std::vector<Token> FirstPage(TokenSpan tokens) const;
  // `key` cut to whole pages.
  TokenSpan WholePages(TokenSpan key) const;
  // The common prefix of `edge` and `key`, in whole pages.
  std::size_t CommonPages(const std::vector<Token>& edge, TokenSpan key) const;
  NodeId NewNode(NodeId parent, std::vector<Token> edge);
  // split(child, j): returns the new node.
  NodeId Split(NodeId child, std::size_t pages);
  Walk MatchKey(TokenSpan key);
  void InsertKey(TokenSpan key);
  // evict(D): returns the tokens freed.
  std::uint64_t Evict(std::uint64_t demand);
  std::uint64_t Priority(NodeId id) const;
  bool IsCandidate(NodeId id) const;
  // Adds 1 (lock) or subtracts 1 from the lock count of `node` and its
  // ancestors, the root excepted.
  void AddLocks(NodeId node, bool lock);

  CacheOptions options_;
  std::vector<Node> nodes_ = std::vector<Node>(1);  // [ID]; [0] is the root
  std::uint64_t clock_ = 0;
  std::uint64_t present_ = 0;
  std::uint64_t size_ = 0;  // tokens on present edges
  std::uint64_t evicted_ = 0;
  EvictionListener listener_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_REFERENCE_REFERENCE_RADIX_CACHE_H_
