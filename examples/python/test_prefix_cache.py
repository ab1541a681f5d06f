"""Checking a user's Python prefix cache with kvprefix.testing, under pytest.

PrefixCache (prefix_cache.py) passes kvprefix verify's generated inputs, in
this process; NoRefreshOnHit, one method different, is caught and shrunk
from 16 requests to a four-request replay; LruPageOneCache, of lru and page
size 1 only, refuses the rest, which check() skips and counts; the
Hypothesis tests check the same two on documents Hypothesis draws and
shrinks. Run from an installed kvprefix (pip install
./python) or the build tree (PYTHONPATH=build/python):

    python3 -m pytest examples/python
"""
import pytest
from hypothesis import HealthCheck, given, settings

import kvprefix
import kvprefix.testing
from kvprefix.testing import CacheOptions, CheckFailure, assert_matches_reference
from kvprefix.testing.strategies import replay_documents

from prefix_cache import LruPageOneCache, NoRefreshOnHit, PrefixCache, make_cache

# Reproducible: a fixed derandomized search, and no example database written
# into the working folder.
EXAMPLES = settings(derandomize=True, database=None, max_examples=300,
                    suppress_health_check=[HealthCheck.too_slow])


def test_a_cache_of_some_options_checks_only_what_it_takes():
    # check_lru_page_1.py's two checks: what the cache refuses is skipped
    # and counted (as verify counts it for the plugin and the line-protocol
    # program of the same options), and naming what it implements
    # generates only that.
    make = make_cache(LruPageOneCache)
    every = kvprefix.testing.check(make, runs=1000, seed=1, format="requests")
    assert (every.inputs, every.skipped) == (188, 812)
    assert every.skip_reason == (
        "make_cache refuses capacity 0, lfu, page size 3: LruPageOneCache "
        "implements the policy lru and page size 1 only, not lfu with page "
        "size 3")
    only = kvprefix.testing.check(make, runs=1000, seed=1, format="requests",
                                  models="spec", match_limits="all",
                                  policies="lru", page_sizes=1)
    assert (only.inputs, only.skipped) == (1000, 0)


def test_prefix_cache_agrees_on_verify_inputs():
    # 500 batch inputs, then 500 replay documents: `kvprefix verify --seed 1
    # --runs 500` and the same with --format requests.
    result = kvprefix.testing.check(make_cache(PrefixCache), runs=500, seed=1)
    assert (result.inputs, result.seed) == (1000, 1)
    assert result.requests > 10000


def test_prefix_cache_agrees_with_lengths_only_and_forced_options():
    # What a cache without kvprefix's node IDs is checked with; an LRU-only
    # cache of 16-token pages forces those options on generated documents.
    result = kvprefix.testing.check(make_cache(PrefixCache), runs=200, seed=2,
                                    format="requests", compare="lengths",
                                    policy="lru", page_size=16)
    assert result.inputs == 200


def test_wrong_cache_is_caught_and_shrunk():
    with pytest.raises(CheckFailure) as caught:
        kvprefix.testing.check(make_cache(NoRefreshOnHit), runs=1000, seed=1)
    failure = caught.value
    # Every batch input agrees (no eviction there); replay document 11 of
    # seed 1, an LFU one, is the first that does not, 16 requests shrunk to 4.
    assert failure.kind == "wrong-answer"
    assert failure.input_name == "generated replay document 11 (--seed 1, size 11)"
    assert failure.document == {"requests": [[1], [1], [0], [1]],
                                "capacity": 1, "policy": "lfu", "page_size": 1}
    assert len(failure.original_document["requests"]) == 16
    # Request 1 hit [1] (count 2), so request 2 must evict [0], the leaf of
    # the smaller count; the wrong cache left [1] at count 1, stamp 1, and
    # evicted it, so request 3 misses.
    assert (failure.step, failure.request, failure.tokens) == ("access", 3, [1])
    assert failure.expected == {"matched_length": 1, "cache_node": 1,
                                "uncached_suffix": []}
    assert failure.actual == {"matched_length": 0, "cache_node": 0,
                              "uncached_suffix": [1]}
    assert failure.case["document"] == failure.document
    assert failure.case["expected"] == kvprefix.testing.reference_answer(failure.document)
    assert "holds 1 nodes on 1 paths {[1] at node 1}" in str(failure)


def test_shrunk_case_file_replays(tmp_path):
    with pytest.raises(CheckFailure) as caught:
        kvprefix.testing.check(make_cache(NoRefreshOnHit), runs=100, seed=1,
                               format="requests")
    path = tmp_path / "failure.json"
    caught.value.write_case(path)
    # The case file becomes a regression test as it is.
    kvprefix.testing.check_document(make_cache(PrefixCache), path)
    with pytest.raises(CheckFailure) as again:
        kvprefix.testing.check_document(make_cache(NoRefreshOnHit), path)
    assert again.value.document == caught.value.document


@EXAMPLES
@given(replay_documents())
def test_prefix_cache_on_hypothesis_documents(document):
    assert_matches_reference(make_cache(PrefixCache)(CacheOptions.from_document(document)),
                             document)


def test_hypothesis_catches_the_wrong_cache():
    # A wrong eviction order takes a few requests to show: about one
    # document in 40 of at least 5 requests shows it.
    @settings(EXAMPLES, max_examples=1000)
    @given(replay_documents(policy="lru", min_requests=5))
    def wrong_cache_agrees(document):
        assert_matches_reference(make_cache(NoRefreshOnHit), document)

    with pytest.raises(CheckFailure) as caught:
        wrong_cache_agrees()
    # Hypothesis shrank the document it found to a few short requests on a
    # small LRU cache, on which the reference disagrees with the cache.
    assert caught.value.kind == "wrong-answer"
    document = caught.value.document
    assert document["policy"] == "lru" and document["capacity"] <= 3
    assert 5 <= len(document["requests"]) <= 8
    assert caught.value.expected != caught.value.actual
    with pytest.raises(CheckFailure):
        kvprefix.testing.check_document(make_cache(NoRefreshOnHit), document)
    kvprefix.testing.check_document(make_cache(PrefixCache), document)
