// ReferenceBlockPool: see the header. Each step quotes SPEC §9.2.
#include "reference/reference_block_pool.h"

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
    : options_(options) {
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
  chains_.push_back(Chain{.page = {page.begin(), page.end()}, .blocks = {}});
  chain_ids_.emplace(
      std::pair{parent, std::vector<Token>(page.begin(), page.end())}, id);
  return id;
}

std::vector<ReferenceBlockPool::BlockId> ReferenceBlockPool::MatchBlocks(
    TokenSpan request) const {
  // "1. match: for k = 1, 2, ... up to floor((n-1)/P) (always all-but-last):
  // if the index's list for chain k is not empty, hit block k is the first
  // block of that list; otherwise stop."
  const std::size_t page = options_.page_size;
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
  return Match{.matched_length = hits.size() * options_.page_size,
               .cache_node = hits.empty() ? kRootNode : hits.back()};
}

ReferenceBlockPool::BlockId ReferenceBlockPool::Allocate() {
  // "4. allocate ... from the head of the free queue; a block taken that
  // holds a chain is first removed from that chain's list (this is the only
  // eviction)". The head part is the IDs never used (see the header).
  BlockId id;
  if (next_unused_ <= options_.capacity) {
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
    ++evicted_;
    if (listener_) listener_(TokenSpan(chain.page));
  }
  return id;
}

Match ReferenceBlockPool::Access(TokenSpan request) {
  // "0. If n = 0: answer (0, node 0, []); nothing changes."
  if (request.empty()) return Match{};
  const std::size_t page = options_.page_size;
  const std::uint64_t whole_pages = request.size() / page;          // F
  const std::uint64_t needed = (request.size() + page - 1) / page;  // N
  const std::vector<BlockId> hits = MatchBlocks(request);
  // "2. refuse: if N > C the request is refused: it is answered (0, node 0,
  // whole request) whatever step 1 found, and nothing changes."
  if (needed > options_.capacity) return Match{};
  const Match match{.matched_length = hits.size() * page,
                    .cache_node = hits.empty() ? kRootNode : hits.back()};
  // "3. touch: the h hit blocks leave the free queue."
  for (const BlockId id : hits) {
    Block& block = blocks_[id];
    if (block.queued) {
      free_queue_.erase(block.in_free_queue);
      block.queued = false;
    }
  }
  // "4. allocate N - h blocks ... They become the request's blocks
  // h+1 ... N."
  std::vector<BlockId> request_blocks = hits;
  while (request_blocks.size() < needed) request_blocks.push_back(Allocate());
  // "5. cache: each block k = h+1 ... F now holds chain k, appended to the
  // end of chain k's list even if the list is not empty (a duplicate). Block
  // N of a request whose length is not a multiple of P holds nothing."
  ChainId chain = kEmptyChain;
  for (std::uint64_t k = 0; k < whole_pages; ++k) {
    chain = FindOrAddChain(chain, request.subspan(k * page, page));
    if (k < hits.size()) continue;
    Block& block = blocks_[request_blocks[k]];
    std::list<BlockId>& holders = chains_[chain].blocks;
    block.chain = chain;
    block.in_chain = holders.insert(holders.end(), request_blocks[k]);
    ++cached_blocks_;
  }
  // "6. free: the request's N blocks are appended to the tail of the free
  // queue in reverse order: block N first, block 1 last." Unbounded, step 4
  // never takes a used block, so the used part is not kept.
  if (options_.bounded()) {
    for (auto it = request_blocks.rbegin(); it != request_blocks.rend(); ++it) {
      Block& block = blocks_[*it];
      block.in_free_queue = free_queue_.insert(free_queue_.end(), *it);
      block.queued = true;
    }
  }
  return match;
}

NodeId ReferenceBlockPool::Insert(TokenSpan sequence) {
  Access(sequence);
  const std::size_t page = options_.page_size;
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
         (cached_blocks_ + free_queue_.size()) * MallocChunkBytes(kListNode);
}

}  // namespace kvprefix
