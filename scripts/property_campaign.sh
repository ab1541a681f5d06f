#!/usr/bin/env bash
# A long RapidCheck campaign: runs the property suite (tests/property/) with
# many more cases than the default ctest run, over several fresh seeds, and
# stops at the first failure, whose output holds the shrunk counterexample
# and the RC_PARAMS line that reproduces it (see tests/README.md).
#
#   scripts/property_campaign.sh [build-dir] [cases-per-property] [rounds]
#
# Defaults: build/, 10000 cases, 10 rounds. Each round draws a new seed and
# runs the engine properties and the teeth test with
# RC_PARAMS="seed=<seed> max_success=<cases>". Builds the binaries first.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly BUILD_DIR="${1:-build}"
readonly CASES="${2:-10000}"
readonly ROUNDS="${3:-10}"
readonly BINARIES=(property_engine_properties_test property_teeth_test)

cmake --build "$BUILD_DIR" --target "${BINARIES[@]}"
for ((round = 1; round <= ROUNDS; ++round)); do
  seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
  for binary in "${BINARIES[@]}"; do
    echo "== round $round/$ROUNDS: $binary seed=$seed max_success=$CASES"
    if ! RC_PARAMS="seed=$seed max_success=$CASES" \
        "$BUILD_DIR/tests/property/$binary"; then
      echo "FAILED: $binary with RC_PARAMS=\"seed=$seed max_success=$CASES\""
      exit 1
    fi
  done
done
echo "campaign passed: $ROUNDS rounds x $CASES cases per property"
