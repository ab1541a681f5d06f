#!/usr/bin/env python3
"""Checks LruPageOneCache (prefix_cache.py), a cache of the policy lru and
page size 1 only, with kvprefix.testing, in-process: first on verify's
replay documents of every option (the ones it refuses are skipped and
counted, with the first refusal), then on the options it implements only
(the keyword arguments verify spells --models, --match-limits, --policies,
--page-sizes): nothing is skipped. Exit status 0 when it agrees.

    PYTHONPATH=build/python python3 examples/python/check_lru_page_1.py
"""
import kvprefix.testing

from prefix_cache import LruPageOneCache, make_cache


def main():
    make = make_cache(LruPageOneCache)
    print("every option:")
    print(kvprefix.testing.check(make, runs=1000, seed=1, format="requests"))
    print("models spec, match_limits all, policies lru, page_sizes 1:")
    print(kvprefix.testing.check(make, runs=1000, seed=1, format="requests",
                                 models="spec", match_limits="all",
                                 policies="lru", page_sizes=1))


if __name__ == "__main__":
    main()
