#!/usr/bin/python3
"""Wrong on purpose: never answers. kvprefix verify: timeout."""
import time

while True:
    time.sleep(3600)
