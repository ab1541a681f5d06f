#!/usr/bin/env bash
# CI for the fuzz targets: builds them with clang (-DKVPREFIX_FUZZ=ON), runs
# each for 30 seconds from its checked-in corpus, prints the differential
# target's inputs per second over its corpus (fuzz/corpus_speed.sh), then
# fuzz/teeth.sh and fuzz/recursion_teeth.sh. Takes about 8 minutes on 2
# cores. Exits non-zero on any crash, leak, timeout or out-of-memory (the
# finding is left in $build/ci-campaign/<target>/crashes), on a mutant the
# differential, serving or routing target fails to catch, on a recursive trace-line checker the
# trace-line target fails to crash on within 3 minutes (with -seed=1 it
# takes about 475,000 executions: 97 s on a quiet machine, and a minute was
# too short on a slower one), or on a build failure.
#
# Usage: fuzz/ci.sh [BUILD_DIR]   (default build-fuzz-ci)
set -euo pipefail

fuzz_dir=$(dirname "$(realpath "$0")")
repo=$(dirname "$fuzz_dir")
build=$(realpath -m "${1:-$repo/build-fuzz-ci}")
mapfile -t targets < <(grep -E '^[a-z0-9_]+$' "$fuzz_dir/targets.txt")

# clang whatever $CC says: libFuzzer is clang's. KVPREFIX_FUZZ_CC/CXX pick
# another clang (e.g. clang-14).
CC=${KVPREFIX_FUZZ_CC:-clang} CXX=${KVPREFIX_FUZZ_CXX:-clang++} \
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVPREFIX_FUZZ=ON \
  -DKVPREFIX_PYTHON=OFF -DKVPREFIX_BENCH=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}" mooncake_line_fuzzer_recursive

for target in "${targets[@]}"; do
  rm -rf "$build/ci-campaign/$target"
  KVPREFIX_FUZZ_BUILD=$build "$fuzz_dir/run_campaign.sh" "$target" 30 1 \
    "$build/ci-campaign/$target/corpus" "$build/ci-campaign/$target/crashes"
done
# The differential target's speed over its corpus (the seeds and what the
# minute above added), for the log: "differential_fuzzer: N inputs/s over
# the corpus (...)".
"$fuzz_dir/corpus_speed.sh" "$build/fuzz/differential_fuzzer" \
  "$fuzz_dir/corpus/differential_fuzzer" "$build/ci-campaign/differential_fuzzer/corpus"
"$fuzz_dir/teeth.sh" "$build/fuzz/differential_fuzzer" 120
"$fuzz_dir/teeth.sh" "$build/fuzz/serving_fuzzer" 120
"$fuzz_dir/teeth.sh" "$build/fuzz/routing_fuzzer" 60
"$fuzz_dir/recursion_teeth.sh" "$build/fuzz/mooncake_line_fuzzer_recursive" \
  "$build/fuzz/mooncake_line_fuzzer" 180
