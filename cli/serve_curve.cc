#include "cli/serve_curve.h"

#include <fmt/format.h>

#include <optional>

#include "cli/byte_sizes.h"
#include "cli/parallel.h"
#include "cli/progress.h"
#include "io/input_error.h"
#include "io/json_output.h"
#include "io/mooncake.h"
#include "io/serve_answer.h"

namespace kvprefix::cli {
namespace {

constexpr char kColumns[] =
    "capacity,capacity_bytes,max_running,matched_tokens,request_tokens,"
    "hit_ratio,waited_for_room,refused,mean_wait_us,p50_wait_us,p99_wait_us,"
    "makespan_us\n";

// One row: the totals at `capacity`.
std::string Row(const ServeCurveRequest& request, std::uint64_t capacity,
                const ServeTotals& totals, bool csv) {
  const std::optional<std::uint64_t> bytes =
      CapacityBytes(capacity, request.cache.node_bytes);
  std::string hit_ratio, mean_wait;
  AppendJsonDouble(
      NearestQuotient(totals.matched_tokens, totals.request_tokens), hit_ratio);
  AppendJsonDouble(NearestQuotient(totals.total_wait_us, totals.requests),
                   mean_wait);
  const std::string bytes_text =
      bytes ? fmt::format("{}", *bytes) : (csv ? "" : "null");
  if (csv) {
    return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", capacity,
                       bytes_text, request.serve.values.max_running,
                       totals.matched_tokens, totals.request_tokens, hit_ratio,
                       totals.waited_for_room, totals.refused, mean_wait,
                       totals.p50_wait_us, totals.p99_wait_us,
                       totals.makespan_us);
  }
  return fmt::format(
      "{{\"capacity\":{},\"capacity_bytes\":{},\"max_running\":{},"
      "\"matched_tokens\":{},\"request_tokens\":{},\"hit_ratio\":{},"
      "\"waited_for_room\":{},\"refused\":{},\"mean_wait_us\":{},"
      "\"p50_wait_us\":{},\"p99_wait_us\":{},\"makespan_us\":{}}}\n",
      capacity, bytes_text, request.serve.values.max_running,
      totals.matched_tokens, totals.request_tokens, hit_ratio,
      totals.waited_for_room, totals.refused, mean_wait, totals.p50_wait_us,
      totals.p99_wait_us, totals.makespan_us);
}

}  // namespace

void RunServeCurve(const ServeCurveRequest& request) {
  Progress progress;
  TraceServing serving;
  ServeInput input;
  input.replay.requests = ReadTrace(request.trace, &serving);
  input.arrivals_us = std::move(serving.arrivals_us);
  input.output_lengths = std::move(serving.output_lengths);
  input.serve = ApplyServeFlags(request.serve, {});
  std::vector<ServeTotals> totals(request.capacities.size());
  WhileDoing("replaying", [&] {
    ForEachInParallel(request.capacities.size(), request.jobs,
                      [&](std::size_t i) {
                        ChosenCache cache = request.cache;
                        cache.options.capacity = request.capacities[i];
                        ServeInput one = input;
                        one.replay.options = cache.options;
                        totals[i] = RunServeReplay(one, cache).totals;
                      });
  });
  progress.Note(fmt::format("served {} requests at {} capacities",
                            input.replay.requests.size(),
                            request.capacities.size()));
  const bool csv = request.format == "csv";
  std::string text = csv ? kColumns : "";
  for (std::size_t i = 0; i < totals.size(); ++i) {
    text += Row(request, request.capacities[i], totals[i], csv);
  }
  WriteFileAtomically(request.output, text);
}

}  // namespace kvprefix::cli
