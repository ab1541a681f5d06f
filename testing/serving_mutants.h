// Serving mutants: deliberately broken request lifecycles (SPEC §10.4) and
// worker rules (§10.3), for tests only. A lifecycle mutant is a small
// ServingCache decorator over the reference engine's own lifecycle
// (MakeServingCache("reference", options)) that breaks one rule by calling
// the real cache at the wrong moments, so the bug is the only difference
// from the reference; a worker mutant is the reference replayed by the
// serving loop (serve/serving_loop.h) under rules with one of
// serve/serving_rules.h's broken (ServingMutantReplay). The serving fuzz target
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

#include "checking/serving_check.h"
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
  // vllm: a started request's prompt blocks are allocated but hold no
  // chain until its finish (vLLM caches a request's full prompt blocks as
  // it allocates them, SPEC §9.2 step 5): a request that starts while
  // another with the same prefix runs finds none of it. Emulated over the
  // reference: a match stops at the first page that only running requests'
  // own blocks hold, and the prompt's pages past it are admitted as tokens
  // nobody has (so they take blocks of their own, found by no later
  // request: the one way the emulation differs from the bug's vLLM, which
  // would hash them at the finish).
  kVllmCachesAtFinish,
  // Worker (§10.3 step 3): a waiting head does not stop the start loop;
  // the requests behind it are attempted (and may start) before it.
  kSkipsWaitingHead,
  // Worker (§10.3 step 2): the arrivals at an instant are attempted before
  // that instant's prefill ends and finishes are applied (then the start
  // loop runs again after them).
  kArrivalsBeforeFinishes,
};

// "serving-mutant-baseline", "serving-mutant-spec-ignores-pins", ...
std::string_view ServingMutantName(ServingBug bug);

// Every serving mutant's name but the baseline's, in ServingBug order.
std::vector<std::string_view> ServingMutantNames();

// The bug named `name` (a ServingMutantName, the baseline's too); throws
// std::invalid_argument listing the names for any other.
ServingBug ParseServingMutant(std::string_view name);

// `options` made ones the mutant's bug shows in (and SPEC §9.4 accepts):
// model spec for the spec mutants, vllm (lru, all-but-last) for the vllm
// one and the waiting head's (vllm waits for room), unchanged for
// arrivals before finishes, sglang "on-allocate" for the others (policy lru or
// fifo kept, else lru); the baseline's are left as they are. Capacity, page
// size and match limit (but vllm's) are kept. O(1).
CacheOptions ServingMutantOptions(ServingBug bug, CacheOptions options);

// A new, empty serving cache with `options` carrying `bug`, over the
// reference's lifecycle (a worker mutant's: the reference's lifecycle
// unchanged); name() is the mutant's name. Throws as MakeServingCache.
std::unique_ptr<ServingCache> MakeServingMutant(ServingBug bug,
                                                const CacheOptions& options);

// How a mutant's cache is replayed: the serving loop under the rules a
// worker mutant breaks, nullptr (ServeReplay) for every other bug. Pass it
// to checking::CheckServeInput. O(1).
checking::ServeReplayer ServingMutantReplay(ServingBug bug);

}  // namespace kvprefix::test

#endif  // KVPREFIX_TESTING_SERVING_MUTANTS_H_
