// The cache model: SPEC §8's rules for a bounded cache, once, for every
// optimized engine (hash, radix, double-array).
//
// A bounded cache is a trie plus four rules: new nodes get IDs never given
// before (step 2), the request's path is touched (step 3), leaves leave by a
// policy while more than C nodes are present (step 4), and every evicted node
// is reported. The engines provide the structure: how to walk, append a
// node or a run, tell a leaf, find a parent and remove a leaf or the tail of
// a run; they also keep the IDs and batch the eviction reports, since each
// stores IDs its own way (slot == ID unbounded, IDs relative to a run in
// radix). This layer provides the policy's part, parametrised by a policy
// type in the manner of Abseil's containers (a policy type, not a virtual
// interface, so that every call inlines):
//
// - The policy types, one file each under kvprefix/policies/ (as
//   libCacheSim keeps one file per eviction algorithm), listed in
//   EvictionPolicyTypes (kvprefix/cache.h) in the order of kEvictionPolicies.
//   A policy type is what CachePolicy below requires: the per-node State a
//   touch updates, the Key that orders victims, and the traits that say which
//   of an engine's fast paths stay valid under it. An engine reads a trait
//   with `if constexpr` or a static_assert, never the policy's name, so a new
//   policy either keeps a fast path valid or turns it off at compile time.
// - VisitPolicy: the one dispatch from the run-time EvictionPolicy to the
//   policy type. It is exhaustive by construction (it instantiates the caller
//   for every type of the list, and the list must match kEvictionPolicies).
// - PolicyStates: each node's State, laid out as 64-bit words (none at all
//   for a stateless policy such as fifo, so it costs nothing).
// - PolicyLeafHeap: the leaf heap of the policy's own Key type.
// - EvictLeaves: step 4's loop over a LeafHeap (kvprefix/leaf_heap.h),
//   including the chain shortcut (a parent left childless whose key no entry
//   undercuts is the next victim at once); EvictLeavesBelow, its first
//   victims only, those below a key.
//
// kvprefix/bounded_insert.h holds the insert itself (SPEC §8 steps 1-4 and
// the first-C-nodes shortcut, in one order over each trie's primitives).
// The reference (reference/reference_trie.h) is deliberately not a client of
// this layer: it transliterates SPEC §8 on its own and judges the layer.
//
// Thread safety: none of its own; everything here is called by an engine
// under the engine's own rules (one writer).
#ifndef KVPREFIX_KVPREFIX_CACHE_MODEL_H_
#define KVPREFIX_KVPREFIX_CACHE_MODEL_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/leaf_heap.h"
#include "kvprefix/types.h"

namespace kvprefix {

// What a policy type provides (kvprefix/policies/lru.h is the model).
//   State: what a node keeps for the policy, value-initialised when the node
//     is created; a trivially copyable struct of std::uint64_t members, empty
//     for a policy that keeps nothing (engines then store and touch nothing).
//   Key: the order of victims, smallest first; totally ordered by `<`.
//   Touch(state, r): SPEC §8 step 3 for one node of request r's path (a node
//     created by request r is touched too, right after creation).
//   LeafKey(state, id): the key of a leaf with that state and node ID. The
//     keys of the leaves present must differ (SPEC §8: the choice is unique).
//   kKeepsFirstCapacityNodes: every node off a request's path leaves before
//     any node of the path, and the path's new nodes leave deepest first. Then
//     a request longer than C keeps exactly its first C nodes, so an engine
//     may store only those and evict off the path before creating.
//   kTouchSetsState: after a touch by request r a node's state depends on r
//     alone (not on its past), so a run may grow by nodes of a later request
//     (radix extends its newest edge) and still have one state for the run.
//   kRunTailLeavesAtOnce: once a run's last node (a leaf) is the victim, the
//     nodes above it in the run, which share its state, are the next victims
//     one by one, so a run's tail may go in one step.
template <typename P>
concept CachePolicy = std::is_trivially_copyable_v<typename P::State> &&
                      (std::is_empty_v<typename P::State> ||
                       sizeof(typename P::State) % sizeof(std::uint64_t) ==
                           0) &&
                      std::totally_ordered<typename P::Key>&& requires(
                          typename P::State& state,
                          const typename P::State& read, std::uint64_t request,
                          NodeId id) {
  { P::Touch(state, request) } -> std::same_as<void>;
  { P::LeafKey(read, id) } -> std::same_as<typename P::Key>;
  { P::kKeepsFirstCapacityNodes } -> std::convertible_to<bool>;
  { P::kTouchSetsState } -> std::convertible_to<bool>;
  { P::kRunTailLeavesAtOnce } -> std::convertible_to<bool>;
};

// True if the policy keeps per-node state (and so needs touches).
template <CachePolicy Policy>
inline constexpr bool kKeepsState = !std::is_empty_v<typename Policy::State>;

namespace cache_model_internal {

template <std::size_t I, typename F>
decltype(auto) VisitFrom(std::size_t index, F&& f) {
  using Policy = std::tuple_element_t<I, EvictionPolicyTypes>;
  static_assert(CachePolicy<Policy>,
                "a policy type lacks what CachePolicy "
                "requires (kvprefix/cache_model.h)");
  if constexpr (I + 1 == std::tuple_size_v<EvictionPolicyTypes>) {
    return std::forward<F>(f)(Policy{});  // the last: index == I
  } else {
    if (index == I) return std::forward<F>(f)(Policy{});
    return VisitFrom<I + 1>(index, std::forward<F>(f));
  }
}

}  // namespace cache_model_internal

// Calls f(Policy{}) with the policy type of `policy` and returns its result.
// f must accept every policy type (a generic lambda), with one return type.
// This is the only dispatch over policies an engine needs; it covers the
// whole list by construction. O(policies) compares, usually folded.
template <typename F>
decltype(auto) VisitPolicy(EvictionPolicy policy, F&& f) {
  return cache_model_internal::VisitFrom<0>(EvictionPolicyIndex(policy),
                                            std::forward<F>(f));
}

// True if `policy` keeps per-node state (lru: a stamp), so that a bounded
// engine must allocate it and touch the request's path. O(1). Thread-safe.
inline bool KeepsNodeState(EvictionPolicy policy) {
  return VisitPolicy(policy, []<typename P>(P) { return kKeepsState<P>; });
}

// The State of a node created by request `request`: value-initialised
// (step 2), then touched by its own request (step 3). O(1).
template <CachePolicy Policy>
typename Policy::State CreatedState(std::uint64_t request) {
  typename Policy::State state{};
  Policy::Touch(state, request);
  return state;
}

// Each node's policy State, indexed by the engine's handle (a slot, an edge
// index), stored as sizeof(State) / 8 words per handle in `words`, a
// contiguous container of std::uint64_t the engine grows as it grows its own
// arrays (std::vector by default; the double-array uses its realloc array).
// A stateless policy has zero words per handle and the engine stores none.
template <typename Words = std::vector<std::uint64_t>>
class PolicyStates {
 public:
  explicit PolicyStates(EvictionPolicy policy = EvictionPolicy{})
      : per_handle_(VisitPolicy(policy, []<typename P>(P) {
          return kKeepsState<P> ? sizeof(typename P::State) / 8 : 0;
        })) {}

  // 64-bit words one handle takes: 0 for a stateless policy. O(1).
  std::size_t words_per_handle() const { return per_handle_; }
  // The storage, for the engine to size: handles * words_per_handle().
  Words& words() { return words_; }
  const Words& words() const { return words_; }

  // The state of `handle` under Policy (the policy the states were built
  // for). O(1).
  template <CachePolicy Policy>
  typename Policy::State Get(std::size_t handle) const {
    typename Policy::State state{};
    if constexpr (kKeepsState<Policy>) {
      std::memcpy(static_cast<void*>(&state),
                  words_.data() + handle * Words64<Policy>(), sizeof state);
    }
    return state;
  }
  template <CachePolicy Policy>
  void Set(std::size_t handle, const typename Policy::State& state) {
    if constexpr (kKeepsState<Policy>) {
      std::memcpy(words_.data() + handle * Words64<Policy>(), &state,
                  sizeof state);
    }
  }
  // SPEC §8 step 3 for the node at `handle`, touched by request `request`.
  template <CachePolicy Policy>
  void Touch(std::size_t handle, std::uint64_t request) {
    if constexpr (kKeepsState<Policy>) {
      typename Policy::State state = Get<Policy>(handle);
      Policy::Touch(state, request);
      Set<Policy>(handle, state);
    }
  }
  // A node created at `handle` by request `request` (CreatedState).
  template <CachePolicy Policy>
  void Create(std::size_t handle, std::uint64_t request) {
    if constexpr (kKeepsState<Policy>) {
      Set<Policy>(handle, CreatedState<Policy>(request));
    }
  }
  // The leaf key of the node at `handle`, whose ID is `id`. O(1).
  template <CachePolicy Policy>
  typename Policy::Key LeafKey(std::size_t handle, NodeId id) const {
    return Policy::LeafKey(Get<Policy>(handle), id);
  }
  // Appends the storage of one more handle, its words zero; call it with the
  // policy the states were built for. Amortised O(1): one emplace_back a
  // word, inlined (a resize by a run-time count is an out-of-line call and a
  // memset every node, which the hash engine's growth path felt).
  template <CachePolicy Policy>
  void PushBack() {
    if constexpr (kKeepsState<Policy>) {
      for (std::size_t i = 0; i < Words64<Policy>(); ++i) words_.emplace_back();
    }
  }
  // Copies the state of `from` to `to` (a node moved to another slot).
  void Copy(std::size_t from, std::size_t to) {
    for (std::size_t i = 0; i < per_handle_; ++i) {
      words_[to * per_handle_ + i] = words_[from * per_handle_ + i];
    }
  }

 private:
  template <CachePolicy Policy>
  static constexpr std::size_t Words64() {
    return sizeof(typename Policy::State) / sizeof(std::uint64_t);
  }

  std::size_t per_handle_;
  Words words_;
};

// The position of policy type P in EvictionPolicyTypes (== the
// EvictionPolicyIndex of its enumerator).
template <CachePolicy P>
inline constexpr std::size_t kPolicyTypeIndex = [] {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    std::size_t index = 0;
    ((std::is_same_v<P, std::tuple_element_t<I, EvictionPolicyTypes>>
          ? (index = I, true)
          : false) ||
     ...);
    return index;
  }
  (std::make_index_sequence<std::tuple_size_v<EvictionPolicyTypes>>{});
}();

// The leaf heap of whichever policy a cache runs: one LeafHeap per policy
// type's Key (a std::variant), so that each policy's heap holds keys of its
// own width (16-byte entries for an 8-byte key, not the widest policy's).
template <typename Handle>
class PolicyLeafHeap {
 public:
  explicit PolicyLeafHeap(EvictionPolicy policy = EvictionPolicy{}) {
    VisitPolicy(policy, [this]<typename P>(P) {
      heaps_.template emplace<kPolicyTypeIndex<P>>();
    });
  }
  // The heap of policy type P, the policy it was built for. O(1).
  template <CachePolicy P>
  LeafHeap<typename P::Key, Handle>& Get() {
    return std::get<kPolicyTypeIndex<P>>(heaps_);
  }
  template <CachePolicy P>
  const LeafHeap<typename P::Key, Handle>& Get() const {
    return std::get<kPolicyTypeIndex<P>>(heaps_);
  }
  // Heap bytes (LeafHeap::memory_bytes). O(1).
  std::size_t memory_bytes() const {
    return std::visit([](const auto& heap) { return heap.memory_bytes(); },
                      heaps_);
  }

 private:
  template <std::size_t... I>
  static auto Heaps(std::index_sequence<I...>) -> std::variant<LeafHeap<
      typename std::tuple_element_t<I, EvictionPolicyTypes>::Key, Handle>...>;
  decltype(Heaps(
      std::make_index_sequence<std::tuple_size_v<EvictionPolicyTypes>>{}))
      heaps_;
};

namespace cache_model_internal {

// The predicate LeafHeap's pops take: the structure's IsCurrent.
template <typename Key, typename Handle, typename Structure>
auto IsCurrentOf(const Structure& structure) {
  return [&structure](const typename LeafHeap<Key, Handle>::Entry& entry) {
    return structure.IsCurrent(entry);
  };
}

// Removes `leaf` (RemoveTail) and then, while nodes are still to go, each
// leaf that removal leaves behind (usually the parent, the rest of a chain)
// at once when it is the next victim: its key is within(key) and no entry
// of the heap is below it. The first one that is not is pushed. Returns the
// nodes removed, 1 to `count`.
template <typename Key, typename Handle, typename Structure, typename Within>
std::uint64_t EvictFrom(LeafHeap<Key, Handle>& heap, Structure& structure,
                        Handle leaf, std::uint64_t count, Within&& within) {
  std::uint64_t left = count;
  while (true) {
    const auto [removed, next] = structure.RemoveTail(leaf, left);
    left -= removed;
    if (!next) break;
    const Key key = structure.LeafKey(*next);
    if (left > 0 && within(key) && heap.NoneBelow(key)) {
      leaf = *next;
      continue;
    }
    heap.Push(key, *next);
    break;
  }
  return count - left;
}

}  // namespace cache_model_internal

// SPEC §8 step 4: evicts `count` nodes, one leaf at a time by the policy's
// order, from `heap`, whose entries are kept as LeafHeap's invariant says.
// The structure provides:
//   bool IsCurrent(const LeafHeap<Key, Handle>::Entry&) const: the entry
//     names a leaf present with that key;
//   Key LeafKey(Handle) const: a leaf's current key;
//   std::pair<std::uint64_t, std::optional<Handle>> RemoveTail(Handle leaf,
//     std::uint64_t at_most): removes the leaf (a structure of runs may remove
//     up to `at_most` nodes of the leaf's run, when the policy's
//     kRunTailLeavesAtOnce allows) and returns the nodes removed (>= 1) and
//     the handle that is now a leaf with a new key, if any (the parent left
//     childless, or the shortened run), for this loop to evict at once or
//     push.
// A new leaf whose key no entry undercuts is the next victim at once,
// without a push and a pop (the chain shortcut). `engine` and `capacity` go
// into NoEvictableLeafError's message, thrown when the heap has no current
// leaf left; the nodes it names are capacity + the count still to evict.
// O((count + stale entries) log n).
template <typename Key, typename Handle, typename Structure>
void EvictLeaves(LeafHeap<Key, Handle>& heap, Structure& structure,
                 std::uint64_t count, std::string_view engine,
                 std::uint64_t capacity) {
  const auto is_current =
      cache_model_internal::IsCurrentOf<Key, Handle>(structure);
  while (count > 0) {
    const Handle leaf =
        heap.PopCurrent(is_current, engine, capacity + count, capacity);
    count -= cache_model_internal::EvictFrom(heap, structure, leaf, count,
                                             [](const Key&) { return true; });
  }
}

// The first victims of step 4 only: evicts up to `count` nodes as
// EvictLeaves does, but stops before the first victim whose key is not below
// `bound`; returns the nodes evicted (0 to count). Never throws for want of
// a leaf. An engine that creates a request's new nodes before step 4 (a
// policy without kKeepsFirstCapacityNodes) calls it before creating them,
// with its path's end kept from being a leaf and `bound` the key the new
// path's leaf will have: the leaves below that key are exactly the victims
// step 4 would take first after creating (the new leaf is the only new
// one, and keys of leaves differ), so evicting them first frees slots for
// the new nodes without changing a victim or the order. Same structure and
// cost as EvictLeaves.
template <typename Key, typename Handle, typename Structure>
std::uint64_t EvictLeavesBelow(LeafHeap<Key, Handle>& heap,
                               Structure& structure, std::uint64_t count,
                               const Key& bound) {
  const auto is_current =
      cache_model_internal::IsCurrentOf<Key, Handle>(structure);
  std::uint64_t left = count;
  while (left > 0) {
    const std::optional<Handle> leaf = heap.PopCurrentBelow(is_current, bound);
    if (!leaf) break;
    left -= cache_model_internal::EvictFrom(
        heap, structure, *leaf, left,
        [&bound](const Key& key) { return key < bound; });
  }
  return count - left;
}

// SPEC §9.1 for model spec: step 1 matches at most MatchLimitTokens of the
// request (the limit and page size of `options`), while steps 2-4 insert and
// touch the whole request. For an engine whose Access walks once: a
// MatchPrefix of the limited request, then Insert of the whole one, so a
// limit costs one more walk of the matched part. Throws what Insert throws.
template <typename Engine>
Match AccessWithMatchLimit(Engine& engine, TokenSpan request,
                           const CacheOptions& options) {
  const Match match = engine.MatchPrefix(request.first(MatchLimitTokens(
      options.match_limit, request.size(), options.page_size)));
  engine.Insert(request);
  return match;
}

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_CACHE_MODEL_H_
