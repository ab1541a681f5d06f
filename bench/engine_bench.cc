// Engine benchmarks: see the header. Times are CPU time of the benchmark
// thread (Google Benchmark's default), which on a shared 2-vCPU machine is
// steadier than wall time; page-fault time is included (it is system time of
// the thread).
#include "bench/engine_bench.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "engines/all_engines.h"
#include "engines/registry.h"
#include "kvprefix/lru_curve.h"
#include "kvprefix/paged_index.h"
#include "kvprefix/prefix_index.h"
#include "kvprefix/replay.h"
#include "plugin/plugin_engine.h"

namespace kvprefix::bench {
namespace {

// Runs `body`, turning an exception (CapacityError, bad_alloc, a bad trace)
// into a skipped benchmark with the message, so one failing engine does not
// end the whole run.
template <typename Body>
void Guarded(benchmark::State& state, Body&& body) {
  try {
    body();
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

// The index BM_Match matches against, built once and kept while the same
// benchmark comes back (Google Benchmark calls the function again for each
// iteration-count trial and each repetition). One slot only, released before
// another index is built, so at most one warm index is alive at a time.
struct WarmSlot {
  std::string key;
  std::shared_ptr<const void> index;
};
WarmSlot& Warm() {
  static auto* slot = new WarmSlot;
  return *slot;
}

// Makes the indexes a benchmark times. `E` is the type the timed loop
// calls: a concrete engine (direct, inlinable calls) or PrefixIndex (an
// engine named at run time: one indirect call per sequence). Called outside
// the per-sequence loop, so a std::function costs nothing measurable.
template <typename E>
using Maker = std::function<std::unique_ptr<E>(const CacheOptions&)>;

// The Maker of concrete engine E.
template <PrefixCacheEngine E>
Maker<E> Direct() {
  return
      [](const CacheOptions& options) { return std::make_unique<E>(options); };
}

// A benchmark function of one workload, engine type `E` and its Maker.
template <typename E>
using Timed = void (*)(benchmark::State&, const WorkloadSpec&,
                       const std::string& label, const Maker<E>&);

template <typename E>
const E& WarmIndex(const std::string& key, const SequenceList& cached,
                   const Maker<E>& make) {
  WarmSlot& slot = Warm();
  if (slot.key != key) {
    slot = WarmSlot{};
    std::shared_ptr<E> engine = make(CacheOptions{});
    for (TokenSpan sequence : cached) engine->Insert(sequence);
    slot = WarmSlot{key, std::move(engine)};
  }
  return *static_cast<const E*>(slot.index.get());
}

template <typename E>
void SetIndexCounters(benchmark::State& state, const E& engine) {
  const double nodes = static_cast<double>(engine.node_count());
  const double bytes = static_cast<double>(engine.memory_bytes());
  state.counters["nodes"] = nodes;
  if (nodes == 0) {
    state.counters["bytes_per_node"] = 0.0;
  } else if (bytes != 0) {
    state.counters["bytes_per_node"] = bytes / nodes;
  }  // else unknown (a plugin without memory_bytes): no counter
}

// Build: a fresh index per iteration; the destruction is not timed.
template <typename E>
void BuildBenchmark(benchmark::State& state, const WorkloadSpec& spec,
                    const std::string& /*label*/, const Maker<E>& make) {
  Guarded(state, [&] {
    Warm() = WarmSlot{};  // free the memory before building
    const BatchInput& workload = LoadWorkload(spec);
    for (auto _ : state) {
      auto engine = make(CacheOptions{});
      for (TokenSpan sequence : workload.cached_sequences)
        engine->Insert(sequence);
      state.PauseTiming();
      SetIndexCounters(state, *engine);
      engine.reset();
      state.ResumeTiming();
    }
    state.SetItemsProcessed(
        state.iterations() *
        static_cast<std::int64_t>(workload.cached_sequences.total_tokens()));
  });
}

// Match: warm throughput over every request; the build is not timed.
template <typename E>
void MatchBenchmark(benchmark::State& state, const WorkloadSpec& spec,
                    const std::string& label, const Maker<E>& make) {
  Guarded(state, [&] {
    const BatchInput& workload = LoadWorkload(spec);
    const E& engine = WarmIndex<E>(label + "/" + spec.Label(),
                                   workload.cached_sequences, make);
    std::uint64_t matched = 0;
    std::uint64_t digest = 0;
    std::uint64_t length_digest = 0;
    for (auto _ : state) {
      matched = 0;
      digest = 0;
      length_digest = 0;
      for (TokenSpan request : workload.requests) {
        const Match match = engine.MatchPrefix(request);
        matched += match.matched_length;
        digest =
            digest * 31 + match.matched_length * 1000003 + match.cache_node;
        length_digest = length_digest * 31 + match.matched_length;
      }
      benchmark::DoNotOptimize(matched);
      benchmark::DoNotOptimize(digest);
      benchmark::DoNotOptimize(length_digest);
    }
    const auto request_tokens = workload.requests.total_tokens();
    state.SetItemsProcessed(state.iterations() *
                            static_cast<std::int64_t>(request_tokens));
    SetIndexCounters(state, engine);
    state.counters["hit_ratio"] =
        request_tokens == 0 ? 0.0
                            : static_cast<double>(matched) / request_tokens;
    // 2^50 keeps the digest exact in the double a counter holds.
    state.counters["answer_digest"] =
        static_cast<double>(digest % (1ULL << 50));
    state.counters["length_digest"] =
        static_cast<double>(length_digest % (1ULL << 50));
  });
}

// Replay: cached then requests as one trace, on a fresh `make(options)` per
// iteration. Counters: the index's, hit ratio and, for a bounded cache, its
// evictions and capacity.
template <typename E>
void TimeReplay(benchmark::State& state, const WorkloadSpec& spec,
                const CacheOptions& options, const Maker<E>& make) {
  Guarded(state, [&] {
    Warm() = WarmSlot{};
    const BatchInput& workload = LoadWorkload(spec);
    ReplaySummary first, second;
    std::uint64_t evictions = 0;
    for (auto _ : state) {
      auto engine = make(options);
      // SPEC §8.1: a workload in namespaces is folded as one trace (its two
      // halves by one folder), in the timed loop; nullopt without them.
      const std::optional<BatchInput> folded = FoldedBatch(workload);
      const BatchInput& trace = folded ? *folded : workload;
      first = Replay(*engine, trace.cached_sequences);
      second = Replay(*engine, trace.requests);
      state.PauseTiming();
      SetIndexCounters(state, *engine);
      evictions = engine->evicted_count();
      engine.reset();
      state.ResumeTiming();
    }
    const std::uint64_t tokens = first.request_tokens + second.request_tokens;
    state.SetItemsProcessed(state.iterations() *
                            static_cast<std::int64_t>(tokens));
    state.counters["hit_ratio"] =
        tokens == 0 ? 0.0
                    : static_cast<double>(first.matched_tokens +
                                          second.matched_tokens) /
                          tokens;
    if (options.bounded()) {
      state.counters["evictions"] = static_cast<double>(evictions);
      state.counters["capacity"] = static_cast<double>(options.capacity);
    }
  });
}

// Replay on an unbounded index (SPEC §3).
template <typename E>
void ReplayBenchmark(benchmark::State& state, const WorkloadSpec& spec,
                     const std::string& /*label*/, const Maker<E>& make) {
  TimeReplay<E>(state, spec, CacheOptions{}, make);
}

// The number of distinct prefixes of a workload's replay (the unbounded
// trie's nodes), computed once per workload: capacities are fractions of it.
std::uint64_t DistinctPrefixes(const WorkloadSpec& spec) {
  static auto* known = new std::map<std::string, std::uint64_t>;
  auto [entry, added] = known->try_emplace(spec.Label(), 0);
  if (added) {
    const BatchInput& workload = LoadWorkload(spec);
    RadixTrie trie;
    Replay(trie, workload.cached_sequences);
    Replay(trie, workload.requests);
    entry->second = trie.node_count();
  }
  return entry->second;
}

// Replay with a capacity (SPEC §8), on a fresh cache per iteration: a serving
// system's bounded prefix cache (SGLang's RadixCache with its token budget,
// vLLM's block pool).
template <typename E>
void CapacityReplayBenchmark(benchmark::State& state, const WorkloadSpec& spec,
                             EvictionPolicy policy, unsigned percent,
                             const Maker<E>& make) {
  // Guarded too: DistinctPrefixes reads the workload, which may fail.
  Guarded(state, [&] {
    TimeReplay<E>(state, spec,
                  {.capacity = DistinctPrefixes(spec) * percent / 100,
                   .policy = policy,
                   .page_size = 1},
                  make);
  });
}

// The capacity of the kHugeCapacity rows: above every workload's distinct
// prefixes, far below kUnbounded.
constexpr std::uint64_t kHugeCapacityNodes = 1'000'000'000;

// The exact LRU curve at every capacity in one pass (kvprefix/lru_curve.h)
// on radix runs: what a capacity planner runs instead of one replay per
// capacity. The target: within 3x of BM_Replay/radix on the same
// workload.
void CurveBenchmark(benchmark::State& state, const WorkloadSpec& spec) {
  Guarded(state, [&] {
    Warm() = WarmSlot{};
    const BatchInput& workload = LoadWorkload(spec);
    std::uint64_t distinct = 0;
    for (auto _ : state) {
      auto curve = std::make_unique<LruCurve<PagedIndex<RadixTrie>>>();
      for (TokenSpan request : workload.cached_sequences) curve->Add(request);
      for (TokenSpan request : workload.requests) curve->Add(request);
      const std::uint64_t capacities[] = {curve->distinct_prefixes() / 10};
      benchmark::DoNotOptimize(curve->MatchedTokens(capacities));
      state.PauseTiming();
      distinct = curve->distinct_prefixes();
      state.counters["bytes_per_node"] =
          static_cast<double>(curve->memory_bytes()) /
          static_cast<double>(std::max<std::uint64_t>(distinct, 1));
      curve.reset();
      state.ResumeTiming();
    }
    state.SetItemsProcessed(
        state.iterations() *
        static_cast<std::int64_t>(workload.cached_sequences.total_tokens() +
                                  workload.requests.total_tokens()));
    state.counters["nodes"] = static_cast<double>(distinct);
  });
}

// Registers the Build, Match and Replay benchmarks of one engine, named
// `label`, on every workload of `catalog` (but the reference's skipped ones
// when `reference` is true: the workloads too large for the reference).
template <typename E>
void RegisterEngine(const std::vector<WorkloadSpec>& catalog,
                    const std::string& label, bool reference,
                    const Maker<E>& make) {
  for (const WorkloadSpec& spec : catalog) {
    if (!spec.reference && reference) continue;
    const std::string tail = label + "/" + spec.Label();
    auto add = [&](const char* op, Timed<E> run) {
      benchmark::RegisterBenchmark(
          (std::string("BM_") + op + "/" + tail).c_str(),
          [run, &spec, label, make](benchmark::State& state) {
            run(state, spec, label, make);
          })
          ->Unit(benchmark::kMillisecond);
    };
    if (spec.ops & kBuild) add("Build", BuildBenchmark<E>);
    if (spec.ops & kMatch) add("Match", MatchBenchmark<E>);
    if (spec.ops & kReplay) add("Replay", ReplayBenchmark<E>);
    // BM_Replay/<tail>/<policy><cache> for a bounded replay.
    auto add_bounded = [&](EvictionPolicy policy, const std::string& cache,
                           std::function<void(benchmark::State&)> run) {
      benchmark::RegisterBenchmark(
          fmt::format("BM_Replay/{}/{}{}", tail, EvictionPolicyName(policy),
                      cache)
              .c_str(),
          std::move(run))
          ->Unit(benchmark::kMillisecond);
    };
    for (const EvictionPolicyEntry& entry : kEvictionPolicies) {
      const EvictionPolicy policy = entry.policy;
      if (spec.ops & kHugeCapacity) {
        add_bounded(policy, "-huge",
                    [&spec, policy, make](benchmark::State& state) {
                      TimeReplay<E>(state, spec,
                                    {.capacity = kHugeCapacityNodes,
                                     .policy = policy,
                                     .page_size = 1},
                                    make);
                    });
      }
      if (!(spec.ops & kCapacity)) continue;
      for (const unsigned percent : {10u, 50u}) {
        add_bounded(policy, std::to_string(percent),
                    [&spec, policy, percent, make](benchmark::State& state) {
                      CapacityReplayBenchmark<E>(state, spec, policy, percent,
                                                 make);
                    });
      }
    }
  }
}

// The capacity of the model rows, in blocks (pages of one block-mode
// symbol): the middle one of the capacities the totals were taken
// at, 1,000 / 10,000 / 30,000.
constexpr std::uint64_t kModelCapacity = 10'000;

// BM_Replay/<engine>/<workload>/<model>10000 for every engine E of a model's
// list (engines/all_engines.h) on the block-mode traces: each system's
// rules at one capacity, beside spec's (lru) at the same capacity.
template <typename Engines>
void RegisterModelReplays(const std::vector<WorkloadSpec>& catalog,
                          const std::string& model,
                          const CacheOptions& options) {
  Engines::ForEach([&]<typename E>() {
    for (const WorkloadSpec& spec : catalog) {
      if (!(spec.ops & kCapacity) || !spec.reference) continue;
      benchmark::RegisterBenchmark(
          fmt::format("BM_Replay/{}/{}/{}{}", E::kName, spec.Label(), model,
                      kModelCapacity)
              .c_str(),
          [&spec, options](benchmark::State& state) {
            TimeReplay<E>(state, spec, options, Direct<E>());
          })
          ->Unit(benchmark::kMillisecond);
    }
  });
}

}  // namespace

void RegisterEngineBenchmarks(const std::vector<WorkloadSpec>& catalog) {
  AllEngines::ForEach([&]<typename E>() {
    RegisterEngine<E>(catalog, std::string(E::kName),
                      std::is_same_v<E, ReferenceTrie>, Direct<E>());
  });
  RegisterModelReplays<AllEngines>(catalog, "spec",
                                   {.capacity = kModelCapacity});
  RegisterModelReplays<VllmEngines>(catalog, "vllm",
                                    {.capacity = kModelCapacity,
                                     .model = CacheModel::kVllm,
                                     .match_limit = MatchLimit::kAllButLast});
  RegisterModelReplays<SglangEngines>(
      catalog, "sglang",
      {.capacity = kModelCapacity, .model = CacheModel::kSglang});
  RegisterModelReplays<SglangEngines>(
      catalog, "sglang-on-allocate",
      {.capacity = kModelCapacity,
       .model = CacheModel::kSglang,
       .trigger = EvictionTrigger::kOnAllocate});
  for (const WorkloadSpec& spec : catalog) {
    if (!(spec.ops & kCapacity)) continue;
    benchmark::RegisterBenchmark(
        ("BM_Curve/radix/" + spec.Label()).c_str(),
        [&spec](benchmark::State& state) { CurveBenchmark(state, spec); })
        ->Unit(benchmark::kMillisecond);
  }
}

RuntimeEngine ResolveRuntimeEngine(std::string_view name) {
  if (!IsPluginName(name)) {
    MakeEngine(name);  // throws, listing the valid names, if unknown
    return {std::string(name), "virtual:" + std::string(name)};
  }
  // "plugin:" and the table's name (MakePluginEngine).
  const std::string label(MakeEngine(name)->name());
  const std::string_view table_name =
      std::string_view(label).substr(kPluginPrefix.size());
  if (table_name.find_first_of("/ ") != std::string::npos) {
    throw std::invalid_argument("plugin " +
                                std::string(name.substr(kPluginPrefix.size())) +
                                ": its name '" + std::string(table_name) +
                                "' holds a '/' or a space, which benchmark "
                                "names cannot");
  }
  return {std::string(name), label};
}

void RegisterRuntimeEngineBenchmarks(const std::vector<WorkloadSpec>& catalog,
                                     const RuntimeEngine& engine) {
  const std::string name = engine.name;
  RegisterEngine<PrefixIndex>(catalog, engine.label,
                              name == ReferenceTrie::kName,
                              [name](const CacheOptions& options) {
                                return MakeEngine(name, options);
                              });
}

}  // namespace kvprefix::bench
