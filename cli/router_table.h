// `replay --workers 1,2,4 --router all`: a table of SPEC §11 routed
// replays of one input, one per (router, N), run --jobs at a time on every
// core, written as JSON Lines or CSV, optionally drawn (hit ratio and
// imbalance against N, one line per router).
#ifndef KVPREFIX_CLI_ROUTER_TABLE_H_
#define KVPREFIX_CLI_ROUTER_TABLE_H_

#include <string>
#include <vector>

#include "cli/cache_choice.h"
#include "kvprefix/request.h"
#include "router/router_spec.h"

namespace kvprefix::cli {

struct RouterTableRequest {
  const ServeInput& input;        // read whole; shared, read-only, by the rows
  const ChosenCache& cache;       // each worker's, as RunRoutedReplay takes it
  std::vector<RoutingSpec> rows;  // one replay each (RoutingTableRows)
  TokenUnit unit = TokenUnit::kToken;
  unsigned jobs = 1;
  std::string format;  // "jsonl" or "csv"
  std::string output;  // a file, "-" for standard output
  std::string plot;    // "" or a .png or .svg file (DrawRouterTable)
  std::string title;   // the plot's
};

// The columns of a row, in order: router (its name), workers (N), then
// §11.8's totals requests, request_tokens, matched_tokens, hit_ratio,
// imbalance_requests, imbalance_tokens, imbalance_uncached, refused,
// waited_for_room, evicted_pages, peak_pinned, peak_running, peak_queued,
// mean_wait_us, p50_wait_us, p99_wait_us, makespan_us, each written as
// `replay --workers N --router NAME` writes it (so a row equals that
// replay's totals), and replay_seconds (the row's replay time, the only
// column that changes from run to run).
inline constexpr const char* kRouterTableColumns =
    "router,workers,requests,request_tokens,matched_tokens,hit_ratio,"
    "imbalance_requests,imbalance_tokens,imbalance_uncached,refused,"
    "waited_for_room,evicted_pages,peak_pinned,peak_running,peak_queued,"
    "mean_wait_us,p50_wait_us,p99_wait_us,makespan_us,replay_seconds";

// Replays each of request.rows (RunRoutedReplay with request.cache and
// unit) on min(jobs, rows) threads (cli/parallel.h), then writes one row
// per replay in request.rows' order: jsonl {"router":"name","workers":N,
// ...} with kRouterTableColumns' members, or csv with its header line;
// with request.plot, the chart too (WritePlotWithOutput: both or neither).
// Progress on stderr: the rows done (when stderr is a terminal) and a
// closing note with the wall time. Nothing is written unless every replay
// succeeds; throws the first replay's exception (RunRoutedReplay's),
// IoError when writing fails. Memory: one replay's answer per thread at a
// time. Not thread-safe (writes stdout or files).
void RunRouterTable(const RouterTableRequest& request);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_ROUTER_TABLE_H_
