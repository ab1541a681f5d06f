// ReferenceBlockPool: see the header. Each step quotes SPEC §9.2.
#include "models/vllm/reference_block_pool.h"

#include <stdexcept>
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {
namespace {

CacheOptions UnboundedVllm() {
  return CacheOptions{.model = CacheModel::kVllm,
                      .match_limit = MatchLimit::kAllButLast};
}

}  // namespace

ReferenceBlockPool::ReferenceBlockPool()
    : ReferenceBlockPool(UnboundedVllm()) {}

ReferenceBlockPool::ReferenceBlockPool(const CacheOptions& options)
    : CacheCore(options) {
  CheckModelEngineOptions("reference block pool", CacheModel::kVllm, options);
}

ReferenceBlockPool::ChainId ReferenceBlockPool::FindChain(
    ChainId parent, TokenSpan page) const {
  // "two chains are the same exactly when their contents are equal page by
  // page (never by a hash alone)"
  const auto it =
      chain_ids_.find({parent, std::vector<Token>(page.begin(), page.end())});
  return it == chain_ids_.end() ? kEmptyChain : it->second;
}

ReferenceBlockPool::ChainId ReferenceBlockPool::FindOrAddChain(ChainId parent,
                                                               TokenSpan page) {
  if (const ChainId found = FindChain(parent, page); found != kEmptyChain) {
    return found;
  }
  const ChainId id = chains_.size();
  chains_.push_back(Chain{
      .page = {page.begin(), page.end()}, .blocks = {}, .parent = parent});
  chain_ids_.emplace(
      std::pair{parent, std::vector<Token>(page.begin(), page.end())}, id);
  return id;
}

std::vector<ReferenceBlockPool::BlockId> ReferenceBlockPool::MatchBlocks(
    TokenSpan request) const {
  // "1. match: for k = 1, 2, ... up to floor((n-1)/P) (always all-but-last):
  // if the index's list for chain k is not empty, hit block k is the first
  // block of that list; otherwise stop."
  const std::size_t page = options().page_size;
  const std::size_t pages =
      MatchLimitTokens(MatchLimit::kAllButLast, request.size(), page) / page;
  std::vector<BlockId> hits;
  ChainId chain = kEmptyChain;
  for (std::size_t k = 0; k < pages; ++k) {
    chain = FindChain(chain, request.subspan(k * page, page));
    if (chain == kEmptyChain || chains_[chain].blocks.empty()) break;
    hits.push_back(chains_[chain].blocks.front());
  }
  return hits;
}

Match ReferenceBlockPool::MatchPrefix(TokenSpan request) const {
  const std::vector<BlockId> hits = MatchBlocks(request);
  // "matched_length = h·P and cache_node is the ID of hit block h (0 when
  // h = 0)"
  return Match{.matched_length = hits.size() * options().page_size,
               .cache_node = hits.empty() ? kRootNode : hits.back()};
}

ReferenceBlockPool::BlockId ReferenceBlockPool::Allocate() {
  // "4. allocate ... from the head of the free queue; a block taken that
  // holds a chain is first removed from that chain's list (this is the only
  // eviction)". The head part is the IDs never used (see the header).
  BlockId id;
  if (next_unused_ <= options().capacity) {
    id = next_unused_++;
    blocks_.emplace_back();
    return id;
  }
  id = free_queue_.front();
  free_queue_.pop_front();
  Block& block = blocks_[id];
  block.queued = false;
  if (block.chain != kEmptyChain) {
    Chain& chain = chains_[block.chain];
    chain.blocks.erase(block.in_chain);
    block.chain = kEmptyChain;
    --cached_blocks_;
    CountEvicted(1);
    ReportEvicted(TokenSpan(chain.page));
    if (page_events_ != nullptr) page_events_->Removed(block.handle);
  }
  return id;
}

std::uint64_t ReferenceBlockPool::FreeBlocks() const {
  if (!options().bounded()) return kUnbounded;
  return options().capacity - (next_unused_ - 1) + free_queue_.size();
}

void ReferenceBlockPool::Hold(BlockId id, ChainId chain) {
  Block& block = blocks_[id];
  std::list<BlockId>& holders = chains_[chain].blocks;
  block.chain = chain;
  block.in_chain = holders.insert(holders.end(), id);
  ++cached_blocks_;
  if (page_events_ != nullptr) {
    // The parent chain is held: by hit blocks, or by this request's own.
    Chain& held = chains_[chain];
    block.handle = page_events_->Stored(held.parent == kEmptyChain
                                            ? PageEventListener::kRoot
                                            : chains_[held.parent].handle,
                                        TokenSpan(held.page));
    held.handle = block.handle;
  }
}

Match ReferenceBlockPool::Access(TokenSpan request) {
  // "0. If n = 0: answer (0, node 0, []); nothing changes." Otherwise
  // steps 1-6 are §10.4's attempt and finish at one instant (§10.7: with
  // nothing running, the room check fails only where step 2 refuses).
  if (request.empty()) return Match{};
  constexpr RequestId kAlone = ~RequestId{0};
  const Attempt attempt = Admit(kAlone, request, request.size());
  if (attempt.outcome != AttemptOutcome::kStart) return Match{};
  Finish(kAlone, request);
  return attempt.match;
}

Attempt ReferenceBlockPool::Admit(RequestId id, TokenSpan prompt,
                                  std::uint64_t stored_length) {
  const std::size_t page = options().page_size;
  const std::uint64_t needed = (stored_length + page - 1) / page;  // N
  const std::vector<BlockId> hits = MatchBlocks(prompt);
  // "2. refuse: if N > C the request is refused ... whatever step 1 found,
  // and nothing changes" (§10.4: whatever is running).
  if (needed > options().capacity) {
    return Attempt{.outcome = AttemptOutcome::kRefuse, .match = {}};
  }
  // §10.4 "Room: the blocks it would take from the free queue are (N - h)
  // plus the hit blocks whose count is 0; if that is more than the free
  // queue's length, wait (nothing changes)."
  std::uint64_t taken = needed - hits.size();
  for (const BlockId hit : hits) taken += pins_.is_pinned(hit) ? 0 : 1;
  if (taken > FreeBlocks()) {
    return Attempt{.outcome = AttemptOutcome::kWait, .match = {}};
  }
  // "3. touch: the h hit blocks leave the free queue" (§10.4: "each hit
  // block whose count is 0 leaves the free queue, and every hit block adds
  // 1 to its count").
  const auto leave_free_queue = [this](BlockId pinned) {
    Block& block = blocks_[pinned];
    if (block.queued) {
      free_queue_.erase(block.in_free_queue);
      block.queued = false;
    }
  };
  for (const BlockId hit : hits) pins_.Pin(hit, leave_free_queue);
  // "4. allocate N - h blocks ... They become the request's blocks
  // h+1 ... N" (count 1; Allocate took them from the free queue).
  Running running{.blocks = hits, .prompt_pages = prompt.size() / page};
  while (running.blocks.size() < needed) {
    const BlockId allocated = Allocate();
    pins_.Pin(allocated);
    running.blocks.push_back(allocated);
  }
  // "5. cache: each block k = h+1 ... F now holds chain k, appended to the
  // end of chain k's list even if the list is not empty (a duplicate). Block
  // N of a request whose length is not a multiple of P holds nothing."
  ChainId chain = kEmptyChain;
  for (std::uint64_t k = 0; k < running.prompt_pages; ++k) {
    chain = FindOrAddChain(chain, prompt.subspan(k * page, page));
    if (k >= hits.size()) Hold(running.blocks[k], chain);
  }
  pins_.Admit(id, std::move(running));
  return Attempt{
      .outcome = AttemptOutcome::kStart,
      .match = Match{.matched_length = hits.size() * page,
                     .cache_node = hits.empty() ? kRootNode : hits.back()}};
}

void ReferenceBlockPool::Finish(RequestId id, TokenSpan stored) {
  const std::size_t page = options().page_size;
  const Running running = pins_.Finish(id);
  // §10.4: "under "unique", blocks F+1 ... floor(L/P) hold the chains of
  // the stored sequence".
  ChainId chain = kEmptyChain;
  const std::uint64_t stored_pages = stored.size() / page;
  for (std::uint64_t k = 0;
       stored_pages > running.prompt_pages && k < stored_pages; ++k) {
    chain = FindOrAddChain(chain, stored.subspan(k * page, page));
    if (k >= running.prompt_pages) Hold(running.blocks[k], chain);
  }
  // "6. free: the request's N blocks are appended to the tail of the free
  // queue in reverse order: block N first, block 1 last" (§10.4: "block k
  // subtracts 1 from its count and, if the count is now 0, is appended").
  // Unbounded, step 4 never takes a used block, so the used part is not
  // kept.
  for (auto it = running.blocks.rbegin(); it != running.blocks.rend(); ++it) {
    pins_.Unpin(*it, [this](BlockId unpinned) {
      if (!options().bounded()) return;
      Block& block = blocks_[unpinned];
      block.in_free_queue = free_queue_.insert(free_queue_.end(), unpinned);
      block.queued = true;
    });
  }
}

NodeId ReferenceBlockPool::Insert(TokenSpan sequence) {
  Access(sequence);
  const std::size_t page = options().page_size;
  ChainId chain = kEmptyChain;
  NodeId last = kRootNode;
  for (std::size_t k = 0; k < sequence.size() / page; ++k) {
    chain = FindChain(chain, sequence.subspan(k * page, page));
    if (chain == kEmptyChain || chains_[chain].blocks.empty()) return kRootNode;
    last = chains_[chain].blocks.front();
  }
  return last;
}

std::size_t ReferenceBlockPool::memory_bytes() const {
  // libstdc++'s _Rb_tree_node: color + 3 pointers (32 bytes) + the value;
  // _List_node: 2 pointers + the value.
  constexpr std::size_t kTreeNode = 32;
  constexpr std::size_t kListNode = 16 + sizeof(BlockId);
  std::size_t page_bytes = 0;
  for (const Chain& chain : chains_) {
    page_bytes += VectorHeapBytes<Token>(chain.page.capacity());
  }
  return VectorHeapBytes<Chain>(chains_.capacity()) +
         VectorHeapBytes<Block>(blocks_.capacity()) + 2 * page_bytes +
         chain_ids_.size() *
             MallocChunkBytes(
                 kTreeNode +
                 sizeof(std::pair<const std::pair<ChainId, std::vector<Token>>,
                                  ChainId>)) +
         (cached_blocks_ + free_queue_.size()) * MallocChunkBytes(kListNode) +
         pins_.memory_bytes();
}

}  // namespace kvprefix
