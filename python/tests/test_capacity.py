"""kvprefix.replay, PrefixIndex(capacity=...) and page_size (SPEC section 8):
the capacity cases (tests/data/cases/capacity/) on every engine, hand-worked
answers, and argument errors."""
import glob
import json
import os

import pytest

import kvprefix
import kvprefix.testing

ENGINES = kvprefix.engines()
CASES = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      "..", "..", "tests", "data", "cases", "capacity",
                                      "*.json")))


def test_every_capacity_case_is_here():
    assert len(CASES) == 16


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_capacity_case_gives_expected_matches(engine, path):
    with open(path) as case_file:
        case = json.load(case_file)
    document = case["document"]
    result = kvprefix.replay(document["requests"], capacity=document.get("capacity"),
                             policy=document.get("policy", "lru"),
                             page_size=document.get("page_size", 1), engine=engine)
    # The summary beside the matches: see test_trace.py.
    assert result["matches"] == case["expected"]["matches"]
    assert result["requests"] == len(document["requests"])
    assert result["matched_tokens"] == sum(m["matched_length"] for m in result["matches"])


@pytest.mark.parametrize("engine", ENGINES)
def test_prefix_index_access_evicts_and_never_reuses_ids(engine):
    # tests/data/cases/capacity/hand-01, step by step.
    index = kvprefix.PrefixIndex(engine, capacity=3)
    assert (index.capacity, index.policy, index.page_size) == (3, "lru", 1)
    assert index.access([1, 2, 3])["matched_length"] == 0
    assert index.access([1, 2, 4]) == {"matched_length": 2, "cache_node": 2,
                                       "uncached_suffix": [4]}
    index.access([5])
    assert index.access((1, 2, 3))["cache_node"] == 2
    assert index.match([1, 2, 3]) == {"matched_length": 3, "cache_node": 6,
                                      "uncached_suffix": []}
    assert (index.node_count, index.evicted_count) == (3, 3)


@pytest.mark.parametrize("engine", ENGINES)
def test_fifo_and_lru_differ(engine):
    requests = [[1, 2], [3], [1, 2], [4], [1, 2], [3]]
    lru = kvprefix.replay(requests, capacity=3, policy="lru", engine=engine)
    fifo = kvprefix.replay(requests, capacity=3, policy="fifo", engine=engine)
    # LRU evicts 3, the least recently used leaf, for [4].
    assert [m["matched_length"] for m in lru["matches"]] == [0, 0, 2, 0, 2, 0]
    # FIFO evicts (1,2), the oldest leaf, for [4], then 3 for the new (1,2).
    assert [m["matched_length"] for m in fifo["matches"]] == [0, 0, 2, 0, 1, 0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("policy", kvprefix.policies())
def test_every_policy_is_accepted_and_reported(engine, policy):
    requests = [[1, 2], [3], [1, 2], [4], [1, 2], [3]]
    result = kvprefix.replay(requests, capacity=3, policy=policy, engine=engine)
    assert result["policy"] == policy and result["evictions"] > 0
    index = kvprefix.PrefixIndex(engine, capacity=3, policy=policy)
    assert index.policy == policy
    assert [index.access(r)["matched_length"] for r in requests] == [
        m["matched_length"] for m in result["matches"]]


def test_an_unknown_policy_error_lists_every_policy():
    expected = " or ".join(", ".join(f"'{p}'" for p in kvprefix.policies()).rsplit(", ", 1))
    with pytest.raises(ValueError, match=f"^policy must be {expected}, not 'LRU'$"):
        kvprefix.replay([[1]], capacity=1, policy="LRU")
    listed = ", ".join(f"'{p}'" for p in kvprefix.policies())
    with pytest.raises(ValueError, match=f"^policy: expected one of {listed}, "):
        kvprefix.testing.check(lambda options: None, runs=1, policy="LRU")


@pytest.mark.parametrize("engine", ENGINES)
def test_page_size_drops_the_partial_page(engine):
    assert kvprefix.find_prefix_matches([[1, 2, 3, 4, 5]], [[1, 2, 3, 4, 9], [1]],
                                        engine=engine, page_size=2) == {"matches": [
        {"matched_length": 4, "cache_node": 2, "uncached_suffix": [9]},
        {"matched_length": 0, "cache_node": 0, "uncached_suffix": [1]}]}
    index = kvprefix.PrefixIndex(engine, page_size=3)
    assert index.insert([7, 8, 9, 10]) == 1
    assert index.match([7, 8, 9, 10])["matched_length"] == 3


def test_unbounded_by_default():
    index = kvprefix.PrefixIndex()
    assert index.capacity is None and index.evicted_count == 0


@pytest.mark.parametrize("arguments,error", [
    ({"capacity": -1}, ValueError), ({"capacity": 2 ** 64}, ValueError),
    ({"capacity": 1.5}, TypeError), ({"capacity": True}, TypeError),
    ({"capacity": "3"}, TypeError), ({"policy": "LRU"}, ValueError),
    ({"page_size": 0}, ValueError), ({"page_size": 2 ** 31}, ValueError),
    ({"engine": "nope"}, ValueError)])
def test_bad_arguments_raise(arguments, error):
    with pytest.raises(error):
        kvprefix.replay([[1]], **arguments)


def test_curve_equals_replay_at_every_capacity():
    requests = [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3], [1, 2], [5, 6, 7, 8], [1, 2, 4, 9]]
    for page_size in (1, 2):
        curve = kvprefix.curve(requests, page_size=page_size,
                               capacities=range(0, 12))
        assert curve["request_tokens"] == sum(map(len, requests))
        for capacity, matched in zip(curve["capacities"], curve["matched_tokens"]):
            replayed = kvprefix.replay(requests, capacity=int(capacity),
                                       page_size=page_size, engine="reference")
            assert matched == sum(m["matched_length"] for m in replayed["matches"])


def test_curve_points_are_log_spaced_up_to_the_distinct_prefixes():
    curve = kvprefix.curve([[t, t + 1, t + 2] for t in range(0, 300, 3)], points=4)
    assert list(curve["capacities"]) == [1, 7, 45, 300]  # 300 ** (k / 3)
    assert curve["distinct_prefixes"] == 300
    assert list(curve["hit_ratios"]) == [0.0, 0.0, 0.0, 0.0]


def test_curve_returns_numpy_arrays():
    numpy = pytest.importorskip("numpy")
    curve = kvprefix.curve([[1], [1]], capacities=[0, 1])
    assert isinstance(curve["capacities"], numpy.ndarray)
    assert list(curve["hit_ratios"]) == [0.0, 0.5]


def test_curve_target_hit_ratios_equal_a_scan_of_replays():
    requests = [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3], [1, 2], [5, 6, 7, 8], [1, 2, 4, 9]]
    total = sum(map(len, requests))
    for page_size in (1, 2):
        scanned = []  # the replay's hit ratio at capacity 0, 1, 2, ...
        for capacity in range(0, 20):
            replayed = kvprefix.replay(requests, capacity=capacity,
                                       page_size=page_size, engine="reference")
            scanned.append(sum(m["matched_length"] for m in replayed["matches"]) / total)
        targets = sorted(set(scanned)) + [0.0, 0.05, 0.3, 1.0]
        curve = kvprefix.curve(requests, page_size=page_size,
                               target_hit_ratios=targets)
        assert [answer["target_hit_ratio"] for answer in curve["targets"]] == targets
        for answer in curve["targets"]:
            reaching = [c for c, ratio in enumerate(scanned)
                        if ratio >= answer["target_hit_ratio"]]
            if reaching:
                assert answer["capacity"] == reaching[0]
                assert answer["hit_ratio"] == scanned[reaching[0]]
            else:  # past the unbounded replay's hit ratio
                assert answer["capacity"] is None
                assert answer["hit_ratio"] == scanned[-1]
            assert answer["matched_tokens"] == round(answer["hit_ratio"] * total)
    # No target_hit_ratios: no "targets"; the curve itself is still there.
    assert "targets" not in kvprefix.curve(requests)
    assert kvprefix.curve(requests, target_hit_ratios=[])["targets"] == []


def test_curve_target_hit_ratios_on_the_conversation_trace():
    # Block mode: a request's tokens are its hash ids. The answer at 0.3 is
    # what the CLI prints (22595 blocks; cli/README.md), and one block less
    # stays below it.
    trace = os.path.join(os.path.dirname(__file__), "..", "..", "data", "mooncake",
                         "conversation_trace.jsonl")
    with open(trace) as lines:
        requests = [json.loads(line)["hash_ids"] for line in lines if line.strip()]
    curve = kvprefix.curve(requests, target_hit_ratios=[0.3])
    (answer,) = curve["targets"]
    assert answer["capacity"] == 22595
    assert answer["matched_tokens"] == 86550
    below = kvprefix.curve(requests, capacities=[22594, 22595])
    assert list(below["hit_ratios"]) == [86549 / 288500, 86550 / 288500]


def test_curve_points_are_exactly_as_many_as_asked():
    # 20 ** (k / 9) rounds to 1 twice; the low end moves up instead.
    curve = kvprefix.curve([list(range(20))], points=10)
    assert list(curve["capacities"]) == [1, 2, 3, 4, 5, 6, 7, 10, 14, 20]


@pytest.mark.parametrize("ratios,error", [
    ([1.5], ValueError), ([-0.1], ValueError), ([float("nan")], ValueError),
    (["0.3"], TypeError), ([True], TypeError), (0.3, TypeError)])
def test_curve_bad_target_hit_ratios_raise(ratios, error):
    with pytest.raises(error):
        kvprefix.curve([[1]], target_hit_ratios=ratios)


@pytest.mark.parametrize("arguments,error", [
    ({"capacities": [1], "points": 3}, ValueError), ({"points": 0}, ValueError),
    # Beyond the CLI's --points range: once 10**18 ran for years, uninterruptible.
    ({"points": 100001}, ValueError), ({"points": 10**18}, ValueError),
    ({"points": 2**64}, ValueError),
    ({"capacities": [-1]}, ValueError), ({"page_size": 0}, ValueError)])
def test_curve_bad_arguments_raise(arguments, error):
    with pytest.raises(error):
        kvprefix.curve([[1]], **arguments)


def test_curve_with_no_capacities_raises():
    # capacities=[] once gave the default 32 points, where the CLI's
    # --capacities "" is an error.
    with pytest.raises(ValueError, match="capacities must not be empty"):
        kvprefix.curve([[1, 2], [1]], capacities=[])
    with pytest.raises(ValueError, match="capacities must not be empty"):
        kvprefix.curve([[1, 2], [1]], capacities=iter(()))
    assert list(kvprefix.curve([[1, 2], [1]], capacities=[2])["matched_tokens"]) == [1]
