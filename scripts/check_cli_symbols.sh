#!/usr/bin/env bash
# Fails if the shipped command-line tool carries test code: any symbol of the
# deliberately broken engines (testing/mutants.h) or of RapidCheck. The test
# library (testing/) must reach no shipped binary; this is the proof.
#
# Usage: scripts/check_cli_symbols.sh BINARY   (ctest passes build/kvprefix)
set -euo pipefail

binary=${1:?usage: check_cli_symbols.sh BINARY}
symbols=$(nm -C "$binary")
[ -n "$symbols" ] || { echo "$binary: no symbols (stripped?)" >&2; exit 1; }
if found=$(grep -iE 'mutant|rapidcheck|rc::' <<<"$symbols"); then
  echo "$binary carries test code ($(wc -l <<<"$found") symbols):"
  head -n 20 <<<"$found"
  exit 1
fi
echo "$binary: no mutant and no RapidCheck symbol ($(wc -l <<<"$symbols") symbols read)"
