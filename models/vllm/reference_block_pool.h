// ReferenceBlockPool: the oracle of model `vllm` (SPEC §9.2), vLLM's prefix
// cache (KVCacheManager over a BlockPool) replayed one request at a time.
//
// Like ReferenceTrie it is simple on purpose and follows the SPEC's steps 0-6
// line by line. A chain (a request's first k whole pages) is a node of a
// trie of pages: a std::map from (parent chain, page tokens) to the chain, so
// two chains are the same exactly when their pages are equal, never by a hash.
// Chains are never forgotten (the map only grows: an oracle need not be
// small). Each chain keeps the index's list of the blocks holding it, a
// std::list in the order they came to hold it. The free queue starts as
// 1 ... C and every block taken from it goes back to its tail, so it is
// always the blocks never used yet, in increasing order, followed by a
// std::list of used ones: the first part is a counter (a pool of 2^40 blocks
// costs nothing until they are used), the second keeps each block's place so
// that a hit leaves it in O(1). Unbounded, step 4 only ever takes new IDs,
// so the used part is not kept at all.
//
// Block IDs are slots: cache_node is the ID of the last hit block, 0 for no
// hit, and one ID answers for different chains over time.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_MODELS_VLLM_REFERENCE_BLOCK_POOL_H_
#define KVPREFIX_MODELS_VLLM_REFERENCE_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <list>
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

class ReferenceBlockPool : public CacheCore {
 public:
  static constexpr std::string_view kName = "reference";

  // A model engine of kvprefix/prefix_index.h for model vllm: its members
  // mean what that header says of vllm. Costs for n tokens, P a page and
  // `chains` the chains ever created: O(n / P * (P + log(chains))) per
  // Access, Insert or MatchPrefix; the counts O(1).
  ReferenceBlockPool();  // unbounded, over tokens (P = 1)
  // options.capacity blocks of options.page_size tokens (SPEC §9.2).
  explicit ReferenceBlockPool(const CacheOptions& options);

  // §9.2 steps 0-6: the request admitted and finished at one instant
  // (SPEC §10.7).
  Match Access(TokenSpan request);
  NodeId Insert(TokenSpan sequence);

  // SPEC §10.4, model vllm (kvprefix/request.h's ServingCache): each block
  // has a reference count, and a block with a count above 0 is never in
  // the free queue. Admit: §9.2 step 1; refuses when ceil(L / P) > C; waits
  // (changing nothing) when the blocks it would take from the free queue,
  // the new ones and the hit blocks with count 0, are more than the queue
  // holds; else steps 3-5 (a hit adds 1 to a block's count, a new block
  // starts at 1). PrefillEnd does nothing. Finish: under output "unique"
  // the blocks of the output's whole pages hold their chains, then blocks
  // N, N-1, ..., 1 lose 1 and go to the free queue's tail at 0. Costs as
  // Access; the request's state is its block list.
  Attempt Admit(RequestId id, TokenSpan prompt, std::uint64_t stored_length);
  void PrefillEnd(RequestId, TokenSpan) {}
  void Finish(RequestId id, TokenSpan stored);
  // §9.2 step 1, changing nothing (MatchPrefix).
  Match PeekMatch(TokenSpan request) const { return MatchPrefix(request); }
  // Blocks with a count above 0; blocks holding a chain; blocks taken from
  // a chain by step 4. O(1).
  std::uint64_t pinned() const { return pins_.pinned(); }
  std::uint64_t cached_pages() const { return cached_blocks_; }
  std::uint64_t evicted_pages() const { return evicted_count(); }
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return cached_blocks_; }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h): evicted_count() is evicted_pages(), and the
  // listener gets the page of each block step 4 takes from a chain.
  // Reports each block as it comes to hold a chain's page and as step 4
  // takes it from that chain (kvprefix/page_events.h); null: none. Set on
  // an empty pool; `listener` must outlive the pool's changes.
  void SetPageEventListener(PageEventListener* listener) {
    page_events_ = listener;
  }
  // The chain map's and the lists' red-black-tree and list nodes, and the
  // block and page vectors. O(chains).
  std::size_t memory_bytes() const;

 private:
  using ChainId = std::uint64_t;  // 0: the empty chain (no pages)
  using BlockId = std::uint64_t;  // 1 ... C; 0 means "no hit"
  static constexpr ChainId kEmptyChain = 0;

  struct Chain {
    std::vector<Token> page;    // its last page (P tokens)
    std::list<BlockId> blocks;  // the index's list, oldest first
    ChainId parent = kEmptyChain;
    std::uint64_t handle = 0;  // page_events_'s, from its latest holder
  };
  struct Block {
    ChainId chain = kEmptyChain;  // the chain it holds; kEmptyChain: none
    std::list<BlockId>::iterator in_chain;  // its entry in chain.blocks
    std::list<BlockId>::iterator in_free_queue;
    bool queued = false;       // in the free queue
    std::uint64_t handle = 0;  // page_events_'s for the chain it holds
  };
  // A running request: its N blocks, and its prompt's whole pages F.
  struct Running {
    std::vector<BlockId> blocks;
    std::uint64_t prompt_pages = 0;
  };

  // The chain extending `parent` by `page`, or kEmptyChain if none was ever
  // made.
  ChainId FindChain(ChainId parent, TokenSpan page) const;
  ChainId FindOrAddChain(ChainId parent, TokenSpan page);
  // Step 1: the hit blocks, in chain order.
  std::vector<BlockId> MatchBlocks(TokenSpan request) const;
  // Step 4 for one block: the free queue's head (or, unbounded, a new ID),
  // dropped from the chain it held.
  BlockId Allocate();
  // The blocks in the free queue (unbounded: never short).
  std::uint64_t FreeBlocks() const;
  // Block `id` holds `chain`, at the end of the chain's list.
  void Hold(BlockId id, ChainId chain);

  std::map<std::pair<ChainId, std::vector<Token>>, ChainId> chain_ids_;
  std::vector<Chain> chains_ = std::vector<Chain>(1);  // [ChainId]
  std::vector<Block> blocks_ = std::vector<Block>(1);  // [BlockId]; [0] unused
  BlockId next_unused_ = 1;        // the free queue's head part: IDs from
                                   // here to C were never used
  std::list<BlockId> free_queue_;  // then the used part, head first
  std::uint64_t cached_blocks_ = 0;
  PageEventListener* page_events_ = nullptr;
  // SPEC §10.4: each block's reference count (kvprefix/pins.h), and each
  // running request's blocks.
  PinTable<BlockId, Running, DensePinCounts<BlockId>> pins_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_MODELS_VLLM_REFERENCE_BLOCK_POOL_H_
