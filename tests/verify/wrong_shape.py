#!/usr/bin/python3
"""Wrong on purpose: valid JSON, right values, but cache_node is printed as a
string ("node 2"). kvprefix verify: wrong-shape."""
import json
import sys

import prefix_cache

answer = prefix_cache.find_prefix_matches(json.load(sys.stdin))
for match in answer["matches"]:
    match["cache_node"] = f"node {match['cache_node']}"  # the bug
print(json.dumps(answer, separators=(",", ":")))
