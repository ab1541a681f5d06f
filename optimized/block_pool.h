// BlockPool: model `vllm` (SPEC §9.2) at full speed, the hash engine's vLLM
// prefix cache (KVCacheManager over a BlockPool, replayed one request at a
// time). Its answers, node_count and evicted_count equal
// ReferenceBlockPool's after every request (tests/model_engines_test.cc).
//
// Design
// ------
// Chains (a request's first k whole pages) are nodes of a tree of pages:
// slot 0 is the empty chain, every other slot one chain with its parent's
// slot and its last page (P tokens in pages_ at (slot - 1) * P). Children are
// found through a PageMap (optimized/page_map.h): one absl::flat_hash_map
// keyed by (parent slot, page hash), pages compared on every lookup, so two
// chains are the same exactly when their pages are equal (never by a hash
// alone). This is vLLM's own scheme (BlockHash chains each block's hash with
// its parent's) made exact.
//
// Each chain keeps the index's list of the blocks holding it, oldest first,
// as an intrusive doubly linked list threaded through the blocks
// (first/last holder in the chain, previous/next holder in the block). The
// free queue is vLLM's FreeKVCacheBlockQueue: an intrusive doubly linked
// list over the block array, so that a hit leaves it in O(1). As in the
// reference, the free queue starts with the IDs never used, in increasing
// order, which are a counter (next_unused_): blocks_ grows only as blocks
// are used, so a pool of 2^40 blocks costs nothing until then. Unbounded,
// step 4 only takes new IDs and the free queue is not kept at all.
//
// A chain no block holds and no child needs is forgotten at once (its slot
// reused, its map entry erased), and so, in turn, its parent: such a chain
// can never be hit again (step 1 stops at a chain held by no block) and is
// re-created, identical, by the next request that caches it. So the chains
// kept are those held and their ancestors: memory stays proportional to the
// pool's blocks times the requests' pages, not to the trace.
//
// Costs: Access is O(n) expected for n tokens (each whole page hashed and
// compared at most twice: steps 1 and 5); allocation, touch and free are
// O(1) a block.
//
// Thread safety: const members may run concurrently; the rest need exclusive
// access.
#ifndef KVPREFIX_OPTIMIZED_BLOCK_POOL_H_
#define KVPREFIX_OPTIMIZED_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/types.h"
#include "optimized/page_map.h"

namespace kvprefix {

class BlockPool {
 public:
  static constexpr std::string_view kName = "hash";

  // An unbounded pool over tokens (P = 1).
  BlockPool();
  // A pool of options.capacity blocks of options.page_size tokens (SPEC
  // §9.2). Throws std::invalid_argument if options.model is not vllm,
  // FindModelOptionsProblem (kvprefix/cache.h) finds a problem or the page
  // size is outside 1 to 2^31 - 1.
  explicit BlockPool(const CacheOptions& options);

  // SPEC §9.2 steps 0-6 for one request: the match of step 1 (matched_length
  // h * P tokens, cache_node the ID of hit block h, 0 when h = 0), or (0, 0)
  // for a refused request (more blocks than the pool, step 2) or an empty
  // one. O(n) expected for n tokens; throws std::bad_alloc (the pool may
  // then be left part-way through the request).
  Match Access(TokenSpan request);

  // Access(sequence) for its effect, then the ID of the first block holding
  // the sequence's last whole page, the one a lookup finds (0 if it has no
  // whole page or its chain is held by no block). O(n) expected.
  NodeId Insert(TokenSpan sequence);

  // Step 1 alone: what Access would answer before its other steps (refusal
  // aside), changing nothing. O(n) expected.
  Match MatchPrefix(TokenSpan request) const;

  // Blocks holding a chain. O(1).
  std::uint64_t node_count() const { return cached_blocks_; }
  // Chains dropped from blocks taken by step 4 (its only eviction). O(1).
  std::uint64_t evicted_count() const { return evicted_; }
  const CacheOptions& options() const { return options_; }
  // Reports the page of each chain step 4 drops from a block.
  void SetEvictionListener(EvictionListener listener) {
    listener_ = std::move(listener);
  }
  // Heap bytes: the chain, block, page and scratch arrays and the page map.
  // O(1).
  std::size_t memory_bytes() const;

 private:
  using Slot = std::uint64_t;     // a chain's; 0: the empty chain
  using BlockId = std::uint64_t;  // 1 ... C; 0 means "no block"
  static constexpr Slot kEmptyChain = 0;
  static constexpr BlockId kNoBlock = 0;

  struct Chain {
    Slot parent = kEmptyChain;
    BlockId first_holder = kNoBlock;  // the index's list, oldest first
    BlockId last_holder = kNoBlock;
    std::uint64_t children = 0;  // chains extending this one
  };
  struct Block {
    Slot chain = kEmptyChain;  // the chain it holds; kEmptyChain: none
    BlockId previous_holder = kNoBlock;
    BlockId next_holder = kNoBlock;
    BlockId previous_free = kNoBlock;  // in the free queue
    BlockId next_free = kNoBlock;
    bool queued = false;  // in the free queue (its used part)
  };

  // The last page of the chain in `slot`.
  TokenSpan PageOf(Slot slot) const {
    return TokenSpan(pages_).subspan((slot - 1) * options_.page_size,
                                     options_.page_size);
  }
  // The chain extending `parent` by `page`, or PageMap::kNone.
  Slot FindChain(Slot parent, TokenSpan page) const {
    return children_.Find(parent, page,
                          [this](Slot slot) { return PageOf(slot); });
  }
  Slot FindOrAddChain(Slot parent, TokenSpan page);
  // Forgets `slot` and then its ancestors while each is held by no block and
  // has no child.
  void ForgetUnneeded(Slot slot);
  // Step 1: calls on_hit(block) for each hit block, in chain order; returns
  // the number of hits and the chain of the last (kEmptyChain if none).
  template <typename OnHit>
  std::pair<std::size_t, Slot> MatchHits(TokenSpan request,
                                         OnHit&& on_hit) const;
  // Step 4 for one block: the free queue's head (or a new ID), dropped from
  // the chain it held.
  BlockId Allocate();
  void RemoveFromFreeQueue(BlockId id);
  void AppendToFreeQueue(BlockId id);

  CacheOptions options_;
  std::vector<Chain> chains_ = std::vector<Chain>(1);  // [Slot]; [0] empty
  std::vector<Token> pages_;      // [(slot - 1) * P, + P): chain slot's page
  std::vector<Slot> free_slots_;  // forgotten chains'
  PageMap children_;
  std::vector<Block> blocks_ = std::vector<Block>(1);  // [BlockId]; [0] unused
  BlockId next_unused_ = 1;  // the free queue's head part: IDs from here to
                             // C were never used
  BlockId free_head_ = kNoBlock;  // then the used part
  BlockId free_tail_ = kNoBlock;
  std::vector<BlockId> request_blocks_;  // Access's scratch: blocks 1 ... N
  std::uint64_t cached_blocks_ = 0;
  std::uint64_t evicted_ = 0;
  EvictionListener listener_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_OPTIMIZED_BLOCK_POOL_H_
