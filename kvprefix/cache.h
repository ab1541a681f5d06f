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

// The names of a list's entries (each with a member `name`), for messages
// that list the valid ones: each between two `quote`s, the last two joined by
// " or ", the others by ", " (e.g. "'lru' or 'fifo'"). O(entries).
// Thread-safe.
template <typename Entry, std::size_t N>
std::string ChoiceNames(const std::array<Entry, N>& entries, char quote) {
  std::string choices;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) choices += i + 1 == N ? " or " : ", ";
    choices += quote;
    choices += entries[i].name;
    choices += quote;
  }
  return choices;
}

// The names of all policies (ChoiceNames of kEvictionPolicies).
inline std::string EvictionPolicyChoices(char quote) {
  return ChoiceNames(kEvictionPolicies, quote);
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

// One value of a cache option of SPEC §9 (CacheModel, MatchLimit,
// EvictionTrigger) as the front ends show it: its name in the CLI, JSON,
// Python, benchmark names and reports, and a phrase for --help.
template <typename Enum>
struct NamedValue {
  Enum value;
  std::string_view name;
  std::string_view help;
};

// The value named `name` in `entries` (exactly), or nullopt. O(entries).
// Thread-safe.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> ParseNamedValue(
    const std::array<NamedValue<Enum>, N>& entries, std::string_view name) {
  for (const NamedValue<Enum>& entry : entries) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// The name of `value` in `entries`, which list every enumerator once in the
// order of their values (static_asserts below). O(1). Thread-safe.
template <typename Enum, std::size_t N>
constexpr std::string_view NameOf(
    const std::array<NamedValue<Enum>, N>& entries, Enum value) {
  return entries[static_cast<std::size_t>(value)].name;
}

// True if `entries` lists the values 0, 1, ... in order.
template <typename Enum, std::size_t N>
constexpr bool InValueOrder(const std::array<NamedValue<Enum>, N>& entries) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(entries[i].value) != i) return false;
  }
  return true;
}

// Which rules the cache follows (SPEC §9): SPEC §8's trie of nodes, or the
// prefix cache of a real serving system replayed one request at a time.
// Code that depends on the model switches over it with no default case
// (-Werror=switch).
enum class CacheModel : std::uint8_t {
  // SPEC §8: a trie of C nodes (pages), evicting leaves by the policy.
  kSpec,
  // SPEC §9.2: vLLM's block pool (KVCacheManager / BlockPool): C blocks, a
  // free queue, an index from chains of whole blocks to the blocks holding
  // them.
  kVllm,
  // SPEC §9.3: SGLang's RadixCache: a radix tree of whole-page edges that
  // evicts whole edges by access time (lru) or creation time (fifo).
  kSglang,
};

inline constexpr std::array<NamedValue<CacheModel>, 3> kCacheModels = {{
    {CacheModel::kSpec, "spec", "SPEC §8's trie of C nodes"},
    {CacheModel::kVllm, "vllm", "vLLM's block pool of C blocks (SPEC §9.2)"},
    {CacheModel::kSglang, "sglang",
     "SGLang's radix cache of C pages, evicting whole edges (SPEC §9.3)"},
}};
static_assert(InValueOrder(kCacheModels));

// How much of a request a match may cover (SPEC §9.1).
enum class MatchLimit : std::uint8_t {
  kAll,
  // At most n - 1 tokens, then whole pages: floor((n - 1) / P) pages, as
  // serving systems compute the last prompt token for the logits.
  kAllButLast,
};

inline constexpr std::array<NamedValue<MatchLimit>, 2> kMatchLimits = {{
    {MatchLimit::kAll, "all", "a match may cover the whole request"},
    {MatchLimit::kAllButLast, "all-but-last",
     "a match covers at most n - 1 tokens, in whole pages"},
}};
static_assert(InValueOrder(kMatchLimits));

// When model sglang evicts (SPEC §9.3).
enum class EvictionTrigger : std::uint8_t {
  // After the insert, down to C pages (SGLang's cache_finished_req).
  kAfterInsert,
  // Before the insert, the request's whole demand (SGLang's scheduler
  // allocating a new request), refusing the request if that is not enough.
  kOnAllocate,
};

inline constexpr std::array<NamedValue<EvictionTrigger>, 2> kEvictionTriggers =
    {{
        {EvictionTrigger::kAfterInsert, "after-insert",
         "evict down to C pages after each insert"},
        {EvictionTrigger::kOnAllocate, "on-allocate",
         "evict a new request's whole demand before its insert, refusing it "
         "when that is not enough"},
    }};
static_assert(InValueOrder(kEvictionTriggers));

// SPEC §9.4: the match limit a model has when none is given ("all", but
// "all-but-last" for vllm). O(1). Thread-safe.
constexpr MatchLimit DefaultMatchLimit(CacheModel model) {
  return model == CacheModel::kVllm ? MatchLimit::kAllButLast
                                    : MatchLimit::kAll;
}

// SPEC §9.1: the most tokens a match of an n-token request may cover under
// `limit` with pages of `page_size` tokens: n, or floor((n - 1) / P) * P
// (0 when n = 0). O(1). Thread-safe.
constexpr std::uint64_t MatchLimitTokens(MatchLimit limit, std::uint64_t n,
                                         std::uint64_t page_size) {
  if (limit == MatchLimit::kAll) return n;
  return n == 0 ? 0 : (n - 1) / page_size * page_size;
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
  // SPEC §9: the rules the cache follows. For vllm the capacity counts
  // blocks (pages), for sglang pages of P tokens; the policy orders vllm's
  // nothing (lru, its free queue's order, is the only one allowed) and
  // sglang's edges (lru or fifo). ModelOptionsProblem says which
  // combinations SPEC §9.4 admits.
  CacheModel model = CacheModel::kSpec;
  MatchLimit match_limit = MatchLimit::kAll;  // DefaultMatchLimit(model)
  EvictionTrigger trigger = EvictionTrigger::kAfterInsert;  // sglang only

  bool bounded() const { return capacity != kUnbounded; }
  friend bool operator==(const CacheOptions&, const CacheOptions&) = default;
};

// A combination of options SPEC §9.4 refuses: the member (as a replay
// document names it: "match_limit", "trigger", "policy") and what is wrong,
// e.g. {"policy", "model \"vllm\" has one order, \"lru\" (its free queue's);
// found \"fifo\""}.
struct ModelOptionsProblem {
  std::string_view member;
  std::string message;
};

// The first SPEC §9.4 rule `options` breaks, or nullopt. `trigger_given`:
// the trigger was given at all (any trigger is an error unless the model is
// sglang, whatever its value). The rules: with vllm the match limit is
// "all-but-last" and the policy "lru"; with sglang the policy is "lru" or
// "fifo" (SPEC §9.3 orders edges by access or creation time only); a
// trigger needs sglang. O(1). Thread-safe.
inline std::optional<ModelOptionsProblem> FindModelOptionsProblem(
    const CacheOptions& options, bool trigger_given) {
  const auto quoted = [](std::string_view name) {
    // Appended, not "\"" + std::string(name) + "\"": GCC 12 warns on that
    // form (-Wrestrict, a known false positive of its operator+ inlining).
    std::string text(1, '"');
    text.append(name).push_back('"');
    return text;
  };
  const std::string model = quoted(NameOf(kCacheModels, options.model));
  if (trigger_given && options.model != CacheModel::kSglang) {
    return ModelOptionsProblem{
        "trigger", "a trigger needs model \"sglang\"; the model is " + model};
  }
  switch (options.model) {
    case CacheModel::kSpec:
      break;
    case CacheModel::kVllm:
      if (options.match_limit != MatchLimit::kAllButLast) {
        return ModelOptionsProblem{
            "match_limit",
            "model \"vllm\" never matches a request's last token: its match "
            "limit is \"all-but-last\", found " +
                quoted(NameOf(kMatchLimits, options.match_limit))};
      }
      if (options.policy != EvictionPolicy::kLru) {
        return ModelOptionsProblem{
            "policy",
            "model \"vllm\" has one order, its free queue's: the policy is "
            "\"lru\", found " +
                quoted(EvictionPolicyName(options.policy))};
      }
      break;
    case CacheModel::kSglang:
      if (options.policy != EvictionPolicy::kLru &&
          options.policy != EvictionPolicy::kFifo) {
        return ModelOptionsProblem{
            "policy",
            "model \"sglang\" orders edges by access time (\"lru\") or "
            "creation time (\"fifo\"), found " +
                quoted(EvictionPolicyName(options.policy))};
      }
      break;
  }
  return std::nullopt;
}

// Returns `options` if its page size is one SPEC §8 allows, 1 to
// kMaxPageSize tokens; throws std::invalid_argument("page size N is outside
// 1 to 2^31 - 1") otherwise. O(1). Thread-safe.
inline const CacheOptions& CheckPageSize(const CacheOptions& options) {
  if (options.page_size < 1 || options.page_size > kMaxPageSize) {
    throw std::invalid_argument("page size " +
                                std::to_string(options.page_size) +
                                " is outside 1 to 2^31 - 1");
  }
  return options;
}

// Checks that `options` describe a cache a model engine of `model` builds
// (SPEC §9; its engines are in engines/all_engines.h): options.model is
// `model`, FindModelOptionsProblem finds nothing and the page size is
// allowed. Throws std::invalid_argument otherwise: "<engine>: the model is
// not vllm", "<member>: <problem>" or CheckPageSize's. O(1). Thread-safe.
inline void CheckModelEngineOptions(std::string_view engine, CacheModel model,
                                    const CacheOptions& options) {
  if (options.model != model) {
    throw std::invalid_argument(std::string(engine) + ": the model is not " +
                                std::string(NameOf(kCacheModels, model)));
  }
  if (const auto problem = FindModelOptionsProblem(options, false)) {
    throw std::invalid_argument(std::string(problem->member) + ": " +
                                problem->message);
  }
  CheckPageSize(options);
}

// Checks that `options` describe what a trie engine (a PrefixCacheEngine
// over tokens) builds: model spec and page size 1, pages being PagedIndex's
// job and the other models their own engines' (engines/all_engines.h).
// Throws std::invalid_argument naming `engine` and the problem otherwise.
// O(1). Thread-safe.
inline void CheckTrieEngineOptions(std::string_view engine,
                                   const CacheOptions& options) {
  if (options.model != CacheModel::kSpec) {
    throw std::invalid_argument(
        std::string(engine) + ": a trie engine follows model \"spec\"; model " +
        "\"" + std::string(NameOf(kCacheModels, options.model)) +
        "\" is its own structure's");
  }
  if (options.page_size != 1) {
    throw std::invalid_argument(
        std::string(engine) +
        ": an engine indexes tokens (page size 1); pages of more tokens are "
        "PagedIndex's job");
  }
}

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
