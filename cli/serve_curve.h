// `curve --max-running B`: SPEC §10's serving replay at several capacities
// (one replay per capacity, --jobs at a time), the hit ratio and the waits
// against capacity at a given concurrency.
#ifndef KVPREFIX_CLI_SERVE_CURVE_H_
#define KVPREFIX_CLI_SERVE_CURVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cache_choice.h"
#include "cli/commands.h"
#include "cli/serving.h"

namespace kvprefix::cli {

struct ServeCurveRequest {
  const TraceArguments& trace;  // a Mooncake trace
  const ChosenCache& cache;     // its capacity is replaced by each below
  const ServeFlags& serve;
  std::vector<std::uint64_t> capacities;  // in nodes (blocks, pages)
  unsigned jobs = 1;
  std::string format;  // "jsonl" or "csv"
  std::string output;  // a file, "-" for standard output
};

// Reads the trace with its timestamps and output lengths, replays it at
// each capacity (RunServeReplay's engine rule), and writes one row per
// capacity, in the order given: jsonl {"capacity":C,"capacity_bytes":B|
// null,"max_running":B,"matched_tokens":M,"request_tokens":R,"hit_ratio":
// M/R,"waited_for_room":W,"refused":F,"mean_wait_us":..,"p50_wait_us":..,
// "p99_wait_us":..,"makespan_us":..}, csv the same columns. Nothing is
// written unless every replay succeeds. Throws as RunServeReplay and the
// trace reader.
void RunServeCurve(const ServeCurveRequest& request);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_SERVE_CURVE_H_
