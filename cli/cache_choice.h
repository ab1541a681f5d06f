// The one place a cache flag (cache_flags.h) goes through on its way to the
// engine: ChooseCache turns the flags, and a replay document's own cache
// where there is one, into the cache, the bytes of one of its nodes and the
// engine that runs it, checked as SPEC §8 and §9.4 say. `replay`, `curve`,
// `match` and `verify` all call it, so a flag means the same in each.
#ifndef KVPREFIX_CLI_CACHE_CHOICE_H_
#define KVPREFIX_CLI_CACHE_CHOICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/byte_sizes.h"
#include "cli/cache_flags.h"
#include "io/replay_document.h"
#include "kvprefix/cache.h"

namespace kvprefix::cli {

// A replay document's own cache (SPEC §8, §9.4), which the flags given
// replace member by member.
struct DocumentCache {
  const CacheOptions& options;   // as read, defaults filled in
  const DocumentPlaces& places;  // where it set each member
  std::string_view path;         // the document's file, named in errors
};

// What the flags choose.
struct ChosenCache {
  CacheOptions options;    // the engine's cache
  UInt128 node_bytes = 0;  // KV bytes of one node; 0 without a byte count
  std::string engine;      // the engine that runs it
};

// The cache `flags` describe, with `symbol_tokens` tokens of KV cache in
// one symbol of the trie before paging (512 for a Mooncake block, else 1);
// with `document`, a replay document's cache, each member replaced by its
// flag if given. Then:
//  * page size: --page-size, else the document's (else 1);
//  * node_bytes: --kv-bytes-per-token x symbol_tokens x page size (0 without
//    the flag);
//  * capacity: --capacity (given, even as "", it must be a capacity: a node
//    count, or a size holding floor(size / node_bytes) nodes), else the
//    document's, else unbounded. For vllm it counts blocks (pages), for
//    sglang pages of P tokens;
//  * model, policy, match limit and trigger, each alike (SPEC §9.4): the
//    flag's if given, else the document's if it set the member, else the
//    default (the match limit DefaultMatchLimit(model));
//  * engine: --engine if given, else ModelEngineName(model).
// Throws std::invalid_argument (a usage error) for a capacity that is not a
// decimal integer or a size, a size without --kv-bytes-per-token, or a
// combination SPEC §9.4 refuses (FindModelOptionsProblem; a document's
// member a flag made invalid is refused, never dropped), naming the flag
// ("--policy: model \"vllm\" has one order, ...") or, for a document member
// no flag replaced, its place in the file: "doc.json: $.trigger (set by
// the document, not replaced by --trigger): a trigger needs model
// \"sglang\"; ...". O(digits).
ChosenCache ChooseCache(const CacheArguments& flags,
                        std::uint64_t symbol_tokens,
                        const std::optional<DocumentCache>& document = {});

// The engine a command runs model `model` on when --engine is not given:
// DefaultEngineName() if it implements the model, else the model's last
// (EngineNames(model) lists the reference first; the others are faster).
// O(engines). Thread-safe.
std::string_view ModelEngineName(CacheModel model);

// Summary members for a JSON line: "capacity":C|null,"policy":"lru",
// "page_size":P,"model":"spec","match_limit":"all" (then "trigger":T for
// sglang),"capacity_bytes":N (only with a byte count per node and a
// capacity; null from 2^64 bytes on: CapacityBytes). O(1).
std::string CacheSummaryJson(const ChosenCache& cache);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_CACHE_CHOICE_H_
