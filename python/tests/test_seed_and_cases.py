"""kvprefix.find_prefix_matches against the seed's examples (docs/seed/) and the
regression cases (tests/data/cases/*.json), on every engine."""
import glob
import json
import os
import re

import pytest

import kvprefix

REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ENGINES = kvprefix.engines()


def seed_examples():
    """(cached, requests, output line) for each Input/Output pair of the seed."""
    paths = glob.glob(os.path.join(REPOSITORY, "docs", "seed", "*.txt"))
    assert len(paths) == 1, paths
    with open(paths[0]) as seed:
        text = seed.read()
    inputs = re.findall(r"^Input: cached_sequences = (.*), requests = (.*)$", text, re.M)
    outputs = re.findall(r"^Output: (.*)$", text, re.M)
    assert len(inputs) == len(outputs) == 3
    return [(json.loads(c), json.loads(r), o) for (c, r), o in zip(inputs, outputs)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cached,requests,output", seed_examples())
def test_seed_example_gives_the_seed_output_exactly(engine, cached, requests, output):
    result = kvprefix.find_prefix_matches(cached, requests, engine=engine)
    assert json.dumps(result, separators=(",", ":")) == output
    assert result == json.loads(output)


@pytest.mark.parametrize("engine", ENGINES)
def test_result_holds_plain_python_ints_and_lists(engine):
    result = kvprefix.find_prefix_matches([[1, 2], [1, 2, 3], [4]],
                                          [[1, 2, 9], [4, 5], [5]], engine=engine)
    assert type(result) is dict and list(result) == ["matches"]
    assert type(result["matches"]) is list
    for match in result["matches"]:
        assert list(match) == ["matched_length", "cache_node", "uncached_suffix"]
        assert type(match["matched_length"]) is int
        assert type(match["cache_node"]) is int
        assert type(match["uncached_suffix"]) is list
        assert all(type(token) is int for token in match["uncached_suffix"])
    assert result["matches"][0] == {"matched_length": 2, "cache_node": 2,
                                    "uncached_suffix": [9]}


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_inputs_give_no_matches_or_empty_matches(engine):
    assert kvprefix.find_prefix_matches([], [], engine=engine) == {"matches": []}
    assert kvprefix.find_prefix_matches([[]], [[]], engine=engine) == {
        "matches": [{"matched_length": 0, "cache_node": 0, "uncached_suffix": []}]}


def case_files():
    paths = sorted(glob.glob(os.path.join(REPOSITORY, "tests", "data", "cases", "*.json")))
    assert len(paths) >= 19, paths
    return [pytest.param(path, id=os.path.basename(path)) for path in paths]


@pytest.fixture(scope="module", params=case_files())
def case(request):
    with open(request.param) as case_file:
        return json.load(case_file)


@pytest.mark.parametrize("engine", ENGINES)
def test_regression_case_gives_expected_matches(case, engine):
    result = kvprefix.find_prefix_matches(case["cached_sequences"], case["requests"],
                                          engine=engine)
    assert result == case["expected"], case["source"]
