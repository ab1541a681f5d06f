#!/usr/bin/env python3
"""Writes the hand-made seed corpus of fuzz/serving_fuzzer.cc.

Each seed is a small SPEC §10 document encoded as checking/serving_check.h
decodes bytes (DecodeServeFuzzInput), chosen so that the checked-in corpus
exercises every model and exposes every serving mutant of
testing/serving_mutants.h (fuzz/teeth.sh checks it in ctest).

Usage: fuzz/make_serving_seed.py [FOLDER]  (default: fuzz/corpus/serving_fuzzer)
"""

import os
import sys

MODELS = {"spec": 0, "vllm": 1, "sglang": 2}


def encode(model, requests, capacity=None, page_size=1, max_running=1,
           prefill=0, decode=0, overhead=0, output="none", alphabet=4,
           policy=0, all_but_last=False, on_allocate=False):
    """The bytes of a document; requests are (tokens, arrival delta,
    output length) with tokens in 1..alphabet."""
    m = (MODELS[model] | (4 if all_but_last else 0) |
         (8 if on_allocate else 0) | (policy << 4) |
         (0x40 if output == "unique" else 0) | (0x80 if alphabet == 4 else 0))
    assert capacity is None or 0 <= capacity < 32 and 1 <= page_size <= 3
    k = (page_size - 1) | (0x80 if capacity is None else capacity << 2)
    s = (max_running - 1) | (prefill << 2) | (decode << 4) | (overhead << 6)
    out = bytearray([m, k, s])
    for tokens, delta, length in requests:
        assert len(tokens) < 8 and 0 <= delta < 4 and 0 <= length < 8
        out.append(len(tokens) | (delta << 3) | (length << 5))
        out.extend(t - 1 for t in tokens)
    return bytes(out)


SEEDS = {
    # A running request's pinned path survives another's finish that evicts
    # (spec, C = 2): serving-mutant-spec-ignores-pins evicts it.
    "spec-pins": encode("spec", [([1, 2], 0, 0), ([1, 2], 1, 7),
                                 ([2, 1], 1, 0)],
                        capacity=2, max_running=2, decode=1),
    # The prompt is cached at the finish, not before:
    # serving-mutant-spec-caches-at-start hits it early.
    "spec-insert-at-finish": encode("spec", [([1, 2], 0, 5), ([1, 2], 1, 0)],
                                    max_running=2, decode=1),
    # sglang on-allocate: the prompt is hittable from its prefill end on
    # (serving-mutant-sglang-inserts-at-finish hits it only at the finish).
    "sglang-prefill-end": encode("sglang", [([1, 2, 1], 0, 7),
                                            ([1, 2, 1, 2], 3, 0)],
                                 max_running=2, prefill=1, decode=1,
                                 on_allocate=True),
    # A refusal keeps nothing (sglang on-allocate, C·P = 2):
    # serving-mutant-refusal-keeps-pin keeps a lock.
    "sglang-refusal": encode("sglang", [([1, 2, 1], 0, 0), ([1, 2], 1, 0)],
                             capacity=2, max_running=2, on_allocate=True),
    # vllm caches a prompt's full blocks at its start: the second request,
    # arriving while the first runs, hits them
    # (serving-mutant-vllm-caches-at-finish finds nothing).
    "vllm-cache-at-start": encode("vllm", [([1, 2, 3], 0, 7),
                                           ([1, 2, 3, 4], 1, 0)],
                                  capacity=8, max_running=2, decode=1),
    # vllm: a request waits for room and the queue behind it waits too.
    "vllm-wait": encode("vllm", [([1, 2, 3], 0, 7), ([4, 1, 2], 1, 0),
                                 ([3], 1, 0)],
                        capacity=4, max_running=4, decode=1),
    # Output "unique" on pages of 2 (spec, lfu, all-but-last).
    "spec-unique-pages": encode("spec", [([1, 2, 3, 4], 0, 3),
                                         ([1, 2, 3], 1, 2),
                                         ([1, 2, 4, 4, 1], 0, 0)],
                                capacity=5, page_size=2, max_running=3,
                                decode=2, output="unique", policy=2,
                                all_but_last=True),
    # §10.7: B = 1, output "none": every engine of the model, one request
    # at a time (sglang after-insert, fifo, pages of 3).
    "sequential-sglang": encode("sglang", [([1, 2, 3, 4, 1], 0, 2),
                                           ([1, 2, 3], 2, 1),
                                           ([4, 4, 4, 4], 0, 0),
                                           ([1, 2, 3, 4, 2], 1, 0)],
                                capacity=3, page_size=3, prefill=1,
                                overhead=2, policy=1),
    "sequential-spec": encode("spec", [([1, 2, 1], 0, 0), ([1, 2], 0, 0),
                                       ([2, 2, 2], 1, 0), ([1, 2, 1], 0, 0)],
                              capacity=3, alphabet=2),
}


def main(argv):
    folder = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "serving_fuzzer")
    os.makedirs(folder, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(folder, name), "wb") as out:
            out.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
