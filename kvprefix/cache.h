// What a bounded prefix cache needs beyond the trie (SPEC §8): a capacity in
// nodes, an eviction policy and a page size, and the listener through which
// an engine reports the nodes it evicts.
#ifndef KVPREFIX_KVPREFIX_CACHE_H_
#define KVPREFIX_KVPREFIX_CACHE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "kvprefix/policies/fifo.h"
#include "kvprefix/policies/lfu.h"
#include "kvprefix/policies/lru.h"
#include "kvprefix/types.h"

namespace kvprefix {

// Which leaf leaves first when a cache is over capacity (SPEC §8 step 4).
// Each enumerator has one entry in kEvictionPolicies below, at the position
// of its value; code that depends on the policy switches over it with no
// default case, so that -Werror=switch (CMakeLists.txt) rejects a new
// enumerator wherever it is not handled.
enum class EvictionPolicy : std::uint8_t {
  // The leaf with the smallest stamp: the least recently used. Stamps are
  // unique among leaves, so there are no ties to break.
  kLru,
  // The leaf with the smallest node ID: the oldest created.
  kFifo,
  // The leaf with the smallest count of touches, among equal counts the one
  // with the smallest stamp: the least frequently used.
  kLfu,
};

// One eviction policy as the front ends show it.
struct EvictionPolicyEntry {
  EvictionPolicy policy;
  // The name used in the CLI, JSON, Python, benchmark names and reports:
  // one lower-case word.
  std::string_view name;
  // What it evicts, completing "<name> evicts ...": the --policy help.
  std::string_view victim;
};

// The list of eviction policies: the one place that names them. Parsing,
// names, the CLI's --policy choices and help, the replay-document reader,
// Python, the fuzzer's decoder, verify's generator and the benchmarks take
// their policies from here, in this order (the default, lru, first).
inline constexpr std::array<EvictionPolicyEntry, 3> kEvictionPolicies = {{
    {EvictionPolicy::kLru, "lru", "the least recently used leaf"},
    {EvictionPolicy::kFifo, "fifo", "the oldest created leaf"},
    {EvictionPolicy::kLfu, "lfu",
     "the least frequently used leaf (the least recently used among equals)"},
}};

// The position of `policy` in kEvictionPolicies. The cases name the list's
// entries: a new enumerator fails to compile here until it is handled, and
// its case fails until the list has an entry for it. O(1). Thread-safe.
constexpr std::size_t EvictionPolicyIndex(EvictionPolicy policy) {
  switch (policy) {
    case kEvictionPolicies[0].policy:
    case kEvictionPolicies[1].policy:
    case kEvictionPolicies[2].policy:
      break;
  }
  return static_cast<std::size_t>(policy);
}

static_assert(
    [] {
      for (std::size_t i = 0; i < kEvictionPolicies.size(); ++i) {
        if (EvictionPolicyIndex(kEvictionPolicies[i].policy) != i) {
          return false;
        }
      }
      return true;
    }(),
    "kEvictionPolicies lists every enumerator once, in the order of their "
    "values");

// The name of `policy` ("lru", "fifo"), as kEvictionPolicies gives it.
// O(1). Thread-safe.
constexpr std::string_view EvictionPolicyName(EvictionPolicy policy) {
  return kEvictionPolicies[EvictionPolicyIndex(policy)].name;
}

// The policy named `name` (exactly, as kEvictionPolicies names it), or
// nullopt. O(policies). Thread-safe.
constexpr std::optional<EvictionPolicy> ParseEvictionPolicy(
    std::string_view name) {
  for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
    if (entry.name == name) return entry.policy;
  }
  return std::nullopt;
}

// The names of all policies, for messages that list the valid ones: each
// between two `quote`s, the last two joined by " or ", the others by ", "
// (e.g. "'lru' or 'fifo'"). O(policies). Thread-safe.
inline std::string EvictionPolicyChoices(char quote) {
  std::string choices;
  for (std::size_t i = 0; i < kEvictionPolicies.size(); ++i) {
    if (i > 0) choices += i + 1 == kEvictionPolicies.size() ? " or " : ", ";
    choices += quote;
    choices += kEvictionPolicies[i].name;
    choices += quote;
  }
  return choices;
}

// The policy types of the cache model (kvprefix/cache_model.h), one per
// entry of kEvictionPolicies, in the same order: what the engines run for
// each policy. A new policy is an enumerator, an entry above, a type here
// (its own file under kvprefix/policies/) and its lines in the reference.
using EvictionPolicyTypes = std::tuple<LruPolicy, FifoPolicy, LfuPolicy>;
static_assert(std::tuple_size_v<EvictionPolicyTypes> ==
                  kEvictionPolicies.size(),
              "EvictionPolicyTypes has one type per entry of "
              "kEvictionPolicies");

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

// Thrown by a bounded engine that must evict (more than its capacity C of
// nodes present) but finds no evictable leaf: SPEC §8 step 4 is undefined
// there. With lru and fifo it cannot happen (the nodes off the request's
// path hold the leaves evicted first, SPEC §8), so it reports a broken
// engine invariant, or a policy that can pin every leaf, instead of reading
// past the end of the leaf set. The message names the engine, the nodes
// present (or about to be) and C, e.g. "radix: no leaf is evictable with 5
// nodes present over capacity 4". Thread-safe (an ordinary exception).
class NoEvictableLeafError : public std::logic_error {
 public:
  NoEvictableLeafError(std::string_view engine, std::uint64_t nodes,
                       std::uint64_t capacity)
      : std::logic_error(std::string(engine) + ": no leaf is evictable with " +
                         std::to_string(nodes) +
                         " nodes present over capacity " +
                         std::to_string(capacity)) {}
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
