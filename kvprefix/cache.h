// What a bounded prefix cache needs beyond the trie (SPEC §8): a capacity in
// nodes, an eviction policy and a page size, and the listener through which
// an engine reports the nodes it evicts.
#ifndef KVPREFIX_KVPREFIX_CACHE_H_
#define KVPREFIX_KVPREFIX_CACHE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>

#include "kvprefix/types.h"

namespace kvprefix {

// Which leaf leaves first when a cache is over capacity (SPEC §8 step 4).
enum class EvictionPolicy : std::uint8_t {
  // The leaf with the smallest stamp: the least recently used. Stamps are
  // unique among leaves, so there are no ties to break.
  kLru,
  // The leaf with the smallest node ID: the oldest created.
  kFifo,
};

// "lru" or "fifo", the names used in the CLI, JSON and Python. Thread-safe.
constexpr std::string_view EvictionPolicyName(EvictionPolicy policy) {
  return policy == EvictionPolicy::kFifo ? "fifo" : "lru";
}

// The policy named `name` ("lru" or "fifo", exactly), or nullopt.
constexpr std::optional<EvictionPolicy> ParseEvictionPolicy(
    std::string_view name) {
  if (name == "lru") return EvictionPolicy::kLru;
  if (name == "fifo") return EvictionPolicy::kFifo;
  return std::nullopt;
}

// A capacity no trie can reach: the cache never evicts, and replay gives
// SPEC §3's answers. Also the value of a replay document's largest capacity,
// 2^64 - 1, which behaves the same.
inline constexpr std::uint64_t kUnbounded =
    std::numeric_limits<std::uint64_t>::max();

// The largest page size (SPEC §8: 1 to 2^31 - 1 tokens).
inline constexpr std::uint64_t kMaxPageSize =
    std::numeric_limits<std::int32_t>::max();

struct CacheOptions {
  // Nodes kept besides the root, C >= 0 (SPEC §8). kUnbounded: no eviction
  // and no recency bookkeeping at all, so the unbounded path costs nothing.
  std::uint64_t capacity = kUnbounded;
  EvictionPolicy policy = EvictionPolicy::kLru;
  // Tokens per node, P >= 1. Engines themselves index tokens (P = 1);
  // PagedIndex (kvprefix/paged_index.h) builds the trie over pages of P.
  std::uint64_t page_size = 1;

  bool bounded() const { return capacity != kUnbounded; }
  friend bool operator==(const CacheOptions&, const CacheOptions&) = default;
};

// Called by a bounded engine with the tokens (edge labels) of the nodes it
// evicts. One call may carry several nodes (a radix engine evicts the tail of
// a run at once), in any order: only the multiset of labels is specified.
// Nodes an engine never stored because they would have been evicted at once
// (the tail of a request longer than the capacity) are reported too, so that
// every created node is reported exactly once when it goes. The listener must
// not call back into the engine. PagedIndex uses it to forget pages that no
// node holds any more.
using EvictionListener = std::function<void(TokenSpan evicted_tokens)>;

}  // namespace kvprefix

#endif  // KVPREFIX_KVPREFIX_CACHE_H_
