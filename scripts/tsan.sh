#!/usr/bin/env bash
# Builds the concurrency test with ThreadSanitizer and runs it: concurrent
# const matches on every engine must be free of data races.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKVPREFIX_SANITIZE=thread -DKVPREFIX_BENCH=OFF -DKVPREFIX_PYTHON=OFF >/dev/null
cmake --build build-tsan -j "$(nproc)" --target concurrency_test
TSAN_OPTIONS="halt_on_error=1" build-tsan/tests/concurrency_test
