// DoubleArrayTrie ("double-array"): a per-token dynamic double-array trie,
// unbounded (SPEC §1-§3) or a cache with a capacity (SPEC §8).
//
// Design essay
// ============
//
// Sources. The double array is Aoe's "An efficient digital search algorithm
// by using a double-array structure" (IEEE TSE 15(9), 1989): a node is a slot
// s in two parallel arrays, and the edge labelled c from s leads to slot
// t = base[s] + c, valid iff check[t] == s. Insertion into a full array and
// the choice of which sibling set to move follow cedar (Yoshinaga &
// Kitsuregawa, "A self-adaptive classifier for efficient text-stream
// processing", COLING 2014, and its implementation): when the slot a new edge
// needs is taken, move whichever of the two sibling sets (the new node's, or
// the occupant's) is smaller, moving EVERY sibling of it and re-pointing the
// check of each moved node's children. Moving only the new child -- a bug
// known from several double-array libraries -- silently loses the other
// siblings; tests/double_array_trie_test.cc has the regression test. Hash
// nodes (below) mix in the idea of the HAT-trie (Askitis & Sinha, "HAT-trie:
// a cache-conscious trie-based data structure for strings", ACSC 2007): an
// array layout where a node's children are dense, a hash table where they
// are sparse; here the switch is decided by memory (the density rule), and
// the table is one map keyed by (parent, token) as in optimized/hash_trie.h.
//
// Token codes. Labels must be small integers because siblings sit at
// base + code. A token t in [0, kDirectTokens) (every real vocabulary: Llama
// 3 has 128,256 tokens; Mooncake block hash ids) has code t + 1, exact and
// computed without any lookup. Any other int32 value (negatives, INT32_MAX,
// huge hashes) has a 29-bit hashed code past the direct range (Fibonacci
// hashing), which distinct tokens may share; such a node therefore carries
// its token as a label (tokens_[slot]) and a step along it checks the label
// too. tokens_ is allocated only when the first such token is stored, so a
// vocabulary-only trie pays nothing for it, and no token-to-code map is
// kept (one costs 10-20 bytes per distinct token; docs/design_history.md).
//
// Memory layout, per slot, in capacity-sized arrays:
//   cells_[s]  = {base, check}  8 bytes, int32 each: all that a match reads;
//   ids_[s]    = node ID         4 bytes (unbounded; IDs < slots < 2^30) or
//   ids64_[s]                    8 bytes (bounded: IDs are never reused and
//                                may pass 2^32 over a long run);
//   tokens_[s] = label           4 bytes, see above (always when bounded);
//   states_    = policy state    the bounded policy's per-node State
//                                (kvprefix/cache_model.h's PolicyStates):
//                                lru's stamp, 8 bytes; fifo: none at all;
//   free_      = one bit (+1/64 bit per summary level): slot is free.
// Node IDs are creation order (SPEC §1) but slots move, hence ids_. The root
// is slot 0 with ID 0. A free slot has check == -1, which equals no parent
// slot, so a match needs no separate "is used" test; slot 0 has check -1 too
// and is never free, so no edge ever lands on the root. The arrays grow with
// realloc(), which glibc serves with mremap() for large blocks: no copy, no
// re-faulting of pages already touched, so capacity can grow by 1/16 at a
// time at little cost.
//
// Children enumeration (needed only to move nodes). Aoe's arrays cannot list
// the children of a node. cedar keeps two extra label fields per slot; that
// would cost 8 bytes per node. Here, because almost every node of a token
// trie has at most one child, one invariant does it for free:
//   a node at slot s is a hash node, or has an entry in `children_` (slot ->
//   codes of all its children), or has at most one child, and then that
//   child is at slot s + 1.
// Inserting a path of new nodes puts each node's child in the first free slot
// after it, which is s + 1 except at the end of a run of free slots; only
// then, and for branching nodes and moved nodes, is a `children_` entry made
// (up to 4 codes inline in the map slot, so a moved single-child node costs
// one 32-byte slot and no heap chunk). On the Mooncake workload 10.8 M nodes
// need 3,120 entries. As a bonus the nodes of one inserted path sit next to
// each other, so a match along it streams through memory instead of taking
// a miss per token.
//
// Hash nodes. A node whose children cannot be placed at base + code without
// wasting many slots keeps them in one global hash map instead, `edges_`:
// (parent slot, token) -> child slot, 12 bytes a slot (the root's in a map
// of its own, `root_edges_`: token -> child slot, 8 bytes a slot, since the
// root is the hash node with the most children by far, and there the
// table's size decides how often a probe misses the cache); its base is
// kHashBase (INT32_MIN), so base + code is negative and a match's bounds
// check fails on it -- the only way into the hash probe from the fast path,
// which therefore costs nothing where there are no hash nodes. A node
// becomes a hash node (ConvertToHashNode: its children stay where they are,
// O(children)) when a new child's family cannot be placed by the density
// rule below, when two siblings' hashed codes collide, and, bounded, at 64
// children (an eviction searches the parent's code list linearly). Its
// children then take any free slot. Hash nodes and their children never
// move (edges_ is keyed by slot and a hash node keeps no child list), so a
// family holding a hash node cannot be relocated: a conflict it would have
// to yield to makes the other side's parent a hash node instead. A hash node
// left without children becomes a plain leaf again.
//
// The root's children. The root is where a family spread over the whole
// vocabulary is the norm (requests' first tokens), so the density rule makes
// it a hash node as soon as its second child lands far from the first, and
// every match would then pay a hash probe at its first token. Unbounded, once
// the trie holds kRootTableNodes nodes and the root kRootTableChildren hashed
// children, root_children_ indexes them by token (direct tokens only;
// root_edges_ stays the record, the index a copy): one array read instead of
// the probe. It
// is built once and only grows, since an unbounded trie never removes a node
// and a hash node's children never move; bounded caches evict root children and
// keep the probe.
//
// The density rule. No placement may extend the used slots (used_end_,
// past which every slot is free) beyond 1.25 slots per node present plus
// kSlackSlots (1,024): a family whose codes are spread wider than that is
// hashed instead, and a new node that would extend them takes the lowest
// hole (a bounded cache after evictions). So slots stay <= 1.25 n + 1,024
// (times the 1/16 growth step) on any input, which is what bounds memory.
// Why: a family whose codes spread much wider than its size (children at
// tokens k * 2^16 or 2^18, alternating signs, random int32 tokens) finds no
// base inside the used slots, and placed past the end it leaves a hole as
// wide as its spread: thousands of bytes per node without the rule (the
// measurements are in docs/design_history.md).
//
// Insert walks like a match; at the first missing edge it adds a child:
//   * to a leaf s: child at f = first free slot > s, base[s] = f - code;
//   * to a hash node: any free slot (the first after s) and an edges_ entry;
//   * to an inner node s: the slot base[s] + code if free (and not far past
//     the last used slot, within the density rule); otherwise the
//     occupant's parent p and s compete: the one with fewer children is
//     moved to a new base where all its (for s: plus the new) codes are free
//     ("relocation"); if that fails (no allowed base, a hash node in the
//     family), s becomes a hash node.
//   The new base is searched where it fills holes: the smallest code at one
//   of the lowest free slots (bounded tries), else the largest code at one
//   of the first slots past the last used slot, else all codes past it --
//   the last two only within the density rule. Why not near the node or at
//   the end: the children of a node are spread over the vocabulary (two
//   random tokens are ~43,000 codes apart), so a family placed at the end
//   leaves a hole that wide, and the chains that follow start at the end too
//   and never fill it (docs/design_history.md).
//   The rest of the sequence then extends the fresh leaf, O(1) per token.
// Free slots are found with a hierarchical bitmap (64-ary, like a van Emde
// Boas layout flattened): "first free slot >= x" costs O(log64 slots), so the
// free-slot search is never quadratic.
//
// A cache with a capacity (SPEC §8). Bounded Insert is the layer's
// InsertBounded (kvprefix/bounded_insert.h: SPEC §8's steps in one order for
// the three tries), written once for every policy type of
// kvprefix/cache_model.h: VisitPolicy picks the type once per Insert,
// touches and new nodes' states go through PolicyStates, step 4 is the
// layer's EvictLeaves, and the engine reads the policy's traits only. It
// provides the primitives: its walk touches as it goes, and its Grow
// creates the new nodes before step 4 evicts (a new node's slot is placed
// by its parent's base, so slots freed first would not serve the chain in
// order, unlike hash's); after step 4 took nodes of the path the walk is
// repeated (an evicted slot keeps no parent). Only the insert's steps,
// step 4 and the heap rebuild are instantiated per policy type; the structure
// code (AddChild and what it calls: placing, relocating, hashing nodes) is
// templated on boundedness alone, so relocation copies a node's state as words
// (PolicyStates::Copy) and pushes a moved leaf's heap entry through a pointer
// to the policy's PushLeaf, set at construction (push_leaf_). A copy of the
// structure code per policy made GCC 12 outline the hash-map lookups that Evict
// and ChildCount inline (3.4% more instructions per bounded lru insert on the
// Mooncake synthetic trace in block mode). Bounded mode keeps, besides the
// layout above, the leaves in `leaves_`, a LeafHeap (kvprefix/leaf_heap.h, the
// lazy binary min-heap the optimized engines share; PolicyLeafHeap, one per key
// type) of (policy key, slot). An entry is current while its slot holds a leaf
// whose key is still that key; every leaf has a current entry, pushed when it
// becomes a leaf (the deepest new node of an insert, a parent whose last child
// goes), when its key changes while it is a leaf (a request ending at it), and
// when relocation moves it (MoveNode moves IDs, states and labels with the
// node, and the old entry dies with the old slot). So the first current entry
// is exactly the leaf §8 step 4 names (LeafHeap::PopCurrent;
// NoEvictableLeafError should the heap run empty); stale entries are dropped
// when popped, and all of them once the heap holds more than 2 * nodes + 64
// entries after an insert (LeafHeap::EntryBound): the heap is then rebuilt from
// the slots below used_end_. Room for one entry is made before an insert
// touches or creates anything (so a throw still leaves every leaf an entry),
// doubling the heap's vector when full (LeafHeap::Reserve: amortized O(1) per
// entry; reserving exactly one more would copy the whole heap on every insert);
// step 4 pushes at most one entry per entry it pops, so it needs no room of its
// own. Insert = walk (touching every node on the path), create, push the new
// leaf, evict while over capacity. An evicted slot is freed at once (bitmap
// bit, check = -1) and its code removed from the parent's children_ entry, or
// edges_ entry for a hash node; a parent left childless is usually the next
// victim (the rest of a chain: its fifo ID is smaller, its lru stamp the same
// unless a request ended at it), so it is evicted directly when no entry's key
// is below its key (LeafHeap::NoneBelow), without a heap round trip. Where the
// policy's kKeepsFirstCapacityNodes holds (lru, fifo), a request longer than C
// keeps only its first C nodes and every other node goes first (the path holds
// the newest stamp, and under fifo its new tail the largest IDs), so only those
// C are stored; the rest get their IDs, count as evicted and are reported to
// the listener, never stored. Under a policy without it every new node is
// stored and step 4 may evict the path's own nodes; the insert then walks the
// sequence again for the deepest node of its path still present. The unbounded
// index runs separate instantiations of the hot paths (kBounded = false) and
// keeps no policy state, 64-bit IDs, labels or heap: its only costs are a
// compare when a new node would extend the used slots and one when a match step
// misses.
//
// Complexity. Match: O(matched length), two array reads per token (plus a
// label read past the direct range, and one hash probe per hash node on the
// path). Insert: O(length) plus, per relocation, O(moved nodes * their
// child count + kMaxBaseTries * codes); moving the smaller sibling set keeps
// wide nodes (100,000 children at the root) cheap, since a conflict against
// them moves the other, small family. Bounded: plus O(log leaves) per
// eviction that goes through the heap, amortized. Nothing is recursive.
//
// Limits. Slots and bases are 32-bit: slot indices and codes stay below
// 2^30 (so base = slot - code never overflows int32), and a slot beyond that
// throws CapacityError before any value could wrap; a bounded cache needs at
// most about 1.33 (C + 1) + 1,024 slots (C + the request's new nodes in
// place of C under a policy that stores a whole request before evicting),
// so C up to about 800 million nodes. Unbounded IDs are 32-bit but below the
// slot count; bounded IDs are 64-bit. An insert that throws keeps the nodes it
// created before the failure (the trie stays valid, as the reference's does on
// bad_alloc); a bounded cache may then hold more than C nodes until its next
// Insert.
#ifndef KVPREFIX_OPTIMIZED_DOUBLE_ARRAY_TRIE_H_
#define KVPREFIX_OPTIMIZED_DOUBLE_ARRAY_TRIE_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "kvprefix/bounded_insert.h"
#include "kvprefix/cache.h"
#include "kvprefix/cache_core.h"
#include "kvprefix/cache_model.h"
#include "kvprefix/huge_pages.h"
#include "kvprefix/leaf_heap.h"
#include "kvprefix/types.h"

namespace kvprefix {

class DoubleArrayTrie : public CacheCore {
 public:
  static constexpr std::string_view kName = "double-array";

  // Tokens in [0, kDirectTokens) map to code token + 1 without lookup.
  static constexpr std::uint32_t kDirectTokens = 1u << 18;
  // Default and largest slot limit: slot indices and codes stay below 2^30.
  static constexpr std::size_t kMaxSlots = std::size_t{1} << 30;

  // An unbounded index holding only the root (SPEC §1-§3).
  DoubleArrayTrie() : DoubleArrayTrie(CacheOptions{}, kMaxSlots) {}
  // An unbounded index that throws CapacityError once it would need more
  // than `max_slots` slots (2 <= max_slots <= kMaxSlots); tests lower it to
  // reach the limit quickly. Throws std::invalid_argument outside that range.
  explicit DoubleArrayTrie(std::size_t max_slots)
      : DoubleArrayTrie(CacheOptions{}, max_slots) {}
  // A cache with options.capacity and options.policy (SPEC §8);
  // CacheOptions{} is the unbounded index, which keeps no recency state at
  // all. Throws std::invalid_argument if options.page_size != 1 (pages are
  // PagedIndex's job) or max_slots is outside [2, kMaxSlots].
  explicit DoubleArrayTrie(const CacheOptions& options,
                           std::size_t max_slots = kMaxSlots);

  // Inserts `sequence` (SPEC §1). Unbounded: returns the ID of the node its
  // last token reaches (kRootNode if empty). Bounded: SPEC §8 steps 2-4 with
  // the next stamp (insert, touch the path, evict leaves by the policy while
  // more than `capacity` nodes are present), and returns the ID of the
  // deepest node of the path still present (kRootNode if none): under lru
  // and fifo that of its first min(length, capacity) tokens. Where the
  // policy keeps a long request's first C nodes (kKeepsFirstCapacityNodes),
  // nodes that would be evicted at once are never stored but get IDs, count
  // in evicted_count() and reach the listener as if they had been.
  // Amortized O(length) plus relocations (see the essay), plus O(log
  // leaves) per eviction, plus a second walk of the sequence when a policy
  // without that trait evicts. Throws CapacityError when a slot beyond
  // the limit would be needed, std::bad_alloc on memory exhaustion; nodes
  // created before a throw stay (the trie stays valid, but a bounded cache may
  // then hold more than `capacity` nodes until the next Insert). Throws
  // NoEvictableLeafError (kvprefix/cache.h) if it must evict and finds no
  // leaf, which no policy of SPEC §8 reaches. Requires exclusive
  // access.
  NodeId Insert(TokenSpan sequence);

  // The longest cached prefix of `request` and the node it ends at. Never
  // touches (recency changes only on Insert/Access). O(matched tokens): two
  // array reads per token, plus a label read for a token outside the direct
  // range and a hash probe at a node whose children are hashed (see the
  // essay). Never throws; safe to call from many threads at once, and
  // concurrently with the other const members.
  Match MatchPrefix(TokenSpan request) const;

  // The serving step, SPEC §8 steps 1-4 (SPEC §3's match-then-insert when
  // unbounded): what MatchPrefix(request) answered before Insert(request).
  // Costs and errors as the two calls. Requires exclusive access.
  // With match limit all-but-last the match stops at n - 1 tokens (SPEC
  // §9.1) while the insert takes the whole request.
  Match Access(TokenSpan request);

  // Nodes present, root excluded. O(1). Unbounded, also the largest ID.
  std::uint64_t node_count() const { return stored_; }
  // options(), evicted_count() and SetEvictionListener() are CacheCore's
  // (kvprefix/cache_core.h). evicted_count(): nodes evicted so
  // far, stored or not (SPEC §8). The listener gets every eviction: once per
  // Insert, with the tokens of all nodes it evicted (never-stored ones in a
  // separate call), in no particular order. Unbounded indexes never call
  // it.

  // Heap bytes: every array's capacity, the bitmap, the hash maps and their
  // children lists, the leaf heap, with malloc chunk overhead. O(number of
  // children_ entries).
  std::size_t memory_bytes() const;

  // Diagnostics for tests and benchmarks, O(1): slots in use or free (the
  // array length); node moves made by relocations so far; nodes whose
  // children are hashed (see the essay) and the edges they hold.
  std::size_t slot_count() const { return size_; }
  std::uint64_t relocated_nodes() const { return relocated_nodes_; }
  std::size_t hash_node_count() const { return hash_children_.size(); }
  std::size_t hashed_edge_count() const {
    return edges_.size() + root_edges_.size();
  }
  // The code of `token` (see the essay): token + 1 in [0, kDirectTokens),
  // a 29-bit hash past it that distinct tokens may share. Tests use it to
  // build colliding siblings. Pure, O(1), thread-safe.
  static std::uint32_t TokenCode(Token token) { return CodeOf(token); }

 private:
  struct Cell {
    std::int32_t base;   // kHashBase: the children are in edges_
    std::int32_t check;  // parent slot; -1 for a free slot and the root
  };
  // The base of a hash node. Any base + code is negative, so a match's
  // bounds check fails on it and only then looks at edges_.
  static constexpr std::int32_t kHashBase =
      std::numeric_limits<std::int32_t>::min();

  // A trivially copyable array grown by realloc (see the essay: mremap); on
  // small pages, since advising it for huge pages made realloc copy.
  template <typename T>
  class ReallocArray {
   public:
    T* data() const { return data_.get(); }
    T& operator[](std::size_t i) const { return data_.get()[i]; }
    std::size_t capacity() const { return capacity_; }
    // Changes the capacity to `capacity` elements, keeping the contents.
    // Throws std::bad_alloc.
    void Reallocate(std::size_t capacity);

   private:
    struct Free {
      void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T[], Free> data_;
    std::size_t capacity_ = 0;
  };

  // A set of slot indices as a 64-ary hierarchy of bitmaps: level 0 has one
  // bit per slot, level k+1 one bit per nonzero word of level k.
  class SlotBitmap {
   public:
    static constexpr std::size_t kNone = ~std::size_t{0};
    // Grows to `size` bits; the new bits are set. O(size / 64).
    void GrowSet(std::size_t size);
    bool Test(std::size_t i) const {
      return (levels_[0][i >> 6] >> (i & 63)) & 1;
    }
    void Set(std::size_t i);
    void Clear(std::size_t i);
    // The smallest set index >= i, or kNone. O(log64 size); inline for the
    // common case, a set bit in the same word.
    std::size_t NextSet(std::size_t i) const {
      const std::size_t w = i >> 6;
      if (w < levels_[0].size()) {
        const std::uint64_t word =
            levels_[0][w] & (~std::uint64_t{0} << (i & 63));
        if (word != 0) return (w << 6) | std::countr_zero(word);
      }
      return NextSetAbove(i);
    }
    std::size_t memory_bytes() const;

   private:
    std::size_t NextSetAbove(std::size_t i) const;

    std::size_t size_ = 0;  // bits
    std::vector<std::vector<std::uint64_t>> levels_;
  };

  // Codes of a node's children. Up to kInlineCodes live inside the map slot
  // (no heap chunk): most entries are moved single-child nodes.
  static constexpr std::size_t kInlineCodes = 4;
  using Codes = absl::InlinedVector<std::uint32_t, kInlineCodes>;

  // An edge of a hash node: (parent slot, child token), 8 bytes, so that
  // an edges_ slot is 12 bytes. The token, not the code: hashed codes may
  // collide.
  struct EdgeKey {
    std::uint32_t parent;
    std::uint32_t token;
    friend bool operator==(const EdgeKey&, const EdgeKey&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const EdgeKey& key) {
      return H::combine(std::move(h),
                        std::uint64_t{key.parent} << 32 | key.token);
    }
  };

  // The code of `token`: token + 1 in the direct range (exact), else a hash
  // in [kDirectTokens + 1, kDirectTokens + 1 + 2^29) that any number of
  // tokens may share, so a node reached along one is checked against its
  // label (tokens_).
  static std::uint32_t CodeOf(Token token) {
    const auto u = static_cast<std::uint32_t>(token);
    return u < kDirectTokens ? u + 1 : kDirectTokens + 1 + HashedCode(u);
  }
  static std::uint32_t HashedCode(std::uint32_t u) {
    return (u * 0x9E3779B1u) >> 3;  // Fibonacci hashing, 29 bits
  }
  // The token of the node at `t`, whose code is `code`.
  Token TokenAt(std::int64_t t, std::uint32_t code) const {
    return code <= kDirectTokens ? static_cast<Token>(code - 1) : tokens_[t];
  }

  // The child of slot `s` along `token`, or -1; any node, hash nodes too.
  std::int64_t Child(std::int64_t s, Token token) const {
    const std::uint32_t code = CodeOf(token);
    const std::int64_t t = std::int64_t{cells_[s].base} + code;
    if (static_cast<std::uint64_t>(t) < size_ && cells_[t].check == s &&
        (code <= kDirectTokens || tokens_[t] == token)) {
      return t;
    }
    return cells_[s].base == kHashBase ? HashChild(s, token) : -1;
  }
  std::int64_t HashChild(std::int64_t s, Token token) const;
  // Where a match has got to: `matched` tokens, ending at `slot`.
  struct Walk {
    std::size_t matched;
    std::int64_t slot;
  };
  // MatchPrefix's hot loop: follows array edges (direct and hashed codes)
  // from `walk` while the request's next token has one; stops at the end,
  // at a missing edge or at a hash node. Not inlined, so that the loop has
  // no call in it: with HashChild's call inside, GCC kept the slot on the
  // stack, a store on every token.
  [[gnu::noinline]] Walk WalkArrays(TokenSpan request, Walk walk) const;

  bool IsFree(std::int64_t t) const {
    return static_cast<std::size_t>(t) >= size_ || free_.Test(t);
  }
  void Occupy(std::int64_t t) {
    free_.Clear(t);
    used_end_ = std::max(used_end_, static_cast<std::size_t>(t) + 1);
  }
  // Whether the used slots may extend to `new_end` when `added` more nodes
  // are stored: the density rule of the essay.
  bool Affordable(std::size_t new_end, std::size_t added) const {
    const std::size_t nodes = stored_ + 1 + added;  // the root holds slot 0
    return new_end <= used_end_ || new_end <= nodes + nodes / 4 + kSlackSlots;
  }
  // Makes slots [0, size) exist (new ones free). Throws CapacityError.
  void EnsureSize(std::size_t size);
  // The first free slot >= from, growing the array if there is none.
  std::size_t NextFree(std::size_t from);
  // A free slot for one new node next to the used slot from - 1: the first
  // one >= from, unless that would extend the used slots past what the
  // density rule allows (bounded, after evictions); then the lowest free
  // slot.
  template <bool kBounded>
  std::size_t FreeSlotFor(std::size_t from);
  // Finds a base b such that every b + code is a free slot >= 1 that
  // exists, within the density rule for `added` new nodes: in the holes
  // below used_end_ if a bounded search finds one, else close to
  // used_end_. Returns false if only a placement the density rule forbids
  // would do. O(kMaxBaseTries * codes * log64 slots).
  bool FindBase(const Codes& codes, std::size_t added, std::int64_t& base);

  // Puts a new node, child of `parent` along `token` (whose code is
  // `code`), at free slot `t`; returns t.
  template <bool kBounded>
  std::int64_t CreateNode(std::int64_t t, std::int64_t parent, Token token,
                          std::uint32_t code);
  // Adds a child along `token` to the leaf at `s`; returns the child's slot.
  template <bool kBounded>
  std::int64_t AddChildToLeaf(std::int64_t s, Token token);
  // Adds a child along `token` to the node at `s` (any node); returns the
  // child's slot. May move nodes, `s` included (then `s` is updated).
  template <bool kBounded>
  std::int64_t AddChild(std::int64_t& s, Token token);
  // Adds a child to hash node `s`: any free slot, an edges_ entry (and,
  // unbounded, a root_children_ entry, building that index once the root
  // qualifies).
  template <bool kBounded>
  std::int64_t AddHashChild(std::int64_t s, Token token);
  // Adds the hashed edge (s, token) -> t, to root_edges_ for the root and
  // to edges_ for any other node; RemoveEdge removes it. Amortized O(1).
  void AddEdge(std::int64_t s, Token token, std::int64_t t);
  void RemoveEdge(std::int64_t s, Token token);
  // Builds root_children_ from root_edges_, plus the child at `t` along `token`
  // being added. O(kDirectTokens + hash edges), once per index.
  void IndexRootChildren(std::int64_t t, Token token);
  // When an unbounded root that is a hash node gets root_children_: at
  // kRootTableNodes nodes the index's 1 MiB is at most 16 bytes a node,
  // and at kRootTableChildren hashed children of the root it saves a probe
  // on many distinct first tokens.
  static constexpr std::uint64_t kRootTableNodes = std::uint64_t{1} << 16;
  static constexpr std::uint32_t kRootTableChildren = 1024;
  // Unbounded: allocates tokens_ before the first token outside the direct
  // range is stored.
  void EnsureLabels();
  // Makes `s` (a non-leaf, not a hash node) a hash node: its children stay
  // where they are and get edges_ entries. O(children).
  void ConvertToHashNode(std::int64_t s);
  // Appends the codes of the children of slot `s` (not a hash node).
  void AppendChildren(std::int64_t s, Codes& out) const;
  // Number of children of slot `s`. O(1) expected.
  std::size_t ChildCount(std::int64_t s) const;
  // Moves all children of `n` to a new base where they and the code of
  // `extra` fit and records the new child list; if `extra` is given, also
  // creates the child along it. `tracked` is updated if the node it names
  // moves. Returns false, changing nothing, if a child of `n` is a hash node
  // (they never move), the extra code equals a child's (hashed codes
  // collide), or FindBase finds no allowed base.
  template <bool kBounded>
  bool MoveChildren(std::int64_t n, const Token* extra, std::int64_t& tracked);
  // Moves the node at `from` (a child of `parent`) to free slot `to`.
  template <bool kBounded>
  void MoveNode(std::int64_t from, std::int64_t to, std::int64_t parent);

  NodeId IdAt(std::int64_t s) const {
    return bounded_ ? ids64_[s] : NodeId{ids_[s]};
  }

  // Follows `sequence` from the root by Child (Insert's walk, not
  // MatchPrefix's hot loop) as far as edges exist, calling visit(slot) on
  // every node reached.
  template <typename Visit>
  Walk WalkChildren(TokenSpan sequence, Visit&& visit) const;
  NodeId InsertUnbounded(TokenSpan sequence);
  // Bounded: kvprefix/bounded_insert.h's InsertBounded, over the primitives
  // below (that header states what each must do), for the cache's policy
  // type (VisitPolicy picks it once per Insert).
  template <CachePolicy Policy, typename Trie, typename OnWalk>
  friend BoundedInsertResult InsertBounded(Trie&, TokenSpan, OnWalk&&);
  using Path = Walk;
  // Makes room for one more leaf-heap entry (a slot past the limit throws
  // in AddChild instead).
  template <typename Policy>
  void CheckRoom(TokenSpan, std::size_t);
  template <typename Policy>
  Walk WalkTouching(TokenSpan prefix, std::uint64_t stamp);
  Match MatchAt(const Walk& walk) const {
    return Match{walk.matched, ids64_[walk.slot]};
  }
  // Creates the chain, then (the layer's step 4) evicts.
  template <typename Policy>
  void Grow(Walk& walk, TokenSpan tokens, std::uint64_t stamp);
  void SkipIds(std::uint64_t count) { next_id_ += count; }
  // Walks `sequence` again.
  Walk DeepestLeft(TokenSpan sequence, Walk) const;
  // Bounded: the policy's key of the node at `s` if it is a leaf.
  template <typename Policy>
  typename Policy::Key LeafKey(std::int64_t s) const {
    return states_.LeafKey<Policy>(static_cast<std::size_t>(s), ids64_[s]);
  }
  // Bounded: records that the node at `s` is a leaf with its current key.
  template <typename Policy>
  void PushLeaf(std::int64_t s) {
    leaves_.Get<Policy>().Push(LeafKey<Policy>(s),
                               static_cast<std::int32_t>(s));
  }
  // Bounded: rebuilds the heap from the slots once stale and duplicate
  // entries dominate (LeafHeap::RebuildIfOverfull).
  template <typename Policy>
  void Tidy();
  // Bounded: the structure kvprefix/cache_model.h's EvictLeaves evicts from.
  template <typename Policy>
  class Leaves;
  // Bounded: SPEC §8 step 4 for `count` nodes, smallest leaf key first.
  template <typename Policy>
  void EvictLeaves(std::uint64_t count);
  // Bounded: removes the leaf at `t` from the trie and frees its slot.
  // Returns its parent's slot if that is now a leaf (0 for the root), else
  // -1.
  std::int64_t Evict(std::int64_t t);

  // How far the used slots may run ahead of 1.25 slots per node (essay).
  static constexpr std::size_t kSlackSlots = 1024;

  bool bounded_ = false;
  std::size_t max_slots_;
  std::size_t size_ = 0;  // slots that exist: [0, size_) <= capacity
  // Every slot >= used_end_ is free: where FindBase falls back to, so that a
  // fallback does not grow the array past its unused tail.
  std::size_t used_end_ = 1;
  ReallocArray<Cell> cells_;
  ReallocArray<std::uint32_t> ids_;    // unbounded: node ID (< 2^30)
  ReallocArray<std::uint64_t> ids64_;  // bounded: node ID
  // Bounded: each slot's policy state (kvprefix/cache_model.h), e.g. lru's
  // stamp; no storage at all for a stateless policy.
  PolicyStates<ReallocArray<std::uint64_t>> states_;
  // The label: the token of a node with a hashed code (all nodes when
  // bounded); allocated at the first such token when unbounded.
  ReallocArray<Token> tokens_;
  SlotBitmap free_;            // bit set = slot free
  std::uint64_t stored_ = 0;   // nodes present, root excluded
  std::uint64_t next_id_ = 0;  // bounded: the last ID given
  std::uint64_t relocated_nodes_ = 0;
  HugePageHashMap<std::int32_t, Codes> children_;  // see the essay
  HugePageHashMap<EdgeKey, std::int32_t> edges_;   // hash nodes' edges
  HugePageHashMap<std::uint32_t, std::int32_t> root_edges_;  // the root's
  HugePageHashMap<std::int32_t, std::uint32_t> hash_children_;
  // Unbounded, once the root is a hash node with many children: the root's
  // child slot per direct token (-1: none), kDirectTokens entries; empty
  // otherwise. See the essay ("The root's children").
  HugePageVector<std::int32_t> root_children_;
  PolicyLeafHeap<std::int32_t> leaves_;  // bounded: every leaf, by key, lazily
  // Bounded: PushLeaf of the cache's policy, for MoveNode, whose code is
  // shared by every policy (a moved leaf is rare; an indirect call is fine).
  void (DoubleArrayTrie::*push_leaf_)(std::int64_t) = nullptr;
};

}  // namespace kvprefix

#endif  // KVPREFIX_OPTIMIZED_DOUBLE_ARRAY_TRIE_H_
