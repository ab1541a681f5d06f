// The list of built-in engines: the one place that names every engine type.
// The registry, the typed test suites, the fuzzers and the benchmarks all
// take their engines from here, so adding an engine is one line below.
//
// It lives in engines/, above reference/ and optimized/, because it includes
// every engine; the core (kvprefix/) includes none.
#ifndef KVPREFIX_ENGINES_ALL_ENGINES_H_
#define KVPREFIX_ENGINES_ALL_ENGINES_H_

#include "models/sglang/radix_cache.h"
#include "models/sglang/reference_radix_cache.h"
#include "models/vllm/block_pool.h"
#include "models/vllm/reference_block_pool.h"
#include "optimized/double_array_trie.h"
#include "optimized/hash_trie.h"
#include "optimized/radix_trie.h"
#include "reference/reference_trie.h"

namespace kvprefix {

// A compile-time list of engine types.
template <typename... Engines>
struct EngineList {
  // Calls f.template operator()<E>() for every engine E, in list order.
  template <typename F>
  static void ForEach(F&& f) {
    (f.template operator()<Engines>(), ...);
  }
};

// Every built-in engine, the reference first. Order is the order of
// `kvprefix engines`, of report columns and of differential checks.
using AllEngines =
    EngineList<ReferenceTrie, HashTrie, DoubleArrayTrie, RadixTrie>;

// Every built-in engine except the reference: the engines under test.
using OptimizedEngines = EngineList<HashTrie, DoubleArrayTrie, RadixTrie>;

// The engines of each model of SPEC §9, the reference first: structures of
// their own (a block pool, a radix tree of whole-page edges), each named as
// the engine it belongs to (kName "reference", "hash", "radix"), so that
// `--engine radix --model sglang` selects the radix engine's SGLang cache.
// An engine absent from a model's list refuses that model by name
// (MakeEngine). Model spec is AllEngines.
using VllmEngines = EngineList<ReferenceBlockPool, BlockPool>;
using SglangEngines = EngineList<ReferenceRadixCache, RadixCache>;

}  // namespace kvprefix

#endif  // KVPREFIX_ENGINES_ALL_ENGINES_H_
