#!/usr/bin/env python3
"""Writes differential_fuzzer inputs that replay SPEC §4 and §8 documents.

Each JSON file named on the command line becomes one fuzzer input,
OUT_DIR/<file stem>:
  - a SPEC §4 document (or a case from tests/data/cases/ whose extra members
    are ignored) decodes to: on an unbounded cache with page size 1, insert
    every cached sequence, then match every request;
  - a SPEC §8 replay document (a `requests` member and no
    `cached_sequences`; or a case from tests/data/cases/capacity/, whose
    `document` member is one) decodes to: on a cache with the document's
    capacity (unbounded when absent), policy and page size, access every
    request in order; its `model`, `match_limit` and `trigger` (SPEC §9.4;
    a case from tests/data/cases/models/ too) set the alphabet byte's high
    bits;
  - a document with `namespaces` (and `cached_namespaces`; SPEC §8.1) sets
    the alphabet byte's bit 3 and gives each operation a namespace byte:
    "" stays "", the others become the fuzzer's "lora-a" and "salt-b" in
    order of first use (namespaces are only compared, so the answers are
    the document's); more than two namespaces besides "" is an error.
The byte format is the one checking/fuzz_input.h's first comment describes;
keep the two in step. A policy's number is its position in the tool's list,
read from `KVPREFIX policies` (kEvictionPolicies' order, as the decoder's).

Usage: make_differential_seed.py [--kvprefix KVPREFIX] OUT_DIR DOCUMENT.json...
  KVPREFIX: the kvprefix tool (default: build/kvprefix of this tree)
"""
import argparse
import json
import pathlib
import subprocess
import sys

INT32_MIN = -(2**31)
EXTREME_TOKENS = [INT32_MIN, INT32_MIN + 1, -129, -128, -1, 0, 1, 127, 128,
                  255, 256, 65535, 65536, 2**31 - 2, 2**31 - 1,
                  2**18 - 1, 2**18, 2**30]
FIRST_EXTREME_BYTE = 0xE0
RAW_TOKEN_BYTE = 0xFF
# The alphabet byte's high bits (SPEC §9).
NAMESPACES_BIT = 1 << 3
ALL_BUT_LAST_BIT = 1 << 4
ON_ALLOCATE_BIT = 1 << 5
MODEL_SHIFT = 6
MODEL_BITS = {"spec": 0, "vllm": 1, "sglang": 2}
# The cache byte.
MAX_PAGE_SIZE = 4
DEFAULT_POLICY_NUMBER = 0  # kEvictionPolicies[0], the default (kvprefix/cache.h)
POLICY_LOW_SHIFT = 2  # bit 2: the policy number's low bit
BOUNDED_BIT = 1 << 3
POLICY_HIGH_SHIFT = 4  # bits 4-7: the rest of it
WIDE_CAPACITY_BYTE = 0xFF
MAX_CAPACITY = 2**16 - 1
# The op byte.
INSERT, MATCH, ACCESS = 0, 1, 2
DERIVED_BIT = 1 << 2
FRESH_SHIFT = 3
MAX_FRESH_TOKENS = 31  # o >> 3 of one op byte
MAX_KEPT_TOKENS = 255  # one cut byte
MAX_OPERATIONS = 256


def token_bytes(token, alphabet_size):
    if 0 <= token < alphabet_size:
        return [token]
    if token in EXTREME_TOKENS:
        return [FIRST_EXTREME_BYTE + EXTREME_TOKENS.index(token)]
    raw = token - INT32_MIN
    return [RAW_TOKEN_BYTE] + [(raw >> shift) & 0xFF for shift in (24, 16, 8, 0)]


def policies(kvprefix):
    """The policy names in the tool's order: `kvprefix policies`."""
    listing = subprocess.run([kvprefix, "policies"], check=True, capture_output=True,
                             text=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def cache_bytes(capacity, number, page_size):
    """The cache byte and, bounded, the capacity bytes; `number` is the
    policy's position in the tool's list."""
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        sys.exit(f"page size {page_size} outside 1..{MAX_PAGE_SIZE}")
    byte = (page_size - 1 | (number & 1) << POLICY_LOW_SHIFT
            | number >> 1 << POLICY_HIGH_SHIFT)
    if capacity is None:
        return [byte]
    if capacity > MAX_CAPACITY:
        sys.exit(f"capacity {capacity} above {MAX_CAPACITY}")
    if capacity < WIDE_CAPACITY_BYTE:
        return [byte | BOUNDED_BIT, capacity]
    return [byte | BOUNDED_BIT, WIDE_CAPACITY_BYTE, capacity >> 8, capacity & 0xFF]


def model_bits(document):
    """The alphabet byte's high bits for the document's SPEC §9 options."""
    model = document.get("model", "spec")
    bits = MODEL_BITS[model] << MODEL_SHIFT
    if document.get("match_limit", "all-but-last" if model == "vllm" else "all") == "all-but-last":
        bits |= ALL_BUT_LAST_BIT
    if document.get("trigger") == "on-allocate":
        bits |= ON_ALLOCATE_BIT
    return bits


def namespace_numbers(names):
    """The fuzzer's namespace number (kFuzzNamespaces) of each name: "" is 0,
    the others 1 and 2 in order of first use."""
    numbers = {"": 0}
    for name in names:
        numbers.setdefault(name, len(numbers))
    if len(numbers) > 3:
        sys.exit(f"{len(numbers) - 1} namespaces besides \"\": the fuzzer has 2")
    return [numbers[name] for name in names]


def encode(options, operations, alphabet_size, bits=0, namespaces=None):
    """Bytes in the order the fuzzer consumes them (it reads from the end);
    `namespaces`, when given, one number per operation."""
    if namespaces is not None:
        bits |= NAMESPACES_BIT
    consumed = [alphabet_size - 1 | bits] + cache_bytes(*options)
    history = 0
    for number, (kind, tokens) in enumerate(operations):
        # A sequence longer than one op byte allows is built as a chain: each
        # link is a derived op keeping all of the previous link. The links
        # before the last are matches, which change nothing, so a chained
        # insert or access touches and evicts exactly as one operation.
        starts = range(0, max(len(tokens), 1), MAX_FRESH_TOKENS)
        for start in starts:
            fresh = tokens[start:start + MAX_FRESH_TOKENS]
            derived = start > 0
            last = start == starts[-1]
            consumed.append(len(fresh) << FRESH_SHIFT
                            | (DERIVED_BIT if derived else 0)
                            | (kind if last else MATCH))
            if namespaces is not None:
                consumed.append(namespaces[number])
            if derived:
                if start > MAX_KEPT_TOKENS:
                    sys.exit(f"sequence longer than {MAX_KEPT_TOKENS + MAX_FRESH_TOKENS}")
                if history > 1:
                    consumed.append(history - 1)
                consumed.append(start)
            for token in fresh:
                consumed.extend(token_bytes(token, alphabet_size))
            history += 1
    if history > MAX_OPERATIONS:
        sys.exit(f"more than {MAX_OPERATIONS} operations")
    return bytes(reversed(consumed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kvprefix", default=str(
        pathlib.Path(__file__).resolve().parent.parent / "build" / "kvprefix"))
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("documents", nargs="+")
    args = parser.parse_args()
    policy_names = policies(args.kvprefix)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.documents:
        document = json.loads(pathlib.Path(name).read_text())
        document = document.get("document", document)
        names = None
        if "namespaces" in document or "cached_namespaces" in document:
            names = (document.get("cached_namespaces")
                     or [""] * len(document.get("cached_sequences", [])))
            names += document.get("namespaces") or [""] * len(document["requests"])
            names = namespace_numbers(names)
        if "cached_sequences" in document:
            options = (None, DEFAULT_POLICY_NUMBER, 1)
            operations = [(INSERT, s) for s in document["cached_sequences"]]
            operations += [(MATCH, r) for r in document["requests"]]
        else:
            policy = document.get("policy", policy_names[DEFAULT_POLICY_NUMBER])
            if policy not in policy_names:
                sys.exit(f"{name}: policy {policy!r} is not one of {policy_names}")
            options = (document.get("capacity"), policy_names.index(policy),
                       document.get("page_size", 1))
            operations = [(ACCESS, r) for r in document["requests"]]
        tokens = [t for _, s in operations for t in s]
        small = [t for t in tokens if 0 <= t < 8]
        alphabet_size = max(small, default=0) + 1
        (args.out_dir / pathlib.Path(name).stem).write_bytes(
            encode(options, operations, alphabet_size, model_bits(document), names))


if __name__ == "__main__":
    main()
