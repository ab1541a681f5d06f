#!/usr/bin/env bash
# Builds the fuzz targets the way OSS-Fuzz and ClusterFuzzLite expect
# (https://google.github.io/oss-fuzz/getting-started/new-project-guide/):
# compilers and flags come from $CC $CXX $CFLAGS $CXXFLAGS, the fuzzing
# engine from $LIB_FUZZING_ENGINE, and everything a runner needs lands in
# $OUT: <target>, <target>_seed_corpus.zip, <target>.dict, and lib/ holding
# the shared libraries the targets load (the runner image has none of them).
#
# The system libraries (Debian/Ubuntu abseil, fmt, simdjson, highway) are
# built against libstdc++, so -stdlib=libc++ is dropped from $CXXFLAGS.
# Scratch files go to $WORK (default: a temporary folder).
set -euo pipefail

: "${CC:?} ${CXX:?} ${CFLAGS?} ${CXXFLAGS?} ${LIB_FUZZING_ENGINE:?} ${OUT:?}"
src=$(dirname "$(dirname "$(realpath "$0")")")
work=${WORK:-$(mktemp -d)}
build=$work/kvprefix-oss-fuzz
mapfile -t targets < <(grep -E '^[a-z0-9_]+$' "$src/fuzz/targets.txt")

# The loader expands $ORIGIN, the shell must not.
# shellcheck disable=SC2016
runtime_path='$ORIGIN/lib'
# Build type "None": only the flags OSS-Fuzz hands us, no -O3 of our own.
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="${CXXFLAGS//-stdlib=libc++/}" \
  -DKVPREFIX_FUZZ=ON -DKVPREFIX_FUZZ_INSTRUMENT= \
  -DKVPREFIX_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCMAKE_BUILD_RPATH="$runtime_path" \
  -DKVPREFIX_PYTHON=OFF -DKVPREFIX_BENCH=OFF
cmake --build "$build" --target "${targets[@]}"

mkdir -p "$OUT/lib"
for target in "${targets[@]}"; do
  cp "$build/fuzz/$target" "$src/fuzz/$target.dict" "$OUT/"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$src/fuzz/corpus/$target" && zip -q -j "$OUT/${target}_seed_corpus.zip" ./*)
  # Shared libraries outside the C/C++ runtime, found through $ORIGIN/lib.
  ldd "$build/fuzz/$target" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/lib(c|m|gcc_s|stdc\+\+|pthread|dl|rt)\.so' |
    xargs -r cp -L -t "$OUT/lib/"
done
