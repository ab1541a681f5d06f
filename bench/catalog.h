// The benchmark suite's list of workloads: names, sizes, which operations
// run on each, and a cache that generates each workload once per process.
#ifndef KVPREFIX_BENCH_CATALOG_H_
#define KVPREFIX_BENCH_CATALOG_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench/workloads.h"

namespace kvprefix::bench {

// Operations a workload is benchmarked with (bit set).
enum Ops : unsigned {
  kBuild = 1,   // BM_Build: insert the cached sequences
  kMatch = 2,   // BM_Match: warm match of the requests
  kReplay = 4,  // BM_Replay: match-then-insert over cached + requests
  kIo = 8,      // BM_ParseJson / BM_WriteJson and the end-to-end input
  // BM_Replay with a capacity of 10% and 50% of the distinct prefixes under
  // every policy of kEvictionPolicies (SPEC §8), and BM_Curve, the one-pass
  // LRU curve (radix only)
  kCapacity = 16,
  // BM_Replay with a capacity of 10^9 nodes, above any workload's distinct
  // prefixes, under every policy: a bounded cache that never fills, so its
  // leaf bookkeeping holds every leaf (suffix "<policy>-huge": "lru-huge",
  // "fifo-huge")
  kHugeCapacity = 32,
};

struct WorkloadSpec {
  std::string name;  // one word, e.g. "system-prompt"
  std::size_t size;  // the generator's size argument (see workloads.h)
  unsigned ops;      // Ops bit set
  std::function<BatchInput()> make;
  // False for workloads too large for the reference engine (minutes an
  // iteration): only the optimized engines run them.
  bool reference = true;

  // "<name>/<size>", the tail of every benchmark name using this workload.
  std::string Label() const { return name + "/" + std::to_string(size); }
};

struct CatalogOptions {
  // Folder holding conversation_trace.jsonl and synthetic_trace.jsonl; the
  // Mooncake workloads are left out (with a note on stderr) when absent.
  std::string mooncake_dir;
  // Requests taken from the start of each trace for the batch and replay
  // forms; the key-workload table uses 2,000 (1,000 cached + 1,000
  // requests).
  std::size_t mooncake_requests = 2000;
};

// Where the Mooncake traces are looked for when no flag names a folder: the
// environment variable KVPREFIX_MOONCAKE_DIR if set, else
// <source>/data/mooncake. Thread-safe.
std::string DefaultMooncakeDir();

// The default suite, sized so that every engine runs it in a few minutes on
// a 2-vCPU machine. Reads nothing yet: workloads are generated on first use.
std::vector<WorkloadSpec> DefaultCatalog(const CatalogOptions& options);

// The workload of `spec`, generated on the first call and kept for the life
// of the process (benchmarks with random interleaving come back to it).
// Throws what the generator throws. Not thread-safe.
const BatchInput& LoadWorkload(const WorkloadSpec& spec);

}  // namespace kvprefix::bench

#endif  // KVPREFIX_BENCH_CATALOG_H_
