#!/bin/bash
# Produces docs/benchmarks.md and its charts (docs/img/*.png) on this machine
# with one command, from the repository root:
#
#   bench/run_report.sh [--baseline OLD.json]
#
# Steps: a Release build in build-bench/; the whole Google Benchmark suite
# (every engine x every workload, 5 repetitions, random interleaving; raw
# JSON kept in docs/data/kvprefix_bench.json); the end-to-end CLI run
# (bench/e2e.py -> docs/data/e2e.json); the hit-ratio curves of both traces
# (bench/curves.py -> docs/data/curve_*.csv, docs/img/curve_*.png); then
# bench/report.py. The previous
# docs/data/kvprefix_bench.json (the last published run) becomes
# docs/data/baseline.json, which compare.py sets against the new run, unless
# --baseline names another file. Everything the report shows stays in
# docs/data/, so bench/report.py can redraw it without rerunning.
#
# Environment: KVPREFIX_BENCH_REPETITIONS (5), KVPREFIX_BENCH_MIN_TIME (0.05 s
# per repetition), KVPREFIX_BENCH_FILTER (a --benchmark_filter regex, all by
# default), KVPREFIX_MOONCAKE_DIR (the traces; default data/mooncake),
# KVPREFIX_BASELINE_CLI and KVPREFIX_BASELINE_NAME (an older build's kvprefix
# binary and its name, e.g. a commit: e2e.py times both side by side).
# Takes about 20 minutes on a 2-vCPU machine; peak memory about 5 GB.
set -euo pipefail

source_dir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${KVPREFIX_BENCH_BUILD:-$source_dir/build-bench}
repetitions=${KVPREFIX_BENCH_REPETITIONS:-5}
min_time=${KVPREFIX_BENCH_MIN_TIME:-0.05}
filter=${KVPREFIX_BENCH_FILTER:-.}
data_dir=$source_dir/docs/data
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

mkdir -p "$data_dir"
baseline=""
if [[ "${1:-}" == "--baseline" ]]; then
  baseline=$data_dir/baseline.json
  cp "$2" "$baseline"
elif [[ -f "$data_dir/kvprefix_bench.json" ]]; then
  baseline=$data_dir/baseline.json
  cp "$data_dir/kvprefix_bench.json" "$baseline"
fi

cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKVPREFIX_BENCH=ON > "$work_dir/cmake.log"
ninja -C "$build_dir" -j2 kvprefix kvprefix_bench kvprefix_make_input

commit=$(git -C "$source_dir" rev-parse --short HEAD)
git -C "$source_dir" diff --quiet HEAD -- . ':!docs' || commit="$commit+uncommitted"
"$build_dir/bench/kvprefix_bench" \
  --benchmark_filter="$filter" \
  --benchmark_repetitions="$repetitions" \
  --benchmark_enable_random_interleaving=true \
  --benchmark_display_aggregates_only=true \
  --benchmark_min_time="$min_time" \
  --benchmark_out="$work_dir/run.json" --benchmark_out_format=json \
  --benchmark_context="commit=$commit,random_interleaving=true,min_time=$min_time"
mv "$work_dir/run.json" "$data_dir/kvprefix_bench.json"

/usr/bin/python3 "$source_dir/bench/e2e.py" --build "$build_dir" \
  --out "$data_dir/e2e.json" \
  ${KVPREFIX_BASELINE_CLI:+--baseline-cli "$KVPREFIX_BASELINE_CLI"} \
  ${KVPREFIX_BASELINE_NAME:+--baseline-name "$KVPREFIX_BASELINE_NAME"}

/usr/bin/python3 "$source_dir/bench/curves.py" --build "$build_dir" \
  --data-dir "$data_dir" --img-dir "$source_dir/docs/img"

/usr/bin/python3 "$source_dir/bench/report.py" \
  --out "$source_dir/docs/benchmarks.md" --img-dir "$source_dir/docs/img" \
  --e2e "$data_dir/e2e.json" --command "bench/run_report.sh" \
  ${baseline:+--baseline "$baseline"} "$data_dir/kvprefix_bench.json"
