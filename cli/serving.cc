#include "cli/serving.h"

#include <fmt/format.h>

#include <stdexcept>

#include "cli/option_checks.h"
#include "engines/registry.h"
#include "kvprefix/namespaces.h"
#include "serve/routed_replay.h"
#include "serve/serving_replay.h"

namespace kvprefix::cli {
namespace {

constexpr char kGroup[] = "Serving replay (SPEC §10)";

// Adds one of the integer flags, in --help's serving group.
CLI::Option* AddInteger(CLI::App& command, const char* name,
                        std::uint64_t& value, std::uint64_t low,
                        std::uint64_t high, const std::string& help) {
  return AddIntegerOption(command, name, value, help, low, high)
      ->capture_default_str()
      ->group(kGroup);
}

}  // namespace

void AddServeFlags(CLI::App& command, ServeFlags& flags) {
  ServeOptions& values = flags.values;
  flags.options[0] = AddInteger(
      command, "--max-running", values.max_running, 1, kMaxRunning,
      "The most requests running at once (B); requests that find B running, "
      "or no room in the cache, wait in a FIFO queue");
  flags.options[1] = AddInteger(
      command, "--prefill-us-per-token", values.prefill_us_per_token, 0,
      kMaxServeRate,
      "Prefill time per uncached prompt token, in µs (per block in block "
      "mode)");
  flags.options[2] = AddInteger(
      command, "--decode-us-per-token", values.decode_us_per_token, 0,
      kMaxServeRate,
      "Decode time per output token, in µs (per block in block mode)");
  flags.options[3] =
      AddInteger(command, "--overhead-us", values.overhead_us, 0, kMaxServeRate,
                 "Time added to every request's prefill, µs");
  flags.options[4] =
      AddNamedValueOption(command, "--output-mode", flags.output_mode,
                          kOutputModes,
                          "What a request's output costs (SPEC §10.1's "
                          "\"output\"):")
          ->capture_default_str()
          ->group(kGroup);
}

bool ServeFlagsGiven(const ServeFlags& flags) {
  for (const CLI::Option* option : flags.options) {
    if (option != nullptr && option->count() > 0) return true;
  }
  return false;
}

ServeOptions ApplyServeFlags(const ServeFlags& flags, ServeOptions options) {
  const auto given = [&](std::size_t i) {
    return flags.options[i] != nullptr && flags.options[i]->count() > 0;
  };
  if (given(0)) options.max_running = flags.values.max_running;
  if (given(1)) {
    options.prefill_us_per_token = flags.values.prefill_us_per_token;
  }
  if (given(2)) options.decode_us_per_token = flags.values.decode_us_per_token;
  if (given(3)) options.overhead_us = flags.values.overhead_us;
  if (given(4)) {
    options.output = *ParseNamedValue(kOutputModes, flags.output_mode);
  }
  return options;
}

namespace {

// Worker `w`'s cache for `input`, refused as RunServeReplay says, reporting
// its pages to `events` if given.
std::unique_ptr<ServingCache> MakeCheckedCache(const ServeInput& input,
                                               const ChosenCache& cache,
                                               KvEventLog* events,
                                               std::size_t w) {
  auto serving = MakeServingCache(cache.engine, cache.options);
  if (serving->one_at_a_time() && (input.serve.max_running > 1 ||
                                   input.serve.output != OutputMode::kNone)) {
    throw std::invalid_argument(fmt::format(
        "engine '{}' has no request lifecycle of its own: it answers a "
        "serving replay only with max_running 1 and output \"none\" (SPEC "
        "§10.7); --engine reference implements every model's",
        cache.engine));
  }
  if (events == nullptr) return serving;
  if (HasNamespaces(input.replay.namespaces)) {
    throw std::invalid_argument(
        "--kv-events: a replay with namespaces (SPEC §8.1) has no block "
        "events yet: its pages' first tokens stand for (namespace, token)");
  }
  if (!serving->SetPageEventListener(&events->worker(w))) {
    throw std::invalid_argument(fmt::format(
        "--kv-events: engine '{}' does not report its pages; --engine "
        "reference does",
        cache.engine));
  }
  return serving;
}

}  // namespace

ServeAnswer RunServeReplay(const ServeInput& input, const ChosenCache& cache,
                           KvEventLog* events) {
  return ServeReplay(input, *MakeCheckedCache(input, cache, events, 0), events);
}

RoutedAnswer RunRoutedReplay(const ServeInput& input,
                             const RoutingSpec& routing,
                             const ChosenCache& cache, TokenUnit unit,
                             KvEventLog* events) {
  std::size_t made = 0;  // RoutedReplay makes worker 0's cache first
  return RoutedReplay(
      input, routing,
      [&] { return MakeCheckedCache(input, cache, events, made++); }, unit,
      events);
}

std::string ServeSettingsJson(const ServeOptions& options) {
  return fmt::format(
      "\"max_running\":{},\"prefill_us_per_token\":{},"
      "\"decode_us_per_token\":{},\"overhead_us\":{},\"output\":\"{}\"",
      options.max_running, options.prefill_us_per_token,
      options.decode_us_per_token, options.overhead_us,
      NameOf(kOutputModes, options.output));
}

}  // namespace kvprefix::cli
