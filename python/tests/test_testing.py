"""kvprefix.testing: check() and check_document() on kvprefix's own engines
and on the plain-Python caches of tests/verify/ (the ones `kvprefix verify
--cmd` runs), which answer and shrink exactly as verify does; every answer
shape, compare="lengths", forced options, documents and case files, failure
kinds and argument errors; and the Hypothesis strategies."""
import json
import os
import subprocess
import sys
from collections import namedtuple

import pytest
from hypothesis import given, settings

import kvprefix
import kvprefix.testing
from kvprefix.testing import (CacheOptions, CheckFailure, assert_matches_reference,
                              check, check_document, reference_answer)
from kvprefix.testing import strategies

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERIFY_CACHES = os.path.join(REPOSITORY, "tests", "verify")
CASES = os.path.join(REPOSITORY, "tests", "data", "cases")
CLI = os.environ.get("KVPREFIX_CLI", os.path.join(REPOSITORY, "build", "kvprefix"))
sys.path.insert(0, VERIFY_CACHES)

import off_by_one  # noqa: E402 (tests/verify/, after its path)
import prefix_cache  # noqa: E402
import replay_cache  # noqa: E402
import replay_no_touch_on_hit  # noqa: E402


def engine_cache(engine):
    return lambda options: kvprefix.PrefixIndex(
        engine, capacity=options.capacity, policy=options.policy,
        page_size=options.page_size)


def replay_cache_of(cache_class):
    return lambda options: cache_class(*options)


class Wrapped:
    """A correct cache (the reference engine) answering matches as `shape`
    makes them from (matched_length, cache_node)."""

    def __init__(self, shape, options=CacheOptions()):
        self.index = kvprefix.PrefixIndex("reference", capacity=options.capacity,
                                          policy=options.policy,
                                          page_size=options.page_size)
        self.shape = shape

    def insert(self, tokens):
        return self.index.insert(tokens)

    def match(self, tokens):
        match = self.index.match(tokens)
        return self.shape(match["matched_length"], match["cache_node"])


Answer = namedtuple("Answer", "matched_length cache_node")


class Attributes:
    def __init__(self, matched_length, cache_node):
        self.matched_length = matched_length
        self.cache_node = cache_node


@pytest.mark.parametrize("engine", kvprefix.engines())
def test_every_engine_passes(engine):
    result = check(engine_cache(engine), runs=100, seed=3)
    # 100 batch inputs, then 100 replay documents; the same the CLI checks.
    assert (result.inputs, result.seed) == (200, 3)
    assert result.requests > 2000
    assert result.inputs_per_second > 0


SHAPES = {
    "tuple": lambda length, node: (length, node),
    "list": lambda length, node: [length, node],
    "namedtuple": Answer,
    "dict": lambda length, node: {"matched_length": length, "cache_node": node},
    "attributes": Attributes,
}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_answer_shape_with_node_ids(shape):
    result = check(lambda options: Wrapped(SHAPES[shape], options), runs=50,
                   seed=4, format="batch")
    assert result.inputs == 50


def test_int_answer_needs_compare_lengths():
    make = lambda options: Wrapped(lambda length, node: length, options)  # noqa: E731
    assert check(make, runs=50, seed=5, format="batch", compare="lengths").inputs == 50
    with pytest.raises(CheckFailure) as caught:
        check(make, runs=50, seed=5, format="batch")
    failure = caught.value
    assert failure.kind == "wrong-shape"
    # Shrunk to one empty request on an empty cache.
    assert failure.document == {"cached_sequences": [], "requests": [[]]}
    assert (failure.step, failure.request, failure.actual) == ("match", 0, 0)
    assert "has no cache_node (compare='lengths'" in str(failure)


def test_a_cache_without_node_ids_passes_lengths_only():
    # Node IDs counted from 100: every matched_length right, no cache_node.
    shifted = lambda length, node: (length, node + 100)  # noqa: E731
    make = lambda options: Wrapped(shifted, options)  # noqa: E731
    assert check(make, runs=100, seed=6, format="batch", compare="lengths").inputs == 100
    with pytest.raises(CheckFailure) as caught:
        check(make, runs=100, seed=6, format="batch")
    assert caught.value.kind == "wrong-answer"
    assert caught.value.document == {"cached_sequences": [], "requests": [[]]}
    assert caught.value.expected == {"matched_length": 0, "cache_node": 0,
                                     "uncached_suffix": []}
    assert caught.value.actual == {"matched_length": 0, "cache_node": 100,
                                   "uncached_suffix": []}


def test_off_by_one_shrinks_to_verifys_case(tmp_path):
    # The same cache code verify --cmd runs in a process per input.
    with pytest.raises(CheckFailure) as caught:
        check(lambda options: off_by_one.OffByOneTrie(), runs=100, seed=1,
              format="batch")
    failure = caught.value
    assert failure.input_name == "generated input 0 (--seed 1, size 0)"
    assert failure.document == {"cached_sequences": [], "requests": [[0]]}
    assert failure.expected == {"matched_length": 0, "cache_node": 0,
                                "uncached_suffix": [0]}
    assert failure.actual == {"matched_length": 1, "cache_node": 0,
                              "uncached_suffix": []}
    if not os.path.exists(CLI):
        pytest.skip(f"no kvprefix tool at {CLI} (set KVPREFIX_CLI)")
    out = tmp_path / "failure.json"
    command = f"{sys.executable} {VERIFY_CACHES}/off_by_one.py"
    run = subprocess.run([CLI, "verify", "--cmd", command, "--runs", "100",
                          "--seed", "1", "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    verify_case = json.loads(out.read_text())
    assert {k: verify_case[k] for k in ("cached_sequences", "requests", "expected")} == \
        {k: failure.case[k] for k in ("cached_sequences", "requests", "expected")}


def test_replay_caches_of_tests_verify():
    assert check(replay_cache_of(replay_cache.ReplayCache), runs=300, seed=1,
                 format="requests").inputs == 300
    with pytest.raises(CheckFailure) as caught:
        check(replay_cache_of(replay_no_touch_on_hit.NoTouchOnHitCache), runs=300,
              seed=1, format="requests")
    # verify/README.md's report of the same cache: input 11, an lfu one
    # (the hit that should raise [1]'s count does not), shrunk to 4.
    failure = caught.value
    assert failure.input_name == "generated replay document 11 (--seed 1, size 11)"
    assert failure.shrink_attempts == 78
    assert failure.document == {"requests": [[1], [1], [0], [1]],
                                "capacity": 1, "policy": "lfu", "page_size": 1}
    assert failure.request == 3
    assert "shrunk in 78 checks from 16 requests (36 tokens; capacity 2, lfu, " \
        "page size 2) to 4 requests (4 tokens; capacity 1, lfu, page size 1)" in str(failure)


def test_match_then_insert_without_access():
    class MatchThenInsert:
        def __init__(self, options):
            self.index = kvprefix.PrefixIndex("radix", capacity=options.capacity,
                                              policy=options.policy,
                                              page_size=options.page_size)
            self.match = self.index.match
            self.insert = self.index.insert

    # PrefixIndex.insert touches and evicts as access does.
    assert check(MatchThenInsert, runs=200, seed=7, format="requests").inputs == 200


def test_wrong_insert_id_is_reported_unless_lengths():
    class ShiftedInsert(prefix_cache.PrefixTrie):
        def insert(self, sequence):
            super().insert(sequence)
            return len(self.children)  # one past the last node's ID

    make = lambda options: ShiftedInsert()  # noqa: E731
    assert check(make, runs=50, seed=8, format="batch", compare="lengths").inputs == 50
    with pytest.raises(CheckFailure) as caught:
        check(make, runs=50, seed=8, format="batch")
    failure = caught.value
    assert failure.document == {"cached_sequences": [[]], "requests": []}
    assert (failure.step, failure.index, failure.request) == ("insert", 0, None)
    assert (failure.expected, failure.actual) == (0, 1)
    assert "cached sequence 0 of 1 (insert), tokens []:\n  expected node 0\n  " \
        "actual   node 1" in str(failure)


def test_wrong_uncached_suffix():
    def suffix_dropped(length, node):
        return {"matched_length": length, "cache_node": node, "uncached_suffix": []}

    with pytest.raises(CheckFailure) as caught:
        check(lambda options: Wrapped(suffix_dropped, options), runs=50, seed=9,
              format="batch")
    assert caught.value.kind == "wrong-answer"
    assert caught.value.document == {"cached_sequences": [], "requests": [[0]]}
    assert caught.value.actual["uncached_suffix"] == []


def test_a_cache_that_raises_is_a_crash_with_the_exception():
    class FailsOnEmpty(prefix_cache.PrefixTrie):
        def match(self, request):
            if not request:
                raise ValueError("empty request")
            return super().match(request)

    with pytest.raises(CheckFailure) as caught:
        check(lambda options: FailsOnEmpty(), runs=100, seed=1, format="batch")
    failure = caught.value
    assert failure.kind == "crash"
    assert isinstance(failure.__cause__, ValueError)
    assert failure.exception is failure.__cause__
    assert failure.document == {"cached_sequences": [], "requests": [[]]}
    assert "request 0 of 1 (match), tokens []:\n  the cache raised ValueError: " \
        "empty request" in str(failure)


def test_make_cache_that_raises():
    def make(options):
        if options.capacity == 0:
            raise NotImplementedError("no capacity 0")
        return replay_cache.ReplayCache(*options)

    with pytest.raises(CheckFailure) as caught:
        check(make, runs=100, seed=1, format="requests")
    failure = caught.value
    assert (failure.kind, failure.step) == ("crash", "make_cache")
    assert failure.document == {"requests": [], "capacity": 0, "policy": "lru",
                                "page_size": 1}
    assert "make_cache(CacheOptions(capacity=0, policy='lru', page_size=1)) raised " \
        "NotImplementedError: no capacity 0" in str(failure)


def test_keyboard_interrupt_is_not_a_finding():
    class Interrupted(prefix_cache.PrefixTrie):
        def match(self, request):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check(lambda options: Interrupted(), runs=5, seed=1, format="batch")


def test_missing_method_is_a_type_error():
    with pytest.raises(TypeError, match=r"has no insert\(\) method"):
        check(lambda options: object(), runs=1, seed=1, format="batch")


def test_forced_options_reach_make_cache():
    seen = []

    def make(options):
        seen.append(options)
        return replay_cache.ReplayCache(*options)

    check(make, runs=100, seed=10, format="requests", policy="fifo", page_size=16)
    assert len(seen) == 100
    assert {(o.policy, o.page_size) for o in seen} == {("fifo", 16)}
    assert sum(o.capacity is not None for o in seen) > 50  # capacities scaled
    seen.clear()
    check(make, runs=100, seed=10, format="requests", capacity=None)
    assert {o.capacity for o in seen} == {None}
    assert {o.policy for o in seen} == set(kvprefix.policies())
    assert {o.page_size for o in seen} == {1, 2, 3}
    seen.clear()
    check(make, runs=20, seed=10, format="requests", capacity=2)
    assert {o.capacity for o in seen} == {2}


def test_given_documents_and_case_folders():
    make = engine_cache("hash")
    documents = [{"cached_sequences": [[1, 2], [1, 2, 3], [4]],
                  "requests": [[1, 2, 9], [4, 5], [5]]},
                 {"requests": [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3]], "capacity": 3},
                 CASES, os.path.join(CASES, "capacity")]
    result = check(make, runs=0, documents=documents)
    cases = [name for name in os.listdir(CASES) if name.endswith(".json")]
    capacity_cases = [name for name in os.listdir(os.path.join(CASES, "capacity"))
                      if name.endswith(".json")]
    assert result.inputs == 2 + len(cases) + len(capacity_cases)
    assert len(cases) == 20 and len(capacity_cases) == 16


def test_given_documents_are_checked_first():
    with pytest.raises(CheckFailure) as caught:
        check(lambda options: off_by_one.OffByOneTrie(), runs=10, seed=1,
              documents=[{"cached_sequences": [[5]], "requests": [[5, 6, 7]]}],
              shrink=False)
    failure = caught.value
    assert (failure.input_name, failure.shrink_attempts) == ("document 0", 0)
    assert failure.document == {"cached_sequences": [[5]], "requests": [[5, 6, 7]]}
    assert failure.actual["matched_length"] == 2


def test_a_minimal_failing_document_is_reported_not_shrunk():
    # Dropping the request or its token passes: the report said "shrunk in 3
    # checks from 1 sequences (1 tokens) to 1 sequences (1 tokens)".
    document = {"cached_sequences": [], "requests": [[0]]}
    with pytest.raises(CheckFailure) as caught:
        check(lambda options: off_by_one.OffByOneTrie(), runs=0,
              documents=[document])
    failure = caught.value
    assert failure.shrink_attempts == 3
    assert failure.document == document
    assert "\nnot shrunk: no smaller input fails (3 checks)\n" in str(failure)
    assert "shrunk in" not in str(failure)


def test_bad_documents_and_arguments():
    make = engine_cache("radix")
    with pytest.raises(kvprefix.InputError, match=r"^document 0: \$\.requests\[0\]\[0\]"):
        check(make, runs=0, documents=[{"requests": [[1.5]]}])
    with pytest.raises(kvprefix.InputError, match=r"^document 0: .*capacity"):
        check(make, runs=0, documents=[{"requests": [], "capacity": -1}])
    with pytest.raises(TypeError, match=r"documents\[0\]: expected a dict"):
        check(make, runs=0, documents=[[1, 2]])
    with pytest.raises(ValueError, match="nothing to check"):
        check(make, runs=0)
    with pytest.raises(ValueError, match="format"):
        check(make, format="replay")
    with pytest.raises(ValueError, match="compare"):
        check(make, compare="ids")
    with pytest.raises(ValueError, match="policy"):
        check(make, policy="random")
    with pytest.raises(ValueError, match="page_size"):
        check(make, page_size=0)
    with pytest.raises(ValueError, match="capacity"):
        check(make, capacity=-1)


def test_reference_answer_is_spec_2s_example():
    assert reference_answer({"cached_sequences": [[1, 2], [1, 2, 3], [4]],
                             "requests": [[1, 2, 9], [4, 5], [5]]}) == {"matches": [
        {"matched_length": 2, "cache_node": 2, "uncached_suffix": [9]},
        {"matched_length": 1, "cache_node": 4, "uncached_suffix": [5]},
        {"matched_length": 0, "cache_node": 0, "uncached_suffix": [5]}]}
    # tests/data/cases/capacity/hand-01's document: the fourth request's
    # [1,2] survived, (1,2,3) was inserted again as node 6.
    answer = reference_answer({"requests": [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3]],
                               "capacity": 3})
    assert [(m["matched_length"], m["cache_node"]) for m in answer["matches"]] == \
        [(0, 0), (2, 2), (0, 0), (2, 2)]


def test_assert_matches_reference_takes_a_cache_or_a_factory():
    document = {"requests": [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3]], "capacity": 3}
    assert_matches_reference(replay_cache.ReplayCache(3), document)
    assert_matches_reference(replay_cache_of(replay_cache.ReplayCache), document)
    with pytest.raises(CheckFailure) as caught:
        # Unbounded: it keeps (1,2,3) and matches all of it at the end.
        assert_matches_reference(replay_cache.ReplayCache(), document)
    assert caught.value.shrink_attempts == 0
    assert caught.value.request == 3
    assert caught.value.actual == {"matched_length": 3, "cache_node": 3,
                                   "uncached_suffix": []}


@settings(max_examples=100, database=None, derandomize=True)
@given(strategies.replay_documents())
def test_replay_documents_are_valid_documents(document):
    assert set(document) <= {"requests", "capacity", "policy", "page_size"}
    assert document["policy"] in kvprefix.policies() and document["page_size"] in (1, 2, 3)
    assert 1 <= len(document["requests"]) <= 20
    assert all(-2 ** 31 <= t < 2 ** 31 for r in document["requests"] for t in r)
    answer = reference_answer(document)  # parsed by the strict reader
    assert len(answer["matches"]) == len(document["requests"])
    assert_matches_reference(replay_cache.ReplayCache(*CacheOptions.from_document(document)),
                             document)


@settings(max_examples=100, database=None, derandomize=True)
@given(strategies.batch_documents(max_cached=5, max_requests=5))
def test_batch_documents_share_prefixes(document):
    assert len(document["cached_sequences"]) <= 5
    assert 1 <= len(document["requests"]) <= 5
    assert_matches_reference(prefix_cache.PrefixTrie(), document)


def test_replay_documents_draw_what_verify_draws():
    # Over many draws: bounded and unbounded, and most bounded ones evict.
    documents = []

    @settings(max_examples=300, database=None, derandomize=True)
    @given(strategies.replay_documents(capacity=strategies.DISTINCT_PERCENT))
    def collect(document):
        documents.append(document)

    collect()
    bounded = [d for d in documents if "capacity" in d]
    assert 0 < len(bounded) < len(documents)
    evicting = [d for d in bounded if d["capacity"] < strategies._distinct_prefixes(
        d["requests"], d["page_size"])]
    assert len(evicting) > len(bounded) // 2
    shared = [d for d in documents if len({tuple(r) for r in d["requests"]}) < len(d["requests"])]
    assert len(shared) > len(documents) // 4  # duplicates: hits to rank


def test_token_lists_and_sequences():
    @settings(max_examples=50, database=None, derandomize=True)
    @given(strategies.token_lists(min_size=2, max_size=3),
           strategies.sequences(min_size=1, max_size=4))
    def draw(tokens, sequences):
        assert 2 <= len(tokens) <= 3 and set(tokens) <= {0, 1, 2, 3, -1, 2 ** 31 - 1, -2 ** 31}
        assert 1 <= len(sequences) <= 4 and all(isinstance(s, list) for s in sequences)

    draw()
