// BM_Build, BM_Match and BM_Replay for every engine in kvprefix::AllEngines,
// and for engines chosen by name at run time (plugins, kvprefix's own
// through the PrefixIndex interface).
#ifndef KVPREFIX_BENCH_ENGINE_BENCH_H_
#define KVPREFIX_BENCH_ENGINE_BENCH_H_

#include <string>
#include <string_view>
#include <vector>

#include "bench/catalog.h"

namespace kvprefix::bench {

// Registers BM_<Op>/<engine>/<workload>/<size> for every engine of
// AllEngines (called through its concrete type: no virtual call per token)
// and every operation each workload of `catalog` asks for. `catalog` must
// outlive the benchmark run. Not thread-safe (call once from main).
//
// Every benchmark reports items = tokens (cached tokens for Build, request
// tokens for Match, trace tokens for Replay) and the counters
//   nodes           node_count() of the built index;
//   bytes_per_node  memory_bytes() / node_count() (left out when the engine
//                   reports 0 bytes for its nodes: a plugin without
//                   memory_bytes, whose memory is unknown);
// Match adds hit_ratio (matched / request tokens), answer_digest (a
// checksum of every (matched_length, cache_node)), which must be equal for
// all engines on one workload, and length_digest (of the matched lengths
// alone: equal for a cache with its own node IDs too, SPEC §1); Replay adds
// hit_ratio.
void RegisterEngineBenchmarks(const std::vector<WorkloadSpec>& catalog);

// An engine named at run time (`--kvprefix_engine=NAME`): `name` as
// engines/registry.h's MakeEngine takes it, `label` the <engine> part of
// its benchmark names.
struct RuntimeEngine {
  std::string name;
  std::string label;
};

// The RuntimeEngine of `name`: a plugin, "plugin:PATH", is labelled
// "plugin:<the name in its table>" (loading it once, to read the name); a
// built-in engine "virtual:<name>" (the same code as its direct rows, called
// through the PrefixIndex interface, to show what the virtual call costs).
// Throws std::invalid_argument (message: the valid names) for an unknown
// name or a plugin whose table name holds '/' or a space, PluginError
// (plugin/plugin_engine.h) for a plugin that cannot be loaded. Thread-safe.
RuntimeEngine ResolveRuntimeEngine(std::string_view name);

// Registers for `engine` every benchmark RegisterEngineBenchmarks registers
// for one engine of AllEngines (BM_Curve excepted: it is radix's own), named
// BM_<Op>/<engine.label>/<workload>/<size>[/<cache>], with the same
// counters, on an engine made by MakeEngine per index built and called
// through PrefixIndex: one indirect call per sequence, and for a plugin the
// C ABI's (plugin/kvprefix_plugin.h). A built-in engine skips the
// workloads its direct rows skip (the reference's large ones); a plugin
// runs them all. An engine that fails (a plugin refusing a capacity, or
// throwing) skips that benchmark with the message. `catalog` must outlive
// the run. Not thread-safe (call from main, before the run).
void RegisterRuntimeEngineBenchmarks(const std::vector<WorkloadSpec>& catalog,
                                     const RuntimeEngine& engine);

}  // namespace kvprefix::bench

#endif  // KVPREFIX_BENCH_ENGINE_BENCH_H_
