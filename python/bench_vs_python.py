"""Speed-up of kvprefix.find_prefix_matches over a plain-Python dict trie.

Workload: the Mooncake conversation trace (real production requests,
data/mooncake/conversation_trace.jsonl) in token mode (SPEC section
7): block h expands to splitmix64(h * 512 + j) mod 128256, the last block of a
request to its remaining input_length tokens. The first 1,000 requests are the
cached sequences, the next 1,000 the requests, as a serving system would
compare a new batch against what it has cached.

Both sides get the same input, Python lists of ints, and return the seed's
dictionary; the kvprefix time includes converting the lists to C++ and
building the result dictionary (uncached suffixes included). NumPy int32
input is timed too. Every answer is checked equal to the dict trie's.
Times are the best of --repeat runs, in seconds of wall-clock time.

Usage (from the repository root, with the module built):
  PYTHONPATH=build/python /usr/bin/python3 python/bench_vs_python.py
"""
import argparse
import gc
import json
import os
import platform
import sys
import time

import numpy as np

import dict_trie
import kvprefix

BLOCK_TOKENS = 512
VOCABULARY = 128256


def splitmix64(x):
    """SPEC section 7's splitmix64 on a uint64 array (wrapping arithmetic)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def token_sequences(records):
    """Token-mode sequences (int32 arrays) of trace records."""
    block_ids = sorted({h for record in records for h in record["hash_ids"]})
    row = {h: i for i, h in enumerate(block_ids)}
    offsets = (np.array(block_ids, dtype=np.uint64)[:, None] * np.uint64(BLOCK_TOKENS)
               + np.arange(BLOCK_TOKENS, dtype=np.uint64))
    blocks = (splitmix64(offsets) % np.uint64(VOCABULARY)).astype(np.int32)
    sequences = []
    for record in records:
        hash_ids = record["hash_ids"]
        last = record["input_length"] - BLOCK_TOKENS * (len(hash_ids) - 1)
        parts = [blocks[row[h]] for h in hash_ids[:-1]]
        parts.append(blocks[row[hash_ids[-1]]][:last])
        sequences.append(np.concatenate(parts))
    return sequences


def best_time(function, repeat, collect_garbage=True):
    """(best wall-clock seconds, last result) of `repeat` calls. With
    collect_garbage=False the cyclic garbage collector is paused, which spares
    the dict trie its collections over millions of dicts."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        result = None  # freeing the previous result is not part of a run
        if not collect_garbage:
            gc.disable()
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
        gc.enable()
    return best, result


def main():
    default_trace = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                 "data", "mooncake", "conversation_trace.jsonl")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", default=default_trace)
    parser.add_argument("--cached", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with open(args.trace) as trace:
        records = [json.loads(line) for _, line in
                   zip(range(args.cached + args.requests), trace)]
    arrays = token_sequences(records)
    cached_arrays, request_arrays = arrays[:args.cached], arrays[args.cached:]
    cached = [a.tolist() for a in cached_arrays]
    requests = [a.tolist() for a in request_arrays]

    python_time, expected = best_time(
        lambda: dict_trie.find_prefix_matches(cached, requests), args.repeat)
    matched = sum(m["matched_length"] for m in expected["matches"])
    request_tokens = sum(len(r) for r in requests)
    print("# %s; cached %d sequences (%d tokens), %d requests (%d tokens), "
          "hit ratio %.1f%%" % (os.path.basename(args.trace), len(cached),
                                sum(len(c) for c in cached), len(requests),
                                request_tokens, 100.0 * matched / request_tokens))
    print("# Python %s, NumPy %s, kvprefix %s, %s, %d CPUs, load average %.1f, "
          "best of %d" % (platform.python_version(), np.__version__,
                          kvprefix.__version__, platform.machine(), os.cpu_count(),
                          os.getloadavg()[0], args.repeat))
    print("| implementation | input | seconds | speed-up |")
    print("| --- | --- | ---: | ---: |")
    print("| plain-Python dict trie | lists | %.3f | 1.0x |" % python_time)
    no_gc_time, _ = best_time(lambda: dict_trie.find_prefix_matches(cached, requests),
                              args.repeat, collect_garbage=False)
    print("| plain-Python dict trie, gc paused | lists | %.3f | %.1fx |" % (
        no_gc_time, python_time / no_gc_time))
    for engine in kvprefix.engines():
        for form, inputs in (("lists", (cached, requests)),
                             ("NumPy int32", (cached_arrays, request_arrays))):
            try:
                seconds, result = best_time(
                    lambda: kvprefix.find_prefix_matches(*inputs, engine=engine),
                    args.repeat)
            except kvprefix.CapacityError as error:
                print("| kvprefix %s | %s | %s | |" % (engine, form, error))
                continue
            if result != expected:
                sys.exit("kvprefix engine %s disagrees with the dict trie" % engine)
            print("| kvprefix %s | %s | %.3f | %.1fx |" % (
                engine, form, seconds, python_time / seconds))


if __name__ == "__main__":
    main()
