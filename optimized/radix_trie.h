// RadixTrie: a path-compressed (radix) trie whose edges hold whole token runs
// stored in an arena, with node IDs implicit in the run position; bounded,
// it is a SPEC §8 cache that evicts a run's tail, or a whole run, at once.
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
//     the node is created, so a new run is one contiguous arena range in ID
//     order;
//   * splitting an edge cuts its run in two contiguous pieces, each still
//     consecutive in ID.
// So an edge is (pointer to its run in the arena, ID of its first node,
// length), and position k of the edge is node first_id + k. IDs along a path
// need not be consecutive across edges: after [1,2], [1,3], [9], [1,2,3,4]
// the path 1,2,3,4 has IDs 1,2,5,6, so [3,4] is a new child edge of the edge
// holding [2], not an extension of it.
//
// Memory layout
//   chunks_    the token arena: chunks of 256, 512, ... up to 2^21 tokens
//              (8 MiB), never reallocated, so edges keep raw pointers into
//              them and growth touches each page once (no doubling copy).
//              Chunks from 2 MiB on are on transparent huge pages
//              (kvprefix/huge_pages.h): the 8 MiB ones are malloc'd, not
//              2 MiB-aligned, so 3 of their 4 huge pages qualify, which cut
//              token-mode replay's page faults 92,000 -> ~30,000 (a 1 MiB
//              cap held no whole huge page). Only a bounded cache's
//              compaction (below) moves runs, into fresh chunks. An
//              edge's run never crosses a chunk boundary; an insert whose
//              new run reaches the end of a chunk continues as a single
//              child edge in the next one.
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
//   * every non-root edge present has length >= 1 and exactly one children_
//     entry pointing to it, keyed by its parent edge and its first token;
//   * the children of an edge have pairwise distinct first tokens;
//   * newest_edge_, unless it is the root, is a leaf whose run ends at the
//     arena's write position and whose last node has the largest ID given
//     so far: the next insert that continues it may extend it in place
//     (while the current chunk has room, and, bounded, if the policy's
//     kTouchSetsState holds) and its new nodes stay consecutive in ID.
//     Splitting it keeps this true, since the lower part keeps the edge's
//     index; anything else that breaks it (an eviction from it, IDs
//     skipped for nodes never stored) resets newest_edge_ to the root.
//
// Insert walks like MatchPrefix. If the sequence ends on the path, the node
// reached is returned and nothing changes. If it leaves the path inside an
// edge, the edge is split: a new edge takes its upper part and its place in
// children_, and the old edge keeps its index and its children (so a split
// is O(1) whatever the fan-out below). The unmatched suffix is then copied
// to the arena and attached as new child edge(s), or appended to the leaf
// edge in place when that leaf is the newest run in the current chunk.
// Access is one walk: its position is both the answer (SPEC §8 step 1) and
// where the insert starts.
//
// MatchPrefix walks from the root: one hash probe for the first token of the
// next edge, then a SIMD compare of the request against the edge's run. It
// never writes, so concurrent matches are safe.
//
// A cache with a capacity (SPEC §8)
// ---------------------------------
// Unbounded (CacheOptions{}, the default) none of what follows exists: no
// policy state is written, no leaf heap is kept, the code path is the one
// above. Bounded, the engine adds (written once for every policy type of
// kvprefix/cache_model.h, dispatched once per insert by VisitPolicy):
//   links_        per edge {parent edge, child count} (8 bytes), a vector
//                 parallel to edges_;
//   states_       per edge the policy's State, shared by the edge's nodes
//                 (PolicyStates): lru's stamp (8 bytes), lfu's count and
//                 stamp (16), nothing for fifo;
//   leaves_       the leaf edges as a LeafHeap (kvprefix/leaf_heap.h, the
//                 lazy binary min-heap the optimized engines share) of {key,
//                 edge}, one heap per policy's key type (PolicyLeafHeap;
//                 16 bytes an entry for lru and fifo): key = the policy's
//                 LeafKey of the edge's last node (lru: its stamp; fifo: its
//                 ID);
//   free_edges_   indices of removed edges, given again before edges_ grows;
//   last_id_      the largest ID given, separate from node_count_ (present).
//
// Node IDs. IDs of evicted nodes are never given again (SPEC §8 step 2), so
// a re-inserted prefix gets IDs above every earlier one: it is never
// consecutive with the run it continues and becomes a new child edge.
// In-place extension stays correct by the newest_edge_ invariant above.
//
// Policy state per edge, not per token. Every node of an edge has the same
// state: a new edge's nodes are created and touched by the request together;
// a touch (SPEC §8 step 3) covers whole edges, because the path of an insert
// ends at the end of an edge, except when the request ends inside an edge
// (it is a prefix of a longer cached run), and then that edge is split there
// whenever the policy keeps state (a split that adds no branch; IDs stay
// consecutive in each part) so the upper part gets the touched state and the
// lower part keeps its own. The newest run grows in place only under a
// policy whose touch sets the state outright (kTouchSetsState: lru, fifo);
// under lfu its old nodes' counts exceed the new nodes' 1, so the new nodes
// get an edge of their own. Evictions take a run's tail, which keeps the
// rest uniform. Since the path is a chain of ancestors, the touch climbs
// parent links from the deepest edge: O(edges on the path). The same climb
// lets Access(request, on_run) report each matched edge's old stamp and
// matched length, root first, before the touch: the runs that LruCurve's
// one-pass stack distances (kvprefix/lru_curve.h) need, one per edge. fifo
// keeps no state and skips both the touch and those splits.
//
// Eviction (SPEC §8 step 4) at run granularity. A node is a leaf exactly
// when it is the last node of an edge with no child edge, so the policy's
// leaf is the last node of the leaf edge with the smallest key. Once that
// edge is chosen, its tail nodes are the next victims, deepest first (the
// policy's kRunTailLeavesAtOnce, which the engine static_asserts):
//   * lru (and lfu, whose key is (count, stamp)): leaf stamps are unique
//     (SPEC §8), so the chosen edge's key is smaller than every other
//     leaf's. Evicting its last node makes the node above it a leaf with the
//     same state, again the smallest; this holds while the edge has nodes
//     left.
//   * fifo: the chosen edge's last node has ID k, smaller than every other
//     leaf's; the node above it has ID k - 1 (IDs are consecutive along a
//     run), smaller still.
// So while more than `capacity` nodes are present, the engine pops the smallest
// valid heap entry and evicts min(excess, length) tokens from that edge's tail
// in one step (one listener call with that span), by kvprefix/cache_model.h's
// EvictLeaves. An edge left empty is removed; its parent may become a leaf:
// it is evicted at once if no entry's key is below its own, else it enters
// the heap. SGLang's
// RadixCache evicts the same way, by LRU over leaf edges in a heap
// (RadixCache.evict in python/sglang/srt/mem_cache/radix_cache.py pops the
// least recently used leaf, frees its whole run and pushes its parent once that
// is a leaf); SPEC §8 counts nodes exactly, so this engine takes only the tail
// it needs and keeps the rest of the run. Under a policy whose
// kKeepsFirstCapacityNodes holds (lru, fifo), a request longer than the
// capacity C keeps only its first C nodes: every other node, then its own
// tail, deepest first, would be evicted (its stamp is the newest, its tail's
// IDs the largest), so the tail past C is never stored; its IDs,
// evicted_count() and the listener are as if it had been. Nodes on the path
// of the current request are never evicted otherwise, so Insert returns the
// deepest node it stored. Under any other policy (lfu: a new tail's count 1
// may be below an old leaf's) the whole request is stored and then evicted
// from like any other nodes, its own path's edges included, and Insert walks
// the sequence again for the deepest node still present. These steps are
// the layer's InsertBounded (kvprefix/bounded_insert.h), written once for
// the three tries; this engine's primitives take them its own way: the walk
// touches nothing, and Grow cuts the edge the walk stopped inside, appends
// the new run (extending the newest one in place when kTouchSetsState
// allows), then touches the path edge by edge, since a cut copies the
// edge's state to its upper part; its limit check walks only when the edges
// the insert could need at most would pass max_edges.
//
// The heap is lazy: an entry is valid while its edge is present, a leaf,
// and has that key. Every leaf edge present has a valid entry: one is pushed
// whenever an edge becomes a leaf or a leaf's key changes (the deepest edge
// of each insert; the rest of a tail-evicted edge; a parent left without
// children). Keys among leaves are unique, so the smallest valid entry is
// the policy's leaf. Stale entries are dropped when popped
// (LeafHeap::PopCurrent, which throws NoEvictableLeafError should the heap
// run empty while nodes are over capacity), and after every bounded insert
// the heap is rebuilt from edges_ when it holds more than 2 * slots + 64
// entries (LeafHeap::EntryBound over edges_'s slots), so it stays
// proportional to the edges. An insert that throws midway marks the heap
// stale (a new leaf may lack an entry) and the next eviction rebuilds it.
//
// Memory stays proportional to the nodes present, not to the nodes ever
// created: removed edge indices are reused (edges_, children_ and the heap keep
// the size of the most edges present at once, at most 2C since every edge holds
// a node and an insert stores at most C; 2(C + the longest request) under a
// policy that stores whole requests), and evicted tokens stay in the arena
// only until they outnumber the live ones (plus 256); then the arena is
// compacted: every live run is copied, in edge order, into fresh chunks sized
// to the live tokens, edge pointers are updated, and the old chunks freed (the
// newest edge is copied last, so it stays extendable). The copy costs O(live
// tokens + edges), paid for by at least as many evicted tokens since the last
// compaction: amortized O(1) per inserted token. While it runs, the old and new
// arenas coexist (up to about 3x the live tokens).
//
// Complexity: Insert and MatchPrefix are O(length) expected, with one hash
// probe per edge on the path plus a streaming compare; a split is O(1).
// Bounded, Insert adds O(edges on the path) for the touch and O(log E) per
// edge event (a leaf pushed, an edge chosen, an edge removed) over the E
// edges present, never per token, plus the amortized compaction. Nothing
// is recursive (a 200,000-token sequence or a 100,000-edge-deep chain costs
// no stack).
//
// Limits: edge indices are stored in 32 bits. Insert throws CapacityError,
// before changing anything, when it would need more than max_edges edges
// present (counted before the insert's own evictions). Node IDs are 64-bit;
// run lengths fit 32 bits since a run never exceeds one chunk.
#ifndef KVPREFIX_OPTIMIZED_RADIX_TRIE_H_
#define KVPREFIX_OPTIMIZED_RADIX_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "kvprefix/bounded_insert.h"
#include "kvprefix/cache.h"
#include "kvprefix/cache_core.h"
#include "kvprefix/cache_model.h"
#include "kvprefix/huge_pages.h"
#include "kvprefix/leaf_heap.h"
#include "kvprefix/types.h"

namespace kvprefix {

class RadixTrie : public CacheCore {
 public:
  static constexpr std::string_view kName = "radix";
  // Largest number of edges (root excluded): edge indices are uint32.
  static constexpr std::uint64_t kMaxEdges =
      std::numeric_limits<std::uint32_t>::max();
  // Arena chunk sizes in tokens: the first chunk, and the cap reached by
  // doubling (8 MiB, so at most that much is allocated but unused; its
  // untouched pages take no memory, but count in memory_bytes()).
  static constexpr std::size_t kFirstChunkTokens = 256;
  static constexpr std::size_t kMaxChunkTokens = std::size_t{1} << 21;

  // An empty unbounded trie (root only) that holds at most `max_edges`
  // edges (1 <= max_edges <= kMaxEdges; tests lower it to reach the limit).
  explicit RadixTrie(std::uint64_t max_edges = kMaxEdges);

  // An empty cache with options.capacity nodes and options.policy (SPEC §8);
  // CacheOptions{} is the unbounded trie above, with no bookkeeping at all.
  // `max_edges` as above. Throws std::invalid_argument if options.page_size
  // is not 1 (pages are PagedIndex's job, kvprefix/paged_index.h).
  explicit RadixTrie(const CacheOptions& options,
                     std::uint64_t max_edges = kMaxEdges);

  // Inserts `sequence` (SPEC §1). Unbounded: returns the ID of the node its
  // last token reaches (kRootNode if empty); O(length) expected, plus an
  // arena chunk allocation when the current chunk is full.
  // Bounded: SPEC §8 steps 2-4 with the next stamp (insert with fresh IDs,
  // touch the path, evict leaves by the policy until at most `capacity`
  // nodes remain; lru and fifo store only the first `capacity` tokens, see
  // the design notes), calling the eviction listener for every run tail
  // evicted; returns the deepest node of the sequence's path still present
  // (kRootNode if none). O(length + edges evicted * log E) amortized.
  // Throws CapacityError, leaving the trie unchanged, if the insert needs
  // more than max_edges edges present. Throws std::bad_alloc on memory
  // exhaustion; the trie then stays valid and holds some prefix of
  // `sequence` (as ReferenceTrie does), possibly more than `capacity` nodes
  // until the next Insert evicts. Exceptions from the listener propagate
  // after the eviction they report is complete. Throws NoEvictableLeafError
  // (kvprefix/cache.h) if it must evict and finds no leaf edge, which no
  // policy reaches (SPEC §8: while nodes are present, a leaf is). Not
  // thread-safe.
  NodeId Insert(TokenSpan sequence);

  // Longest cached prefix of `request`: matched length (tokens) and the node
  // it ends at. O(matched length) expected: one hash probe per edge entered
  // plus a SIMD compare. Never modifies the trie (no touch); safe to call
  // from many threads at once.
  Match MatchPrefix(TokenSpan request) const;

  // The serving step: SPEC §8 steps 1-4 (SPEC §3's match-then-insert when
  // unbounded). Returns what MatchPrefix(request) returned before the
  // insert. One walk serves both; costs and errors as Insert. Not
  // thread-safe.
  Match Access(TokenSpan request);

  // Access that first reports each edge of the request's matched path, root
  // first, as on_run(stamp, nodes): the edge's stamp before this request
  // and how many of its nodes the match covers (the whole edge, or the part
  // above where the match ends). These are the runs of LruCurve
  // (kvprefix/lru_curve.h), one per edge instead of one per token. Requires
  // a bounded lru cache (the curve is lru's); throws std::logic_error
  // otherwise, before changing anything. Costs Access's plus O(edges on the
  // matched path). Not thread-safe.
  template <typename OnRun>
  Match Access(TokenSpan request, OnRun&& on_run) {
    if (!bounded_ || options().policy != EvictionPolicy::kLru) {
      throw std::logic_error("radix: per-edge runs need a bounded lru cache");
    }
    return AccessLru(request, [&](const Position& position) {
      path_.clear();
      for (EdgeIndex edge = position.edge; edge != kRootEdge;
           edge = links_[edge].parent) {
        path_.push_back(edge);
      }
      for (auto edge = path_.rbegin(); edge != path_.rend(); ++edge) {
        on_run(states_.Get<LruPolicy>(*edge).stamp,
               std::uint64_t{*edge == position.edge ? position.offset
                                                    : edges_[*edge].length});
      }
    });
  }

  // Nodes present, root excluded (= the largest node ID when unbounded).
  // O(1).
  std::uint64_t node_count() const { return node_count_; }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h). evicted_count(): nodes evicted so
  // far, each created node once, stored or not. The listener gets the
  // tokens of every eviction: one call per run tail evicted (a span into
  // the arena, or into the inserted sequence for a tail never stored), valid
  // only during the call. Only a bounded trie evicts.

  // Edges present excluding the root edge: branch points, chunk boundaries
  // and (bounded) recency boundaries, not nodes. O(1).
  std::uint64_t edge_count() const {
    return edges_.size() - 1 - free_edges_.size();
  }
  // Times the arena was compacted (bounded only; for tests and reports).
  // O(1).
  std::uint64_t compactions() const { return compactions_; }

  // Heap bytes: arena chunks, the edge vector, the hash table and, bounded,
  // the edge states, the leaf heap, the free list and the path scratch
  // vector, each as the malloc
  // chunk it occupies (capacity, not size). O(1).
  std::size_t memory_bytes() const;

 private:
  using EdgeIndex = std::uint32_t;
  static constexpr EdgeIndex kRootEdge = 0;

  struct Edge {
    const Token* tokens;   // the run, in the arena
    NodeId first_id;       // ID of the node at position 0 of the run
    std::uint32_t length;  // 0 only for the root and for removed edges
  };

  // What a bounded cache keeps per edge, beside edges_ (the policy's state
  // is in states_).
  struct EdgeLinks {
    EdgeIndex parent = kRootEdge;
    std::uint32_t children = 0;  // child edges present
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
  // Insert after the walk, unbounded and bounded.
  NodeId InsertAt(TokenSpan sequence, const Position& position);
  // Bounded: kvprefix/bounded_insert.h's InsertBounded, over the primitives
  // below (that header states what each must do).
  template <CachePolicy Policy, typename Trie, typename OnWalk>
  friend BoundedInsertResult InsertBounded(Trie&, TokenSpan, OnWalk&&);
  using Path = Position;
  // Access(request, on_run)'s insert: on_walk sees step 1's walk before the
  // touch.
  Match AccessLru(TokenSpan request,
                  absl::FunctionRef<void(const Position&)> on_walk);
  // How the insert at `position` of `new_tokens` new tokens grows the trie:
  // whether it cuts the edge the walk stopped inside, and whether it extends
  // the newest run in place.
  struct Growth {
    bool cut;
    bool extend;
  };
  template <typename Policy>
  Growth GrowthAt(const Position& position, std::size_t new_tokens) const;
  // Throws CapacityError if the stored tokens might need more edges than
  // the limit allows (walking only when the bound says they might).
  template <typename Policy>
  void CheckRoom(TokenSpan sequence, std::size_t stored) const;
  // Only walks: the touch waits for Grow's cut.
  template <typename Policy>
  Position WalkTouching(TokenSpan prefix, std::uint64_t) const {
    return Walk(prefix);
  }
  Match MatchAt(const Position& position) const {
    return Match{position.matched, NodeAt(position)};
  }
  // Cuts, appends, then touches the path.
  template <typename Policy>
  void Grow(Position& position, TokenSpan tokens, std::uint64_t stamp);
  void SkipIds(std::uint64_t count);
  // Walks `sequence` again.
  Position DeepestLeft(TokenSpan sequence, const Position&) const {
    return Walk(sequence);
  }
  template <typename Policy>
  void Tidy();
  // Throws CapacityError unless `new_edges` more edges fit.
  void CheckEdgeLimit(std::uint64_t new_edges, std::size_t new_tokens) const;
  // True if new tokens below `edge` can be appended to its run in place
  // (while the current chunk has room).
  bool Extendable(EdgeIndex edge) const;
  // Edges that appending `tokens` new tokens to the arena creates, the
  // first piece extending an existing edge in place if `extend` is true.
  std::uint64_t NewEdgesFor(std::size_t tokens, bool extend) const;
  // Bounded: an index for a new edge, a removed one or a new slot, left at
  // free_edges_.back(); the caller pops it once the edge is linked, so a
  // throw in between loses nothing.
  EdgeIndex FreeEdgeIndex();
  // Cuts `edge` (a child of `parent`) after `offset` tokens; returns the new
  // edge holding the upper part.
  template <bool kBounded>
  EdgeIndex Split(EdgeIndex parent, EdgeIndex edge, std::uint32_t offset);
  // Writes `suffix` (not empty) to the arena below the last node of `edge`,
  // extending `edge` in place if `extend` and Extendable(edge), else in new
  // edges, on each of which it calls on_new_edge(index) once it is linked;
  // returns the edge holding its last token, whose last node is the newest.
  template <bool kBounded, typename OnNewEdge>
  EdgeIndex Append(EdgeIndex edge, TokenSpan suffix, bool extend,
                   OnNewEdge&& on_new_edge);
  void AddChunk();

  // Bounded only, for the policy type of options().policy.
  // The policy's key of leaf edge `edge`: that of its last node.
  template <typename Policy>
  typename Policy::Key LeafKey(EdgeIndex edge) const {
    const Edge& run = edges_[edge];
    return states_.LeafKey<Policy>(edge, run.first_id + run.length - 1);
  }
  // Records that leaf edge `edge` has its current key.
  template <typename Policy>
  void PushLeaf(EdgeIndex edge) {
    leaves_.Get<Policy>().Push(LeafKey<Policy>(edge), edge);
  }
  template <typename Policy>
  void RebuildHeap();
  // SPEC §8 step 3 for the nodes present of request `request`'s path: the
  // edge `deepest` and its ancestors.
  template <typename Policy>
  void Touch(EdgeIndex deepest, std::uint64_t request);
  // The structure kvprefix/cache_model.h's EvictLeaves evicts from.
  template <typename Policy>
  class Leaves;
  // SPEC §8 step 4: evicts `count` nodes, run tails by the policy.
  template <typename Policy>
  void EvictLeaves(std::uint64_t count);
  // Evicts the last `count` nodes of leaf edge `edge` (1 <= count <=
  // length), removing the edge when nothing is left. Returns the edge that
  // is now a leaf with a new key: `edge` itself if shortened, its parent if
  // that was left without children, else nothing.
  std::optional<EdgeIndex> EvictTail(EdgeIndex edge, std::uint32_t count);
  // Copies the live runs into fresh chunks when dead tokens outnumber them.
  void MaybeCompact();
  void Compact();

  HugePageVector<Edge> edges_;
  HugePageHashMap<std::uint64_t, EdgeIndex> children_;
  std::vector<std::unique_ptr<Token[]>> chunks_;
  Token* arena_end_ = nullptr;    // next free token in chunks_.back()
  Token* chunk_limit_ = nullptr;  // one past the end of chunks_.back()
  std::size_t next_chunk_tokens_ = kFirstChunkTokens;
  // See the invariants: the newest leaf run, or kRootEdge.
  EdgeIndex newest_edge_ = kRootEdge;
  std::size_t chunk_bytes_ = 0;  // malloc bytes of all chunks
  std::uint64_t node_count_ = 0;
  std::uint64_t max_edges_;

  // The cache (SPEC §8); nothing below is touched when unbounded.
  bool bounded_ = false;
  std::uint64_t last_id_ = 0;      // largest ID given
  std::uint64_t dead_tokens_ = 0;  // arena tokens of evicted nodes
  std::uint64_t compactions_ = 0;
  bool heap_stale_ = false;          // some leaf may lack an entry: rebuild
  HugePageVector<EdgeLinks> links_;  // parallel to edges_
  // The policy's state of each edge, shared by its nodes
  // (kvprefix/cache_model.h): lru's stamp; nothing for fifo.
  PolicyStates<HugePageVector<std::uint64_t>> states_;
  PolicyLeafHeap<EdgeIndex> leaves_;  // every leaf edge, by key, lazily
  std::vector<EdgeIndex> free_edges_;
  std::vector<EdgeIndex> path_;  // scratch: Access's path, deepest first
};

}  // namespace kvprefix

#endif  // KVPREFIX_OPTIMIZED_RADIX_TRIE_H_
