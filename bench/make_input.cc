// kvprefix_make_input: writes one benchmark workload as a SPEC §4 document,
// the input bench/e2e.py feeds to `kvprefix match`.
//
// Usage: kvprefix_make_input <workload>/<size> <output.json>
// where <workload>/<size> is a label of the default catalog (bench/catalog.h),
// e.g. mooncake-conversation/3000. The Mooncake folder is taken from
// $KVPREFIX_MOONCAKE_DIR as in kvprefix_bench. Exit status: 0 on success, 2
// for bad usage or an unknown label, 1 for an I/O failure.
#include <cstdio>
#include <exception>
#include <string>

#include "bench/catalog.h"
#include "bench/io_bench.h"
#include "io/json_output.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <workload>/<size> <output.json>\n",
                 argv[0]);
    return 2;
  }
  namespace bench = kvprefix::bench;
  const auto catalog =
      bench::DefaultCatalog({.mooncake_dir = bench::DefaultMooncakeDir()});
  for (const bench::WorkloadSpec& spec : catalog) {
    if (spec.Label() != argv[1]) continue;
    try {
      kvprefix::WriteFileAtomically(
          argv[2], bench::BatchDocument(bench::LoadWorkload(spec)));
      return 0;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "error: %s\n", error.what());
      return 1;
    }
  }
  std::fprintf(stderr, "error: no workload %s; known:", argv[1]);
  for (const bench::WorkloadSpec& spec : catalog) {
    std::fprintf(stderr, " %s", spec.Label().c_str());
  }
  std::fprintf(stderr, "\n");
  return 2;
}
