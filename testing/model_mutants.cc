// Model mutants: see the header. Each bug is marked "BUG(<mutant name>)" at
// the one place it differs from the correct baseline; the SPEC §9 text each
// step follows is quoted.
#include "testing/model_mutants.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "engines/all_engines.h"

namespace kvprefix::test {
namespace {

void CheckOptions(const CacheOptions& options, CacheModel model) {
  if (options.model != model) {
    throw std::invalid_argument("a model mutant of the wrong model");
  }
  if (const auto problem = FindModelOptionsProblem(options, false)) {
    throw std::invalid_argument(problem->message);
  }
}

}  // namespace

// --- vllm -------------------------------------------------------------------

template <VllmBug kBug>
MutantBlockPool<kBug>::MutantBlockPool(const CacheOptions& options)
    : options_(options) {
  CheckOptions(options, CacheModel::kVllm);
}

template <VllmBug kBug>
std::vector<std::uint64_t> MutantBlockPool<kBug>::Hits(
    TokenSpan request) const {
  const std::uint64_t page = options_.page_size;
  // "for k = 1, 2, … up to ⌊(n−1)/P⌋": n = 0 never gets here.
  std::uint64_t pages = (request.size() - 1) / page;
  if constexpr (kBug == VllmBug::kNoCap) {
    pages = request.size() / page;  // BUG(mutant-vllm-no-cap)
  }
  std::vector<BlockId> hits;
  for (std::uint64_t k = 1; k <= pages; ++k) {
    const auto it =
        index_.find(Chain(request.begin(), request.begin() + k * page));
    if (it == index_.end() || it->second.empty()) break;
    // "hit block k is the first block of that list"
    if constexpr (kBug == VllmBug::kLookupTakesLast) {
      hits.push_back(it->second.back());  // BUG(mutant-vllm-lookup-takes-last)
    } else {
      hits.push_back(it->second.front());
    }
  }
  return hits;
}

template <VllmBug kBug>
std::uint64_t MutantBlockPool<kBug>::Allocate() {
  // Unbounded: "step 4 takes block IDs never used before, in increasing
  // order from 1"; bounded, the free queue is 1 … C at first, so its head is
  // the never-used IDs, then the used blocks in the order they came back.
  if (!options_.bounded() || next_unused_ <= options_.capacity) {
    return next_unused_++;
  }
  const BlockId block = free_queue_.front();
  free_queue_.pop_front();
  // "a block taken that holds a chain is first removed from that chain's
  // list (this is the only eviction)"
  if (const auto held = held_.find(block); held != held_.end()) {
    std::vector<BlockId>& holders = index_[held->second];
    holders.erase(std::find(holders.begin(), holders.end(), block));
    ++evicted_;
    if (listener_) {
      const Chain& chain = held->second;
      listener_(TokenSpan(chain).last(options_.page_size));
    }
    held_.erase(held);
  }
  return block;
}

template <VllmBug kBug>
Match MutantBlockPool<kBug>::Access(TokenSpan request) {
  if (request.empty()) return Match{};  // step 0
  const std::uint64_t page = options_.page_size;
  const std::uint64_t whole = request.size() / page;
  std::uint64_t needed = (request.size() + page - 1) / page;
  if constexpr (kBug == VllmBug::kPartialNoSlot) {
    needed = whole;  // BUG(mutant-vllm-partial-no-slot)
  }
  std::vector<BlockId> blocks = Hits(request);  // step 1
  const Match match{.matched_length = blocks.size() * page,
                    .cache_node = blocks.empty() ? kRootNode : blocks.back()};
  if (options_.bounded() && needed > options_.capacity) return Match{};  // 2
  for (const BlockId hit : blocks) {  // step 3: "leave the free queue"
    const auto it = std::find(free_queue_.begin(), free_queue_.end(), hit);
    if (it != free_queue_.end()) free_queue_.erase(it);
  }
  while (blocks.size() < needed) blocks.push_back(Allocate());  // step 4
  // Step 5: "each block k = h+1 … F now holds chain k, appended to the end".
  for (std::uint64_t k = match.matched_length / page + 1; k <= whole; ++k) {
    Chain chain(request.begin(), request.begin() + k * page);
    index_[chain].push_back(blocks[k - 1]);
    held_[blocks[k - 1]] = std::move(chain);
  }
  // Step 6: "appended to the tail of the free queue in reverse order".
  // Unbounded, the queue is never read.
  if (options_.bounded()) {
    if constexpr (kBug == VllmBug::kFreesForward) {
      // BUG(mutant-vllm-frees-forward)
      free_queue_.insert(free_queue_.end(), blocks.begin(), blocks.end());
    } else {
      free_queue_.insert(free_queue_.end(), blocks.rbegin(), blocks.rend());
    }
  }
  return match;
}

template <VllmBug kBug>
NodeId MutantBlockPool<kBug>::Insert(TokenSpan sequence) {
  Access(sequence);
  const std::uint64_t whole = sequence.size() / options_.page_size;
  if (whole == 0) return kRootNode;
  const auto it = index_.find(
      Chain(sequence.begin(), sequence.begin() + whole * options_.page_size));
  return it == index_.end() || it->second.empty() ? kRootNode
                                                  : it->second.front();
}

template <VllmBug kBug>
Match MutantBlockPool<kBug>::MatchPrefix(TokenSpan request) const {
  if (request.empty()) return Match{};
  const std::vector<BlockId> hits = Hits(request);
  return Match{.matched_length = hits.size() * options_.page_size,
               .cache_node = hits.empty() ? kRootNode : hits.back()};
}

template <VllmBug kBug>
std::size_t MutantBlockPool<kBug>::memory_bytes() const {
  std::size_t bytes = free_queue_.size() * 3 * sizeof(void*);
  for (const auto& [chain, holders] : index_) {
    bytes += 64 + chain.capacity() * sizeof(Token) +
             holders.capacity() * sizeof(BlockId);
  }
  return bytes + held_.size() * 64;
}

// --- sglang -----------------------------------------------------------------

template <SglangBug kBug>
MutantRadixModel<kBug>::MutantRadixModel(const CacheOptions& options)
    : options_(options) {
  CheckOptions(options, CacheModel::kSglang);
}

template <SglangBug kBug>
std::vector<Token> MutantRadixModel<kBug>::FirstPage(TokenSpan tokens) const {
  return std::vector<Token>(tokens.begin(),
                            tokens.begin() + options_.page_size);
}

template <SglangBug kBug>
std::size_t MutantRadixModel<kBug>::CommonPages(const std::vector<Token>& edge,
                                                TokenSpan key) const {
  const std::size_t page = options_.page_size;
  std::size_t pages = 0;
  while ((pages + 1) * page <= std::min(edge.size(), key.size()) &&
         std::equal(edge.begin() + pages * page,
                    edge.begin() + (pages + 1) * page,
                    key.begin() + pages * page)) {
    ++pages;
  }
  return pages;
}

template <SglangBug kBug>
NodeId MutantRadixModel<kBug>::AddNode(NodeId parent, std::vector<Token> edge) {
  // "A new node gets the next ID ... and a = c = tick."
  const NodeId id = nodes_.size();
  const std::uint64_t t = Tick();
  nodes_[parent].children[FirstPage(edge)] = id;
  size_ += edge.size();
  ++present_;
  nodes_.push_back(Node{.edge = std::move(edge),
                        .children = {},
                        .parent = parent,
                        .access = t,
                        .creation = t});
  return id;
}

template <SglangBug kBug>
NodeId MutantRadixModel<kBug>::Split(NodeId child, std::size_t pages) {
  // "a new node (next ID, fresh times) takes the edge's first j pages and the
  // child's place under its parent; the child keeps the rest ... The new
  // node copies the child's lock count."
  const std::size_t cut = pages * options_.page_size;
  std::vector<Token> head(nodes_[child].edge.begin(),
                          nodes_[child].edge.begin() + cut);
  nodes_[child].edge.erase(nodes_[child].edge.begin(),
                           nodes_[child].edge.begin() + cut);
  size_ -= cut;  // AddNode adds it back
  const NodeId parent = nodes_[child].parent;
  const std::uint64_t clock = clock_;
  const NodeId split = AddNode(parent, std::move(head));
  if constexpr (kBug == SglangBug::kSplitOldTimes) {
    // BUG(mutant-sglang-split-old-times): the child's times, no fresh tick.
    clock_ = clock;
    nodes_[split].access = nodes_[child].access;
    nodes_[split].creation = nodes_[child].creation;
  }
  nodes_[split].locks = nodes_[child].locks;
  nodes_[split].children[FirstPage(nodes_[child].edge)] = child;
  nodes_[child].parent = split;
  return split;
}

template <SglangBug kBug>
Match MutantRadixModel<kBug>::MatchKey(TokenSpan key) {
  key = key.first(key.size() / options_.page_size * options_.page_size);
  if (key.empty()) return Match{};
  const std::uint64_t t = Tick();
  nodes_[kRootNode].access = t;
  Match match;
  while (!key.empty()) {
    const auto& children = nodes_[match.cache_node].children;
    const auto it = children.find(FirstPage(key));
    if (it == children.end()) break;
    const NodeId child = it->second;
    const std::size_t pages = CommonPages(nodes_[child].edge, key);
    const std::size_t tokens = pages * options_.page_size;
    const bool splits = tokens < nodes_[child].edge.size();
    // "set child.a = t (even if the match ends inside the edge)"
    if (kBug != SglangBug::kNoSplitTouch || !splits) {
      nodes_[child].access = t;
    }  // else BUG(mutant-sglang-no-split-touch)
    match.matched_length += tokens;
    if (splits) {
      match.cache_node = Split(child, pages);
      break;
    }
    match.cache_node = child;
    key = key.subspan(tokens);
  }
  return match;
}

template <SglangBug kBug>
void MutantRadixModel<kBug>::InsertKey(TokenSpan key) {
  key = key.first(key.size() / options_.page_size * options_.page_size);
  const std::uint64_t t = Tick();
  nodes_[kRootNode].access = t;
  NodeId node = kRootNode;
  while (!key.empty()) {
    const auto it = nodes_[node].children.find(FirstPage(key));
    if (it == nodes_[node].children.end()) break;
    const NodeId child = it->second;
    nodes_[child].access = t;  // also the split-off tail's
    const std::size_t pages = CommonPages(nodes_[child].edge, key);
    const std::size_t tokens = pages * options_.page_size;
    node = tokens < nodes_[child].edge.size() ? Split(child, pages) : child;
    key = key.subspan(tokens);
  }
  if (!key.empty()) AddNode(node, std::vector<Token>(key.begin(), key.end()));
}

template <SglangBug kBug>
std::uint64_t MutantRadixModel<kBug>::Evict(std::uint64_t demand) {
  std::uint64_t freed = 0;
  while (freed < demand) {
    // "the candidates are the leaves other than the root with lock count 0"
    NodeId victim = kRootNode;
    for (NodeId id = 1; id < nodes_.size(); ++id) {
      const Node& node = nodes_[id];
      if (!node.present || !node.children.empty() || node.locks != 0) continue;
      const auto priority = [this](const Node& n) {
        return options_.policy == EvictionPolicy::kFifo ? n.creation : n.access;
      };
      if (victim == kRootNode || priority(node) < priority(nodes_[victim])) {
        victim = id;
      }
    }
    if (victim == kRootNode) break;
    Node& node = nodes_[victim];
    nodes_[node.parent].children.erase(FirstPage(node.edge));
    node.present = false;
    --present_;
    size_ -= node.edge.size();
    freed += node.edge.size();
    ++evicted_;
    if (listener_) listener_(node.edge);
  }
  return freed;
}

template <SglangBug kBug>
void MutantRadixModel<kBug>::Lock(const std::vector<NodeId>& path, bool lock) {
  for (const NodeId id : path) nodes_[id].locks += lock ? 1 : -1;
}

template <SglangBug kBug>
Match MutantRadixModel<kBug>::Access(TokenSpan request) {
  const std::size_t n = request.size();
  const std::size_t key_length =
      options_.match_limit == MatchLimit::kAllButLast && n > 0 ? n - 1 : n;
  const Match match = MatchKey(request.first(key_length));
  const std::uint64_t room =
      options_.capacity >
              std::numeric_limits<std::uint64_t>::max() / options_.page_size
          ? std::numeric_limits<std::uint64_t>::max()
          : options_.capacity * options_.page_size;
  if (options_.trigger == EvictionTrigger::kAfterInsert) {
    InsertKey(request);
    if (options_.bounded() && size_ > room) Evict(size_ - room);
    return match;
  }
  std::vector<NodeId> path;  // x and its ancestors, the root excepted
  for (NodeId id = match.cache_node; id != kRootNode; id = nodes_[id].parent) {
    path.push_back(id);
  }
  Lock(path, true);
  const std::uint64_t need = n - match.matched_length;
  bool refused = false;
  if (options_.bounded()) {
    if (room - size_ < need) {
      if constexpr (kBug == SglangBug::kEvictsShortfall) {
        Evict(need - (room - size_));  // BUG(mutant-sglang-evicts-shortfall)
      } else {
        Evict(need);  // "the whole need, not the shortfall"
      }
    }
    refused = room - size_ < need;
  }
  if (!refused) InsertKey(request);
  Lock(path, false);
  return refused ? Match{} : match;
}

template <SglangBug kBug>
NodeId MutantRadixModel<kBug>::Insert(TokenSpan sequence) {
  Access(sequence);
  return MatchPrefix(sequence).cache_node;
}

template <SglangBug kBug>
Match MutantRadixModel<kBug>::MatchPrefix(TokenSpan request) const {
  TokenSpan key =
      request.first(request.size() / options_.page_size * options_.page_size);
  Match match;
  while (!key.empty()) {
    const auto& children = nodes_[match.cache_node].children;
    const auto it = children.find(FirstPage(key));
    if (it == children.end()) break;
    const std::size_t tokens =
        CommonPages(nodes_[it->second].edge, key) * options_.page_size;
    match.matched_length += tokens;
    if (tokens < nodes_[it->second].edge.size()) {
      match.cache_node = nodes_.size();  // the split's new node
      break;
    }
    match.cache_node = it->second;
    key = key.subspan(tokens);
  }
  return match;
}

template <SglangBug kBug>
std::size_t MutantRadixModel<kBug>::memory_bytes() const {
  std::size_t bytes = nodes_.capacity() * sizeof(Node);
  for (const Node& node : nodes_) {
    bytes += node.edge.capacity() * sizeof(Token) +
             node.children.size() * (64 + options_.page_size * sizeof(Token));
  }
  return bytes;
}

// Every mutant is instantiated here, once: tests use them by type (a
// property test builds MutantRadixModel<kEvictsShortfall> itself), and an
// implicit instantiation in this file need not emit the members another file
// calls (clang 14 emits none of the inlined ones).
template class MutantBlockPool<VllmBug::kNone>;
template class MutantBlockPool<VllmBug::kNoCap>;
template class MutantBlockPool<VllmBug::kPartialNoSlot>;
template class MutantBlockPool<VllmBug::kFreesForward>;
template class MutantBlockPool<VllmBug::kLookupTakesLast>;
template class MutantRadixModel<SglangBug::kNone>;
template class MutantRadixModel<SglangBug::kEvictsShortfall>;
template class MutantRadixModel<SglangBug::kNoSplitTouch>;
template class MutantRadixModel<SglangBug::kSplitOldTimes>;

// --- Names and construction -------------------------------------------------

namespace {

using VllmMutants = EngineList<MutantBlockPool<VllmBug::kNoCap>,
                               MutantBlockPool<VllmBug::kPartialNoSlot>,
                               MutantBlockPool<VllmBug::kFreesForward>,
                               MutantBlockPool<VllmBug::kLookupTakesLast>>;
using SglangMutants = EngineList<MutantRadixModel<SglangBug::kEvictsShortfall>,
                                 MutantRadixModel<SglangBug::kNoSplitTouch>,
                                 MutantRadixModel<SglangBug::kSplitOldTimes>>;
using VllmAll = EngineList<MutantBlockPool<VllmBug::kNone>>;
using SglangAll = EngineList<MutantRadixModel<SglangBug::kNone>>;

}  // namespace

std::vector<std::string_view> ModelMutantNames() {
  std::vector<std::string_view> names;
  const auto add = [&]<typename E>() { names.push_back(E::kName); };
  VllmMutants::ForEach(add);
  SglangMutants::ForEach(add);
  return names;
}

std::optional<CacheModel> ModelMutantModel(std::string_view name) {
  std::optional<CacheModel> model;
  const auto is = [&](CacheModel m) {
    return [&, m]<typename E>() {
      if (name == E::kName) model = m;
    };
  };
  VllmAll::ForEach(is(CacheModel::kVllm));
  VllmMutants::ForEach(is(CacheModel::kVllm));
  SglangAll::ForEach(is(CacheModel::kSglang));
  SglangMutants::ForEach(is(CacheModel::kSglang));
  return model;
}

std::unique_ptr<PrefixIndex> MakeModelMutant(std::string_view name,
                                             const CacheOptions& options) {
  std::unique_ptr<PrefixIndex> mutant;
  const auto make = [&]<typename E>() {
    static_assert(PrefixCacheEngine<E>);
    if (name == E::kName) mutant = std::make_unique<EngineAdapter<E>>(options);
  };
  VllmAll::ForEach(make);
  VllmMutants::ForEach(make);
  SglangAll::ForEach(make);
  SglangMutants::ForEach(make);
  return mutant;
}

}  // namespace kvprefix::test
