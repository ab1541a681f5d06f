#!/usr/bin/env bash
# Prints how many inputs per second a libFuzzer target runs over a corpus:
# every file of the given folders once, as libFuzzer runs files named on its
# command line (the target with its sanitizers; no mutation, no coverage
# bookkeeping), timed as one process from start to exit.
#
# Usage: fuzz/corpus_speed.sh FUZZER CORPUS_DIR...
# Prints "<target>: N inputs/s over the corpus (M inputs in S s wall, C s
# CPU = K inputs/s of CPU, F minor page faults per input)": the CPU figure
# is the one to compare on a shared, loaded machine. Exits with the target's
# status (non-zero on a crash, whose output is then shown).
set -euo pipefail

fuzzer=$1
shift
mapfile -t files < <(find "$@" -type f | sort)
(( ${#files[@]} > 0 )) || { echo "corpus_speed: no inputs in $*" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# GNU time: wall, user and system seconds and minor page faults, on the
# last line of $log.
status=0
/usr/bin/time -f '%e %U %S %R' "$fuzzer" "${files[@]}" >"$log" 2>&1 || status=$?
if (( status != 0 )); then
  tail -40 "$log"
  exit "$status"
fi
read -r seconds user system faults < <(tail -1 "$log")
awk -v n="${#files[@]}" -v s="$seconds" -v u="$user" -v y="$system" \
    -v f="$faults" -v t="$(basename "$fuzzer")" 'BEGIN {
  c = u + y
  printf "%s: %d inputs/s over the corpus (%d inputs in %.2f s wall, %.2f s CPU = %d inputs/s of CPU, %d minor page faults per input)\n",
         t, (s > 0 ? n / s : 0), n, s, c, (c > 0 ? n / c : 0), f / n
}'
