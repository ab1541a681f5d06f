// ReferenceRadixCache: the oracle of model `sglang` (SPEC §9.3), SGLang's
// RadixCache replayed one request at a time.
//
// Simple on purpose, like ReferenceTrie: a node is an entry in a vector
// indexed by its ID (IDs are never reused, so an evicted node's entry stays
// as a tombstone), its edge a std::vector of tokens (whole pages), its
// children a std::map from an edge's first page to the child. One clock
// (CacheCore's, kvprefix/cache_core.h) gives every match, insert and new
// node the next time, in the order SPEC §9.3's steps run. evict(D) collects its
// candidates by scanning every node present: O(nodes) per eviction, which an
// oracle can afford and which leaves nothing to keep in step.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_MODELS_SGLANG_REFERENCE_RADIX_CACHE_H_
#define KVPREFIX_MODELS_SGLANG_REFERENCE_RADIX_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <map>
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

class ReferenceRadixCache : public CacheCore {
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

  // §9.3's steps for one request: SPEC §10.4's attempt, prefill end and
  // finish at one instant (§10.7).
  Match Access(TokenSpan request);
  NodeId Insert(TokenSpan sequence);

  // SPEC §10.4, model sglang (kvprefix/request.h's ServingCache): every
  // node has a lock count (a split copies it), and running requests hold
  // slots outside the tree; free = C·P - size - held. Admit matches the
  // match key (a tick, access times, a possible split, whatever follows)
  // and locks the node reached. "after-insert": always starts. "on-allocate":
  // refuses when L > C·P (evicting the need first, as §9.3), waits when the
  // need L - m exceeds free plus the unlocked tokens, else evicts the whole
  // need if free is short and holds it. PrefillEnd ("on-allocate"): inserts
  // the prompt's whole pages, releases the held slots the tree took, moves
  // the lock to the prompt's node. Finish: inserts the stored sequence,
  // releases the rest and the lock ("after-insert": then evicts down to
  // C·P). Costs as Access; the request's state is its node and slots.
  Attempt Admit(RequestId id, TokenSpan prompt, std::uint64_t stored_length);
  void PrefillEnd(RequestId id, TokenSpan prompt);
  void Finish(RequestId id, TokenSpan stored);
  // §9.3's match of the match key, changing nothing; where it would split,
  // the ID the split's new node would get.
  Match PeekMatch(TokenSpan request) const;
  // Locked plus held tokens; tree size / P; evicted tokens / P. O(1).
  std::uint64_t pinned() const { return locked_tokens_ + held_; }
  std::uint64_t cached_pages() const { return size_ / options().page_size; }
  std::uint64_t evicted_pages() const {
    return evicted_tokens_ / options().page_size;
  }
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return present_; }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h): evicted_count() counts the nodes evicted, and
  // the listener gets each evicted node's edge; CacheCore's clock gives
  // §9.3's ticks.
  // Reports the tree's pages as an insert adds them and an eviction
  // removes them, deepest first (kvprefix/page_events.h); a split changes
  // no page. Null: none. Set on an empty tree; `listener` must outlive the
  // tree's changes.
  void SetPageEventListener(PageEventListener* listener) {
    page_events_ = listener;
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
    bool present = true;
    std::vector<std::uint64_t> pages;  // page_events_'s, one per edge page
  };
  // Where a walk of `key` ended: the tokens walked and the node.
  struct Walk {
    std::size_t tokens = 0;
    NodeId node = kRootNode;
  };

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
  // C·P tokens, saturating (a capacity past 2^64 tokens is never reached).
  std::uint64_t LimitTokens() const;
  // A running request (SPEC §10.4): its locked node, the slots it holds
  // outside the tree, its match.
  struct Running {
    NodeId node = kRootNode;
    std::uint64_t held = 0;
    std::uint64_t matched = 0;
  };

  std::vector<Node> nodes_ = std::vector<Node>(1);  // [ID]; [0] is the root
  std::uint64_t present_ = 0;
  std::uint64_t size_ = 0;  // tokens on present edges
  PageEventListener* page_events_ = nullptr;
  // SPEC §10.4: each node's lock count, the running requests whose node
  // is it or below (kvprefix/pins.h), and each running request's state.
  PinTable<NodeId, Running, DensePinCounts<NodeId>> pins_;
  std::uint64_t locked_tokens_ = 0;  // on edges of nodes with a lock
  std::uint64_t held_ = 0;           // held outside the tree
  std::uint64_t evicted_tokens_ = 0;
};

}  // namespace kvprefix

#endif  // KVPREFIX_MODELS_SGLANG_REFERENCE_RADIX_CACHE_H_
