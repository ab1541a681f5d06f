"""Inputs per second of kvprefix.testing.check on plain-Python caches.

The caches are the ones `kvprefix verify --cmd` runs in a process per input
(tests/verify/prefix_cache.py, a list-of-dicts trie like dict_trie.py, and
tests/verify/replay_cache.py, SPEC section 8 with a capacity) and the
example's heap-based cache (examples/python/prefix_cache.py), each on the
generated inputs verify checks with the same --runs and --seed (default
sizes: 0 to 100). A measured run, best of `--repeat`:

    PYTHONPATH=build/python /usr/bin/python3 python/bench_check.py

Compare with the process per input:

    build/kvprefix verify --cmd "python3 tests/verify/prefix_cache.py" --runs 200 --seed 1
"""
import argparse
import importlib.util
import os
import sys
import time

import kvprefix
import kvprefix.testing

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPOSITORY, "tests", "verify"))

import prefix_cache as verify_prefix_cache  # noqa: E402 (tests/verify/)
import replay_cache  # noqa: E402

# examples/python/prefix_cache.py shares its module name with
# tests/verify/prefix_cache.py: loaded from its path.
_spec = importlib.util.spec_from_file_location(
    "example_prefix_cache",
    os.path.join(REPOSITORY, "examples", "python", "prefix_cache.py"))
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)

CASES = [
    # (name, make_cache, format)
    ("tests/verify/prefix_cache.py PrefixTrie", lambda o: verify_prefix_cache.PrefixTrie(),
     "batch"),
    ("tests/verify/replay_cache.py ReplayCache", lambda o: replay_cache.ReplayCache(o.capacity, o.policy, o.page_size),
     "requests"),
    ("examples/python PrefixCache", example.make_cache(example.PrefixCache), "batch"),
    ("examples/python PrefixCache", example.make_cache(example.PrefixCache), "requests"),
    ("kvprefix.PrefixIndex radix (C++)", lambda o: kvprefix.PrefixIndex(
        "radix", capacity=o.capacity, policy=o.policy, page_size=o.page_size), "requests"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, kvprefix {kvprefix.__version__}, "
          f"--runs {arguments.runs} --seed {arguments.seed}, best of "
          f"{arguments.repeat}, load average {os.getloadavg()[0]:.1f}")
    print("| cache | format | inputs | requests | seconds | inputs/s |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, make_cache, format in CASES:
        best = None
        for _ in range(arguments.repeat):
            start = time.perf_counter()
            result = kvprefix.testing.check(make_cache, runs=arguments.runs,
                                            seed=arguments.seed, format=format)
            seconds = time.perf_counter() - start
            best = seconds if best is None else min(best, seconds)
        print(f"| {name} | {format} | {result.inputs} | {result.requests} | "
              f"{best:.3f} | {result.inputs / best:,.0f} |")


if __name__ == "__main__":
    main()
