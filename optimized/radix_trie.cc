// RadixTrie: see the header for the design. This file also holds the SIMD
// run compare, compiled once per instruction set by Highway's foreach_target
// and picked at run time (the build uses no -march flag, so a static target
// would be plain SSE2 or scalar).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "optimized/radix_trie.cc"
#include "optimized/radix_trie.h"

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace kvprefix {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Number of leading positions where a[i] == b[i], i < n. Checks four vectors
// per step (one branch for 32 tokens with AVX2) until the first difference.
std::size_t CommonPrefixLength(const Token* HWY_RESTRICT a,
                               const Token* HWY_RESTRICT b, std::size_t n) {
  const hn::ScalableTag<Token> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const auto ne0 = hn::Ne(hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    const auto ne1 =
        hn::Ne(hn::LoadU(d, a + i + lanes), hn::LoadU(d, b + i + lanes));
    const auto ne2 = hn::Ne(hn::LoadU(d, a + i + 2 * lanes),
                            hn::LoadU(d, b + i + 2 * lanes));
    const auto ne3 = hn::Ne(hn::LoadU(d, a + i + 3 * lanes),
                            hn::LoadU(d, b + i + 3 * lanes));
    if (!hn::AllFalse(d, hn::Or(hn::Or(ne0, ne1), hn::Or(ne2, ne3)))) break;
  }
  for (; i + lanes <= n; i += lanes) {
    const auto ne = hn::Ne(hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    if (!hn::AllFalse(d, ne)) return i + hn::FindKnownFirstTrue(d, ne);
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace HWY_NAMESPACE
}  // namespace kvprefix
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {

HWY_EXPORT(CommonPrefixLength);

namespace {

// Tokens of a fresh chunk that will hold `live` more tokens: a power of two
// between the first and the largest chunk size.
std::size_t ChunkTokensFor(std::size_t live) {
  return std::clamp(std::bit_ceil(std::max<std::size_t>(live, 1)),
                    RadixTrie::kFirstChunkTokens, RadixTrie::kMaxChunkTokens);
}

// A fresh arena chunk of `tokens` uninitialized tokens; the large ones on
// transparent huge pages (kvprefix/huge_pages.h): a fresh process faults
// in the arena, hundreds of MB for a large trace, one 2 MiB page at a time
// instead of 4 KiB. Throws std::bad_alloc.
std::unique_ptr<Token[]> NewChunk(std::size_t tokens) {
  auto chunk = std::make_unique_for_overwrite<Token[]>(tokens);
  AdviseHugePages(chunk.get(), tokens * sizeof(Token));
  return chunk;
}

}  // namespace

RadixTrie::RadixTrie(std::uint64_t max_edges)
    : RadixTrie(CacheOptions{}, max_edges) {}

RadixTrie::RadixTrie(const CacheOptions& options, std::uint64_t max_edges)
    : CacheCore(options),
      edges_{Edge{nullptr, kRootNode, 0}},
      max_edges_(std::min(max_edges, kMaxEdges)) {
  CheckTrieEngineOptions("radix", options);
  bounded_ = options.bounded();
  if (bounded_) {
    links_.emplace_back();  // the root's, never a leaf
    states_ = PolicyStates<HugePageVector<std::uint64_t>>(options.policy);
    states_.words().assign(states_.words_per_handle(), 0);  // the root's
    leaves_ = PolicyLeafHeap<EdgeIndex>(options.policy);
  }
}

RadixTrie::Position RadixTrie::Walk(TokenSpan sequence) const {
  Position position;
  const std::size_t size = sequence.size();
  while (position.matched < size) {
    const auto child =
        children_.find(ChildKey(position.edge, sequence[position.matched]));
    if (child == children_.end()) break;
    position.parent = position.edge;
    position.edge = child->second;
    const Edge& edge = edges_[position.edge];
    // The first token is equal by the lookup; compare the rest of the run.
    const std::size_t limit =
        std::min<std::size_t>(edge.length, size - position.matched);
    const std::size_t equal =
        1 +
        HWY_DYNAMIC_DISPATCH(CommonPrefixLength)(
            edge.tokens + 1, sequence.data() + position.matched + 1, limit - 1);
    position.matched += equal;
    position.offset = static_cast<std::uint32_t>(equal);
    if (equal < edge.length) break;
  }
  return position;
}

NodeId RadixTrie::NodeAt(const Position& position) const {
  if (position.edge == kRootEdge) return kRootNode;
  return edges_[position.edge].first_id + position.offset - 1;
}

Match RadixTrie::MatchPrefix(TokenSpan request) const {
  const Position position = Walk(request);
  return Match{position.matched, NodeAt(position)};
}

NodeId RadixTrie::Insert(TokenSpan sequence) {
  if (!bounded_) return InsertAt(sequence, Walk(sequence));
  return VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
    return kvprefix::InsertBounded<Policy>(*this, sequence).deepest;
  });
}

Match RadixTrie::Access(TokenSpan request) {
  if (options().match_limit != MatchLimit::kAll) {
    return AccessWithMatchLimit(*this, request, options());
  }
  if (bounded_) {
    return VisitPolicy(options().policy, [&]<typename Policy>(Policy) {
      return kvprefix::InsertBounded<Policy>(*this, request).match;
    });
  }
  const Position position = Walk(request);
  const Match match{position.matched, NodeAt(position)};
  InsertAt(request, position);
  return match;
}

Match RadixTrie::AccessLru(TokenSpan request,
                           absl::FunctionRef<void(const Position&)> on_walk) {
  return kvprefix::InsertBounded<LruPolicy>(*this, request, on_walk).match;
}

NodeId RadixTrie::InsertAt(TokenSpan sequence, const Position& position) {
  if (position.matched == sequence.size()) return NodeAt(position);
  const TokenSpan suffix = sequence.subspan(position.matched);
  const bool split = position.offset < edges_[position.edge].length;
  CheckEdgeLimit(split ? 1 + NewEdgesFor(suffix.size(), false)
                       : NewEdgesFor(suffix.size(), Extendable(position.edge)),
                 suffix.size());
  const EdgeIndex attach =
      split ? Split<false>(position.parent, position.edge, position.offset)
            : position.edge;
  Append<false>(attach, suffix, /*extend=*/true, [](EdgeIndex) {});
  return node_count_;
}

// --- Bounded (SPEC §8): kvprefix/bounded_insert.h's primitives ---------------

template <typename Policy>
RadixTrie::Growth RadixTrie::GrowthAt(const Position& position,
                                      std::size_t new_tokens) const {
  // Cut the edge the walk stopped inside: to branch off it, or (a policy
  // with state) so that the touched upper part gets its own state.
  const bool cut = position.offset < edges_[position.edge].length &&
                   (new_tokens > 0 || kKeepsState<Policy>);
  // The newest run may grow in place only if its nodes and the new ones get
  // one state by this request's touch.
  return Growth{cut,
                Policy::kTouchSetsState && !cut && Extendable(position.edge)};
}

template <typename Policy>
void RadixTrie::CheckRoom(TokenSpan sequence, std::size_t stored) const {
  // A cut and every stored token new: the most edges the insert can take.
  if (edge_count() + 1 + NewEdgesFor(stored, false) <= max_edges_) return;
  const Position position = Walk(sequence.first(stored));
  const std::size_t new_tokens = stored - position.matched;
  const Growth growth = GrowthAt<Policy>(position, new_tokens);
  CheckEdgeLimit((growth.cut ? 1 : 0) + NewEdgesFor(new_tokens, growth.extend),
                 new_tokens);
}

template <typename Policy>
void RadixTrie::Grow(Position& position, TokenSpan tokens,
                     std::uint64_t stamp) {
  // Step 2, then step 3: the touch follows the cut, which copies the edge's
  // state to its upper part.
  const bool grows = !tokens.empty();
  const Growth growth = GrowthAt<Policy>(position, tokens.size());
  EdgeIndex attach = position.edge;  // the deepest edge present of the path
  EdgeIndex deepest = position.edge;
  try {
    if (growth.cut) {
      attach = Split<true>(position.parent, position.edge, position.offset);
      deepest = attach;
    }
    if (grows) {
      // A new edge's nodes are created and touched by r (step 2, then 3).
      deepest = Append<true>(
          attach, tokens, growth.extend,
          [&](EdgeIndex edge) { states_.Create<Policy>(edge, stamp); });
    }
    if constexpr (kKeepsState<Policy>) Touch<Policy>(attach, stamp);
    if (deepest != kRootEdge && links_[deepest].children == 0 &&
        (kKeepsState<Policy> || grows)) {
      PushLeaf<Policy>(deepest);  // its key changed: a touch, or a new last ID
    }
  } catch (...) {
    heap_stale_ = true;  // a new leaf may have no heap entry
    throw;
  }
  if (growth.cut || grows) {
    position =
        Position{position.matched + tokens.size(), links_[deepest].parent,
                 deepest, edges_[deepest].length};
  }
}

void RadixTrie::SkipIds(std::uint64_t count) {
  if (count == 0) return;
  last_id_ += count;
  // The newest run's last ID is no longer the largest. (It ends at depth C,
  // so nothing could extend it anyway; the reset keeps the invariant plain.)
  newest_edge_ = kRootEdge;
}

template <typename Policy>
void RadixTrie::Tidy() {
  if (leaves_.Get<Policy>().Overfull(edges_.size())) RebuildHeap<Policy>();
  MaybeCompact();
}

void RadixTrie::CheckEdgeLimit(std::uint64_t new_edges,
                               std::size_t new_tokens) const {
  if (edge_count() + new_edges > max_edges_) {
    throw CapacityError("radix trie: inserting " + std::to_string(new_tokens) +
                        " new tokens needs " + std::to_string(new_edges) +
                        " more edges, over the " + std::to_string(max_edges_) +
                        "-edge limit");
  }
}

bool RadixTrie::Extendable(EdgeIndex edge) const {
  return edge != kRootEdge && edge == newest_edge_;
}

std::uint64_t RadixTrie::NewEdgesFor(std::size_t tokens, bool extend) const {
  // Mirrors Append: fill the current chunk, then chunks of growing size.
  std::uint64_t edges = 0;
  std::size_t room = static_cast<std::size_t>(chunk_limit_ - arena_end_);
  std::size_t chunk = next_chunk_tokens_;
  while (tokens > 0) {
    if (room == 0) {
      room = chunk;
      chunk = std::min(chunk * 2, kMaxChunkTokens);
      extend = false;
    }
    const std::size_t piece = std::min(tokens, room);
    if (!extend) ++edges;
    extend = false;
    tokens -= piece;
    room -= piece;
  }
  return edges;
}

RadixTrie::EdgeIndex RadixTrie::FreeEdgeIndex() {
  if (free_edges_.empty()) {
    const std::size_t slot = edges_.size();
    // Room for every slot to be free at once, so that removing an edge
    // never allocates.
    if (free_edges_.capacity() <= slot) free_edges_.reserve(2 * slot);
    // The slot arrays grow together or not at all.
    const std::size_t words = states_.words_per_handle();
    links_.emplace_back();
    try {
      states_.words().resize((slot + 1) * words);
      edges_.push_back(Edge{nullptr, kRootNode, 0});
    } catch (...) {
      states_.words().resize(slot * words);
      links_.pop_back();
      throw;
    }
    free_edges_.push_back(static_cast<EdgeIndex>(slot));
  }
  return free_edges_.back();
}

template <bool kBounded>
RadixTrie::EdgeIndex RadixTrie::Split(EdgeIndex parent, EdgeIndex edge,
                                      std::uint32_t offset) {
  const Edge old = edges_[edge];
  EdgeIndex upper;
  if constexpr (kBounded) {
    upper = FreeEdgeIndex();
    children_.emplace(ChildKey(upper, old.tokens[offset]), edge);
    free_edges_.pop_back();  // taken: nothing below can throw
    edges_[upper] = Edge{old.tokens, old.first_id, offset};
    // Both parts keep the state; the caller touches the upper one.
    states_.Copy(edge, upper);
    links_[upper] = EdgeLinks{parent, 1};
    links_[edge].parent = upper;
  } else {
    upper = static_cast<EdgeIndex>(edges_.size());
    edges_.push_back(Edge{old.tokens, old.first_id, offset});
    children_.emplace(ChildKey(upper, old.tokens[offset]), edge);
  }
  // Nothing below can throw: the lower part keeps its index and children.
  edges_[edge] =
      Edge{old.tokens + offset, old.first_id + offset, old.length - offset};
  children_.find(ChildKey(parent, old.tokens[0]))->second = upper;
  return upper;
}

void RadixTrie::AddChunk() {
  const std::size_t tokens = next_chunk_tokens_;
  chunks_.push_back(NewChunk(tokens));
  arena_end_ = chunks_.back().get();
  chunk_limit_ = arena_end_ + tokens;
  chunk_bytes_ += MallocChunkBytes(tokens * sizeof(Token));
  next_chunk_tokens_ = std::min(tokens * 2, kMaxChunkTokens);
  newest_edge_ = kRootEdge;  // a fresh chunk continues no run
}

template <bool kBounded, typename OnNewEdge>
RadixTrie::EdgeIndex RadixTrie::Append(EdgeIndex edge, TokenSpan suffix,
                                       bool extend, OnNewEdge&& on_new_edge) {
  while (!suffix.empty()) {
    if (arena_end_ == chunk_limit_) AddChunk();
    const std::size_t piece = std::min<std::size_t>(
        suffix.size(), static_cast<std::size_t>(chunk_limit_ - arena_end_));
    std::copy_n(suffix.begin(), piece, arena_end_);
    const auto length = static_cast<std::uint32_t>(piece);
    if (extend && Extendable(edge)) {
      edges_[edge].length += length;
    } else if constexpr (kBounded) {
      const EdgeIndex child = FreeEdgeIndex();
      children_.emplace(ChildKey(edge, suffix[0]), child);
      free_edges_.pop_back();  // taken
      edges_[child] = Edge{arena_end_, last_id_ + 1, length};
      links_[child] = EdgeLinks{edge, 0};
      on_new_edge(child);
      ++links_[edge].children;
      edge = child;
    } else {
      const auto child = static_cast<EdgeIndex>(edges_.size());
      edges_.push_back(Edge{arena_end_, node_count_ + 1, length});
      children_.emplace(ChildKey(edge, suffix[0]), child);
      edge = child;
    }
    // Only now is the piece part of the trie.
    newest_edge_ = edge;
    arena_end_ += piece;
    node_count_ += piece;
    if constexpr (kBounded) last_id_ += piece;
    suffix = suffix.subspan(piece);
  }
  return edge;
}

template <typename Policy>
void RadixTrie::RebuildHeap() {
  heap_stale_ = true;  // until every leaf is back in
  leaves_.Get<Policy>().Rebuild([&](auto add) {
    for (EdgeIndex edge = 1; edge < edges_.size(); ++edge) {
      if (edges_[edge].length > 0 && links_[edge].children == 0) {
        add(LeafKey<Policy>(edge), edge);
      }
    }
  });
  heap_stale_ = false;
}

template <typename Policy>
void RadixTrie::Touch(EdgeIndex deepest, std::uint64_t request) {
  // "every node on the request's path" is touched: the path is the deepest
  // edge and its ancestors, each edge whole.
  for (EdgeIndex edge = deepest; edge != kRootEdge;
       edge = links_[edge].parent) {
    states_.Touch<Policy>(edge, request);
  }
}

// What EvictLeaves (kvprefix/cache_model.h) needs of the edges: a leaf is
// the last node of a leaf edge, and the policy lets the run's tail go at
// once (see the header).
template <typename Policy>
class RadixTrie::Leaves {
 public:
  static_assert(Policy::kRunTailLeavesAtOnce,
                "radix evicts a run's tail in one step");
  using Entry = typename LeafHeap<typename Policy::Key, EdgeIndex>::Entry;
  explicit Leaves(RadixTrie& trie) : trie_(trie) {}

  bool IsCurrent(const Entry& entry) const {
    return trie_.edges_[entry.handle].length > 0 &&
           trie_.links_[entry.handle].children == 0 &&
           trie_.LeafKey<Policy>(entry.handle) == entry.key;
  }
  typename Policy::Key LeafKey(EdgeIndex edge) const {
    return trie_.LeafKey<Policy>(edge);
  }
  // The leaf and the nodes above it in its run, up to `at_most` in all.
  std::pair<std::uint64_t, std::optional<EdgeIndex>> RemoveTail(
      EdgeIndex edge, std::uint64_t at_most) {
    const auto count = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(at_most, trie_.edges_[edge].length));
    return {count, trie_.EvictTail(edge, count)};
  }

 private:
  RadixTrie& trie_;
};

template <typename Policy>
void RadixTrie::EvictLeaves(std::uint64_t count) {
  if (heap_stale_) RebuildHeap<Policy>();
  // "evict while more than C nodes are present, one leaf at a time": the
  // policy's leaf and then the rest of its run's tail (see the header).
  // Nodes are present, so a leaf edge is, and its entry is in the heap
  // (EvictLeaves throws NoEvictableLeafError should none be left).
  Leaves<Policy> leaves(*this);
  try {
    kvprefix::EvictLeaves(leaves_.Get<Policy>(), leaves, count, kName,
                          options().capacity);
  } catch (...) {
    heap_stale_ = true;  // a throwing listener: a new leaf may lack its entry
    throw;
  }
}

std::optional<RadixTrie::EdgeIndex> RadixTrie::EvictTail(EdgeIndex index,
                                                         std::uint32_t count) {
  Edge& edge = edges_[index];
  edge.length -= count;
  const TokenSpan evicted(edge.tokens + edge.length, count);
  node_count_ -= count;
  CountEvicted(count);
  dead_tokens_ += count;
  // The newest run is the last insert's; once shortened it must not be
  // extended over its evicted tail.
  if (index == newest_edge_) newest_edge_ = kRootEdge;
  std::optional<EdgeIndex> leaf;
  if (edge.length > 0) {
    leaf = index;  // fifo: its key is now smaller; lru, lfu: the same
  } else {
    const EdgeIndex parent = links_[index].parent;
    children_.erase(ChildKey(parent, edge.tokens[0]));
    if (--links_[parent].children == 0 && parent != kRootEdge) leaf = parent;
    free_edges_.push_back(index);  // reserved: never allocates
  }
  // EvictLeaves popped one entry for this edge and pushes at most one, the
  // returned leaf: the heap does not allocate.
  ReportEvicted(evicted);
  return leaf;
}

void RadixTrie::MaybeCompact() {
  if (dead_tokens_ > node_count_ + kFirstChunkTokens) Compact();
}

void RadixTrie::Compact() {
  // Every live run, in edge order, the newest last so that it still ends at
  // the write position and stays extendable.
  const EdgeIndex newest = newest_edge_;
  auto for_each_run = [&](auto&& visit) {
    for (EdgeIndex edge = 1; edge < edges_.size(); ++edge) {
      if (edges_[edge].length > 0 && edge != newest) visit(edges_[edge]);
    }
    if (newest != kRootEdge) visit(edges_[newest]);
  };
  // Plan the chunks (a run never crosses one) and allocate them all before
  // changing anything, so that bad_alloc leaves the arena as it was.
  std::vector<std::size_t> sizes;
  std::size_t remaining = node_count_;
  std::size_t room = 0;
  for_each_run([&](const Edge& edge) {
    if (edge.length > room) {
      sizes.push_back(ChunkTokensFor(remaining));
      room = sizes.back();
    }
    room -= edge.length;
    remaining -= edge.length;
  });
  std::vector<std::unique_ptr<Token[]>> chunks;
  chunks.reserve(sizes.size());
  std::size_t bytes = 0;
  for (std::size_t size : sizes) {
    chunks.push_back(NewChunk(size));
    bytes += MallocChunkBytes(size * sizeof(Token));
  }
  // Copy, as planned; nothing below throws.
  std::size_t next = 0;
  Token* out = nullptr;
  Token* limit = nullptr;
  for_each_run([&](Edge& edge) {
    if (edge.length > static_cast<std::size_t>(limit - out)) {
      out = chunks[next].get();
      limit = out + sizes[next];
      ++next;
    }
    std::copy_n(edge.tokens, edge.length, out);
    edge.tokens = out;
    out += edge.length;
  });
  for (Edge& edge : edges_) {
    if (edge.length == 0) edge.tokens = nullptr;  // removed: no old pointer
  }
  chunks_ = std::move(chunks);  // frees the old arena
  chunk_bytes_ = bytes;
  arena_end_ = out;
  chunk_limit_ = limit;
  next_chunk_tokens_ = ChunkTokensFor(node_count_);
  dead_tokens_ = 0;
  ++compactions_;
}

std::size_t RadixTrie::memory_bytes() const {
  return chunk_bytes_ + FlatHashTableBytes(children_) +
         VectorHeapBytes<Edge>(edges_.capacity()) +
         VectorHeapBytes<std::unique_ptr<Token[]>>(chunks_.capacity()) +
         VectorHeapBytes<EdgeLinks>(links_.capacity()) +
         VectorHeapBytes<std::uint64_t>(states_.words().capacity()) +
         leaves_.memory_bytes() +
         VectorHeapBytes<EdgeIndex>(free_edges_.capacity()) +
         VectorHeapBytes<EdgeIndex>(path_.capacity());
}

}  // namespace kvprefix

#endif  // HWY_ONCE
