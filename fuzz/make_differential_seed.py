#!/usr/bin/env python3
"""Writes differential_fuzzer inputs that replay SPEC §4 documents.

Each JSON file named on the command line (a SPEC §4 document, or a case from
tests/data/cases/ whose extra members are ignored) becomes one fuzzer input,
OUT_DIR/<file stem>, that decodes to: insert every cached sequence, then match
every request. The byte format is the one differential_fuzzer.cc's first
comment describes; keep the two in step.

Usage: make_differential_seed.py OUT_DIR CASE.json...
"""
import json
import pathlib
import sys

INT32_MIN = -(2**31)
EXTREME_TOKENS = [INT32_MIN, INT32_MIN + 1, -129, -128, -1, 0, 1, 127, 128,
                  255, 256, 65535, 65536, 2**31 - 2, 2**31 - 1,
                  2**18 - 1, 2**18, 2**30]
FIRST_EXTREME_BYTE = 0xE0
RAW_TOKEN_BYTE = 0xFF
MAX_FRESH_TOKENS = 63  # o >> 2 of one op byte
MAX_KEPT_TOKENS = 255  # one cut byte


def token_bytes(token, alphabet_size):
    if 0 <= token < alphabet_size:
        return [token]
    if token in EXTREME_TOKENS:
        return [FIRST_EXTREME_BYTE + EXTREME_TOKENS.index(token)]
    raw = token - INT32_MIN
    return [RAW_TOKEN_BYTE] + [(raw >> shift) & 0xFF for shift in (24, 16, 8, 0)]


def encode(operations, alphabet_size):
    """Bytes in the order the fuzzer consumes them (it reads from the end)."""
    consumed = [alphabet_size - 1]
    history = 0
    for is_match, tokens in operations:
        # A sequence longer than one op byte allows is built as a chain: each
        # link is a derived op keeping all of the previous link. The extra
        # links are prefixes of the same kind, which change no answer.
        for start in range(0, max(len(tokens), 1), MAX_FRESH_TOKENS):
            fresh = tokens[start:start + MAX_FRESH_TOKENS]
            derived = start > 0
            consumed.append(len(fresh) << 2 | derived << 1 | is_match)
            if derived:
                if start > MAX_KEPT_TOKENS:
                    sys.exit(f"sequence longer than {MAX_KEPT_TOKENS + MAX_FRESH_TOKENS}")
                if history > 1:
                    consumed.append(history - 1)
                consumed.append(start)
            for token in fresh:
                consumed.extend(token_bytes(token, alphabet_size))
            history += 1
    if history > 256:
        sys.exit("more than 256 operations")
    return bytes(reversed(consumed))


def main():
    out_dir = pathlib.Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[2:]:
        document = json.loads(pathlib.Path(name).read_text())
        operations = [(0, s) for s in document["cached_sequences"]]
        operations += [(1, r) for r in document["requests"]]
        tokens = [t for _, s in operations for t in s]
        small = [t for t in tokens if 0 <= t < 8]
        alphabet_size = max(small, default=0) + 1
        (out_dir / pathlib.Path(name).stem).write_bytes(
            encode(operations, alphabet_size))


if __name__ == "__main__":
    main()
