// The cache options a cache under test implements: the models, match
// limits, policies, page sizes and capacities it takes. A cache that
// implements only some (lru and page size 1 only, say) names them, and
// every route that generates inputs for it generates only those: `kvprefix
// verify --models spec --match-limits all --policies lru --page-sizes 1
// --capacities unbounded,bounded`, the differential fuzzer's
// KVPREFIX_FUZZ_MODELS, KVPREFIX_FUZZ_MATCH_LIMITS, KVPREFIX_FUZZ_POLICIES,
// KVPREFIX_FUZZ_PAGE_SIZES and KVPREFIX_FUZZ_CAPACITIES, a user's fuzz target
// (FuzzCheckOptions::implemented) and Python's kvprefix.testing.check(models=,
// match_limits=, policies=, page_sizes=, capacities=): the same five names,
// the same values, the same messages. An input the cache still refuses (its
// create, make_cache or command answers a refusal) is skipped and counted,
// never a failure.
#ifndef KVPREFIX_CHECKING_IMPLEMENTED_OPTIONS_H_
#define KVPREFIX_CHECKING_IMPLEMENTED_OPTIONS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/sequence_list.h"

namespace kvprefix::checking {

// The capacities a cache implements; none given (empty()): any.
struct ImplementedCapacities {
  bool unbounded = false;                  // "unbounded": never evicting
  bool any_bounded = false;                // "bounded": every capacity
  std::vector<std::uint64_t> values = {};  // these capacities (nodes, ...)

  bool empty() const { return !unbounded && !any_bounded && values.empty(); }
  friend bool operator==(const ImplementedCapacities&,
                         const ImplementedCapacities&) = default;
};

// What a cache implements; an empty list means "every one".
struct ImplementedOptions {
  std::vector<CacheModel> models = {};
  std::vector<MatchLimit> match_limits = {};
  std::vector<EvictionPolicy> policies = {};
  std::vector<std::uint64_t> page_sizes = {};  // 1 to kMaxPageSize each
  ImplementedCapacities capacities = {};

  // True when nothing is restricted (every list empty).
  bool all() const {
    return models.empty() && match_limits.empty() && policies.empty() &&
           page_sizes.empty() && capacities.empty();
  }
  friend bool operator==(const ImplementedOptions&,
                         const ImplementedOptions&) = default;
};

// The option names as given on one route, for its messages and flags:
// verify's "--models", Python's "models", the fuzzer's
// "KVPREFIX_FUZZ_MODELS".
struct ImplementedOptionNames {
  std::string_view models = "--models";
  std::string_view match_limits = "--match-limits";
  std::string_view policies = "--policies";
  std::string_view page_sizes = "--page-sizes";
  std::string_view capacities = "--capacities";
};

// The values of each option as text: every item may itself be a
// comma-separated list ("lru,fifo"), so a flag given once with a list, a
// repeated flag, a Python list and an environment variable all read the
// same. Models, match limits and policies by their names (kCacheModels,
// kMatchLimits, kEvictionPolicies); page sizes as integers 1 to 2^31 - 1;
// capacities as "unbounded", "bounded" (any capacity) or an integer 0 to 2^64
// - 2.
struct ImplementedOptionValues {
  std::vector<std::string> models = {};
  std::vector<std::string> match_limits = {};
  std::vector<std::string> policies = {};
  std::vector<std::string> page_sizes = {};
  std::vector<std::string> capacities = {};
};

// Parses `values`, then checks that every model listed can run with a
// match limit and a policy listed (SPEC §9.4: vllm takes all-but-last and
// lru only, sglang lru or fifo), and that some model can.
// Throws std::invalid_argument naming the option as `names` spells it and
// the problem: "--policies: unknown policy 'lr' (expected lru, fifo or
// lfu)", "--page-sizes: item 2 is empty", "--models: model \"vllm\" takes
// the policy lru only, which --policies leaves out". O(items). Thread-safe.
ImplementedOptions ParseImplementedOptions(
    const ImplementedOptionValues& values,
    const ImplementedOptionNames& names = {});

// The flags that say `implemented` on verify's command line, in the order
// --models, --match-limits, --policies, --page-sizes, --capacities, each
// with its values
// comma-separated ("--policies lru --page-sizes 1"); "" for all(). The
// other routes print the same text. O(values). Thread-safe.
std::string ImplementedOptionsFlags(const ImplementedOptions& implemented);

// True if `implemented` lists every option of `options` (an empty list
// takes any). O(values). Thread-safe.
bool Implements(const ImplementedOptions& implemented,
                const CacheOptions& options);

// Makes `options` (valid by SPEC §9.4, of a document or fuzz input whose
// requests are `requests`) one that `implemented` lists, changing only
// what it does not list, from `bits` (any well-mixed 64-bit number,
// e.g. a hash of the seed), deterministically:
//  - a model not listed becomes a listed one, with trigger after-insert;
//  - a match limit not listed (or that the model refuses) becomes a
//    listed one the model takes;
//  - a policy not listed (or that the model refuses) becomes a listed one
//    the model takes;
//  - a page size not listed becomes a listed one; a bounded capacity is
//    scaled by the requests' distinct prefixes at the two page sizes, so
//    that the input evicts about as often;
//  - a capacity not listed becomes a listed value, unbounded, or for
//    "bounded" 20% to 99% of the requests' distinct prefixes (in pages),
//    so that it evicts.
// Requires a `implemented` that ParseImplementedOptions accepts. Leaves
// options Implements accepts and FindModelOptionsProblem accepts.
// O(requests' tokens * log nodes) when a capacity is scaled or drawn,
// else O(values). Thread-safe.
void RestrictOptions(const ImplementedOptions& implemented, std::uint64_t bits,
                     const SequenceList& requests, CacheOptions& options);

}  // namespace kvprefix::checking

#endif  // KVPREFIX_CHECKING_IMPLEMENTED_OPTIONS_H_
