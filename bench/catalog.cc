// The default workload list: see the header.
#include "bench/catalog.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

namespace kvprefix::bench {

std::string DefaultMooncakeDir() {
  const char* from_environment = std::getenv("KVPREFIX_MOONCAKE_DIR");
  return from_environment != nullptr ? from_environment
                                     : KVPREFIX_SOURCE_DIR "/data/mooncake";
}

std::vector<WorkloadSpec> DefaultCatalog(const CatalogOptions& options) {
  std::vector<WorkloadSpec> catalog;
  auto add = [&](std::string name, std::size_t size, unsigned ops,
                 BatchInput (*make)(std::size_t)) {
    catalog.push_back(
        {std::move(name), size, ops, [make, size] { return make(size); }});
  };
  // The real traces first: they decide the CLI's default engine.
  bool have_mooncake = false;
  for (const auto& [name, file] :
       {std::pair{"mooncake-conversation", "conversation_trace.jsonl"},
        std::pair{"mooncake-synthetic", "synthetic_trace.jsonl"}}) {
    const std::string path = options.mooncake_dir + "/" + file;
    if (!std::filesystem::exists(path)) {
      std::cerr << "note: " << path
                << " not found; skipping its Mooncake benchmarks\n";
      continue;
    }
    const std::size_t size = options.mooncake_requests;
    const bool conversation = file == std::string("conversation_trace.jsonl");
    // Replay on the conversation trace only: the reference's replay is the
    // slowest benchmark of the suite, and bench/e2e.py replays both whole
    // traces through the CLI.
    catalog.push_back(
        {name, size, kBuild | kMatch | (conversation ? kReplay : 0u),
         [path, size] { return MooncakeBatchWorkload(path, size); }});
    // The whole trace in block mode (the Mooncake paper's view: one node a
    // 512-token block), for every engine; in token mode (145 M tokens for
    // the conversation trace) for the optimized engines, where the
    // capacity-bounded replay and LRU curve targets are set (bench/README.md).
    const std::size_t lines = conversation ? 12031 : 3993;
    catalog.push_back({std::string(name) + "-blocks", lines,
                       kReplay | kCapacity, [path, lines] {
                         return MooncakeBatchWorkload(path, lines,
                                                      TraceMode::kBlock);
                       }});
    if (conversation) {
      // The same in three namespaces (SPEC §8.1: "", and two LoRA adapters
      // or cache salts, request i in the (i mod 3)-th): what folding the
      // namespaces into the first tokens costs, and the smaller hit ratio
      // of caches kept apart.
      catalog.push_back(
          {std::string(name) + "-blocks-3-namespaces", lines, kReplay,
           [path, lines] {
             return InNamespaces(
                 MooncakeBatchWorkload(path, lines, TraceMode::kBlock),
                 {"", "lora-a", "lora-b"});
           }});
      catalog.push_back(
          {name, lines, kReplay | kCapacity,
           [path, lines] { return MooncakeBatchWorkload(path, lines); },
           /*reference=*/false});
    }
    if (conversation) {
      have_mooncake = true;
      // ~41 M tokens, ~250 MB of SPEC §4 JSON: the end-to-end CLI input.
      catalog.push_back({name, 3000, kIo,
                         [path] { return MooncakeBatchWorkload(path, 3000); }});
    }
  }
  add("system-prompt", 1000, kBuild | kMatch, SystemPromptWorkload);
  add("multi-turn", 1000, kBuild | kMatch | kReplay, MultiTurnWorkload);
  add("few-shot", 5000, kBuild | kMatch, FewShotWorkload);
  add("tree-of-thought", 4096, kBuild | kMatch, TreeOfThoughtWorkload);
  add("no-sharing", 20000, kBuild | kMatch, NoSharingWorkload);
  add("wide", 100000, kBuild | kMatch, WideWorkload);
  add("root-fanout", 100000, kBuild | kMatch, RootFanoutWorkload);
  // Growth of the engines' bookkeeping with the leaves present: every
  // engine O(n log n) or better, so 8x the requests costs about 8x the time.
  for (std::size_t requests : {30000, 60000, 120000, 240000}) {
    add("distinct-tokens", requests, kReplay | kHugeCapacity,
        DistinctTokensWorkload);
  }
  add("chain", 1000000, kBuild | kMatch, ChainWorkload);
  add("repeated-token", 1000000, kBuild | kMatch, RepeatedTokenWorkload);
  for (std::size_t prefix = 1024; prefix <= 131072; prefix *= 2) {
    add("shared-prefix", prefix, kBuild | kMatch, SharedPrefixWorkload);
  }
  for (std::size_t sequences : {1000, 10000, 100000}) {
    add("sequence-count", sequences, kBuild | kMatch, SequenceCountWorkload);
  }
  if (!have_mooncake) {
    // Without the real trace, a synthetic input of about the same JSON size.
    add("multi-turn", 8000, kIo, MultiTurnWorkload);
  }
  return catalog;
}

const BatchInput& LoadWorkload(const WorkloadSpec& spec) {
  static auto* cache = new std::map<std::string, std::unique_ptr<BatchInput>>;
  std::unique_ptr<BatchInput>& slot = (*cache)[spec.Label()];
  if (slot == nullptr) slot = std::make_unique<BatchInput>(spec.make());
  return *slot;
}

}  // namespace kvprefix::bench
