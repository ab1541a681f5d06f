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
// found through a PageMap (kvprefix/page_map.h): one absl::flat_hash_map
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
#ifndef KVPREFIX_MODELS_VLLM_BLOCK_POOL_H_
#define KVPREFIX_MODELS_VLLM_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/cache_core.h"
#include "kvprefix/page_map.h"
#include "kvprefix/pins.h"
#include "kvprefix/request.h"
#include "kvprefix/types.h"

namespace kvprefix {

class BlockPool : public CacheCore {
 public:
  static constexpr std::string_view kName = "hash";

  // A model engine of kvprefix/prefix_index.h for model vllm: its members
  // mean what that header says of vllm (and equal ReferenceBlockPool's).
  // Also throws std::invalid_argument for a page size outside 1 to 2^31 - 1.
  // Access, Insert and MatchPrefix are O(n) expected for n tokens (each
  // whole page hashed and compared at most twice); the counts O(1). Access
  // may leave the pool part-way through a request when it throws
  // std::bad_alloc.
  BlockPool();  // unbounded, over tokens (P = 1)
  // options.capacity blocks of options.page_size tokens (SPEC §9.2).
  explicit BlockPool(const CacheOptions& options);

  // §9.2 steps 0-6: the request admitted and finished at one instant
  // (SPEC §10.7).
  Match Access(TokenSpan request);
  NodeId Insert(TokenSpan sequence);

  // SPEC §10.4, model vllm: ReferenceBlockPool's Admit, PrefillEnd and
  // Finish (kvprefix/request.h's ServingEngine), with a reference count
  // per block (kvprefix/pins.h). O(n) expected per call for n tokens, plus
  // a hash map entry per running request.
  Attempt Admit(RequestId id, TokenSpan prompt, std::uint64_t stored_length);
  void PrefillEnd(RequestId, TokenSpan) {}
  void Finish(RequestId id, TokenSpan stored);
  Match PeekMatch(TokenSpan request) const { return MatchPrefix(request); }
  // Blocks with a count above 0, holding a chain, taken from a chain. O(1).
  std::uint64_t pinned() const { return pins_.pinned(); }
  std::uint64_t cached_pages() const { return cached_blocks_; }
  std::uint64_t evicted_pages() const { return evicted_count(); }
  Match MatchPrefix(TokenSpan request) const;
  std::uint64_t node_count() const { return cached_blocks_; }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h): evicted_count() is evicted_pages(), and the
  // listener gets the page of each block step 4 takes from a chain.
  // The chain, block, page and scratch arrays and the page map. O(1).
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
  // A started request: its blocks 1 ... N, its prompt's whole pages F and
  // the chain of its first F pages.
  struct Running {
    std::vector<BlockId> blocks;
    std::uint64_t prompt_pages = 0;
    Slot prompt_chain = kEmptyChain;
  };

  // The last page of the chain in `slot`.
  TokenSpan PageOf(Slot slot) const {
    return TokenSpan(pages_).subspan((slot - 1) * options().page_size,
                                     options().page_size);
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
  // Steps 1-5 into `running` (its blocks empty), or a wait or refusal that
  // changes nothing.
  Attempt Start(TokenSpan prompt, std::uint64_t stored_length,
                Running& running);
  // SPEC §10.4's finish of `running`.
  void Release(const Running& running, TokenSpan stored);
  // Block `id` joins the end of `chain`'s list of holders.
  void Hold(BlockId id, Slot chain);

  std::vector<Chain> chains_ = std::vector<Chain>(1);  // [Slot]; [0] empty
  std::vector<Token> pages_;      // [(slot - 1) * P, + P): chain slot's page
  std::vector<Slot> free_slots_;  // forgotten chains'
  PageMap children_;
  std::vector<Block> blocks_ = std::vector<Block>(1);  // [BlockId]; [0] unused
  BlockId next_unused_ = 1;  // the free queue's head part: IDs from here to
                             // C were never used
  BlockId free_head_ = kNoBlock;  // then the used part
  BlockId free_tail_ = kNoBlock;
  std::uint64_t queued_blocks_ = 0;  // in the used part of the free queue
  Running scratch_;                  // Access's request
  std::uint64_t cached_blocks_ = 0;
  // SPEC §10.4: each block's reference count (kvprefix/pins.h; dense, the
  // blocks being 1 ... C), and each running request's blocks.
  PinTable<BlockId, Running, DensePinCounts<BlockId>> pins_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_MODELS_VLLM_BLOCK_POOL_H_
