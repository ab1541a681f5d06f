#!/usr/bin/env bash
# Shows that a differential target has teeth: with each deliberately broken
# engine swapped in (KVPREFIX_FUZZ_MUTANT; the target lists them), it must
# find a disagreement with the reference or, for the serving target, a
# broken rule of SPEC §10, and with the correct baselines (every name ending
# in "-baseline": for differential_fuzzer "mutant-baseline", the unbounded
# token trie the index mutants of testing/mutants.h break,
# "mutant-cache-baseline", ...; for serving_fuzzer
# "serving-mutant-baseline", the lifecycle testing/serving_mutants.h's
# mutants break) it must not, so every crash is due to the bug alone.
#
# Usage: fuzz/teeth.sh FUZZER [SECONDS]
#   FUZZER is a libFuzzer build of differential_fuzzer, serving_fuzzer or
#     routing_fuzzer (testing/routing_mutants.h's "routing-mutant-baseline"
#     is its correct router)
#     (its seed corpus: fuzz/corpus/<target>/): each mutant is fuzzed
#     from an EMPTY corpus (the seeds would give the answer away) for at most
#     SECONDS (default 120) and must crash;
#   or the plain replay program <target>_replay: the checked-in
#     seed corpus must expose each mutant.
# Exit status 0 when every mutant is caught and both baselines pass.
set -euo pipefail

fuzzer=$(realpath "$1")
seconds=${2:-120}
target=$(basename "$fuzzer" _replay)
corpus=$(dirname "$(realpath "$0")")/corpus/$target
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Run in $work: libFuzzer saves the input it was running when the target
# exits (here the empty one) as a crash-* file in the current folder.
mutants=$(cd "$work" && KVPREFIX_FUZZ_MUTANT=list "$fuzzer" "$corpus" 2>&1 |
          sed -n 's/^mutants: //p') || true
[[ -n "$mutants" ]] || { echo "teeth: cannot list mutants from $fuzzer" >&2; exit 1; }

# Runs the fuzzer on mutant $1 for at most $2 seconds; output in
# $work/$1.log, crash files in $work/$1/. The subshell keeps the shell's
# "Aborted" notice out of the way.
run() {
  mkdir -p "$work/$1/corpus"
  if [[ "$fuzzer" == *_replay ]]; then
    (KVPREFIX_FUZZ_MUTANT=$1 "$fuzzer" "$corpus"; exit $?) >"$work/$1.log" 2>&1
  else
    (KVPREFIX_FUZZ_MUTANT=$1 "$fuzzer" -max_total_time="$2" -seed=1 \
      -artifact_prefix="$work/$1/" "$work/$1/corpus"; exit $?) >"$work/$1.log" 2>&1
  fi
}

# What a caught mutant's report says.
caught='disagrees with the reference|breaks a rule of SPEC'
failed=0
for mutant in $mutants; do
  start=$SECONDS
  if [[ "$mutant" == *-baseline ]]; then
    # A correct engine: a shorter run suffices to show no false alarm.
    if run "$mutant" $(( seconds < 10 ? seconds : 10 )); then
      echo "teeth: $mutant (correct) passes, as it must"
    else
      echo "teeth: FAIL: $mutant (correct) crashed:"; tail -20 "$work/$mutant.log"
      failed=1
    fi
  elif ! run "$mutant" "$seconds" && grep -qE "$caught" "$work/$mutant.log"; then
    execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$work/$mutant.log" | tail -1)
    echo "teeth: $mutant caught in $(( SECONDS - start )) s${execs:+ (after $execs execs)}:" \
         "$(grep -m1 -E "$caught" "$work/$mutant.log")"
  else
    echo "teeth: FAIL: $mutant not caught"; tail -20 "$work/$mutant.log"
    failed=1
  fi
done
exit $failed
