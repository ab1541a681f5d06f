#!/usr/bin/python3
"""Wrong on purpose: right answers, but each matched_length printed as
2**64 (an unsigned overflow's value, as arbitrary-precision JSON writes it).
kvprefix verify: wrong-shape, naming $.matches[0].matched_length and the
range, not "not one JSON document"."""
import json
import sys

import prefix_cache


def write_huge(answer):
    for match in answer["matches"]:
        match["matched_length"] = 2**64  # the bug
    sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")


prefix_cache.write_answer = write_huge

if __name__ == "__main__":
    prefix_cache.main()
