// BM_ParseJson and BM_WriteJson: the JSON stages of `kvprefix match`, timed
// apart from the engine so the end-to-end report can show parse, match and
// write separately.
#ifndef KVPREFIX_BENCH_IO_BENCH_H_
#define KVPREFIX_BENCH_IO_BENCH_H_

#include <string>
#include <vector>

#include "bench/catalog.h"

namespace kvprefix::bench {

// The SPEC §4 document {"cached_sequences":[...],"requests":[...]} of
// `workload`, as `kvprefix match` reads it. O(tokens).
std::string BatchDocument(const BatchInput& workload);

// Registers, for every workload of `catalog` with the kIo operation:
//   BM_ParseJson/io/<workload>/<size>  ParseBatchInput on its document,
//                                      with simdjson's kernel for the CPU
//                                      (the label names it);
//   BM_ParseJson/io-fallback/<workload>/<size>
//                                      the same with simdjson's portable
//                                      fallback kernel active;
//   BM_WriteJson/io/<workload>/<size>  AppendMatchesJson of its answer
//                                      (computed once by the default engine).
// Items are tokens, bytes are JSON bytes read or written. `catalog` must
// outlive the run. Not thread-safe (call once from main).
void RegisterIoBenchmarks(const std::vector<WorkloadSpec>& catalog);

}  // namespace kvprefix::bench

#endif  // KVPREFIX_BENCH_IO_BENCH_H_
