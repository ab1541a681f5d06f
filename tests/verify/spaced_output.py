#!/usr/bin/python3
"""Right answers, wrong bytes: json.dumps's default ", " and ": " separators
instead of SPEC §5's compact form. kvprefix verify: format (and a pass with
--no-format-check)."""
import json
import sys

import prefix_cache

print(json.dumps(prefix_cache.find_prefix_matches(json.load(sys.stdin))))
