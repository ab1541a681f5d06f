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
#ifndef KVPREFIX_KVPREFIX_PREFIX_INDEX_H_
#define KVPREFIX_KVPREFIX_PREFIX_INDEX_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

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
//       Number of nodes, root excluded (= the largest node ID). O(1).
//   std::size_t memory_bytes() const;
//       Heap bytes owned by the index, including allocator chunk overhead,
//       so that it tracks what malloc really hands out. O(1) or O(nodes).
//
// Thread safety, for every engine: const member functions may run
// concurrently with each other; Insert requires exclusive access.
template <typename E>
concept PrefixIndexEngine =
    std::default_initializable<E> && std::movable<E> &&
    requires(E& engine, const E& const_engine, TokenSpan tokens) {
      { E::kName } -> std::convertible_to<std::string_view>;
      { engine.Insert(tokens) } -> std::same_as<NodeId>;
      { const_engine.MatchPrefix(tokens) } -> std::same_as<Match>;
      { const_engine.node_count() } -> std::same_as<std::uint64_t>;
      { const_engine.memory_bytes() } -> std::same_as<std::size_t>;
    };

// Run-time polymorphic form of the same interface; member functions have the
// meaning, complexity, errors and thread safety described for the concept.
class PrefixIndex {
 public:
  virtual ~PrefixIndex() = default;

  // The engine's registry name, e.g. "reference".
  virtual std::string_view name() const = 0;
  virtual NodeId Insert(TokenSpan sequence) = 0;
  virtual Match MatchPrefix(TokenSpan request) const = 0;
  virtual std::uint64_t node_count() const = 0;
  virtual std::size_t memory_bytes() const = 0;
};

// Adapts a concrete engine to `PrefixIndex`. `engine()` exposes the wrapped
// object for callers that want direct calls after choosing by name.
template <PrefixIndexEngine E>
class EngineAdapter final : public PrefixIndex {
 public:
  std::string_view name() const override { return E::kName; }
  NodeId Insert(TokenSpan sequence) override {
    return engine_.Insert(sequence);
  }
  Match MatchPrefix(TokenSpan request) const override {
    return engine_.MatchPrefix(request);
  }
  std::uint64_t node_count() const override { return engine_.node_count(); }
  std::size_t memory_bytes() const override { return engine_.memory_bytes(); }

  E& engine() { return engine_; }
  const E& engine() const { return engine_; }

 private:
  E engine_;
};

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_PREFIX_INDEX_H_
