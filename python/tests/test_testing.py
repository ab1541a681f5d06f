"""kvprefix.testing: check() and check_document() on kvprefix's own engines
and on the plain-Python caches of tests/verify/ (the ones `kvprefix verify
--cmd` runs), which answer and shrink exactly as verify does; every answer
shape, compare="lengths", forced options, documents and case files, failure
kinds and argument errors; the cache models of SPEC section 9 (check(model=...)
on kvprefix's model engines, and on caches that ignore the model or the
trigger); and the Hypothesis strategies."""
import json
import os
import subprocess
import sys
from collections import namedtuple

import pytest
from hypothesis import find, given, settings

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
from test_models import REFUSED_ARGUMENTS  # noqa: E402 (this folder)


def engine_cache(engine, ignoring=()):
    """make_cache of a kvprefix.PrefixIndex of `engine` with the options asked
    for, but model "spec" if `ignoring` has "model" and trigger after-insert if
    it has "trigger": a SPEC section 8 cache (or one without SGLang's
    on-allocate eviction) checked as a model's."""
    def make(options):
        model = "spec" if "model" in ignoring else options.model
        trigger = None if model != "sglang" or "trigger" in ignoring else options.trigger
        return kvprefix.PrefixIndex(
            engine, capacity=options.capacity, policy=options.policy,
            page_size=options.page_size, model=model,
            match_limit=options.match_limit, trigger=trigger)
    return make


def replay_cache_of(cache_class):
    # The caches of tests/verify/ take SPEC section 8's three options only.
    return lambda options: cache_class(*options[:3])


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
        return replay_cache_of(replay_cache.ReplayCache)(options)

    with pytest.raises(CheckFailure) as caught:
        check(make, runs=100, seed=1, format="requests")
    failure = caught.value
    assert (failure.kind, failure.step) == ("crash", "make_cache")
    assert failure.document == {"requests": [], "capacity": 0, "policy": "lru",
                                "page_size": 1}
    assert "make_cache(CacheOptions(capacity=0, policy='lru', page_size=1, " \
        "model='spec', match_limit='all', trigger='after-insert')) raised " \
        "NotImplementedError: no capacity 0" in str(failure)


def lru_fifo_only(options):
    """A cache of lru and fifo only: it refuses lfu by name."""
    if options.policy not in ("lru", "fifo"):
        raise kvprefix.testing.Refused(f"lru and fifo only, not {options.policy}")
    return replay_cache_of(replay_cache.ReplayCache)(options)


def test_a_refusal_is_a_skip_counted_with_its_reason():
    # check() called a cache's refusal of options it does not implement a
    # crash: make_cache raising kvprefix.testing.Refused skips the input.
    result = check(lru_fifo_only, runs=60, seed=1, format="requests")
    # verify --cmd replay_refuses_lfu.py --format requests --runs 60 --seed 1
    # checks and skips the same (VerifyRefusalTest).
    assert (result.inputs, result.skipped) == (39, 21)
    assert result.skip_reason == ("make_cache refuses capacity 0, lfu, page "
                                  "size 3: lru and fifo only, not lfu")
    assert str(result).startswith(f"OK: {result.inputs} inputs agree with "
                                  f"the reference (")
    assert f"\nskipped: {result.skipped} inputs whose cache make_cache " \
        f"refuses, the first: {result.skip_reason}" in str(result)
    assert issubclass(kvprefix.testing.Refused, ValueError)
    with pytest.raises(ValueError, match="nothing checked: make_cache refuses "
                                         "the cache of each of the 5 inputs"):
        check(lru_fifo_only, runs=5, seed=1, format="requests", policies="lfu")


def test_implemented_options_generate_only_those():
    result = check(lru_fifo_only, runs=60, seed=1, format="requests",
                   policies=["lru", "fifo"])
    assert (result.inputs, result.skipped, result.skip_reason) == (60, 0, None)
    seen = set()

    def record(options):
        seen.add((options.capacity is None, options.policy, options.page_size,
                  options.model))
        return replay_cache_of(replay_cache.ReplayCache)(options)

    check(record, runs=80, seed=1, format="requests", models="spec",
          policies="lru", page_sizes=[1], capacities=["unbounded"])
    assert seen == {(True, "lru", 1, "spec")}
    with pytest.raises(ValueError, match="policies: unknown policy 'lr'"):
        check(record, runs=1, format="requests", policies=["lr"])
    with pytest.raises(ValueError, match="policy and policies: give one"):
        check(record, runs=1, format="requests", policy="lru", policies=["lru"])
    with pytest.raises(TypeError, match="page_sizes: expected str or int items"):
        check(record, runs=1, format="requests", page_sizes=[1.5])


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
        return replay_cache_of(replay_cache.ReplayCache)(options)

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
    assert "\nnot shrunk: none of the 3 smaller inputs tried fails\n" in str(failure)
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
    options = CacheOptions.from_document(document)
    assert options[3:] == ("spec", "all", "after-insert")  # no model members
    assert_matches_reference(replay_cache_of(replay_cache.ReplayCache)(options), document)
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
    options = CacheOptions.from_document(document)
    assert options[3:] == ("spec", "all", "after-insert")  # no model members
    assert_matches_reference(replay_cache_of(replay_cache.ReplayCache)(options), document)


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


# The engines that implement each model besides spec (as test_models.py's
# MODEL_ENGINES): the reference and one optimized engine.
MODEL_ENGINES = [("vllm", "reference"), ("vllm", "hash"), ("sglang", "reference"),
                 ("sglang", "radix")]


@pytest.mark.parametrize("model, engine", MODEL_ENGINES)
def test_model_engines_pass_on_their_models_documents(model, engine):
    seen = []

    def make(options):
        seen.append(options)
        return engine_cache(engine)(options)

    result = check(make, model=model, runs=200, seed=1, format="requests")
    assert (result.inputs, result.seed) == (200, 1)
    assert result.requests > 2000
    assert len(seen) == 200 and {o.model for o in seen} == {model}
    if model == "vllm":
        assert {(o.policy, o.match_limit, o.trigger) for o in seen} == {
            ("lru", "all-but-last", "after-insert")}
    else:  # varied per document, as verify --model sglang varies them
        assert {o.policy for o in seen} == {"lru", "fifo"}
        assert {o.match_limit for o in seen} == {"all", "all-but-last"}
        assert {o.trigger for o in seen} == {"after-insert", "on-allocate"}


def test_forced_model_options_reach_make_cache():
    seen = []

    def make(options):
        seen.append(options)
        return engine_cache("reference")(options)

    check(make, model="sglang", trigger="on-allocate", match_limit="all",
          policy="fifo", runs=100, seed=2, format="requests")
    assert {(o.model, o.match_limit, o.trigger, o.policy) for o in seen} == {
        ("sglang", "all", "on-allocate", "fifo")}
    seen.clear()
    # A match limit alone is verify's --match-limit alone: model spec.
    check(make, match_limit="all-but-last", runs=50, seed=2, format="both")
    assert len(seen) == 100  # batch inputs first, with their defaults
    assert {(o.model, o.match_limit) for o in seen[:50]} == {("spec", "all")}
    assert {(o.model, o.match_limit) for o in seen[50:]} == {("spec", "all-but-last")}


# What the shrinker leaves of the first document on which a cache of kvprefix's
# reference, ignoring part of what it is asked, fails under check(..., seed=1,
# runs=200, format="requests", **arguments): the model (or the trigger) stays,
# as the bug needs it, and two requests of at most two tokens show it.
IGNORED_OPTIONS = [
    ("model", {"model": "vllm"}, "generated replay document 11 (--seed 1, size 11, "
     "--model vllm)", {"requests": [[0], [0, 0]], "capacity": 1, "policy": "lru",
                       "page_size": 1, "model": "vllm"}),
    # The spec cache fails after-insert too: the trigger shrinks away.
    ("model", {"model": "sglang", "trigger": "on-allocate"}, "generated replay "
     "document 10 (--seed 1, size 10, --model sglang --trigger on-allocate)",
     {"requests": [[0, 0], [0]], "capacity": 1, "policy": "lru", "page_size": 1,
      "model": "sglang"}),
    ("trigger", {"model": "sglang", "trigger": "on-allocate"}, "generated replay "
     "document 11 (--seed 1, size 11, --model sglang --trigger on-allocate)",
     {"requests": [[0], [0, 0]], "capacity": 1, "policy": "lru", "page_size": 1,
      "model": "sglang", "trigger": "on-allocate"}),
]


@pytest.mark.parametrize("ignored, arguments, input_name, document", IGNORED_OPTIONS,
                         ids=["vllm", "sglang-on-allocate", "trigger-on-allocate"])
def test_a_cache_ignoring_its_model_fails_on_a_small_model_case(ignored, arguments,
                                                                input_name, document):
    wrong = engine_cache("reference", ignoring=(ignored,))
    with pytest.raises(CheckFailure) as caught:
        check(wrong, runs=200, seed=1, format="requests", **arguments)
    failure = caught.value
    assert failure.kind == "wrong-answer"
    assert failure.input_name == input_name
    assert failure.document == document
    assert failure.case["document"] == document
    assert failure.shrink_attempts > 0
    assert len(failure.original_document["requests"]) > len(document["requests"])
    assert failure.original_document["model"] == arguments["model"]
    # The case says its model: a correct cache passes it as it is, the wrong
    # one fails it again, whatever check() is told.
    assert check_document(engine_cache("reference"), failure.case) is None
    with pytest.raises(CheckFailure) as again:
        check(wrong, runs=0, documents=[failure.case], shrink=False)
    assert again.value.document == document


def test_vllm_case_by_hand():
    # SPEC 9.4's example: C=2, [1] [2] [2] [1,1]: no hit under vllm, the
    # recomputed [2] took [1]'s block; a SPEC 8 cache under vllm's match
    # limit matches [1] at the end.
    document = {"requests": [[1], [2], [2], [1, 1]], "capacity": 2, "model": "vllm"}
    assert [m["matched_length"] for m in reference_answer(document)["matches"]] == [0] * 4
    assert check(engine_cache("hash"), runs=0, documents=[document]).inputs == 1
    with pytest.raises(CheckFailure) as caught:
        check_document(engine_cache("reference", ignoring=("model",)), document,
                       shrink=False)
    assert (caught.value.request, caught.value.actual["matched_length"]) == (3, 1)


def test_cache_options_from_model_documents():
    assert CacheOptions.from_document({"requests": [], "capacity": 3, "model": "vllm"}) == \
        CacheOptions(3, "lru", 1, "vllm", "all-but-last", "after-insert")
    assert CacheOptions.from_document({"requests": [], "policy": "fifo", "page_size": 2,
                                       "model": "sglang", "trigger": "on-allocate"}) == \
        CacheOptions(None, "fifo", 2, "sglang", "all", "on-allocate")
    assert CacheOptions.from_document({"cached_sequences": [[1]], "requests": []}) == \
        CacheOptions()
    case = {"document": {"requests": [[1]], "match_limit": "all-but-last"},
            "expected": {"matches": [{"matched_length": 0, "cache_node": 0,
                                      "uncached_suffix": [1]}]}}
    assert CacheOptions.from_document(case).match_limit == "all-but-last"
    with pytest.raises(kvprefix.InputError, match="match_limit"):
        CacheOptions.from_document({"requests": [], "model": "vllm", "match_limit": "all"})


@pytest.mark.parametrize("arguments, message", [
    # What replay() refuses, in its words (a model engine is not check()'s).
    *(row for row in REFUSED_ARGUMENTS if "engine" not in row[0]),
    ({"model": "vllm", "format": "batch"},
     "model: for the replay documents of format 'requests' or 'both' only"),
    ({"model": "sglang", "trigger": "on-allocate", "format": "batch"},
     "model, trigger: for the replay documents of format 'requests' or 'both' only"),
    ({"model": "vllm", "runs": 0, "documents": [{"requests": []}]},
     "model: for generated replay documents only, and runs=0"),
])
def test_refused_model_arguments_name_them(arguments, message):
    calls = []
    with pytest.raises(ValueError) as error:
        check(lambda options: calls.append(options), **{"runs": 1, **arguments})
    assert message in str(error.value)
    assert calls == []  # refused before any input


@settings(max_examples=200, database=None, derandomize=True)
@given(strategies.replay_documents(models=strategies.MODELS))
def test_model_documents_are_valid_and_the_model_engines_agree(document):
    assert set(document) <= {"requests", "capacity", "policy", "page_size", "model",
                             "match_limit", "trigger"}
    options = CacheOptions.from_document(document)  # the strict reader accepts it
    assert options.model == document.get("model", "spec")
    engine = {"spec": "radix", "vllm": "hash", "sglang": "radix"}[options.model]
    assert_matches_reference(engine_cache(engine)(options), document)


def test_replay_documents_of_models_draw_every_combination():
    drawn = []

    @settings(max_examples=400, database=None, derandomize=True)
    @given(strategies.replay_documents(models=strategies.MODELS))
    def collect(document):
        drawn.append(CacheOptions.from_document(document))

    collect()
    assert strategies.MODELS == ("spec", "vllm", "sglang")
    assert {(o.policy, o.model, o.match_limit, o.trigger) for o in drawn} == {
        (c.policy, c.model, c.match_limit, c.trigger or "after-insert")
        for c in strategies._COMBINATIONS}
    for models in ("vllm", (), ["lmcache"]):
        with pytest.raises(ValueError, match="models: expected None or a non-empty list"):
            strategies.replay_documents(models=models)


def test_hypothesis_finds_a_cache_ignoring_the_model():
    wrong = engine_cache("reference", ignoring=("model",))

    def fails(document):
        try:
            assert_matches_reference(wrong, document)
        except CheckFailure:
            return True
        return False

    found = find(strategies.replay_documents(models=("vllm",)), fails,
                 settings=settings(database=None, derandomize=True, max_examples=1000))
    assert found["model"] == "vllm"
    assert len(found["requests"]) <= 2
