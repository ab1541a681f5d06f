// Mutants: see the header. Each bug is marked "BUG(<mutant name>)" at the one
// place it differs from the correct baseline.
#include "testing/mutants.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "engines/all_engines.h"
#include "engines/registry.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/memory.h"
#include "kvprefix/paged_index.h"
#include "reference/reference_trie.h"
#include "testing/model_mutants.h"

namespace kvprefix::test {
namespace {

using Baseline = MutantRadixTrie<MutantBug::kNone>;
using EdgeOffByOneMutant = MutantRadixTrie<MutantBug::kEdgeOffByOne>;
using SplitLosesSiblingMutant = MutantRadixTrie<MutantBug::kSplitLosesSibling>;
using IdCountsDuplicatesMutant =
    MutantRadixTrie<MutantBug::kIdCountsDuplicates>;
using Token16BitMutant = MutantRadixTrie<MutantBug::kToken16Bit>;
using ExtendInPlaceMutant = MutantRadixTrie<MutantBug::kExtendInPlace>;

using CacheBaseline = MutantCache<MutantCacheBug::kNone>;

// Every index mutant, in the order IndexMutantNames() lists them.
using IndexMutants = EngineList<EdgeOffByOneMutant, SplitLosesSiblingMutant,
                                IdCountsDuplicatesMutant, Token16BitMutant,
                                MatchInsertsMutant, ExtendInPlaceMutant>;
// Every cache mutant, in the order CacheMutantNames() lists them.
using CacheMutants =
    EngineList<MutantCache<MutantCacheBug::kEvictsNonLeaf>,
               MutantCache<MutantCacheBug::kReusesEvictedId>,
               MutantCache<MutantCacheBug::kNoTouchOnHit>,
               MutantCache<MutantCacheBug::kTieEvictsShallower>,
               MutantCache<MutantCacheBug::kKeepsOneExtra>,
               MutantCache<MutantCacheBug::kLfuTieLargerStamp>,
               PageHashOnlyMutant>;

// A map node of libstdc++ (color and three pointers) holding `Value`, as
// malloc hands it out.
template <typename Value>
constexpr std::size_t MapNodeBytes() {
  return MallocChunkBytes(32 + sizeof(Value));
}

}  // namespace

template <MutantBug kBug>
Token MutantRadixTrie<kBug>::Key(Token token) {
  // BUG(mutant-token-16-bit): a 16-bit token type leaked into the key.
  if constexpr (kBug == MutantBug::kToken16Bit) {
    return static_cast<std::int16_t>(token);
  }
  return token;
}

template <MutantBug kBug>
std::size_t MutantRadixTrie<kBug>::CommonLength(const Edge& edge,
                                                TokenSpan tokens) {
  const std::size_t limit = std::min(edge.label.size(), tokens.size());
  std::size_t common = 0;
  while (common < limit && Key(edge.label[common]) == Key(tokens[common])) {
    ++common;
  }
  return common;
}

template <MutantBug kBug>
NodeId MutantRadixTrie<kBug>::AddEdge(Children& children, TokenSpan label) {
  edges_.push_back({{label.begin(), label.end()}, next_id_, {}});
  children.emplace(Key(label[0]), edges_.size() - 1);
  next_id_ += label.size();
  return next_id_ - 1;
}

template <MutantBug kBug>
void MutantRadixTrie<kBug>::Split(Edge& edge, std::size_t at) {
  Edge tail{{edge.label.begin() + at, edge.label.end()},
            edge.first_id + at,
            std::move(edge.children)};
  const Token tail_key = Key(tail.label[0]);
  edges_.push_back(std::move(tail));
  edge.label.resize(at);
  edge.children = {{tail_key, edges_.size() - 1}};
}

template <MutantBug kBug>
NodeId MutantRadixTrie<kBug>::Insert(TokenSpan sequence) {
  const NodeId next_before = next_id_;
  const NodeId reached = InsertPath(sequence);
  // BUG(mutant-id-counts-duplicates): the counter is bumped per inserted
  // sequence that created nothing, as if it counted sequences, not nodes.
  if constexpr (kBug == MutantBug::kIdCountsDuplicates) {
    if (!sequence.empty() && next_id_ == next_before) ++next_id_;
  }
  return reached;
}

template <MutantBug kBug>
NodeId MutantRadixTrie<kBug>::InsertPath(TokenSpan sequence) {
  Children* children = &root_;
  NodeId reached = kRootNode;
  while (!sequence.empty()) {
    const auto found = children->find(Key(sequence[0]));
    if (found == children->end()) return AddEdge(*children, sequence);
    Edge& edge = edges_[found->second];
    const std::size_t common = CommonLength(edge, sequence);
    if (common < edge.label.size()) {
      Split(edge, common);
      if (common == sequence.size()) return edge.first_id + common - 1;
      // BUG(mutant-split-loses-sibling): the new branch replaces the
      // split-off tail instead of joining it.
      if constexpr (kBug == MutantBug::kSplitLosesSibling) {
        edge.children.clear();
      }
      return AddEdge(edge.children, sequence.subspan(common));
    }
    reached = edge.first_id + common - 1;
    sequence = sequence.subspan(common);
    // A leaf edge whose last ID is the newest one can grow in place and keep
    // its IDs consecutive. BUG(mutant-extend-in-place): grows it anyway.
    const bool ids_follow = edge.first_id + edge.label.size() == next_id_ ||
                            kBug == MutantBug::kExtendInPlace;
    if (!sequence.empty() && edge.children.empty() && ids_follow) {
      edge.label.insert(edge.label.end(), sequence.begin(), sequence.end());
      next_id_ += sequence.size();
      return edge.first_id + edge.label.size() - 1;
    }
    children = &edge.children;
  }
  return reached;
}

template <MutantBug kBug>
Match MutantRadixTrie<kBug>::MatchPrefix(TokenSpan request) const {
  Match match;
  const Children* children = &root_;
  while (!request.empty()) {
    const auto found = children->find(Key(request[0]));
    if (found == children->end()) break;
    const Edge& edge = edges_[found->second];
    const std::size_t common = CommonLength(edge, request);
    // BUG(mutant-edge-off-by-one): `common + 1 >= size` for `common == size`.
    const bool whole_edge = kBug == MutantBug::kEdgeOffByOne
                                ? common + 1 >= edge.label.size()
                                : common == edge.label.size();
    if (!whole_edge) {
      match.matched_length += common;
      match.cache_node = edge.first_id + common - 1;
      break;
    }
    match.matched_length += edge.label.size();
    match.cache_node = edge.first_id + edge.label.size() - 1;
    request = request.subspan(common);
    children = &edge.children;
  }
  return match;
}

template <MutantBug kBug>
std::size_t MutantRadixTrie<kBug>::memory_bytes() const {
  constexpr std::size_t kMapNodeBytes =
      32 + sizeof(std::pair<const Token, std::size_t>);
  std::size_t bytes = MallocChunkBytes(edges_.size() * sizeof(Edge));
  for (const Edge& edge : edges_) {
    bytes += VectorHeapBytes<Token>(edge.label.capacity()) +
             edge.children.size() * MallocChunkBytes(kMapNodeBytes);
  }
  return bytes + root_.size() * MallocChunkBytes(kMapNodeBytes);
}

template class MutantRadixTrie<MutantBug::kNone>;
template class MutantRadixTrie<MutantBug::kEdgeOffByOne>;
template class MutantRadixTrie<MutantBug::kSplitLosesSibling>;
template class MutantRadixTrie<MutantBug::kIdCountsDuplicates>;
template class MutantRadixTrie<MutantBug::kToken16Bit>;
template class MutantRadixTrie<MutantBug::kExtendInPlace>;

Match MatchInsertsMutant::MatchPrefix(TokenSpan request) const {
  const Match match = trie_.MatchPrefix(request);
  trie_.Insert(request);  // BUG(mutant-match-inserts)
  return match;
}

// --- MutantCache ------------------------------------------------------------

template <MutantCacheBug kBug>
MutantCache<kBug>::MutantCache(const CacheOptions& options)
    : options_(options) {
  if (options.page_size != 1) {
    throw std::invalid_argument(std::string(kName) +
                                ": page size 1 only (PagedIndex pages it)");
  }
}

template <MutantCacheBug kBug>
typename MutantCache<kBug>::Node* MutantCache<kBug>::Find(NodeId id) {
  const auto found = nodes_.find(id);
  return found == nodes_.end() ? nullptr : &found->second;
}

template <MutantCacheBug kBug>
std::map<Token, NodeId>& MutantCache<kBug>::ChildrenOf(NodeId id) {
  return id == kRootNode ? root_children_ : nodes_.at(id).children;
}

template <MutantCacheBug kBug>
typename MutantCache<kBug>::LeafKey MutantCache<kBug>::KeyOf(
    NodeId id, const Node& node) const {
  // lru: the smallest stamp; fifo: the smallest ID; lfu: the smallest
  // count, then the smallest stamp (SPEC §8 step 4).
  switch (options_.policy) {
    case EvictionPolicy::kLru:
      return {0, node.stamp, id};
    case EvictionPolicy::kFifo:
      return {0, id, id};
    case EvictionPolicy::kLfu:
      // BUG(mutant-lfu-tie-larger-stamp): equal counts put the newest first.
      if constexpr (kBug == MutantCacheBug::kLfuTieLargerStamp) {
        return {node.count, ~node.stamp, id};
      }
      return {node.count, node.stamp, id};
  }
  return {0, id, id};  // not reached: every policy has a case
}

template <MutantCacheBug kBug>
bool MutantCache<kBug>::Listed(const Node& node) const {
  // BUG(mutant-evicts-non-leaf): every node is a candidate, not the leaves.
  return node.children.empty() || kBug == MutantCacheBug::kEvictsNonLeaf;
}

template <MutantCacheBug kBug>
NodeId MutantCache<kBug>::NewId() {
  // BUG(mutant-reuses-evicted-id): a freed ID is given again.
  if (kBug == MutantCacheBug::kReusesEvictedId && !free_ids_.empty()) {
    const NodeId id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  return next_id_++;
}

template <MutantCacheBug kBug>
void MutantCache<kBug>::Touch(NodeId id, std::uint64_t stamp) {
  Node& node = nodes_.at(id);
  const bool listed = options_.bounded() && Listed(node);
  if (listed) leaves_.erase(KeyOf(id, node));
  node.stamp = stamp;
  ++node.count;
  if (listed) leaves_.insert(KeyOf(id, node));
}

template <MutantCacheBug kBug>
NodeId MutantCache<kBug>::Insert(TokenSpan sequence) {
  const bool bounded = options_.bounded();
  const std::uint64_t stamp = ++stamp_;
  NodeId current = kRootNode;
  for (const Token token : sequence) {
    std::map<Token, NodeId>& children = ChildrenOf(current);
    if (const auto found = children.find(token); found != children.end()) {
      current = found->second;
      // BUG(mutant-no-touch-on-hit): a node that was there keeps its stamp.
      if (kBug != MutantCacheBug::kNoTouchOnHit) Touch(current, stamp);
      continue;
    }
    const NodeId id = NewId();
    Node* parent = Find(current);
    const bool parent_was_listed = parent != nullptr && Listed(*parent);
    children.emplace(token, id);
    if (bounded && parent_was_listed && !Listed(*parent)) {
      leaves_.erase(KeyOf(current, *parent));
    }
    Node& node = nodes_[id] =
        Node{.parent = current, .token = token, .children = {}, .stamp = 0};
    node.stamp = stamp;
    node.count = 1;  // from 0, by this request's touch
    if (bounded) leaves_.insert(KeyOf(id, node));
    current = id;
  }
  if (bounded) {
    // BUG(mutant-keeps-c-plus-one): one node too many stays. (A bounded
    // capacity is below kUnbounded, so C + 1 does not wrap.)
    const std::uint64_t keep = kBug == MutantCacheBug::kKeepsOneExtra
                                   ? options_.capacity + 1
                                   : options_.capacity;
    while (nodes_.size() > keep) EvictOne();
  }
  return MatchPrefix(sequence).cache_node;
}

template <MutantCacheBug kBug>
void MutantCache<kBug>::EvictOne() {
  NodeId id = std::get<2>(*leaves_.begin());
  // BUG(mutant-tie-evicts-shallower): LRU climbs the victim's chain of equal
  // stamps to its top, as if trimming a radix run at its head.
  if (kBug == MutantCacheBug::kTieEvictsShallower &&
      options_.policy == EvictionPolicy::kLru) {
    for (;;) {
      const Node& node = nodes_.at(id);
      const Node* parent = Find(node.parent);
      if (parent == nullptr || parent->stamp != node.stamp ||
          parent->children.size() != 1) {
        break;
      }
      id = node.parent;
    }
  }
  Node node = std::move(nodes_.at(id));
  if (Listed(node)) leaves_.erase(KeyOf(id, node));
  nodes_.erase(id);
  Node* parent = Find(node.parent);
  // A node evicted before its parent (mutant-evicts-non-leaf) has none.
  if (node.parent == kRootNode || parent != nullptr) {
    const bool parent_was_listed = parent != nullptr && Listed(*parent);
    ChildrenOf(node.parent).erase(node.token);
    if (parent != nullptr && !parent_was_listed && Listed(*parent)) {
      leaves_.insert(KeyOf(node.parent, *parent));
    }
    // The run trimmed at its head: its one child moves up (unless the
    // parent has a child with that token already: then it stays behind).
    if constexpr (kBug == MutantCacheBug::kTieEvictsShallower) {
      for (const auto& [token, child] : node.children) {
        if (ChildrenOf(node.parent).emplace(token, child).second) {
          nodes_.at(child).parent = node.parent;
        }
      }
    }
  }
  if (kBug == MutantCacheBug::kReusesEvictedId) free_ids_.push_back(id);
  ++evicted_;
  if (listener_) listener_(TokenSpan(&node.token, 1));
}

template <MutantCacheBug kBug>
Match MutantCache<kBug>::MatchPrefix(TokenSpan request) const {
  Match match;
  const std::map<Token, NodeId>* children = &root_children_;
  for (const Token token : request) {
    const auto found = children->find(token);
    if (found == children->end()) break;
    match = {match.matched_length + 1, found->second};
    children = &nodes_.at(found->second).children;
  }
  return match;
}

template <MutantCacheBug kBug>
std::size_t MutantCache<kBug>::memory_bytes() const {
  return nodes_.size() * (MapNodeBytes<std::pair<const NodeId, Node>>() +
                          MapNodeBytes<std::pair<const Token, NodeId>>()) +
         leaves_.size() * MapNodeBytes<LeafKey>() +
         VectorHeapBytes<NodeId>(free_ids_.capacity());
}

template class MutantCache<MutantCacheBug::kNone>;
template class MutantCache<MutantCacheBug::kEvictsNonLeaf>;
template class MutantCache<MutantCacheBug::kReusesEvictedId>;
template class MutantCache<MutantCacheBug::kNoTouchOnHit>;
template class MutantCache<MutantCacheBug::kTieEvictsShallower>;
template class MutantCache<MutantCacheBug::kKeepsOneExtra>;
template class MutantCache<MutantCacheBug::kLfuTieLargerStamp>;

// --- PageHashOnlyMutant -----------------------------------------------------

namespace {

// A weak page hash: the sum of the page's tokens, so that any two pages
// holding the same tokens in another order collide.
std::uint32_t WeakPageHash(TokenSpan page) {
  std::uint32_t sum = 0;
  for (const Token token : page) sum += static_cast<std::uint32_t>(token);
  return sum;
}

}  // namespace

PageHashOnlyMutant::PageHashOnlyMutant(const CacheOptions& options)
    : options_(options),
      cache_(CacheOptions{.capacity = options.capacity,
                          .policy = options.policy,
                          .page_size = 1}),
      pages_(std::make_shared<std::vector<std::vector<Token>>>()) {
  if (options.page_size < 1 || options.page_size > kMaxPageSize) {
    throw std::invalid_argument("page size outside 1 to 2^31 - 1");
  }
}

std::vector<Token> PageHashOnlyMutant::FindSymbols(TokenSpan tokens) const {
  std::vector<Token> symbols;
  const std::size_t page = options_.page_size;
  for (std::size_t at = 0; at + page <= tokens.size(); at += page) {
    // BUG(mutant-page-hash-only): the hash is trusted; tokens never compared.
    const auto found =
        symbol_of_hash_.find(WeakPageHash(tokens.subspan(at, page)));
    if (found == symbol_of_hash_.end()) break;
    symbols.push_back(found->second);
  }
  return symbols;
}

std::vector<Token> PageHashOnlyMutant::AddSymbols(TokenSpan tokens) {
  const std::size_t page = options_.page_size;
  for (std::size_t at = 0; at + page <= tokens.size(); at += page) {
    const TokenSpan content = tokens.subspan(at, page);
    const auto [it, added] = symbol_of_hash_.try_emplace(
        WeakPageHash(content), static_cast<Token>(pages_->size()));
    if (added) pages_->emplace_back(content.begin(), content.end());
  }
  return FindSymbols(tokens);
}

NodeId PageHashOnlyMutant::Insert(TokenSpan sequence) {
  if (options_.page_size == 1) return cache_.Insert(sequence);
  return cache_.Insert(AddSymbols(sequence));
}

Match PageHashOnlyMutant::MatchPrefix(TokenSpan request) const {
  if (options_.page_size == 1) return cache_.MatchPrefix(request);
  Match match = cache_.MatchPrefix(FindSymbols(request));
  match.matched_length *= options_.page_size;
  return match;
}

Match PageHashOnlyMutant::Access(TokenSpan request) {
  if (options_.page_size == 1) return cache_.Access(request);
  Match match = cache_.Access(AddSymbols(request));
  match.matched_length *= options_.page_size;
  return match;
}

void PageHashOnlyMutant::SetEvictionListener(EvictionListener listener) {
  if (options_.page_size == 1) {
    cache_.SetEvictionListener(std::move(listener));
    return;
  }
  cache_.SetEvictionListener(
      [pages = pages_, listener = std::move(listener)](TokenSpan symbols) {
        if (!listener) return;
        for (const Token symbol : symbols) listener((*pages)[symbol]);
      });
}

std::size_t PageHashOnlyMutant::memory_bytes() const {
  std::size_t bytes =
      cache_.memory_bytes() +
      symbol_of_hash_.size() *
          MapNodeBytes<std::pair<const std::uint32_t, Token>>() +
      VectorHeapBytes<std::vector<Token>>(pages_->capacity());
  for (const auto& page : *pages_) {
    bytes += VectorHeapBytes<Token>(page.capacity());
  }
  return bytes;
}

// --- Names and construction -------------------------------------------------

std::vector<std::string_view> IndexMutantNames() {
  std::vector<std::string_view> names;
  IndexMutants::ForEach([&]<typename E>() { names.push_back(E::kName); });
  return names;
}

std::vector<std::string_view> CacheMutantNames() {
  std::vector<std::string_view> names;
  CacheMutants::ForEach([&]<typename E>() { names.push_back(E::kName); });
  return names;
}

namespace {

// The reference cache, reporting the runs of a matched path to the curve
// deepest first (mutant-curve-runs-leaf-first).
class RunsLeafFirstCache {
 public:
  explicit RunsLeafFirstCache(const CacheOptions& options) : cache_(options) {}

  template <typename OnRun>
  Match Access(TokenSpan request, OnRun&& on_run) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    const Match match =
        cache_.Access(request, [&runs](std::uint64_t stamp, std::uint64_t n) {
          runs.emplace_back(stamp, n);
        });
    // BUG: the path is reported bottom-up instead of root first.
    for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
      on_run(run->first, run->second);
    }
    return match;
  }
  const CacheOptions& options() const { return cache_.options(); }
  std::uint64_t node_count() const { return cache_.node_count(); }
  std::size_t memory_bytes() const { return cache_.memory_bytes(); }

 private:
  PagedIndex<ReferenceTrie> cache_;
};

// The matched tokens at `capacities` of LruCurve<Cache> fed `trace`.
template <typename Cache>
std::vector<std::uint64_t> CurveMatched(
    const SequenceList& trace, std::uint64_t page_size,
    std::span<const std::uint64_t> capacities) {
  LruCurve<Cache> curve(page_size);
  for (const TokenSpan request : trace) curve.Add(request);
  return curve.MatchedTokens(capacities);
}

}  // namespace

std::vector<std::string_view> CurveMutantNames() {
  return {MutantCurveName(MutantCurveBug::kCapacityOffByOne),
          MutantCurveName(MutantCurveBug::kRunsLeafFirst)};
}

std::vector<std::uint64_t> MutantCurveMatchedTokens(
    std::string_view name, const SequenceList& trace, std::uint64_t page_size,
    std::span<const std::uint64_t> capacities) {
  if (name == MutantCurveName(MutantCurveBug::kCapacityOffByOne)) {
    std::vector<std::uint64_t> read_at;
    for (std::uint64_t capacity : capacities) {
      read_at.push_back(capacity == kUnbounded ? capacity : capacity + 1);
    }
    // BUG: read at C + 1 for C.
    return CurveMatched<PagedIndex<ReferenceTrie>>(trace, page_size, read_at);
  }
  if (name == MutantCurveName(MutantCurveBug::kRunsLeafFirst)) {
    return CurveMatched<RunsLeafFirstCache>(trace, page_size, capacities);
  }
  throw std::invalid_argument("unknown curve mutant '" + std::string(name) +
                              "'");
}

FatNodeMutant::FatNodeMutant(const CacheOptions& options)
    : trie_(std::make_unique<EngineAdapter<RadixTrie>>(options)) {}

void FatNodeMutant::GrowRecords() {
  records_.resize(trie_->node_count() + trie_->evicted_count());
}

NodeId FatNodeMutant::Insert(TokenSpan sequence) {
  const NodeId id = trie_->Insert(sequence);
  GrowRecords();
  return id;
}

Match FatNodeMutant::MatchPrefix(TokenSpan request) const {
  return trie_->MatchPrefix(request);
}

Match FatNodeMutant::Access(TokenSpan request) {
  const Match match = trie_->Access(request);
  GrowRecords();
  return match;
}

std::uint64_t FatNodeMutant::node_count() const { return trie_->node_count(); }

std::uint64_t FatNodeMutant::evicted_count() const {
  return trie_->evicted_count();
}

const CacheOptions& FatNodeMutant::options() const { return trie_->options(); }

void FatNodeMutant::SetEvictionListener(EvictionListener listener) {
  trie_->SetEvictionListener(std::move(listener));
}

std::size_t FatNodeMutant::memory_bytes() const {
  return MallocChunkBytes(sizeof(EngineAdapter<RadixTrie>)) +
         trie_->memory_bytes() + VectorHeapBytes<Record>(records_.capacity());
}

template <bool kBlind>
NamespaceMutant<kBlind>::NamespaceMutant(const CacheOptions& options)
    : cache_(MakeEngine(ReferenceTrie::kName, options)) {}

std::vector<std::string_view> NamespaceMutantNames() {
  return {NamespaceMutant<true>::kName};
}

std::vector<std::string_view> MemoryMutantNames() {
  return {FatNodeMutant::kName};
}

std::vector<std::string_view> MutantNames() {
  std::vector<std::string_view> names = IndexMutantNames();
  for (std::string_view name : CacheMutantNames()) names.push_back(name);
  return names;
}

std::unique_ptr<PrefixIndex> MakeMutant(std::string_view name,
                                        const CacheOptions& options) {
  std::unique_ptr<PrefixIndex> mutant;
  const auto make_index_if_named = [&]<typename E>() {
    static_assert(PrefixIndexEngine<E>);
    if (name == E::kName) mutant = std::make_unique<EngineAdapter<E>>();
  };
  // Over pages as the registry builds an engine (engines/registry.cc).
  const auto make_cache_if_named = [&]<typename E>() {
    static_assert(PrefixCacheEngine<E>);
    if (name != E::kName) return;
    if (options.page_size == 1 || std::is_same_v<E, PageHashOnlyMutant>) {
      mutant = std::make_unique<EngineAdapter<E>>(options);
    } else {
      mutant = std::make_unique<EngineAdapter<PagedIndex<E>>>(options);
    }
  };
  EngineList<Baseline>::ForEach(make_index_if_named);
  IndexMutants::ForEach(make_index_if_named);
  EngineList<CacheBaseline>::ForEach(make_cache_if_named);
  CacheMutants::ForEach(make_cache_if_named);
  EngineList<FatNodeMutant>::ForEach(make_cache_if_named);
  if (name == NamespaceMutant<true>::kName) {
    mutant = std::make_unique<NamespaceMutant<true>>(options);
  } else if (name == NamespaceMutant<false>::kName) {
    mutant = std::make_unique<NamespaceMutant<false>>(options);
  }
  if (mutant == nullptr) mutant = MakeModelMutant(name, options);
  if (mutant == nullptr) {
    throw std::invalid_argument("unknown mutant '" + std::string(name) + "'");
  }
  return mutant;
}

}  // namespace kvprefix::test
