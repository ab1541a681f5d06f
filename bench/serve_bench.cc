#include "bench/serve_bench.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engines/registry.h"
#include "io/mooncake.h"
#include "kvprefix/replay.h"
#include "router/router_spec.h"
#include "serve/routed_replay.h"
#include "serve/serving_replay.h"

namespace kvprefix::bench {
namespace {

// A trace as a §10 document, read once per (path, mode) for the process.
const ServeInput& LoadServeTrace(const std::string& path, TraceMode mode) {
  static auto* loaded = new std::map<std::string, ServeInput>;
  const std::string key = path + (mode == TraceMode::kToken ? "#t" : "#b");
  auto [entry, added] = loaded->try_emplace(key);
  if (added) {
    TraceServing serving;
    entry->second.replay.requests = ReadMooncakeTrace(
        path, TraceOptions{.mode = mode, .serving = true}, &serving);
    entry->second.arrivals_us = std::move(serving.arrivals_us);
    entry->second.output_lengths = std::move(serving.output_lengths);
  }
  return entry->second;
}

struct Row {
  std::string path;
  TraceMode mode;
  std::string engine;
  CacheOptions cache;
  ServeOptions serve;
};

void TimeServe(benchmark::State& state, const Row& row) {
  ServeInput input = LoadServeTrace(row.path, row.mode);
  input.replay.options = row.cache;
  input.serve = row.serve;
  ServeTotals totals;
  for (auto _ : state) {
    const auto cache = MakeServingCache(row.engine, row.cache);
    totals = ServeReplay(input, *cache).totals;
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(totals.request_tokens));
  state.counters["hit_ratio"] =
      static_cast<double>(totals.matched_tokens) /
      static_cast<double>(std::max<std::uint64_t>(1, totals.request_tokens));
  state.counters["waited_for_room"] =
      static_cast<double>(totals.waited_for_room);
  state.counters["p99_wait_us"] = static_cast<double>(totals.p99_wait_us);
}

void TimeSequential(benchmark::State& state, const Row& row) {
  const ServeInput& input = LoadServeTrace(row.path, row.mode);
  ReplaySummary summary;
  for (auto _ : state) {
    const auto index = MakeEngine(row.engine, row.cache);
    summary = Replay(*index, input.replay.requests);
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(summary.request_tokens));
  state.counters["hit_ratio"] = summary.hit_ratio();
}

// SPEC §11's routed replay on `workers` workers of the reference engine's
// unbounded spec caches, routed by `policy` (block-mode defaults).
void TimeRouted(benchmark::State& state, const std::string& path,
                RouterPolicy policy, std::uint64_t workers) {
  ServeInput input = LoadServeTrace(path, TraceMode::kBlock);
  input.serve = ServeOptions{.max_running = 64,
                             .prefill_us_per_token = 25'600,
                             .decode_us_per_token = 10'240'000};
  const RoutingSpec routing{.workers = workers,
                            .router = RouterSpec{.policy = policy}};
  const auto make_cache = [&input] {
    return MakeServingCache(EngineNames().front(), input.replay.options);
  };
  RoutedAnswer answer;
  for (auto _ : state) {
    answer = RoutedReplay(input, routing, make_cache, TokenUnit::kBlock);
  }
  const ServeTotals& totals = answer.totals;
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(totals.requests));
  state.counters["hit_ratio"] =
      static_cast<double>(totals.matched_tokens) /
      static_cast<double>(std::max<std::uint64_t>(1, totals.request_tokens));
  state.counters["workers"] = static_cast<double>(workers);
}

struct Model {
  std::string name;
  CacheOptions cache;
};

std::vector<Model> Models(std::uint64_t capacity, std::uint64_t page_size) {
  return {{"spec", {.capacity = capacity, .page_size = page_size}},
          {"vllm",
           {.capacity = capacity,
            .page_size = page_size,
            .model = CacheModel::kVllm,
            .match_limit = MatchLimit::kAllButLast}},
          {"sglang",
           {.capacity = capacity,
            .page_size = page_size,
            .model = CacheModel::kSglang,
            .trigger = EvictionTrigger::kOnAllocate}}};
}

void Register(const std::string& name, const Row& row, bool sequential) {
  auto* kept = new Row(row);  // lives for the run
  benchmark::RegisterBenchmark(name.c_str(), [kept, sequential](
                                                 benchmark::State& state) {
    if (sequential) {
      TimeSequential(state, *kept);
    } else {
      TimeServe(state, *kept);
    }
  })->Unit(benchmark::kMillisecond);
}

}  // namespace

void RegisterServeBenchmarks(const CatalogOptions& options) {
  for (const std::string trace : {"conversation", "synthetic"}) {
    const std::string path =
        options.mooncake_dir + "/" + trace + "_trace.jsonl";
    if (!std::filesystem::exists(path)) continue;
    for (const auto& policy : kRouterPolicies) {
      for (std::uint64_t n = 1; n <= 64; n *= 2) {
        benchmark::RegisterBenchmark(
            fmt::format("BM_Routed/{}/mooncake-{}-blocks/spec/B64/N{}",
                        policy.name, trace, n)
                .c_str(),
            [path, policy = policy.value, n](benchmark::State& state) {
              TimeRouted(state, path, policy, n);
            })
            ->Unit(benchmark::kMillisecond);
      }
    }
    for (const Model& model : Models(10'000, 1)) {
      for (const std::string_view engine : EngineNames(model.cache.model)) {
        if (!HasRequestLifecycle(engine, model.cache.model)) continue;
        for (const std::uint64_t b : {1, 8, 64}) {
          Register(
              fmt::format("BM_Serve/{}/mooncake-{}-blocks/{}10000/B{}", engine,
                          trace, model.name, b),
              Row{path, TraceMode::kBlock, std::string(engine), model.cache,
                  ServeOptions{.max_running = b,
                               .prefill_us_per_token = 25'600,
                               .decode_us_per_token = 10'240'000}},
              false);
        }
      }
    }
    if (trace != "conversation") continue;
    for (const Model& model : Models(40'960, 16)) {
      for (const std::string_view engine : EngineNames(model.cache.model)) {
        if (engine == EngineNames().front() ||
            !HasRequestLifecycle(engine, model.cache.model)) {
          continue;
        }
        const std::string prefix = fmt::format(
            "BM_Serve/{}/mooncake-conversation/{}p16", engine, model.name);
        Row row{path, TraceMode::kToken, std::string(engine), model.cache,
                ServeOptions{.prefill_us_per_token = 50,
                             .decode_us_per_token = 20'000}};
        Register(prefix + "/seq", row, true);
        for (const std::uint64_t b : {1, 64}) {
          row.serve.max_running = b;
          Register(fmt::format("{}/B{}", prefix, b), row, false);
        }
      }
    }
  }
}

}  // namespace kvprefix::bench
