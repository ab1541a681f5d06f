// `replay`'s SPEC §10 flags (--max-running, --prefill-us-per-token,
// --decode-us-per-token, --overhead-us, --output-mode) and the serving
// replay they start: a document with §10 members, or any of these flags,
// is replayed with requests in flight (serve/serving_replay.h).
#ifndef KVPREFIX_CLI_SERVING_H_
#define KVPREFIX_CLI_SERVING_H_

#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <string>

#include "cli/cache_choice.h"
#include "io/kv_events.h"
#include "kvprefix/request.h"
#include "router/router_spec.h"

namespace kvprefix::cli {

struct ServeFlags {
  ServeOptions values;
  std::string output_mode{NameOf(kOutputModes, OutputMode::kNone)};
  // --max-running, the three rates, --output-mode; null: not added.
  std::array<CLI::Option*, 5> options = {};
};

// Adds the five flags (SPEC §10.1's ranges; a usage error outside them).
void AddServeFlags(CLI::App& command, ServeFlags& flags);

// True if any of them was given. O(1).
bool ServeFlagsGiven(const ServeFlags& flags);

// `options` (a document's, or the defaults) with each flag given in its
// place (SPEC §10.1: "options given replace the document's members").
ServeOptions ApplyServeFlags(const ServeFlags& flags, ServeOptions options);

// SPEC §10's answer for `input` on `cache.engine` with `cache.options`. An
// engine without a request lifecycle (kvprefix/request.h: every one but the
// reference, and plugins) is exact only one request at a time with output
// "none" (§10.7): anything else is refused with std::invalid_argument
// naming the engine and what to use. Throws what MakeServingCache and
// ServeReplay throw. With `events`, the cache reports its pages and the
// replay its times and arrivals to it (SPEC §11.11; io/kv_events.h): an
// engine that does not report pages (only the reference caches do), or a
// document with namespaces, is refused with std::invalid_argument naming
// --kv-events.
ServeAnswer RunServeReplay(const ServeInput& input, const ChosenCache& cache,
                           KvEventLog* events = nullptr);

// SPEC §11.8's answer for `input` on routing.workers workers, each with a
// cache as RunServeReplay makes it (and refuses it), routed by
// routing.router with the defaults of `unit`. Throws what RunServeReplay
// and RoutedReplay (serve/routed_replay.h) throw. `events`: each worker's
// cache reports to events->worker(w), as RunServeReplay's.
RoutedAnswer RunRoutedReplay(const ServeInput& input,
                             const RoutingSpec& routing,
                             const ChosenCache& cache, TokenUnit unit,
                             KvEventLog* events = nullptr);

// The settings members of a serving replay's summary line, after the
// cache's: "max_running":B,"prefill_us_per_token":..,"decode_us_per_token":
// ..,"overhead_us":..,"output":"none". O(1).
std::string ServeSettingsJson(const ServeOptions& options);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_SERVING_H_
