#!/usr/bin/python3
"""Wrong on purpose: ignores the documents' namespaces (SPEC §8.1), so equal
tokens of two namespaces share nodes (another LoRA adapter's or cache salt's
KV reused). Passes every document without namespaces; kvprefix verify:
wrong-answer on a generated one with them. With --replay, the same bug in
replay_cache.py's SPEC §8 cache (`--format requests`)."""
import sys

import prefix_cache
import replay_cache


def fold_nothing(sequences, namespaces, symbols):
    return sequences  # the bug: the namespace is dropped


if __name__ == "__main__":
    if "--replay" in sys.argv:
        sys.argv.remove("--replay")
        replay_cache.main(fold=fold_nothing)
    else:
        prefix_cache.main(fold=fold_nothing)
