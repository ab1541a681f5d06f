#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs the Debian packages
# kvprefix needs (only the missing ones), configures a Release build in
# build/, builds what was asked (ninja's [done/total] progress shows), then
# runs it:
#
#   scripts/dev.sh demo    builds only the tool (build/kvprefix: about a
#                          third of the build steps), then runs the batch job on the
#                          bundled examples, a block-mode replay of the real
#                          Mooncake trace, unbounded and with a capacity, and
#                          its LRU curve with the smallest capacity (nodes and
#                          bytes for Llama-3-8B) reaching a 30% hit ratio
#   scripts/dev.sh test    builds everything; the whole test suite with ctest
#   scripts/dev.sh build   set-up and build of everything only
#
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-wheel: pip install without build isolation; dpkg-dev and file:
# cpack -G DEB (dpkg-shlibdeps computes the package's Depends);
# libbenchmark-tools and python3-scipy: Google Benchmark's compare.py (its
# U test), which bench/report.py runs.
readonly PACKAGES=(
  g++ cmake ninja-build pkg-config git time
  libabsl-dev libsimdjson-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev libhwy-dev
  python3 python3-dev pybind11-dev python3-pybind11 python3-pytest python3-numpy
  python3-hypothesis
  python3-setuptools python3-wheel python3-venv python3-matplotlib
  libbenchmark-tools python3-scipy dpkg-dev file
)

install_packages() {
  local missing=() package
  for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q 'install ok installed' || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "dev.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
}

# build [TARGET...]: configures build/ and builds the targets (all without).
build() {
  echo "dev.sh: configuring build/ (Release)" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  local targets=()
  if [ $# -gt 0 ]; then
    targets=(--target "$@")
    echo "dev.sh: building $* (scripts/dev.sh build builds everything)" >&2
  else
    echo "dev.sh: building everything" >&2
  fi
  cmake --build build -j "$(nproc)" "${targets[@]}"
}

demo() {
  local example
  for example in examples/*.json; do
    echo "\$ build/kvprefix match $example"
    build/kvprefix match "$example"
  done
  local trace=data/mooncake/conversation_trace.jsonl
  local command
  for command in "replay $trace --mode block" \
                 "replay $trace --mode block --capacity 10000 --policy lru" \
                 "curve $trace --mode block --points 6" \
                 "curve $trace --mode block --target-hit-ratio 0.3 --kv-bytes-per-token 131072"; do
    echo "\$ build/kvprefix $command"
    # shellcheck disable=SC2086  # the words of $command are its arguments
    build/kvprefix $command
  done
}

run_tests() {
  # The long property-test campaign is opt-in (label "campaign").
  ctest --test-dir build --output-on-failure -j "$(nproc)" -LE campaign
}

case "${1:-}" in
  demo) install_packages && build kvprefix && demo ;;
  test) install_packages && build && run_tests ;;
  build) install_packages && build ;;
  *)
    echo "usage: scripts/dev.sh demo|test|build" >&2
    exit 2
    ;;
esac
