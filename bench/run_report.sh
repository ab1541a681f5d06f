#!/bin/bash
# Builds, runs the benchmarks and writes the performance report, from the
# repository root:
#
#   bench/run_report.sh [--out DIR | --publish] [--baseline OLD.json]
#                       [--plugin PATH ...] [--benchmarks-only]
#
#   --out DIR          the report folder (default build/bench-report):
#                      DIR/benchmarks.md, its charts in DIR/img/, and
#                      everything it shows in DIR/data/
#   --publish          DIR is docs/: regenerates the published
#                      docs/benchmarks.md (only on a quiet machine; the
#                      whole suite, so not with KVPREFIX_BENCH_FILTER or
#                      --benchmarks-only)
#   --baseline FILE    the run to compare with (default: DIR's previous run,
#                      else the published docs/data/kvprefix_bench.json)
#   --plugin PATH      (repeatable) also benchmark the engine plugin at PATH
#                      (a shared library built against
#                      plugin/kvprefix_plugin.h) on the same workloads:
#                      rows BM_<Op>/plugin:<its name>/..., in every table
#                      and chart beside the built-in engines
#   --benchmarks-only  skip bench/e2e.py and bench/curves.py (a quick check,
#                      e.g. with KVPREFIX_BENCH_FILTER)
#
# Steps: a Release build in build-bench/ (the radix engine as a plugin too,
# build-bench/tests/plugin/libkvprefix_radix_plugin.so, for --plugin); the
# Google Benchmark suite (every engine x every workload, 5 repetitions,
# random interleaving; raw JSON in DIR/data/kvprefix_bench.json); every row whose coefficient of variation of
# CPU time is above 10% (bench/report.py's NOISY_CV) run again alone, once
# (DIR/data/kvprefix_bench_rerun.json; the report shows the rerun and marks
# it, and marks the rows still above 10% as noisy); the end-to-end CLI run
# (bench/e2e.py -> DIR/data/e2e.json); the hit-ratio curves of both traces
# (bench/curves.py -> DIR/data/curve_*.csv, DIR/img/curve_*.png); then
# bench/report.py. DIR's previous run becomes DIR/data/baseline.json (and
# baseline_rerun.json), which compare.py sets against the new run. The
# command line, with the environment below, is recorded in the run's JSON
# and printed at the top of the report, so bench/report.py can redraw it
# without rerunning.
#
# Environment: KVPREFIX_BENCH_REPETITIONS (5; compare.py's U test needs at
# least 4 in both runs to reach p < 0.05), KVPREFIX_BENCH_MIN_TIME (0.05 s
# per repetition), KVPREFIX_BENCH_FILTER (a --benchmark_filter regex, all by
# default), KVPREFIX_BENCH_BUILD (the build folder, build-bench),
# KVPREFIX_MOONCAKE_DIR (the traces; default data/mooncake),
# KVPREFIX_BASELINE_CLI and KVPREFIX_BASELINE_NAME (an older build's kvprefix
# binary and its name, e.g. a commit: e2e.py times both side by side).
# The whole suite takes about 20 minutes on a 2-vCPU machine (plus the
# reruns); peak memory about 5 GB.
set -euo pipefail

usage() {
  echo "usage: bench/run_report.sh [--out DIR | --publish] [--baseline OLD.json]" \
    "[--plugin PATH ...] [--benchmarks-only]" >&2
  exit 2
}

source_dir=$(cd "$(dirname "$0")/.." && pwd)
# A path as the report records it: relative to the source tree when inside
# it, so that no machine's folder names reach a published report.
shown() {
  realpath -m --relative-base="$source_dir" "$1"
}
out_dir=$source_dir/build/bench-report
baseline_arg=""
benchmarks_only=false
engine_flags=()
command=(bench/run_report.sh)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out)
      [[ $# -ge 2 && -n "$2" ]] || usage
      out_dir=$(realpath -m "$2")
      command+=(--out "$(shown "$out_dir")")
      shift 2
      ;;
    --publish) out_dir=$source_dir/docs && command+=(--publish) && shift ;;
    --baseline)
      [[ $# -ge 2 ]] || usage
      [[ -f "$2" ]] || { echo "run_report.sh: --baseline $2: no such file" >&2; exit 2; }
      baseline_arg=$(realpath "$2")
      command+=(--baseline "$(shown "$baseline_arg")")
      shift 2
      ;;
    --plugin)
      [[ $# -ge 2 ]] || usage
      [[ -f "$2" ]] || { echo "run_report.sh: --plugin $2: no such file" >&2; exit 2; }
      # An absolute path: dlopen searches the library path for a bare name.
      engine_flags+=("--kvprefix_engine=plugin:$(realpath "$2")")
      command+=(--plugin "$(shown "$2")")
      shift 2
      ;;
    --benchmarks-only) benchmarks_only=true && command+=("$1") && shift ;;
    *) usage ;;
  esac
done

build_dir=${KVPREFIX_BENCH_BUILD:-$source_dir/build-bench}
repetitions=${KVPREFIX_BENCH_REPETITIONS:-5}
min_time=${KVPREFIX_BENCH_MIN_TIME:-0.05}
filter=${KVPREFIX_BENCH_FILTER:-.}
data_dir=$out_dir/data
img_dir=$out_dir/img
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

# The command as run, with the settings that came from the environment.
recorded=""
for variable in KVPREFIX_BENCH_REPETITIONS KVPREFIX_BENCH_MIN_TIME \
  KVPREFIX_BENCH_FILTER KVPREFIX_BENCH_BUILD KVPREFIX_MOONCAKE_DIR \
  KVPREFIX_BASELINE_CLI KVPREFIX_BASELINE_NAME; do
  if [[ -n "${!variable:-}" ]]; then
    value=${!variable}
    if [[ $variable == *_DIR || $variable == *_BUILD || $variable == *_CLI ]]; then
      value=$(shown "$value")
    fi
    recorded+="$variable=$(printf '%q' "$value") "
  fi
done
recorded+=$(printf '%q ' "${command[@]}")
recorded=${recorded% }

if [[ $out_dir == "$source_dir/docs" ]] &&
  { $benchmarks_only || [[ $filter != . ]]; }; then
  echo "run_report.sh: --publish needs the whole suite (no KVPREFIX_BENCH_FILTER," \
    "no --benchmarks-only)" >&2
  exit 2
fi

mkdir -p "$data_dir" "$img_dir"
# The baseline: --baseline, else the folder's previous run (with its rerun
# rows), else the published one.
previous=$data_dir
[[ -f "$previous/kvprefix_bench.json" ]] || previous=$source_dir/docs/data
baselines=()
if [[ -n "$baseline_arg" ]]; then
  cp "$baseline_arg" "$work_dir/baseline.json"
elif [[ -f "$previous/kvprefix_bench.json" ]]; then
  cp "$previous/kvprefix_bench.json" "$work_dir/baseline.json"
  if [[ -f "$previous/kvprefix_bench_rerun.json" ]]; then
    cp "$previous/kvprefix_bench_rerun.json" "$work_dir/baseline_rerun.json"
  fi
fi
rm -f "$data_dir/baseline.json" "$data_dir/baseline_rerun.json"
for file in baseline baseline_rerun; do
  if [[ -f "$work_dir/$file.json" ]]; then
    mv "$work_dir/$file.json" "$data_dir/$file.json"
    baselines+=(--baseline "$data_dir/$file.json")
  fi
done

cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKVPREFIX_BENCH=ON > "$work_dir/cmake.log"
ninja -C "$build_dir" -j2 kvprefix kvprefix_bench kvprefix_make_input \
  kvprefix_radix_plugin

commit=$(git -C "$source_dir" rev-parse --short HEAD)
git -C "$source_dir" diff --quiet HEAD -- . ':!docs' || commit="$commit+uncommitted"

# Runs the suite (the rows FILTER matches) into OUT.json, recording the
# command line in its context.
run_suite() {
  local filter=$1 out=$2
  "$build_dir/bench/kvprefix_bench" "${engine_flags[@]}" \
    --benchmark_filter="$filter" \
    --benchmark_repetitions="$repetitions" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_display_aggregates_only=true \
    --benchmark_min_time="$min_time" \
    --benchmark_out="$work_dir/run.json" --benchmark_out_format=json \
    --benchmark_context="commit=$commit,random_interleaving=true,min_time=$min_time"
  # Google Benchmark's --benchmark_context cannot hold '=' or ','.
  /usr/bin/python3 - "$work_dir/run.json" "$recorded" <<'PYTHON'
import json, sys
path, command = sys.argv[1:]
with open(path) as f:
    run = json.load(f)
run["context"]["command"] = command
with open(path, "w") as f:
    json.dump(run, f, indent=2)
PYTHON
  mv "$work_dir/run.json" "$out"
}

run_suite "$filter" "$data_dir/kvprefix_bench.json"
runs=("$data_dir/kvprefix_bench.json")
rm -f "$data_dir/kvprefix_bench_rerun.json"
noisy=$(/usr/bin/python3 "$source_dir/bench/report.py" --list-noisy \
  "$data_dir/kvprefix_bench.json")
if [[ -n "$noisy" ]]; then
  echo "run_report.sh: rerunning the rows whose cv is above 10%: $noisy" >&2
  run_suite "$noisy" "$data_dir/kvprefix_bench_rerun.json"
  runs+=("$data_dir/kvprefix_bench_rerun.json")
fi

extra=(--no-curves)
if ! $benchmarks_only; then
  /usr/bin/python3 "$source_dir/bench/e2e.py" --build "$build_dir" \
    --out "$data_dir/e2e.json" \
    ${KVPREFIX_BASELINE_CLI:+--baseline-cli "$KVPREFIX_BASELINE_CLI"} \
    ${KVPREFIX_BASELINE_NAME:+--baseline-name "$KVPREFIX_BASELINE_NAME"}
  extra=(--e2e "$data_dir/e2e.json")
  /usr/bin/python3 "$source_dir/bench/curves.py" --build "$build_dir" \
    --data-dir "$data_dir" --img-dir "$img_dir"
fi

/usr/bin/python3 "$source_dir/bench/report.py" \
  --out "$out_dir/benchmarks.md" --img-dir "$img_dir" \
  "${extra[@]}" "${baselines[@]}" "${runs[@]}"
