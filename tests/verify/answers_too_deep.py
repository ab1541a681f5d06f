#!/usr/bin/python3
"""Wrong on purpose: answers 200,000 unclosed '[' (a runaway recursion's
output). kvprefix verify: wrong-shape, by SPEC §6's depth rule ("nested
deeper than 1024"), not simdjson's "improper structure"."""
import sys

import prefix_cache


def write_too_deep(answer):
    sys.stdout.write("[" * 200000 + "\n")


prefix_cache.write_answer = write_too_deep

if __name__ == "__main__":
    prefix_cache.main()
