#!/usr/bin/env bash
# Shows that the trace-line fuzzer has teeth for unbounded recursion
# (tests/former_bugs_test.cc: a deep unused member crashed): built with the
# recursive ValidateValue of before the fix (fuzz/recursive_validate_value.cc),
# it must crash with a stack overflow, while the target as built for real must
# not. Both run on the targets' small stack (fuzz/small_stack.h).
#
# Usage: fuzz/recursion_teeth.sh RECURSIVE FIXED [SECONDS]
#   RECURSIVE, FIXED are libFuzzer builds of mooncake_line_fuzzer (the teeth
#     build and the real one): each is fuzzed from an EMPTY corpus (the
#     deep seeds would give the answer away) with the target's dictionary,
#     the recursive one for at most SECONDS (default 60, CI's fuzz minute),
#     the fixed one for min(SECONDS, 20) with the same -seed;
#   or the plain replay programs (_replay): each seed is run alone; the
#     recursive one must crash (SIGSEGV, the replay program naming the seed)
#     on a deep seed (named *deep*) and pass every other one (so it fails for
#     the depth, not for some other difference), and the fixed one must pass
#     the whole corpus.
# Prints how fast the crash came (seconds, executions). Exit status 0 when
# both hold.
set -euo pipefail

recursive=$(realpath "$1")
fixed=$(realpath "$2")
seconds=${3:-60}
fuzz_dir=$(dirname "$(realpath "$0")")
corpus=$fuzz_dir/corpus/mooncake_line_fuzzer
dict=$fuzz_dir/mooncake_line_fuzzer.dict
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs fuzzer $1 for at most $2 seconds from an empty corpus, or replays the
# seed corpus with a _replay program; output in $work/$3.log. The subshell
# keeps the shell's "Segmentation fault" notice out of the way.
run() {
  mkdir -p "$work/$3/corpus"
  if [[ "$1" == *_replay ]]; then
    (cd "$work" && "$1" "$corpus"; exit $?) >"$work/$3.log" 2>&1
  else
    (cd "$work" && "$1" -max_total_time="$2" -seed=1 -dict="$dict" \
      -artifact_prefix="$work/$3/" "$work/$3/corpus"; exit $?) >"$work/$3.log" 2>&1
  fi
}

failed=0
start=$SECONDS
if [[ "$recursive" == *_replay ]]; then
  deep_crashes=0
  for seed in "$corpus"/*; do
    ("$recursive" "$seed"; exit $?) >"$work/seed.log" 2>&1 && status=0 || status=$?
    if [[ "$(basename "$seed")" == *deep* ]]; then
      if (( status == 139 )); then
        deep_crashes=$(( deep_crashes + 1 ))
        # The overflow named with its input (former bug: the small-stack
        # thread had no signal stack, so the report never came).
        if ! grep -qF "replay: SIGSEGV on input $seed" "$work/seed.log"; then
          echo "teeth: FAIL: the crash on $(basename "$seed") was not named:"
          tail -5 "$work/seed.log"
          failed=1
        fi
      fi
    elif (( status != 0 )); then
      echo "teeth: FAIL: the recursive checker fails $(basename "$seed"), which is not deep (exit status $status):"
      tail -5 "$work/seed.log"
      failed=1
    fi
  done
  if (( deep_crashes > 0 )); then
    echo "teeth: the recursive checker overflowed its stack on $deep_crashes deep seed(s) and passed the others"
  else
    echo "teeth: FAIL: no deep seed crashed the recursive checker"
    failed=1
  fi
else
  run "$recursive" "$seconds" recursive && status=0 || status=$?
  if (( status == 0 )); then
    echo "teeth: FAIL: the recursive checker was not caught:"
    tail -20 "$work/recursive.log"
    failed=1
  elif grep -q "stack-overflow" "$work/recursive.log"; then
    execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$work/recursive.log" | tail -1)
    crash=$(find "$work/recursive" -name 'crash-*' -printf '%s' -quit 2>/dev/null || true)
    echo "teeth: the recursive checker overflowed its stack in $(( SECONDS - start )) s${execs:+ (after $execs execs)}${crash:+, on a $crash-byte input}:" \
         "$(grep -m1 'ERROR: AddressSanitizer' "$work/recursive.log")"
  else
    echo "teeth: FAIL: the recursive checker failed (exit status $status), but not by a stack overflow:"
    tail -20 "$work/recursive.log"
    failed=1
  fi
fi

if run "$fixed" $(( seconds < 20 ? seconds : 20 )) fixed; then
  echo "teeth: the fixed checker passes, as it must"
else
  echo "teeth: FAIL: the fixed checker crashed:"
  tail -20 "$work/fixed.log"
  failed=1
fi
exit $failed
