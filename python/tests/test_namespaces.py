"""Namespaces (SPEC section 8.1) in the Python module: every shared namespace
case (tests/data/cases/namespaces/, SPEC 8.1's examples) through replay() on
every engine of its model and through PrefixIndex.access, the batch case
through find_prefix_matches, curve() against replay(), and the argument
errors (TypeError for a wrong type, ValueError for a wrong value)."""
import glob
import json
import os

import pytest

import kvprefix

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = sorted(glob.glob(os.path.join(HERE, "..", "..", "tests", "data", "cases",
                                      "namespaces", "*.json")))
BATCH_CASES = sorted(glob.glob(os.path.join(HERE, "..", "..", "tests", "data", "cases",
                                            "namespaces-batch", "*.json")))
MODEL_ENGINES = {"spec": kvprefix.engines(), "vllm": ["reference", "hash"],
                 "sglang": ["reference", "radix"]}
OPTIONS = ("capacity", "policy", "page_size", "model", "match_limit", "trigger")


def load(path):
    with open(path) as case_file:
        return json.load(case_file)


def test_every_namespace_case_is_here():
    assert len(CASES) == 7
    assert len(BATCH_CASES) == 1


def engine_runs(path):
    """(engine, cache arguments, document, expected matches) of the case at
    `path`, for every engine of its model."""
    case = load(path)
    document = case["document"]
    arguments = {name: document[name] for name in OPTIONS if name in document}
    for engine in MODEL_ENGINES[document.get("model", "spec")]:
        yield engine, arguments, document, case["expected"]["matches"]


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_replay_of_each_case_on_every_engine_of_its_model(path):
    for engine, arguments, document, expected in engine_runs(path):
        result = kvprefix.replay(document["requests"], engine=engine,
                                 namespaces=document["namespaces"], **arguments)
        assert result["matches"] == expected, engine


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_prefix_index_access_with_a_namespace(path):
    for engine, arguments, document, expected in engine_runs(path):
        index = kvprefix.PrefixIndex(engine, **arguments)
        answers = [index.access(request, namespace=name)
                   for request, name in zip(document["requests"], document["namespaces"])]
        assert answers == expected, engine


@pytest.mark.parametrize("path", BATCH_CASES, ids=os.path.basename)
def test_find_prefix_matches_of_the_batch_case(path):
    case = load(path)
    for engine in kvprefix.engines():
        result = kvprefix.find_prefix_matches(
            case["cached_sequences"], case["requests"], engine,
            cached_namespaces=case["cached_namespaces"], namespaces=case["namespaces"])
        assert result == case["expected"], engine


def test_prefix_index_match_and_insert_stay_in_their_namespace():
    index = kvprefix.PrefixIndex()
    assert index.insert([1, 2], namespace="a") == 2
    assert index.match([1, 2])["matched_length"] == 0
    assert index.match([1, 2], namespace="b") == {
        "matched_length": 0, "cache_node": 0, "uncached_suffix": [1, 2]}
    assert index.match([1, 2, 3], namespace="a") == {
        "matched_length": 2, "cache_node": 2, "uncached_suffix": [3]}
    assert index.insert([1, 2]) == 4
    assert index.match([1, 5]) == {
        "matched_length": 1, "cache_node": 3, "uncached_suffix": [5]}


def test_curve_equals_replay_with_namespaces():
    requests = [[1, 2], [1, 2], [1, 2, 3], [1], [1, 2]]
    names = ["a", "b", "a", "", "b"]
    curve = kvprefix.curve(requests, capacities=[0, 1, 2, 3, 4, 5, 6], namespaces=names)
    for capacity, matched in zip(curve["capacities"], curve["matched_tokens"]):
        replayed = kvprefix.replay(requests, capacity=int(capacity), namespaces=names)
        assert int(matched) == replayed["matched_tokens"], capacity
    assert curve["distinct_prefixes"] == 6  # a1 a12 a123 b1 b12 and 1 in ""


def test_namespace_errors_are_type_and_value_errors():
    with pytest.raises(ValueError, match=r"namespaces: expected 2 namespaces "
                                         r"\(one per item of requests\), found 1"):
        kvprefix.replay([[1], [2]], namespaces=["a"])
    with pytest.raises(TypeError, match=r"namespaces\[1\]: expected a namespace "
                                        r"\(a str\), got int"):
        kvprefix.replay([[1], [2]], namespaces=["a", 7])
    with pytest.raises(ValueError, match=r"namespaces\[0\]: expected a namespace of "
                                         r"at most 256 bytes of UTF-8, found 257 bytes"):
        kvprefix.replay([[1]], namespaces=["x" * 257])
    # 129 two-byte characters: 258 bytes of UTF-8.
    with pytest.raises(ValueError, match="found 258 bytes"):
        kvprefix.PrefixIndex().insert([1], namespace="\u00e9" * 129)
    with pytest.raises(TypeError, match="namespaces: expected a sequence"):
        kvprefix.find_prefix_matches([[1]], [[1]], namespaces=5)
    with pytest.raises(TypeError, match=r"namespace: expected a namespace \(a str\), "
                                        r"got bytes"):
        kvprefix.PrefixIndex().match([1], namespace=b"a")
    with pytest.raises(ValueError, match=r"cached_namespaces: expected 1 namespace \(one per item"):
        kvprefix.find_prefix_matches([[1]], [[1]], cached_namespaces=["a", "b"])


def test_check_document_folds_namespaces_for_cache_and_reference():
    """Regression: kvprefix.testing checked a document's requests without
    their namespaces (the reference answered as if every request were in
    ""), so the SPEC 8.1 answers were called wrong and a cache that ignores
    namespaces passed. The cache is now given the folded tokens, as a plugin
    is, and the reference answers them."""
    from kvprefix import testing
    document = {"requests": [[1, 2], [1, 2], [1, 2, 3]],
                "namespaces": ["a", "b", "a"]}
    answers = testing.reference_answer(document)["matches"]
    assert [a["matched_length"] for a in answers] == [0, 0, 2]

    class Oracle:
        """Answers SPEC 8.1's matches, in order."""

        def __init__(self):
            self.at = 0

        def access(self, tokens):
            answer = answers[self.at]
            self.at += 1
            return dict(answer, uncached_suffix=tokens[answer["matched_length"]:])

    assert testing.check_document(lambda options: Oracle(), document,
                                  shrink=False) is None


@pytest.mark.parametrize("strategy", ["replay_documents", "batch_documents"])
def test_strategies_draw_namespaces_when_asked(strategy):
    from hypothesis import given, settings
    from kvprefix.testing import strategies
    seen = set()

    @settings(max_examples=60, database=None, deadline=None)
    @given(getattr(strategies, strategy)(namespaces=strategies.NAMESPACES))
    def draw(document):
        assert len(document["namespaces"]) == len(document["requests"])
        if "cached_sequences" in document:
            assert len(document["cached_namespaces"]) == len(document["cached_sequences"])
        seen.update(document["namespaces"])

    @settings(max_examples=20, database=None, deadline=None)
    @given(getattr(strategies, strategy)())
    def draw_default(document):
        assert "namespaces" not in document

    draw()
    draw_default()
    assert seen == set(strategies.NAMESPACES)
    with pytest.raises(ValueError, match="namespaces"):
        getattr(strategies, strategy)(namespaces="a")
