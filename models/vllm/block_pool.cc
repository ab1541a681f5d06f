// BlockPool: see the header. The steps are SPEC §9.2's, as
// ReferenceBlockPool quotes them.
#include "models/vllm/block_pool.h"

#include <stdexcept>
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {

BlockPool::BlockPool()
    : BlockPool(CacheOptions{.model = CacheModel::kVllm,
                             .match_limit = MatchLimit::kAllButLast}) {}

BlockPool::BlockPool(const CacheOptions& options) : CacheCore(options) {
  CheckModelEngineOptions("hash block pool", CacheModel::kVllm, options);
}

BlockPool::Slot BlockPool::FindOrAddChain(Slot parent, TokenSpan page) {
  if (const Slot found = FindChain(parent, page); found != PageMap::kNone) {
    return found;
  }
  Slot slot;
  if (free_slots_.empty()) {
    slot = chains_.size();
    chains_.emplace_back();
    ReserveGeometric(pages_, pages_.size() + page.size());
    pages_.insert(pages_.end(), page.begin(), page.end());
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    chains_[slot] = Chain{};
    std::copy(page.begin(), page.end(),
              pages_.begin() + (slot - 1) * options().page_size);
  }
  chains_[slot].parent = parent;
  ++chains_[parent].children;
  children_.Insert(parent, page, slot);
  return slot;
}

void BlockPool::ForgetUnneeded(Slot slot) {
  while (slot != kEmptyChain && chains_[slot].first_holder == kNoBlock &&
         chains_[slot].children == 0) {
    const Slot parent = chains_[slot].parent;
    children_.Erase(parent, PageOf(slot), slot);
    free_slots_.push_back(slot);
    --chains_[parent].children;
    slot = parent;
  }
}

template <typename OnHit>
std::pair<std::size_t, BlockPool::Slot> BlockPool::MatchHits(
    TokenSpan request, OnHit&& on_hit) const {
  // Step 1, always all-but-last: at most floor((n - 1) / P) pages.
  const std::size_t page = options().page_size;
  const std::size_t pages =
      MatchLimitTokens(MatchLimit::kAllButLast, request.size(), page) / page;
  Slot chain = kEmptyChain;
  std::size_t hits = 0;
  for (; hits < pages; ++hits) {
    const Slot next = FindChain(chain, request.subspan(hits * page, page));
    if (next == PageMap::kNone || chains_[next].first_holder == kNoBlock) {
      break;
    }
    on_hit(chains_[next].first_holder);
    chain = next;
  }
  return {hits, chain};
}

Match BlockPool::MatchPrefix(TokenSpan request) const {
  BlockId last = kNoBlock;
  const std::size_t hits =
      MatchHits(request, [&](BlockId id) { last = id; }).first;
  return Match{.matched_length = hits * options().page_size,
               .cache_node = last};
}

void BlockPool::RemoveFromFreeQueue(BlockId id) {
  Block& block = blocks_[id];
  if (block.previous_free == kNoBlock) {
    free_head_ = block.next_free;
  } else {
    blocks_[block.previous_free].next_free = block.next_free;
  }
  if (block.next_free == kNoBlock) {
    free_tail_ = block.previous_free;
  } else {
    blocks_[block.next_free].previous_free = block.previous_free;
  }
  block.previous_free = block.next_free = kNoBlock;
  block.queued = false;
  --queued_blocks_;
}

void BlockPool::AppendToFreeQueue(BlockId id) {
  Block& block = blocks_[id];
  block.previous_free = free_tail_;
  block.next_free = kNoBlock;
  block.queued = true;
  ++queued_blocks_;
  if (free_tail_ == kNoBlock) {
    free_head_ = id;
  } else {
    blocks_[free_tail_].next_free = id;
  }
  free_tail_ = id;
}

BlockPool::BlockId BlockPool::Allocate() {
  if (next_unused_ <= options().capacity) {
    ReserveGeometric(blocks_, blocks_.size() + 1);
    blocks_.emplace_back();
    return next_unused_++;
  }
  const BlockId id = free_head_;
  RemoveFromFreeQueue(id);
  Block& block = blocks_[id];
  if (block.chain == kEmptyChain) return id;
  // The only eviction: the block leaves its chain's list.
  Chain& chain = chains_[block.chain];
  if (block.previous_holder == kNoBlock) {
    chain.first_holder = block.next_holder;
  } else {
    blocks_[block.previous_holder].next_holder = block.next_holder;
  }
  if (block.next_holder == kNoBlock) {
    chain.last_holder = block.previous_holder;
  } else {
    blocks_[block.next_holder].previous_holder = block.previous_holder;
  }
  const Slot dropped = std::exchange(block.chain, kEmptyChain);
  block.previous_holder = block.next_holder = kNoBlock;
  --cached_blocks_;
  CountEvicted(1);
  ReportEvicted(PageOf(dropped));
  ForgetUnneeded(dropped);
  return id;
}

void BlockPool::Hold(BlockId id, Slot chain) {
  Block& block = blocks_[id];
  Chain& holders = chains_[chain];
  block.chain = chain;
  block.previous_holder = holders.last_holder;
  block.next_holder = kNoBlock;
  if (holders.last_holder == kNoBlock) {
    holders.first_holder = id;
  } else {
    blocks_[holders.last_holder].next_holder = id;
  }
  holders.last_holder = id;
  ++cached_blocks_;
}

Attempt BlockPool::Start(TokenSpan prompt, std::uint64_t stored_length,
                         Running& running) {
  const std::size_t page = options().page_size;
  const std::uint64_t needed = (stored_length + page - 1) / page;  // N
  if (needed > options().capacity) {  // step 2: refused
    return Attempt{.outcome = AttemptOutcome::kRefuse, .match = {}};
  }
  std::vector<BlockId>& blocks = running.blocks;
  blocks.clear();
  std::uint64_t taken_hits = 0;  // hit blocks with count 0: queued ones
  const auto [hits, hit_chain] = MatchHits(prompt, [&](BlockId id) {
    blocks.push_back(id);
    taken_hits += pins_.is_pinned(id) ? 0 : 1;
  });
  // §10.4's room: the new blocks and the hit blocks with count 0 come from
  // the free queue: its never-used IDs and its used part. Unbounded, room
  // never fails.
  if (options().bounded() &&
      needed - hits + taken_hits >
          options().capacity - (next_unused_ - 1) + queued_blocks_) {
    return Attempt{.outcome = AttemptOutcome::kWait, .match = {}};
  }
  const Match match{.matched_length = hits * page,
                    .cache_node = hits == 0 ? kRootNode : blocks.back()};
  // Step 3, touch. Unbounded, no block is queued.
  for (const BlockId id : blocks) {
    pins_.Pin(id, [this](BlockId pinned) {
      if (blocks_[pinned].queued) RemoveFromFreeQueue(pinned);
    });
  }
  // Step 4, allocate. The hit chains are held by the hit blocks, out of the
  // free queue, so no allocation forgets hit_chain.
  while (blocks.size() < needed) {
    const BlockId id = Allocate();  // out of the free queue
    pins_.Pin(id);
    blocks.push_back(id);
  }
  // Step 5, cache: blocks h+1 ... F join the end of their chain's list.
  running.prompt_pages = prompt.size() / page;  // F
  Slot chain = hit_chain;
  for (std::uint64_t k = hits; k < running.prompt_pages; ++k) {
    chain = FindOrAddChain(chain, prompt.subspan(k * page, page));
    Hold(blocks[k], chain);
  }
  running.prompt_chain = chain;
  return Attempt{.outcome = AttemptOutcome::kStart, .match = match};
}

void BlockPool::Release(const Running& running, TokenSpan stored) {
  // §10.4: under "unique", blocks F+1 ... floor(L/P) hold the stored
  // sequence's chains; a block of the request holds its chain F, so that
  // chain is still known.
  const std::size_t page = options().page_size;
  Slot chain = running.prompt_chain;
  for (std::uint64_t k = running.prompt_pages; k < stored.size() / page; ++k) {
    chain = FindOrAddChain(chain, stored.subspan(k * page, page));
    Hold(running.blocks[k], chain);
  }
  // Step 6, free, in reverse order: a block whose count reaches 0 joins the
  // queue's tail. Unbounded, step 4 never takes a used block, so the free
  // queue's used part is not kept.
  for (auto it = running.blocks.rbegin(); it != running.blocks.rend(); ++it) {
    pins_.Unpin(*it, [this](BlockId unpinned) {
      if (options().bounded()) AppendToFreeQueue(unpinned);
    });
  }
}

Match BlockPool::Access(TokenSpan request) {
  if (request.empty()) return Match{};  // step 0
  // §10.7: with nothing running, room fails only where step 2 refuses.
  const Attempt attempt = Start(request, request.size(), scratch_);
  if (attempt.outcome != AttemptOutcome::kStart) return Match{};
  Release(scratch_, request);
  return attempt.match;
}

Attempt BlockPool::Admit(RequestId id, TokenSpan prompt,
                         std::uint64_t stored_length) {
  Running running;
  const Attempt attempt = Start(prompt, stored_length, running);
  if (attempt.outcome == AttemptOutcome::kStart) {
    pins_.Admit(id, std::move(running));
  }
  return attempt;
}

void BlockPool::Finish(RequestId id, TokenSpan stored) {
  Release(pins_.Finish(id), stored);
}

NodeId BlockPool::Insert(TokenSpan sequence) {
  Access(sequence);
  const std::size_t page = options().page_size;
  Slot chain = kEmptyChain;
  NodeId last = kRootNode;
  for (std::size_t k = 0; k < sequence.size() / page; ++k) {
    chain = FindChain(chain, sequence.subspan(k * page, page));
    if (chain == PageMap::kNone || chains_[chain].first_holder == kNoBlock) {
      return kRootNode;
    }
    last = chains_[chain].first_holder;
  }
  return last;
}

std::size_t BlockPool::memory_bytes() const {
  return VectorHeapBytes<Chain>(chains_.capacity()) +
         VectorHeapBytes<Token>(pages_.capacity()) +
         VectorHeapBytes<Slot>(free_slots_.capacity()) +
         children_.memory_bytes() + VectorHeapBytes<Block>(blocks_.capacity()) +
         VectorHeapBytes<BlockId>(scratch_.blocks.capacity()) +
         pins_.memory_bytes();
}

}  // namespace kvprefix
