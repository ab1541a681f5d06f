#!/usr/bin/env python3
"""Checks a plugin from Python, in-process: kvprefix.testing on the plugin.

kvprefix.PrefixIndex("plugin:PATH", ...) is the plugin as a Python object,
so kvprefix.testing.check runs verify's generated inputs on it, compares
every answer with the reference and shrinks the first disagreement:

    python3 check_with_python.py ./build/libmycache.so          # passes
    python3 check_with_python.py ./build/libmycache_wrong.so    # caught

Exit status 0 when the plugin agrees, 1 with the minimal case printed when
it does not.
"""
import sys

import kvprefix
import kvprefix.testing


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    name = "plugin:" + sys.argv[1]

    def make_cache(options):
        return kvprefix.PrefixIndex(name, capacity=options.capacity,
                                    policy=options.policy,
                                    page_size=options.page_size)

    def implements(policy):
        # A plugin refuses a policy it does not implement (create answers
        # KVPREFIX_INVALID_ARGUMENT: a ValueError here); its replay
        # documents are left out, as `kvprefix verify` skips them.
        try:
            make_cache(kvprefix.testing.CacheOptions(1, policy, 1))
            return True
        except ValueError:
            return False

    policies = [policy for policy in kvprefix.policies() if implements(policy)]
    inputs = 0
    try:
        inputs += kvprefix.testing.check(make_cache, runs=1000, seed=1,
                                         format="batch").inputs
        for policy in policies:
            inputs += kvprefix.testing.check(make_cache, runs=1000, seed=1,
                                             format="requests",
                                             policy=policy).inputs
    except kvprefix.testing.CheckFailure as failure:
        print(f"caught: {failure.kind} on {failure.input_name}, shrunk in "
              f"{failure.shrink_attempts} checks to:\n{failure.case_json}")
        return 1
    print(f"OK: {inputs} inputs agree with the reference "
          f"(policies {', '.join(policies)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
