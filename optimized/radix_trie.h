// RadixTrie: a path-compressed (radix) trie whose edges hold whole token runs
// stored in an arena, with node IDs implicit in the run position.
//
// Design
// ------
// A per-token trie pays a dependent cache miss for every token it follows.
// Real prompt caches (SGLang's RadixCache, the Mooncake traces) have few
// branch points and long shared runs: 13.7 M cached tokens of the Mooncake
// conversation trace form about 10.8 M nodes but only a few thousand
// branches. Morrison's PATRICIA trie (JACM 1968) collapses every chain of
// single-child nodes into one edge labelled with the whole run, so following
// a 5,000-token shared prefix costs one child lookup plus a streaming compare
// of two int32 arrays (Highway SIMD, dynamic dispatch to the best
// instruction set of the CPU), not 5,000 lookups. SGLang's RadixCache (Zheng
// et al., "SGLang: Efficient Execution of Structured Language Model
// Programs", 2024) is the same structure used as a serving-system prefix
// cache; this engine adds the SPEC §1 node IDs to it at no per-token cost.
//
// The node-ID observation that makes IDs free:
//   * an insert creates the nodes of its unmatched suffix one after another,
//     so they get consecutive IDs;
//   * every created node's token is appended to a token arena at the moment
//     the node is created, so arena order is ID order and a new run is one
//     contiguous arena range;
//   * splitting an edge cuts its run in two contiguous pieces, each still
//     consecutive in ID.
// So an edge is (pointer to its run in the arena, ID of its first node,
// length), and position k of the edge is node first_id + k. IDs along a path
// need not be consecutive across edges: after [1,2], [1,3], [9], [1,2,3,4]
// the path 1,2,3,4 has IDs 1,2,5,6, so [3,4] is a new child edge of the edge
// holding [2], not an extension of it.
//
// Memory layout
//   chunks_    the token arena: chunks of 256, 512, ... up to 2^18 tokens
//              (1 MiB), never moved or reallocated, so edges keep raw
//              pointers into them and growth touches each page once (no
//              doubling copy). An edge's run never crosses a chunk boundary;
//              an insert whose new run reaches the end of a chunk continues
//              as a single child edge in the next one.
//   edges_     vector of Edge {run pointer, first node ID (64-bit), length}:
//              24 bytes an edge. edges_[0] is the root (length 0).
//   children_  one absl::flat_hash_map keyed by (edge index << 32 | token):
//              the child edge whose run starts with `token` below the last
//              node of that edge. One global Swiss table serves any fan-out
//              (100,000 children at the root, 5,000 at one node) with one
//              probe, and has no per-edge object.
// Per node: 4 bytes of token plus the edges' share (45-65 bytes an edge
// with its hash slot), plus at most one partly used chunk.
//
// Invariants
//   * every non-root edge has length >= 1 and exactly one children_ entry
//     pointing to it, keyed by its parent edge and its first token;
//   * the children of an edge have pairwise distinct first tokens;
//   * the last token written to the arena is the token of node node_count_,
//     so the edge whose run ends at the arena's write position (newest_edge_)
//     ends at the newest node, which has no children: that leaf may be
//     extended in place by the next insert that continues it, as long as
//     the current chunk has room. Splitting it keeps this true, since the
//     lower part keeps the edge's index.
//
// Insert walks like MatchPrefix. If the sequence ends on the path, the node
// reached is returned and nothing changes. If it leaves the path inside an
// edge, the edge is split: a new edge takes its upper part and its place in
// children_, and the old edge keeps its index and its children (so a split
// is O(1) whatever the fan-out below). The unmatched suffix is then copied
// to the arena and attached as new child edge(s), or appended to the leaf
// edge in place when that leaf is the newest run in the current chunk.
//
// MatchPrefix walks from the root: one hash probe for the first token of the
// next edge, then a SIMD compare of the request against the edge's run. It
// never writes, so concurrent matches are safe.
//
// Complexity: Insert and MatchPrefix are O(length) expected, with one hash
// probe per edge on the path plus a streaming compare; a split is O(1).
// Nothing is recursive (a 200,000-token sequence or a 100,000-edge-deep
// chain costs no stack).
//
// Capacity: edge indices are stored in 32 bits. Insert throws CapacityError,
// before changing anything, when it would need more than max_edges edges.
// Node IDs are 64-bit; run lengths fit 32 bits since a run never exceeds
// one chunk.
#ifndef KVPREFIX_OPTIMIZED_RADIX_TRIE_H_
#define KVPREFIX_OPTIMIZED_RADIX_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kvprefix/cache.h"
#include "kvprefix/types.h"

namespace kvprefix {

class RadixTrie {
 public:
  static constexpr std::string_view kName = "radix";
  // Largest number of edges (root excluded): edge indices are uint32.
  static constexpr std::uint64_t kMaxEdges =
      std::numeric_limits<std::uint32_t>::max();
  // Arena chunk sizes in tokens: the first chunk, and the cap reached by
  // doubling (1 MiB, so at most that much is allocated but unused).
  static constexpr std::size_t kFirstChunkTokens = 256;
  static constexpr std::size_t kMaxChunkTokens = std::size_t{1} << 18;

  // An empty trie (root only) that holds at most `max_edges` edges
  // (1 <= max_edges <= kMaxEdges; tests lower it to reach the limit).
  explicit RadixTrie(std::uint64_t max_edges = kMaxEdges);

  // Inserts `sequence` (SPEC §1); returns the ID of the node its last token
  // reaches (kRootNode if empty). O(length) expected, plus an arena chunk
  // allocation when the current chunk is full. Throws CapacityError, leaving
  // the trie unchanged, if the insert needs more than max_edges edges in
  // total. Throws std::bad_alloc on memory exhaustion; the trie then stays
  // valid and holds some prefix of `sequence` (as ReferenceTrie does). Not
  // thread-safe.
  NodeId Insert(TokenSpan sequence);

  // Longest cached prefix of `request`: matched length (tokens) and the node
  // it ends at. O(matched length) expected: one hash probe per edge entered
  // plus a SIMD compare. Never modifies the trie; safe to call from many
  // threads at once.
  Match MatchPrefix(TokenSpan request) const;

  // Nodes excluding the root (= the largest node ID). O(1).
  std::uint64_t node_count() const { return node_count_; }
  // Capacity (SPEC §8) is being implemented; until then only the unbounded
  // index exists and these members give its behaviour.
  explicit RadixTrie(const CacheOptions& options) : RadixTrie() {
    if (options != CacheOptions{}) {
      throw std::invalid_argument("RadixTrie: capacity not implemented yet");
    }
  }
  Match Access(TokenSpan request) {
    const Match match = MatchPrefix(request);
    Insert(request);
    return match;
  }
  std::uint64_t evicted_count() const { return 0; }
  const CacheOptions& options() const {
    static const CacheOptions unbounded;
    return unbounded;
  }
  void SetEvictionListener(EvictionListener) {}

  // Edges excluding the root edge: branch points and chunk boundaries, not
  // nodes. O(1).
  std::uint64_t edge_count() const { return edges_.size() - 1; }

  // Heap bytes: arena chunks, the edge vector and the hash table, each as
  // the malloc chunk it occupies (capacity, not size). O(1).
  std::size_t memory_bytes() const;

 private:
  using EdgeIndex = std::uint32_t;
  static constexpr EdgeIndex kRootEdge = 0;

  struct Edge {
    const Token* tokens;  // the run, in the arena
    NodeId first_id;      // ID of the node at position 0 of the run
    std::uint32_t length;
  };

  // Where a walk from the root stops: `offset` tokens into `edge` (the
  // whole edge when the walk went past it), `matched` request tokens in all.
  struct Position {
    std::size_t matched = 0;
    EdgeIndex parent = kRootEdge;
    EdgeIndex edge = kRootEdge;
    std::uint32_t offset = 0;
  };

  static std::uint64_t ChildKey(EdgeIndex parent, Token token) {
    return (std::uint64_t{parent} << 32) | static_cast<std::uint32_t>(token);
  }

  Position Walk(TokenSpan sequence) const;
  NodeId NodeAt(const Position& position) const;
  // True if new tokens below `edge` can be appended to its run in place
  // (while the current chunk has room).
  bool Extendable(EdgeIndex edge) const;
  // Edges that appending `tokens` new tokens to the arena creates, the
  // first piece extending an existing edge in place if `extend` is true.
  std::uint64_t NewEdgesFor(std::size_t tokens, bool extend) const;
  // Cuts `edge` (a child of `parent`) after `offset` tokens; returns the new
  // edge holding the upper part.
  EdgeIndex Split(EdgeIndex parent, EdgeIndex edge, std::uint32_t offset);
  // Writes `suffix` to the arena below the last node of `edge`; returns the
  // ID of the last node created.
  NodeId Append(EdgeIndex edge, TokenSpan suffix);
  void AddChunk();

  std::vector<Edge> edges_;
  absl::flat_hash_map<std::uint64_t, EdgeIndex> children_;
  std::vector<std::unique_ptr<Token[]>> chunks_;
  Token* arena_end_ = nullptr;    // next free token in chunks_.back()
  Token* chunk_limit_ = nullptr;  // one past the end of chunks_.back()
  std::size_t next_chunk_tokens_ = kFirstChunkTokens;
  // The edge whose run ends at arena_end_ (its last node is the newest
  // node), or kRootEdge when arena_end_ starts a fresh chunk.
  EdgeIndex newest_edge_ = kRootEdge;
  std::size_t chunk_bytes_ = 0;  // malloc bytes of all chunks
  std::uint64_t node_count_ = 0;
  std::uint64_t max_edges_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_OPTIMIZED_RADIX_TRIE_H_
