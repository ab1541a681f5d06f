// JSON stage benchmarks: see the header.
#include "bench/io_bench.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/registry.h"
#include "io/json_input.h"
#include "io/json_kernel.h"
#include "io/json_output.h"
#include "kvprefix/batch.h"

namespace kvprefix::bench {
namespace {

// What the two benchmarks need besides the workload, made once per workload
// (a 250 MB document and its answer are worth not rebuilding per repetition).
struct IoInputs {
  std::string document;        // the SPEC §4 input
  std::vector<Match> matches;  // the answer, from the default engine
};

const IoInputs& LoadIoInputs(const WorkloadSpec& spec) {
  static auto* cache = new std::map<std::string, std::unique_ptr<IoInputs>>;
  std::unique_ptr<IoInputs>& slot = (*cache)[spec.Label()];
  if (slot == nullptr) {
    const BatchInput& workload = LoadWorkload(spec);
    const auto index = MakeEngine(DefaultEngineName());
    slot = std::make_unique<IoInputs>(
        IoInputs{BatchDocument(workload), FindPrefixMatches(*index, workload)});
  }
  return *slot;
}

// Models: the parse stage of `kvprefix match` on its input document: `parse`
// (ParseBatchInput, or the strict reader alone) with simdjson's `kernel`
// ("": the one chosen for the CPU).
void ParseJsonBenchmark(benchmark::State& state, const WorkloadSpec& spec,
                        BatchInput (*parse)(std::string_view),
                        const std::string& kernel) {
  try {
    const std::optional<ScopedJsonKernel> chosen =
        kernel.empty() ? std::nullopt
                       : std::make_optional<ScopedJsonKernel>(kernel);
    state.SetLabel(ActiveJsonKernel());
    const BatchInput& workload = LoadWorkload(spec);
    const std::string& document = LoadIoInputs(spec).document;
    for (auto _ : state) {
      BatchInput input = parse(document);
      benchmark::DoNotOptimize(input.requests.total_tokens());
      state.PauseTiming();  // freeing the parsed lists is not parsing
      input = BatchInput{};
      state.ResumeTiming();
    }
    const auto tokens = workload.cached_sequences.total_tokens() +
                        workload.requests.total_tokens();
    state.SetItemsProcessed(state.iterations() *
                            static_cast<std::int64_t>(tokens));
    state.SetBytesProcessed(state.iterations() *
                            static_cast<std::int64_t>(document.size()));
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

// Models: the write stage of `kvprefix match`: the {"matches":[...]} answer.
void WriteJsonBenchmark(benchmark::State& state, const WorkloadSpec& spec) {
  try {
    const BatchInput& workload = LoadWorkload(spec);
    const std::vector<Match>& matches = LoadIoInputs(spec).matches;
    std::string output;
    for (auto _ : state) {
      output.clear();  // keeps the capacity: the CLI writes into one buffer
      AppendMatchesJson(workload.requests, matches, output);
      benchmark::DoNotOptimize(output.data());
    }
    state.SetItemsProcessed(
        state.iterations() *
        static_cast<std::int64_t>(workload.requests.total_tokens()));
    state.SetBytesProcessed(state.iterations() *
                            static_cast<std::int64_t>(output.size()));
  } catch (const std::exception& error) {
    state.SkipWithError(error.what());
  }
}

}  // namespace

std::string BatchDocument(const BatchInput& workload) {
  std::string document;
  AppendBatchInputJson(workload, document);
  return document;
}

void RegisterIoBenchmarks(const std::vector<WorkloadSpec>& catalog) {
  for (const WorkloadSpec& spec : catalog) {
    if (!(spec.ops & kIo)) continue;
    // io: what `kvprefix match` runs (the fast path, json_fast_input.h);
    // io-strict: the strict reader on the kernel chosen for the CPU;
    // io-fallback: the strict reader on simdjson's portable kernel, as
    // SIMDJSON_FORCE_IMPLEMENTATION=fallback runs it (and as builds before
    // the fast path parsed every input), for the ratios within one run.
    struct Variant {
      const char* engine;
      BatchInput (*parse)(std::string_view);
      const char* kernel;
    };
    for (const Variant& variant :
         {Variant{"io", ParseBatchInput, ""},
          Variant{"io-strict", ParseBatchInputStrict, ""},
          Variant{"io-fallback", ParseBatchInputStrict, "fallback"}}) {
      benchmark::RegisterBenchmark(
          ("BM_ParseJson/" + std::string(variant.engine) + "/" + spec.Label())
              .c_str(),
          [&spec, variant](benchmark::State& state) {
            ParseJsonBenchmark(state, spec, variant.parse, variant.kernel);
          })
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(
        ("BM_WriteJson/io/" + spec.Label()).c_str(),
        [&spec](benchmark::State& state) { WriteJsonBenchmark(state, spec); })
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace kvprefix::bench
