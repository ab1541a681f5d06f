#!/usr/bin/env bash
# The packaging tests (ctest label "packaging"; tests/packaging/CMakeLists.txt
# passes the environment below). Each works in its own scratch folder,
# emptied first, and checks the seed's three examples (examples/seed-N.json
# against the Nth "Output:" line of docs/seed/) byte for byte:
#
#   packaging_test.sh install       `cmake --install` the build into a prefix;
#                                   every #include of an installed header is
#                                   installed; examples/consumer/ builds
#                                   against it with find_package, and its
#                                   main.cc with pkg-config (kvprefix.pc);
#                                   examples/checking/'s GoogleTest suite
#                                   (kvprefix::checking) against it
#   packaging_test.sh subdirectory  examples/consumer/ built with the source
#                                   tree added by add_subdirectory
#   packaging_test.sh deb           `cpack -G DEB`; the control fields; the
#                                   CLI run from the unpacked .deb (`curve
#                                   --plot` with the package's own plot
#                                   script), and the consumer built against
#                                   it
#   packaging_test.sh plugin        `cmake --install` into a prefix, then
#                                   examples/plugin/ (a cache in C) built
#                                   against it alone; the installed tool's
#                                   verify passes it and catches, shrinks
#                                   and writes the case of its wrong variant
#   packaging_test.sh pip           `pip install --no-build-isolation
#                                   --no-index` of a copy of the repository
#                                   into a new venv; version metadata and
#                                   `python -m kvprefix match|replay|curve`;
#                                   examples/python/ (kvprefix.testing)
#                                   under pytest on the installed package
#
# Environment: KVPREFIX_SOURCE (repository), KVPREFIX_BUILD (the configured
# build), KVPREFIX_WORK (scratch folder), KVPREFIX_VERSION (the project's),
# KVPREFIX_GENERATOR, KVPREFIX_CXX, and optionally KVPREFIX_LAUNCHER (ccache)
# and KVPREFIX_PYTHON (the interpreter of the pip test).
set -euo pipefail
: "${KVPREFIX_SOURCE:?}" "${KVPREFIX_BUILD:?}" "${KVPREFIX_WORK:?}"
: "${KVPREFIX_VERSION:?}" "${KVPREFIX_GENERATOR:?}" "${KVPREFIX_CXX:?}"
src=$KVPREFIX_SOURCE
build=$KVPREFIX_BUILD
work=$KVPREFIX_WORK
version=$KVPREFIX_VERSION

# Prints a command, then runs it.
run() {
  echo "+ $*" >&2
  "$@"
}

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# CMake arguments that build a consumer as the build under test is built.
cmake_arguments=(-G "$KVPREFIX_GENERATOR" -DCMAKE_CXX_COMPILER="$KVPREFIX_CXX")
if [ -n "${KVPREFIX_LAUNCHER:-}" ]; then
  cmake_arguments+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$KVPREFIX_LAUNCHER")
fi

# Writes $work/seed-N.expected: the seed's Nth output line (N = 1, 2, 3),
# which `kvprefix match examples/seed-N.json` prints.
write_seed_outputs() {
  local outputs n
  mapfile -t outputs < <(grep -h '^Output: ' "$src"/docs/seed/*.txt | cut -c9-)
  [ ${#outputs[@]} -eq 3 ] || fail "expected 3 Output lines in docs/seed/"
  for n in 1 2 3; do
    printf '%s\n' "${outputs[n - 1]}" >"$work/seed-$n.expected"
  done
}

# check_seed_examples COMMAND...: `COMMAND examples/seed-N.json` prints the
# seed's Nth output line, for N = 1, 2, 3.
check_seed_examples() {
  local n expected actual
  for n in 1 2 3; do
    expected=$work/seed-$n.expected
    actual=$work/seed-$n.actual
    run "$@" "$src/examples/seed-$n.json" >"$actual"
    cmp "$expected" "$actual" || fail "$* examples/seed-$n.json: $(cat "$actual")"
  done
  echo "seed examples: $* prints the seed's outputs" >&2
}

# `CLI curve --plot` draws with SCRIPT, the plot script installed beside the
# tool, not with the source tree's cli/plot_curve.py: it draws a PNG, then,
# with SCRIPT replaced by one that fails naming itself, fails with that name.
check_packaged_plot() {
  local cli=$1 script=$2 trace=$work/plot-trace.jsonl message
  printf '%s\n' '{"input_length":1024,"hash_ids":[1,2]}' \
    '{"input_length":1536,"hash_ids":[1,2,3]}' '{"input_length":512,"hash_ids":[1]}' \
    >"$trace"
  run "$cli" curve "$trace" --points 3 --plot "$work/curve.png" >/dev/null
  [ "$(head -c 4 "$work/curve.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
    fail "curve --plot wrote no PNG"
  mv "$script" "$script.real"
  printf '%s\n' '#!/usr/bin/python3' 'import sys' \
    'sys.exit("the packaged plot_curve.py ran")' >"$script"
  if message=$("$cli" curve "$trace" --points 3 --plot "$work/stub.png" 2>&1); then
    mv "$script.real" "$script"
    fail "curve --plot did not run the packaged $script"
  fi
  mv "$script.real" "$script"
  [[ $message == *"the packaged plot_curve.py ran"* ]] ||
    fail "curve --plot ran another plot script: $message"
  echo "curve --plot: draws with the packaged plot_curve.py" >&2
}

# The consumer run without arguments answers the first seed example.
check_consumer() {
  local consumer=$1 expected=$work/seed-1.expected
  run "$consumer" >"$work/consumer.out" 2>"$work/consumer.err"
  cmp "$expected" "$work/consumer.out" || fail "$consumer: $(cat "$work/consumer.out")"
  grep -qx "consumer: kvprefix $version" "$work/consumer.err" ||
    fail "$consumer: not built against kvprefix $version: $(cat "$work/consumer.err")"
  check_seed_examples "$consumer"
}

# Every `#include "folder/file.h"` of an installed header names an installed
# header (third-party includes, such as absl/, are not ours to check).
check_installed_includes() {
  local include_dir=$1 header included folder count=0
  while IFS= read -r header; do
    while IFS= read -r included; do
      folder=${included%%/*}
      [ -d "$src/$folder" ] || continue
      [ -f "$include_dir/$included" ] ||
        fail "${header#"$include_dir"/} includes $included, which is not installed"
    done < <(sed -n 's/^#include "\(.*\)"$/\1/p' "$header")
    count=$((count + 1))
  done < <(find "$include_dir" -name '*.h')
  [ "$count" -gt 0 ] || fail "no headers in $include_dir"
  echo "installed headers: $count, every include installed" >&2
}

test_install() {
  local prefix=$work/prefix
  run cmake --install "$build" --prefix "$prefix" >/dev/null
  check_installed_includes "$prefix/include/kvprefix"
  for file in bin/kvprefix lib/cmake/kvprefix/kvprefixConfig.cmake \
    lib/cmake/kvprefix/kvprefixConfigVersion.cmake lib/pkgconfig/kvprefix.pc \
    include/kvprefix/kvprefix/version.h; do
    [ -e "$prefix/$file" ] || fail "not installed: $file"
  done

  # As a user types it (README, "Library").
  run cmake -S "$src/examples/consumer" -B "$work/consumer" "${cmake_arguments[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  run cmake --build "$work/consumer" >/dev/null
  check_consumer "$work/consumer/consumer"

  # pkg-config: the same program, compiled by hand.
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  [ "$(pkg-config --modversion kvprefix)" = "$version" ] ||
    fail "kvprefix.pc: version $(pkg-config --modversion kvprefix)"
  read -r -a flags < <(pkg-config --cflags --libs kvprefix)
  run "$KVPREFIX_CXX" -std=c++20 "$src/examples/consumer/main.cc" \
    -o "$work/pkg_config_consumer" "${flags[@]}"
  check_consumer "$work/pkg_config_consumer"

  check_checking_example "$prefix"
}

# examples/checking/ against the installed prefix $1 (kvprefix::checking):
# its GoogleTest suite passes the user's trie and catches the wrong variant,
# whose report (printed by the suite) names the engine.
check_checking_example() {
  local log=$work/my_trie_test.log
  run cmake -S "$src/examples/checking" -B "$work/checking" "${cmake_arguments[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$1" >/dev/null
  run cmake --build "$work/checking" --target my_trie_test >/dev/null
  run "$work/checking/my_trie_test" >"$log" 2>&1 || { cat "$log"; fail "my_trie_test"; }
  grep -q "^\[  PASSED  \] 6 tests" "$log" || { cat "$log"; fail "my_trie_test: not 6 tests"; }
  # MyLruTrie, of lru and page size 1 only: checked on those alone.
  grep -qx "my_lru_trie: checked 300 inputs, skipped 0" "$log" ||
    { cat "$log"; fail "my_trie_test: MyLruTrie skipped inputs"; }
  grep -q "engine 'my-trie-16-bit' disagrees with the reference" "$log" ||
    fail "my_trie_test printed no report of the wrong variant"
  echo "checking example: my-trie passes, $(grep -m1 'my-trie-16-bit' "$log")" >&2
}

test_plugin() {
  local prefix=$work/prefix plugins=$work/plugin
  local cli=$prefix/bin/kvprefix
  run cmake --install "$build" --prefix "$prefix" >/dev/null
  # A C project: the C compiler is CMake's default, with the launcher.
  run cmake -S "$src/examples/plugin" -B "$plugins" -G "$KVPREFIX_GENERATOR" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    ${KVPREFIX_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER="$KVPREFIX_LAUNCHER"} >/dev/null
  run cmake --build "$plugins" >/dev/null
  cd "$plugins"  # as examples/plugin/README.md types the commands
  local output
  output=$(run "$cli" verify --engines plugin:./libmycache.so --runs 1000 --seed 1)
  [[ $output == *"OK: 1000 inputs agree with the reference"* ]] ||
    fail "verify of libmycache.so: $output"
  # mycache implements lru and fifo: the lfu documents (322 of seed 1's
  # first 1000) it refuses, and verify skips them instead of failing.
  output=$(run "$cli" verify --engines plugin:./libmycache.so --runs 1000 --seed 1 \
    --format requests)
  [[ $output == *"OK: 678 inputs agree with the reference"* &&
     $output == *"skipped: 322 inputs whose cache an engine refuses, the first: "*"refuses capacity 0, lfu, page size 3: mycache implements the policies lru and fifo only"* ]] ||
    fail "verify --format requests of libmycache.so: $output"
  # libmycache_lru1.so implements lru and page size 1 only: given those,
  # verify generates nothing it refuses.
  output=$(run "$cli" verify --engines plugin:./libmycache_lru1.so --runs 1000 --seed 1 \
    --format requests --models spec --match-limits all --policies lru --page-sizes 1)
  [[ $output == *"OK: 1000 inputs agree with the reference"* &&
     $output != *"skipped"* ]] ||
    fail "verify --policies lru --page-sizes 1 of libmycache_lru1.so: $output"
  # The wrong variant's bug is in eviction: only replay documents show it.
  output=$(run "$cli" verify --engines plugin:./libmycache_wrong.so --runs 1000 --seed 1)
  [[ $output == *"OK: 1000 inputs agree"* ]] || fail "libmycache_wrong.so, batch: $output"
  local status=0
  run "$cli" verify --engines plugin:./libmycache_wrong.so --runs 1000 --seed 1 \
    --format requests --out wrong.json >wrong.out 2>wrong.err || status=$?
  [ "$status" -eq 1 ] || fail "verify of libmycache_wrong.so: status $status"
  [ "$(tail -n 1 wrong.err)" = "kvprefix: verify failed: wrong-answer" ] ||
    fail "verify of libmycache_wrong.so: $(cat wrong.err)"
  grep -qx "  actual (plugin:mycache): evicted {\[0\]}" wrong.out ||
    fail "verify of libmycache_wrong.so: $(cat wrong.out)"
  local expected
  expected='{"document":{"requests":[[1,0],[2],[1,0],[1,2,2],[0,2]],"capacity":6,'
  expected+='"policy":"lru","page_size":1},"expected":{"matches":['
  expected+='{"matched_length":0,"cache_node":0,"uncached_suffix":[1,0]},'
  expected+='{"matched_length":0,"cache_node":0,"uncached_suffix":[2]},'
  expected+='{"matched_length":2,"cache_node":2,"uncached_suffix":[]},'
  expected+='{"matched_length":1,"cache_node":1,"uncached_suffix":[2,2]},'
  expected+='{"matched_length":0,"cache_node":0,"uncached_suffix":[0,2]}]},'
  expected+='"source":"kvprefix verify --engines plugin:./libmycache_wrong.so --format '
  expected+='requests: wrong-answer on generated replay document 22 (--seed 1, size 22)"}'
  [ "$(cat wrong.json)" = "$expected" ] || fail "wrong.json: $(cat wrong.json)"
  # The case replays through the plugin: a failure again, with the same case.
  status=0
  run "$cli" verify --engines plugin:./libmycache_wrong.so --format requests \
    --cases wrong.json --out again.json >/dev/null 2>&1 || status=$?
  [ "$status" -eq 1 ] || fail "verify --cases wrong.json: status $status"
  echo "plugin: libmycache.so passes verify, libmycache_wrong.so is caught and shrunk" >&2
  test_router_plugin
}

# examples/router_plugin/ (a least-loaded router in C) built against the
# installed tree, replayed with `replay --router plugin:PATH` and checked by
# the installed tool's `verify --router ... --against least-loaded`; its
# wrong variant is caught, shrunk and written.
test_router_plugin() {
  local prefix=$work/prefix routers=$work/router_plugin
  local cli=$prefix/bin/kvprefix
  run cmake -S "$src/examples/router_plugin" -B "$routers" -G "$KVPREFIX_GENERATOR" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    ${KVPREFIX_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER="$KVPREFIX_LAUNCHER"} >/dev/null
  run cmake --build "$routers" >/dev/null
  cd "$routers"
  local output builtin
  output=$(run "$cli" replay "$src/data/mooncake/conversation_trace.jsonl" \
    --max-running 4 --decode-us-per-token 1000 --workers 4 \
    --router plugin:./libleastloaded.so)
  builtin=$(run "$cli" replay "$src/data/mooncake/conversation_trace.jsonl" \
    --max-running 4 --decode-us-per-token 1000 --workers 4 --router least-loaded)
  [[ $output == *'"router":"plugin:leastloaded"'* ]] ||
    fail "replay --router plugin:./libleastloaded.so: $output"
  # The same totals as the built-in policy's (but the router's name).
  local totals='s/"router":"[^"]*"//; s/.*"totals":{\([^}]*\)}.*/\1/p'
  [ "$(sed -n "$totals" <<<"$output")" = "$(sed -n "$totals" <<<"$builtin")" ] ||
    fail "libleastloaded.so replays other totals than least-loaded"
  output=$(run "$cli" verify --router plugin:./libleastloaded.so \
    --against least-loaded --runs 300 --seed 1)
  [[ $output == "OK: 300 routed documents"* ]] ||
    fail "verify --router plugin:./libleastloaded.so: $output"
  local status=0
  run "$cli" verify --router plugin:./libleastloaded_wrong.so --against least-loaded \
    --runs 300 --seed 1 --out wrong.json >wrong.out 2>wrong.err || status=$?
  [ "$status" -eq 1 ] || fail "verify of libleastloaded_wrong.so: status $status"
  [ "$(tail -n 1 wrong.err)" = "kvprefix: verify failed: wrong-decision" ] ||
    fail "verify of libleastloaded_wrong.so: $(cat wrong.err)"
  grep -q "^decision 1 (request 1 of 2, arrival 0 µs): plugin:leastloaded chose worker 0, least-loaded chose worker 1$" wrong.out ||
    fail "verify of libleastloaded_wrong.so: $(cat wrong.out)"
  [ "$(cat wrong.json)" = \
    '{"requests":[[],[]],"capacity":0,"policy":"lru","page_size":1,"arrivals_us":[0,0],"output_lengths":[0,0],"workers":2,"router":{"name":"least-loaded","seed":41}}' ] ||
    fail "wrong.json: $(cat wrong.json)"
  echo "router plugin: libleastloaded.so replays and passes verify, libleastloaded_wrong.so is caught and shrunk" >&2
}

test_subdirectory() {
  # No build type: the quickest build of the libraries.
  run cmake -S "$src/examples/consumer" -B "$work/consumer" "${cmake_arguments[@]}" \
    -DKVPREFIX_SUBDIRECTORY="$src" >"$work/configure.log"
  # Added below another project, kvprefix builds only its libraries, and
  # looks for no test, benchmark, CLI or Python dependency.
  if grep -E '^(GTest|rapidcheck|benchmark|nlohmann_json|CLI11|pybind11)_DIR:' \
    "$work/consumer/CMakeCache.txt"; then
    fail "a subproject kvprefix looked for a dependency of its tests or tools"
  fi
  run cmake --build "$work/consumer" >/dev/null
  check_consumer "$work/consumer/consumer"
}

test_deb() {
  run cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work" >/dev/null
  local deb
  deb=$(find "$work" -maxdepth 1 -name "kvprefix_${version}_*.deb")
  [ -f "$deb" ] || fail "cpack made no kvprefix_${version}_*.deb"
  run dpkg-deb --field "$deb" Package Version Maintainer Depends Recommends Suggests
  [ "$(dpkg-deb --field "$deb" Package)" = kvprefix ] || fail "Package"
  [ "$(dpkg-deb --field "$deb" Version)" = "$version" ] || fail "Version"
  [ -n "$(dpkg-deb --field "$deb" Maintainer)" ] || fail "no Maintainer"
  [[ $(dpkg-deb --field "$deb" Suggests) == *python3-matplotlib* ]] ||
    fail "Suggests lacks python3-matplotlib (curve --plot)"
  # dpkg-shlibdeps found the shared libraries the CLI loads.
  local depends
  depends=$(dpkg-deb --field "$deb" Depends)
  for library in libc6 libstdc++6 libfmt libsimdjson libhwy; do
    [[ $depends == *"$library"* ]] || fail "Depends lacks $library: $depends"
  done
  run dpkg-deb --contents "$deb"
  run dpkg-deb --extract "$deb" "$work/root"
  for file in usr/bin/kvprefix usr/lib/libkvprefix_core.a \
    usr/lib/cmake/kvprefix/kvprefixConfig.cmake usr/lib/pkgconfig/kvprefix.pc \
    usr/include/kvprefix/engines/registry.h usr/share/doc/kvprefix/CHANGELOG.md \
    usr/share/kvprefix/plot_curve.py usr/share/kvprefix/plot_routers.py; do
    [ -e "$work/root/$file" ] || fail "not in the .deb: $file"
  done
  local cli=$work/root/usr/bin/kvprefix
  [ "$(run "$cli" --version)" = "kvprefix $version" ] || fail "$cli --version"
  check_seed_examples "$cli" match
  check_packaged_plot "$cli" "$work/root/usr/share/kvprefix/plot_curve.py"
  # The package's libraries and CMake package work where it is unpacked.
  run cmake -S "$src/examples/consumer" -B "$work/consumer" "${cmake_arguments[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/root/usr" >/dev/null
  run cmake --build "$work/consumer" >/dev/null
  check_consumer "$work/consumer/consumer"
}

test_pip() {
  local python=${KVPREFIX_PYTHON:-/usr/bin/python3}
  # A copy of the repository, so that the build under test is not reused and
  # nothing is written into the source tree (python/build/, *.egg-info).
  mkdir -p "$work/repository"
  tar -C "$src" --exclude='./build*' --exclude=./.git --exclude=./.venv \
    --exclude=./python/build --exclude='*.egg-info' --exclude=__pycache__ \
    -cf - . | tar -C "$work/repository" -xf -
  run "$python" -m venv --system-site-packages "$work/venv"
  # README's command. The launcher (ccache) and the generator pass to
  # setup.py's CMake build: its tree (build-python/, a sibling of build/ as
  # the build under test is of the sources) then compiles each source as
  # the build under test did, and ccache finds the objects.
  CMAKE_CXX_COMPILER_LAUNCHER=${KVPREFIX_LAUNCHER:-} CMAKE_GENERATOR=$KVPREFIX_GENERATOR \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    run "$work/venv/bin/pip" install --no-build-isolation --no-index \
    "$work/repository/python" >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log"; fail "pip install"; }
  tail -n 1 "$work/pip.log"
  run "$work/venv/bin/pip" show kvprefix
  cd "$work"  # nothing named kvprefix here: the venv's package is imported
  run "$work/venv/bin/python" - "$version" "$work/venv" <<'PYTHON'
import importlib.metadata
import sys

import kvprefix

version, venv = sys.argv[1:]
assert kvprefix.__file__.startswith(venv), kvprefix.__file__
assert kvprefix.__version__ == version, kvprefix.__version__
assert importlib.metadata.version("kvprefix") == version
print("import kvprefix:", kvprefix.__version__, kvprefix.engines())
PYTHON
  # kvprefix.testing ships too: the Python example runs on the installed
  # package alone (its folder, none of the sources).
  cp -r "$src/examples/python" "$work/example"
  run "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$work/example" ||
    fail "examples/python on the installed package"
  check_seed_examples "$work/venv/bin/python" -m kvprefix match
  # replay and curve are the tool's commands too: the built tool's output,
  # but for what varies between runs of replay's summary: the timings, and
  # memory_bytes (a bounded cache's hash tables are seeded per process).
  local trace=$src/data/mooncake/conversation_trace.jsonl
  local seconds='s/"\(read_seconds\|replay_seconds\|memory_bytes\)":[0-9.]*//g'
  local command output
  for command in "replay $trace --capacity 2000" "curve $trace --points 3"; do
    # shellcheck disable=SC2086 # $command is split into its arguments
    output=$(run "$work/venv/bin/python" -m kvprefix $command | sed "$seconds")
    [[ $output == *'"matched_tokens":'* ]] || fail "python -m kvprefix $command"
    # shellcheck disable=SC2086
    [ "$output" = "$(run "$build/kvprefix" $command | sed "$seconds")" ] ||
      fail "python -m kvprefix $command: not the tool's output"
  done
}

rm -rf "$work"
mkdir -p "$work"
write_seed_outputs
case "${1:-}" in
  install | subdirectory | deb | pip | plugin) "test_$1" ;;
  *) fail "usage: packaging_test.sh install|subdirectory|deb|pip|plugin" ;;
esac
echo "packaging $1: OK" >&2
