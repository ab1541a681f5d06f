// BM_Serve: SPEC §10's serving replay of the Mooncake traces, beside the
// sequential replay of the same cache in the same process, so that what
// requests in flight cost is a ratio measured in one run; BM_Routed: SPEC
// §11's routed replay at N = 1 ... 64 workers.
#ifndef KVPREFIX_BENCH_SERVE_BENCH_H_
#define KVPREFIX_BENCH_SERVE_BENCH_H_

#include "bench/catalog.h"

namespace kvprefix::bench {

// Registers, for each trace of options.mooncake_dir (none when absent):
//  * block mode (a token is a 512-token block), every engine with a request
//    lifecycle (engines/registry.h's HasRequestLifecycle: the reference
//    too) of spec (lru), vllm and sglang (on-allocate) at 10,000 blocks:
//    BM_Serve/<engine>/mooncake-<trace>-blocks/<model>10000/B<b> for B = 1,
//    8 and 64 (prefill 25,600 µs and decode 10,240,000 µs per block, the
//    issue's rates);
//  * token mode (conversation trace), the optimized lifecycle engines at
//    40,960 pages of 16 tokens: BM_Serve/<engine>/mooncake-conversation/
//    <model>p16/B<b> for B = 1 and 64 (50 and 20,000 µs per token), and
//    .../seq, the sequential replay (Access, SPEC §8/§9) of the same cache.
//  * SPEC §11's routed replay, block mode, every policy of §11.5 on N = 1,
//    2, 4, ..., 64 workers of unbounded spec caches (reference engine), B =
//    64 and the rates above: BM_Routed/<router>/mooncake-<trace>-blocks/
//    spec/B64/N<n>, items = requests, counters hit_ratio and workers; the
//    cost of N workers should grow at most linearly in N.
// The serving rows report items = request tokens and the counters
// hit_ratio, waited_for_room and p99_wait_us (µs). The traces are read
// once, on first use. Not thread-safe (call from main, before the run).
void RegisterServeBenchmarks(const CatalogOptions& options);

}  // namespace kvprefix::bench

#endif  // KVPREFIX_BENCH_SERVE_BENCH_H_
