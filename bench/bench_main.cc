// kvprefix_bench: the Google Benchmark suite of every engine on every
// workload (see bench/README.md for how to run it and make a report).
//
// Flags besides Google Benchmark's own (--help lists both):
//   --kvprefix_mooncake_dir=DIR        folder of the Mooncake traces (default:
//                                      $KVPREFIX_MOONCAKE_DIR, else
//                                      <source>/data/mooncake);
//   --kvprefix_mooncake_requests=N     requests taken from each trace (2000);
//   --kvprefix_engine=NAME             (repeatable) an engine named at run
//                                      time, "plugin:PATH" or a built-in
//                                      name, benchmarked beside the built-in
//                                      engines (engine_bench.h).
// It refuses to run from a build without NDEBUG: assertion-laden numbers
// must never reach a report.
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/catalog.h"
#include "bench/engine_bench.h"
#include "bench/io_bench.h"
#include "bench/serve_bench.h"
#include "engines/all_engines.h"
#include "plugin/plugin_engine.h"

namespace {

// Consumes the --kvprefix_* flags from argv (leaving the others in order);
// returns false on a malformed one.
bool ParseFlags(int& argc, char** argv,
                kvprefix::bench::CatalogOptions& options,
                std::vector<std::string>& engines) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--kvprefix_engine=")) {
      engines.emplace_back(arg.substr(arg.find('=') + 1));
    } else if (arg.starts_with("--kvprefix_mooncake_dir=")) {
      options.mooncake_dir = arg.substr(arg.find('=') + 1);
    } else if (arg.starts_with("--kvprefix_mooncake_requests=")) {
      const std::string value(arg.substr(arg.find('=') + 1));
      char* end = nullptr;
      options.mooncake_requests = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || options.mooncake_requests < 2) {
        std::fprintf(stderr, "error: bad value in %s (want an integer >= 2)\n",
                     argv[i]);
        return false;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return true;
}

// --help: kvprefix_bench's own flags, then Google Benchmark's.
void PrintHelp() {
  fmt::print(
      R"(kvprefix_bench: every engine on every workload (bench/README.md).

kvprefix_bench's flags:
  --kvprefix_mooncake_dir=DIR     folder of the Mooncake traces (default
                                  $KVPREFIX_MOONCAKE_DIR, else
                                  <source>/data/mooncake; here {}); their
                                  benchmarks are skipped, with a note, when
                                  the files are absent
  --kvprefix_mooncake_requests=N  requests taken from each trace (an integer
                                  >= 2; default {})
  --kvprefix_engine=NAME          also benchmark engine NAME, called through
                                  the run-time PrefixIndex interface on the
                                  same workloads (repeatable): plugin:PATH, a
                                  cache built as a shared library against
                                  plugin/kvprefix_plugin.h, gives rows
                                  BM_<Op>/plugin:<its name>/...; a built-in
                                  name, e.g. radix, rows
                                  BM_<Op>/virtual:radix/... (its direct rows'
                                  code behind a virtual call)

Google Benchmark's flags:
)",
      kvprefix::bench::DefaultMooncakeDir(),
      kvprefix::bench::CatalogOptions{}.mooncake_requests);
  std::fflush(stdout);
  benchmark::PrintDefaultHelp();
}

// The CPU model from /proc/cpuinfo, for the report's machine context.
std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// Every row runs on one heap policy, whatever ran before it. glibc's malloc
// raises its mmap and trim thresholds the first time the process frees an
// mmapped block (mallopt(3), "dynamic mmap threshold"), so without fixed
// thresholds a row that builds and drops a cache every iteration either
// reused the heap (a row run after others) or gave its pages back and
// faulted them in again each iteration (the same row run alone or first;
// CHANGELOG has the measurements). Blocks below 32 MiB (glibc's largest
// mmap threshold) now always come from the heap, which is never trimmed;
// larger ones are always mmapped. So a row measures the engine on a warm
// heap, as a long-lived server runs it; bench/e2e.py measures fresh
// processes, page faults included.
void FixHeapPolicy() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace

int main(int argc, char** argv) {
#ifndef NDEBUG
  std::fprintf(
      stderr,
      "error: kvprefix_bench was built without NDEBUG (a Debug build); "
      "its numbers would be meaningless. Configure with "
      "-DCMAKE_BUILD_TYPE=Release.\n");
  return 1;
#endif
  benchmark::Initialize(&argc, argv, PrintHelp);
  FixHeapPolicy();
  kvprefix::bench::CatalogOptions options{
      .mooncake_dir = kvprefix::bench::DefaultMooncakeDir()};
  std::vector<std::string> engine_names;
  if (!ParseFlags(argc, argv, options, engine_names)) return 2;
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  // Every named engine is resolved (a plugin loaded) before any runs, so a
  // bad name fails at once, not after minutes of benchmarks.
  std::vector<kvprefix::bench::RuntimeEngine> runtime_engines;
  for (const std::string& name : engine_names) {
    try {
      runtime_engines.push_back(kvprefix::bench::ResolveRuntimeEngine(name));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "error: --kvprefix_engine=%s: %s\n", name.c_str(),
                   error.what());
      // A plugin that does not load is a resource failure, as in the CLI;
      // an unknown engine name is bad usage.
      return dynamic_cast<const kvprefix::PluginError*>(&error) ? 1 : 2;
    }
    for (std::size_t i = 0; i + 1 < runtime_engines.size(); ++i) {
      if (runtime_engines[i].label == runtime_engines.back().label) {
        std::fprintf(stderr,
                     "error: --kvprefix_engine=%s: rows named %s already come "
                     "from --kvprefix_engine=%s\n",
                     name.c_str(), runtime_engines.back().label.c_str(),
                     runtime_engines[i].name.c_str());
        return 2;
      }
    }
  }

  benchmark::AddCustomContext("cpu_model", CpuModel());
  benchmark::AddCustomContext("compiler", KVPREFIX_BENCH_COMPILER);
  benchmark::AddCustomContext("cxx_flags", KVPREFIX_BENCH_FLAGS);
  benchmark::AddCustomContext("build_type", KVPREFIX_BENCH_BUILD_TYPE);
  benchmark::AddCustomContext("mooncake_dir", options.mooncake_dir);
  benchmark::AddCustomContext("mooncake_requests",
                              std::to_string(options.mooncake_requests));

  static const auto catalog = kvprefix::bench::DefaultCatalog(options);
  // The canonical orders of engines and workloads, for the report (random
  // interleaving scrambles the order of results in the JSON).
  std::string engines, workloads;
  kvprefix::AllEngines::ForEach([&]<typename E>() {
    if (!engines.empty()) engines += ' ';
    engines += E::kName;
  });
  for (const auto& engine : runtime_engines) {
    engines += ' ' + engine.label;
    // What the report names as the rows' source, e.g. the plugin's path.
    benchmark::AddCustomContext("engine_source:" + engine.label, engine.name);
  }
  for (const auto& spec : catalog) {
    if (!workloads.empty()) workloads += ' ';
    workloads += spec.Label();
  }
  benchmark::AddCustomContext("engines", engines);
  benchmark::AddCustomContext("workloads", workloads);
  kvprefix::bench::RegisterEngineBenchmarks(catalog);
  for (const auto& engine : runtime_engines) {
    kvprefix::bench::RegisterRuntimeEngineBenchmarks(catalog, engine);
  }
  kvprefix::bench::RegisterIoBenchmarks(catalog);
  kvprefix::bench::RegisterServeBenchmarks(options);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
