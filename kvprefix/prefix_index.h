// The one interface every prefix-index engine implements, in two forms:
//
//  * the `PrefixIndexEngine` concept, for code that knows the engine type at
//    compile time (benchmarks, typed tests, fuzzers): calls are direct and
//    inlinable, with no virtual dispatch on the hot path;
//  * the abstract `PrefixIndex` class, for code that picks an engine by name
//    at run time (the CLI, the Python module). `EngineAdapter<E>` wraps any
//    concrete engine; the virtual call costs one indirect jump per sequence,
//    not per token.
//
// Semantics (SPEC §1 and §3): Insert walks from the root, following the edge
// for each token and creating a node with the next unused ID where none
// exists. MatchPrefix walks the same way without creating anything and stops
// at the first token with no edge. Inserts and matches may interleave in any
// order; a match always answers as if the sequences inserted so far had been
// inserted by the batch job.
//
// A bounded engine (the `PrefixCacheEngine` refinement, SPEC §8) is built
// with CacheOptions; with a finite capacity every Insert also touches the
// sequence's path and evicts leaves by the policy until at most `capacity`
// nodes remain, and Access is the serving loop's step: match, then insert.
#ifndef KVPREFIX_KVPREFIX_PREFIX_INDEX_H_
#define KVPREFIX_KVPREFIX_PREFIX_INDEX_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "kvprefix/cache.h"
#include "kvprefix/types.h"

namespace kvprefix {

// What a concrete engine type `E` must provide. Engines are default
// constructible (an empty index holding only the root), movable, and:
//
//   static constexpr std::string_view kName;   one word, e.g. "radix"
//   NodeId Insert(TokenSpan sequence);
//       Inserts `sequence`; returns the ID of the node its last token reaches
//       (kRootNode for an empty sequence). O(length) expected.
//       Throws CapacityError if node IDs or storage would overflow, and
//       std::bad_alloc on memory exhaustion.
//   Match MatchPrefix(TokenSpan request) const;
//       The longest cached prefix of `request`. Never modifies the index.
//       O(matched length). Never throws.
//   std::uint64_t node_count() const;
//       Number of nodes present, root excluded. O(1). Without eviction this
//       is also the largest node ID.
//   std::size_t memory_bytes() const;
//       Heap bytes owned by the index, including allocator chunk overhead,
//       so that it tracks what malloc really hands out. O(1) or O(nodes).
//
// Thread safety, for every engine: const member functions may run
// concurrently with each other; Insert requires exclusive access.
template <typename E>
concept PrefixIndexEngine = std::default_initializable<E> && std::movable<E> &&
    requires(E& engine, const E& const_engine, TokenSpan tokens) {
  { E::kName } -> std::convertible_to<std::string_view>;
  { engine.Insert(tokens) } -> std::same_as<NodeId>;
  { const_engine.MatchPrefix(tokens) } -> std::same_as<Match>;
  { const_engine.node_count() } -> std::same_as<std::uint64_t>;
  { const_engine.memory_bytes() } -> std::same_as<std::size_t>;
};

// A prefix index that can also be a bounded cache (SPEC §8). Besides the
// PrefixIndexEngine members:
//
//   explicit E(const CacheOptions& options);
//       An empty cache with options.capacity and options.policy. Throws
//       std::invalid_argument if options.page_size != 1 (pages are
//       PagedIndex's job). CacheOptions{} is the unbounded index.
//   NodeId Insert(TokenSpan sequence);
//       Bounded: SPEC §8 steps 2-4 with the next stamp: insert (new nodes
//       get fresh IDs, never an evicted one's), touch the whole path, then
//       evict leaves by the policy while more than `capacity` nodes remain.
//       Returns the deepest node of the sequence's path still present
//       (kRootNode if none). O(length + evicted nodes) times the engine's
//       per-node costs (a log factor for the ordered leaf structures).
//   Match Access(TokenSpan request);
//       The serving step, SPEC §8 steps 1-4 (SPEC §3's match-then-insert
//       when unbounded): returns what MatchPrefix(request) returned before
//       the request was inserted.
//   std::uint64_t evicted_count() const;
//       Nodes evicted so far (each created node counts once when it goes,
//       stored or not). O(1).
//   const CacheOptions& options() const;
//   void SetEvictionListener(EvictionListener listener);
//       Reports every later eviction (see kvprefix/cache.h). Not thread-safe.
//
// MatchPrefix never touches: recency changes only on Insert/Access. A
// bounded engine is not safe for concurrent use beyond the const members.
//
// A model engine (SPEC §9: ReferenceBlockPool and BlockPool for `vllm`,
// ReferenceRadixCache and RadixCache for `sglang`) has the same members,
// built with options.model its model (std::invalid_argument for any other,
// or for what FindModelOptionsProblem finds), meaning:
//
//   Access      the model's steps for one request (§9.2 steps 0-6, §9.3's
//               trigger), returning its match; (0, 0) for a request the
//               model refuses (vllm: more blocks than the pool; sglang
//               on-allocate: more pages than it can free) or an empty one.
//               vllm: matched_length h * P, cache_node the ID of hit block
//               h. sglang: cache_node may be a node the match itself
//               created by splitting an edge.
//   Insert      Access for its effect, then: vllm, the ID of the first
//               block holding the sequence's last whole page (0 if none
//               does); sglang, the node MatchPrefix(sequence) would end at.
//   MatchPrefix what the match would answer, changing nothing. vllm: step 1
//               alone (refusal aside); sglang: the match of the whole key
//               (the match limit does not apply) and, where it would split
//               an edge, the ID the split's new node would get.
//   node_count  vllm: blocks holding a chain; sglang: nodes present.
//   evicted_count, SetEvictionListener
//               vllm: chains dropped from blocks step 4 takes, reported by
//               their last page; sglang: nodes evicted, by their edge.
template <typename E>
concept PrefixCacheEngine = PrefixIndexEngine<E> &&
    std::constructible_from<E, const CacheOptions&> &&
    requires(E& engine, const E& const_engine, TokenSpan tokens,
             EvictionListener listener) {
  { engine.Access(tokens) } -> std::same_as<Match>;
  { const_engine.evicted_count() } -> std::same_as<std::uint64_t>;
  { const_engine.options() } -> std::same_as<const CacheOptions&>;
  engine.SetEvictionListener(std::move(listener));
};

// Run-time polymorphic form of the same interface; member functions have the
// meaning, complexity, errors and thread safety described for the concepts.
class PrefixIndex {
 public:
  virtual ~PrefixIndex() = default;

  // The engine's registry name, e.g. "reference".
  virtual std::string_view name() const = 0;
  virtual NodeId Insert(TokenSpan sequence) = 0;
  virtual Match MatchPrefix(TokenSpan request) const = 0;
  // SPEC §8 steps 1-4 (SPEC §3 when unbounded); see PrefixCacheEngine.
  virtual Match Access(TokenSpan request) = 0;
  virtual std::uint64_t node_count() const = 0;
  virtual std::uint64_t evicted_count() const = 0;
  virtual std::size_t memory_bytes() const = 0;
  virtual const CacheOptions& options() const = 0;
  // Reports every later eviction (kvprefix/cache.h); an unbounded index
  // never calls it. Not thread-safe.
  virtual void SetEvictionListener(EvictionListener listener) = 0;
};

// Adapts a concrete engine to `PrefixIndex`. `engine()` exposes the wrapped
// object for callers that want direct calls after choosing by name. An
// engine that is only a PrefixIndexEngine (a test's deliberately broken one)
// is unbounded: Access is MatchPrefix then Insert, nothing is evicted.
template <PrefixIndexEngine E>
class EngineAdapter final : public PrefixIndex {
 public:
  EngineAdapter() = default;
  // Forwards to E's constructor, e.g. E(const CacheOptions&).
  template <typename... Args>
  explicit EngineAdapter(Args&&... args)
      : engine_(std::forward<Args>(args)...) {}

  std::string_view name() const override { return E::kName; }
  NodeId Insert(TokenSpan sequence) override {
    return engine_.Insert(sequence);
  }
  Match MatchPrefix(TokenSpan request) const override {
    return engine_.MatchPrefix(request);
  }
  Match Access(TokenSpan request) override {
    if constexpr (PrefixCacheEngine<E>) {
      return engine_.Access(request);
    } else {
      const Match match = engine_.MatchPrefix(request);
      engine_.Insert(request);
      return match;
    }
  }
  std::uint64_t node_count() const override { return engine_.node_count(); }
  std::uint64_t evicted_count() const override {
    if constexpr (PrefixCacheEngine<E>) return engine_.evicted_count();
    return 0;
  }
  std::size_t memory_bytes() const override { return engine_.memory_bytes(); }
  const CacheOptions& options() const override {
    if constexpr (PrefixCacheEngine<E>) return engine_.options();
    static const CacheOptions unbounded;
    return unbounded;
  }
  void SetEvictionListener(EvictionListener listener) override {
    if constexpr (PrefixCacheEngine<E>) {
      engine_.SetEvictionListener(std::move(listener));
    }
  }

  E& engine() { return engine_; }
  const E& engine() const { return engine_; }

 private:
  E engine_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_PREFIX_INDEX_H_
