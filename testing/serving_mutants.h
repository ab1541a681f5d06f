// Serving mutants: deliberately broken request lifecycles (SPEC §10.4), for
// tests only. Each is a small ServingCache decorator over the reference
// engine's own lifecycle (MakeServingCache("reference", options)) that
// breaks one rule by calling the real cache at the wrong moments, so the bug
// is the only difference from the reference. The serving fuzz target
// (fuzz/serving_fuzzer.cc, KVPREFIX_FUZZ_MUTANT; fuzz/teeth.sh) and the
// teeth test (tests/property/teeth_test.cc) must catch each one; the
// baseline passes every call on unchanged and must pass both. Each bug is
// marked "BUG(<mutant name>)" in serving_mutants.cc.
//
// Thread safety: as ServingCache (one caller at a time).
#ifndef KVPREFIX_TESTING_SERVING_MUTANTS_H_
#define KVPREFIX_TESTING_SERVING_MUTANTS_H_

#include <memory>
#include <string_view>
#include <vector>

#include "kvprefix/cache.h"
#include "kvprefix/request.h"

namespace kvprefix::test {

// The rule a serving mutant breaks.
enum class ServingBug {
  kNone,  // correct: the baseline
  // spec: an attempt only peeks (pins nothing), the finish does the whole
  // §8 access (match, insert, touch, evict): evictions take pinned nodes,
  // and nothing is ever pinned.
  kSpecIgnoresPins,
  // sglang "on-allocate": the prompt is inserted at the finish (prefill
  // end and finish both then) instead of at the prefill end.
  kSglangInsertsAtFinish,
  // spec: the attempt caches the prompt right away (an insert with its
  // touch and eviction), instead of at the finish.
  kSpecCachesAtStart,
  // vllm and sglang "on-allocate": a refused attempt leaves the first
  // page of its prompt admitted, never finished (a lock and held slots, or
  // a referenced block, kept for ever).
  kRefusalKeepsPin,
};

// "serving-mutant-baseline", "serving-mutant-spec-ignores-pins", ...
std::string_view ServingMutantName(ServingBug bug);

// Every serving mutant's name but the baseline's, in ServingBug order.
std::vector<std::string_view> ServingMutantNames();

// The bug named `name` (a ServingMutantName, the baseline's too); throws
// std::invalid_argument listing the names for any other.
ServingBug ParseServingMutant(std::string_view name);

// `options` made ones the mutant's bug shows in (and SPEC §9.4 accepts):
// model spec for the spec mutants, sglang "on-allocate" for the others
// (policy lru or fifo kept, else lru); the baseline's are left as they are.
// Capacity, page size and match limit (but vllm's) are kept. O(1).
CacheOptions ServingMutantOptions(ServingBug bug, CacheOptions options);

// A new, empty serving cache with `options` carrying `bug`, over the
// reference's lifecycle; name() is the mutant's name. Throws as
// MakeServingCache.
std::unique_ptr<ServingCache> MakeServingMutant(ServingBug bug,
                                                const CacheOptions& options);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_SERVING_MUTANTS_H_
