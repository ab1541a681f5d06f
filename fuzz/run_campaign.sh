#!/usr/bin/env bash
# Runs one libFuzzer campaign and prints its exec/s and coverage at the end.
#
# Usage: fuzz/run_campaign.sh TARGET [SECONDS] [JOBS] [CORPUS_DIR] [CRASH_DIR]
#   TARGET      a target of fuzz/targets.txt, e.g. differential_fuzzer
#   SECONDS     campaign length (default 600)
#   JOBS        parallel fuzzing processes, libFuzzer -fork=JOBS when above 1
#               (default 1: one in-process run)
#   CORPUS_DIR  the growing corpus (default $build/campaign/TARGET/corpus); the
#               checked-in seeds fuzz/corpus/TARGET are read, never written
#   CRASH_DIR   where crash-*, leak-*, timeout-* and oom-* files go (default
#               $build/campaign/TARGET/crashes)
# $build is $KVPREFIX_FUZZ_BUILD (default build-fuzz, the -DKVPREFIX_FUZZ=ON
# build); the binaries come from $build/fuzz. Exit status: 0 when nothing
# was found, else libFuzzer's (non-zero on a crash, leak, timeout or OOM),
# or 1 when an in-process run ended without libFuzzer's summary (_exit).
set -uo pipefail

fuzz_dir=$(dirname "$(realpath "$0")")
target=${1:?usage: run_campaign.sh TARGET [SECONDS] [JOBS] [CORPUS_DIR] [CRASH_DIR]}
seconds=${2:-600}
jobs=${3:-1}
build=${KVPREFIX_FUZZ_BUILD:-$fuzz_dir/../build-fuzz}
corpus=${4:-$build/campaign/$target/corpus}
crashes=${5:-$build/campaign/$target/crashes}
fuzzer=$build/fuzz/$target

[[ -x "$fuzzer" ]] || { echo "no fuzzer $fuzzer (build with -DKVPREFIX_FUZZ=ON)" >&2; exit 2; }
mkdir -p "$corpus" "$crashes"
log=$(dirname "$(realpath "$crashes")")/$target-campaign.log

echo "campaign: $target for ${seconds}s, $jobs job(s), corpus $corpus, crashes $crashes"
# One job runs in-process (no restarts); more use libFuzzer's fork mode.
(( jobs > 1 )) && parallel=(-fork="$jobs") || parallel=()
"$fuzzer" "${parallel[@]}" -max_total_time="$seconds" -timeout=10 \
  -dict="$fuzz_dir/$target.dict" -artifact_prefix="$crashes/" \
  "$corpus" "$fuzz_dir/corpus/$target" 2>&1 | tee "$log" |
  grep --line-buffered -E '^#|^Done|ERROR|SUMMARY|INFO: exiting'
status=${PIPESTATUS[0]}
# libFuzzer reports a crash, a timeout and an exit() of the target itself;
# an _exit() (a user's plugin under KVPREFIX_FUZZ_ENGINES, say) ends an
# in-process run with status 0 and no summary: not a clean campaign.
if (( status == 0 && jobs == 1 )) && ! grep -qE '^Done [0-9]+ runs' "$log"; then
  echo "campaign: $target ended with status 0 before libFuzzer's closing" \
       "'Done' line: the target (a plugin's _exit?) ended the process;" \
       "its last lines are in $log" >&2
  status=1
fi

# exec/s over the whole run: executions and seconds from libFuzzer's last
# report ("Done N runs in T second(s)" in-process, "#N: ... time: Ts" in fork
# mode). Coverage by replaying the final corpus once in one process, the same
# measure for every kind of run (fork mode counts differently).
if done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1); then
  execs=$(sed -nE 's/^Done ([0-9]+) runs.*/\1/p' <<<"$done_line")
  elapsed=$(sed -nE 's/.* in ([0-9]+) second.*/\1/p' <<<"$done_line")
else
  last=$(grep -E '^#[0-9]+: .* time: [0-9]+s' "$log" | tail -1)
  execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
  elapsed=$(sed -nE 's/.* time: ([0-9]+)s.*/\1/p' <<<"$last")
fi
coverage=$("$fuzzer" -runs=0 "$corpus" "$fuzz_dir/corpus/$target" 2>&1 |
           grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1)
echo "result: $target ${execs:-0} execs in ${elapsed:-?} s" \
     "= exec/s: $(( ${execs:-0} / (${elapsed:-0} > 0 ? ${elapsed:-1} : 1) )) ($jobs job(s));" \
     "final corpus $(find "$corpus" -type f | wc -l) files, $coverage;" \
     "findings: $(find "$crashes" -type f | wc -l) in $crashes (exit $status)"
exit "$status"
