#!/usr/bin/python3
"""Wrong on purpose: prints its answers as Python reprs, not JSON.
kvprefix verify: not-json."""
import json
import sys

document = json.load(sys.stdin)
print({"matches": [(0, 0, request) for request in document["requests"]]})
