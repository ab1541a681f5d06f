// BM_Build, BM_Match and BM_Replay for every engine in kvprefix::AllEngines.
#ifndef KVPREFIX_BENCH_ENGINE_BENCH_H_
#define KVPREFIX_BENCH_ENGINE_BENCH_H_

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
//   bytes_per_node  memory_bytes() / node_count();
// Match adds hit_ratio (matched / request tokens) and answer_digest (a
// checksum of every (matched_length, cache_node)), which must be equal for
// all engines on one workload; Replay adds hit_ratio.
void RegisterEngineBenchmarks(const std::vector<WorkloadSpec>& catalog);

}  // namespace kvprefix::bench

#endif  // KVPREFIX_BENCH_ENGINE_BENCH_H_
