#!/usr/bin/python3
"""Wrong on purpose: prints without end. kvprefix verify: output-limit."""
import sys

while True:
    sys.stdout.write("[" * 65536)
