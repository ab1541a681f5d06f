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
#include <string>

#include "kvprefix/memory.h"

namespace kvprefix {

HWY_EXPORT(CommonPrefixLength);

RadixTrie::RadixTrie(std::uint64_t max_edges)
    : edges_{Edge{nullptr, kRootNode, 0}},
      max_edges_(std::min(max_edges, kMaxEdges)) {}

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
  const Position position = Walk(sequence);
  if (position.matched == sequence.size()) return NodeAt(position);
  const TokenSpan suffix = sequence.subspan(position.matched);
  const bool split = position.offset < edges_[position.edge].length;
  const std::uint64_t new_edges =
      split ? 1 + NewEdgesFor(suffix.size(), false)
            : NewEdgesFor(suffix.size(), Extendable(position.edge));
  if (edge_count() + new_edges > max_edges_) {
    throw CapacityError("radix trie: inserting " +
                        std::to_string(suffix.size()) + " new tokens needs " +
                        std::to_string(new_edges) + " more edges, over the " +
                        std::to_string(max_edges_) + "-edge limit");
  }
  const EdgeIndex attach =
      split ? Split(position.parent, position.edge, position.offset)
            : position.edge;
  return Append(attach, suffix);
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

RadixTrie::EdgeIndex RadixTrie::Split(EdgeIndex parent, EdgeIndex edge,
                                      std::uint32_t offset) {
  const EdgeIndex upper = static_cast<EdgeIndex>(edges_.size());
  const Edge old = edges_[edge];
  edges_.push_back(Edge{old.tokens, old.first_id, offset});
  children_.emplace(ChildKey(upper, old.tokens[offset]), edge);
  // Nothing below can throw: the lower part keeps its index and children.
  edges_[edge] =
      Edge{old.tokens + offset, old.first_id + offset, old.length - offset};
  children_.find(ChildKey(parent, old.tokens[0]))->second = upper;
  return upper;
}

void RadixTrie::AddChunk() {
  const std::size_t tokens = next_chunk_tokens_;
  chunks_.push_back(std::make_unique_for_overwrite<Token[]>(tokens));
  arena_end_ = chunks_.back().get();
  chunk_limit_ = arena_end_ + tokens;
  chunk_bytes_ += MallocChunkBytes(tokens * sizeof(Token));
  next_chunk_tokens_ = std::min(tokens * 2, kMaxChunkTokens);
  newest_edge_ = kRootEdge;  // a fresh chunk continues no run
}

NodeId RadixTrie::Append(EdgeIndex edge, TokenSpan suffix) {
  while (!suffix.empty()) {
    if (arena_end_ == chunk_limit_) AddChunk();
    const std::size_t piece = std::min<std::size_t>(
        suffix.size(), static_cast<std::size_t>(chunk_limit_ - arena_end_));
    std::copy_n(suffix.begin(), piece, arena_end_);
    const auto length = static_cast<std::uint32_t>(piece);
    if (Extendable(edge)) {
      edges_[edge].length += length;
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
    suffix = suffix.subspan(piece);
  }
  return node_count_;
}

std::size_t RadixTrie::memory_bytes() const {
  // A Swiss table is one allocation: capacity + 1 + 15 control bytes
  // (sentinel and cloned group), padded to the slot alignment, then the
  // slots (absl raw_hash_set AllocSize).
  using Slot = std::pair<const std::uint64_t, EdgeIndex>;
  const std::size_t capacity = children_.capacity();
  const std::size_t control =
      (capacity + 16 + alignof(Slot) - 1) & ~(alignof(Slot) - 1);
  const std::size_t table =
      capacity == 0 ? 0 : MallocChunkBytes(control + capacity * sizeof(Slot));
  return chunk_bytes_ + table + VectorHeapBytes<Edge>(edges_.capacity()) +
         VectorHeapBytes<std::unique_ptr<Token[]>>(chunks_.capacity());
}

}  // namespace kvprefix

#endif  // HWY_ONCE
