#!/usr/bin/env python3
"""Checks a plugin from Python, in-process: kvprefix.testing on the plugin.

kvprefix.PrefixIndex("plugin:PATH", ...) is the plugin as a Python object,
so kvprefix.testing.check runs verify's generated inputs on it, compares
every answer with the reference and shrinks the first disagreement:

    python3 check_with_python.py ./build/libmycache.so          # passes
    python3 check_with_python.py ./build/libmycache_wrong.so    # caught
    python3 check_with_python.py ./build/libmycache_lru1.so --models spec \\
        --match-limits all --policies lru --page-sizes 1         # lru, P = 1

A plugin refuses options it does not implement (create answers
KVPREFIX_INVALID_ARGUMENT; kvprefix.PrefixIndex raises kvprefix.Refused):
check() skips those inputs and counts them, and --models,
--match-limits, --policies, --page-sizes and --capacities (verify's flags,
check()'s keyword arguments) generate only the options the plugin
implements.

Prints what was checked and skipped (and why); exit status 0 when the
plugin agrees, 1 with the minimal case printed when it does not.
"""
import argparse
import sys

import kvprefix
import kvprefix.testing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("plugin")
    for option in ("models", "match-limits", "policies", "page-sizes",
                   "capacities"):
        parser.add_argument("--" + option,
                            help="comma-separated, as verify's --" + option)
    arguments = parser.parse_args()
    name = "plugin:" + arguments.plugin
    implemented = {"models": arguments.models,
                   "match_limits": arguments.match_limits,
                   "policies": arguments.policies,
                   "page_sizes": arguments.page_sizes,
                   "capacities": arguments.capacities}

    def make_cache(options):
        return kvprefix.PrefixIndex(name, capacity=options.capacity,
                                    policy=options.policy,
                                    page_size=options.page_size,
                                    model=options.model,
                                    match_limit=options.match_limit)

    try:
        batch = kvprefix.testing.check(make_cache, runs=1000, seed=1,
                                       format="batch")
        replay = kvprefix.testing.check(make_cache, runs=1000, seed=1,
                                        format="requests", **implemented)
    except kvprefix.testing.CheckFailure as failure:
        print(f"caught: {failure.kind} on {failure.input_name}, shrunk in "
              f"{failure.shrink_attempts} checks to:\n{failure.case_json}")
        return 1
    print(f"batch inputs: {batch}")
    print(f"replay documents: {replay}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
