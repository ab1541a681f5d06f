"""kvprefix.replay and PrefixIndex with model=, match_limit= and trigger=
(SPEC section 9): every shared model case (tests/data/cases/models/, the
real vLLM and SGLang answers) on every engine of its model, one vllm and one
sglang case by hand, and the argument errors, each a ValueError naming the
argument as the CLI's usage errors name the option."""
import glob
import json
import os

import pytest

import kvprefix

CASES = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      "..", "..", "tests", "data", "cases", "models",
                                      "*.json")))
# The engines that implement each model (EngineNames(model)): the reference
# and one optimized engine for vllm and sglang, every engine for spec.
MODEL_ENGINES = {"spec": kvprefix.engines(), "vllm": ["reference", "hash"],
                 "sglang": ["reference", "radix"]}


def replay_document(document, **engine):
    """replay() with the document's cache and model members."""
    arguments = {name: document[name]
                 for name in ("capacity", "policy", "page_size", "model", "match_limit",
                              "trigger") if name in document}
    return kvprefix.replay(document["requests"], **arguments, **engine)


def test_every_model_case_is_here():
    assert len(CASES) == 30


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_model_case_gives_the_real_systems_answers(path):
    with open(path) as case_file:
        case = json.load(case_file)
    document = case["document"]
    expected = case["expected"]["matches"]
    assert replay_document(document)["matches"] == expected  # the model's engine
    for engine in MODEL_ENGINES[document.get("model", "spec")]:
        assert replay_document(document, engine=engine)["matches"] == expected, engine


def shared_case(name):
    with open(os.path.join(os.path.dirname(CASES[0]), name)) as case_file:
        return json.load(case_file)


def test_a_vllm_shared_case():
    case = shared_case("v3-recompute-evicts.json")
    assert case["document"]["model"] == "vllm"
    result = replay_document(case["document"])
    assert result["matches"] == case["expected"]["matches"]
    assert (result["engine"], result["model"], result["match_limit"]) == (
        "hash", "vllm", "all-but-last")  # vllm's fastest engine
    assert "trigger" not in result
    # SPEC 9.4's example: C=2, [1] [2] [2] [1,1]: no hit, the recomputed [2]
    # took [1]'s block.
    by_hand = kvprefix.replay([[1], [2], [2], [1, 1]], capacity=2, model="vllm")
    assert [(m["matched_length"], m["cache_node"]) for m in by_hand["matches"]] == [
        (0, 0)] * 4


def test_a_sglang_shared_case():
    case = shared_case("sglang-onalloc-lock.json")
    document = case["document"]
    assert document["model"] == "sglang"
    result = replay_document(document)
    assert result["matches"] == case["expected"]["matches"]
    assert result["trigger"] == document.get("trigger", "after-insert")
    # SPEC 9.4's example: C=4, [1,2] [5] [1,9] [7] [5]: (0,0) (0,0) (1,3)
    # (0,0) (0,0), the split touched [2].
    by_hand = kvprefix.replay([[1, 2], [5], [1, 9], [7], [5]], capacity=4,
                              model="sglang")
    assert [(m["matched_length"], m["cache_node"]) for m in by_hand["matches"]] == [
        (0, 0), (0, 0), (1, 3), (0, 0), (0, 0)]
    index = kvprefix.PrefixIndex("reference", model="sglang", trigger="on-allocate")
    index.insert([1, 2, 3])
    assert index.match([1, 2, 4])["matched_length"] == 2


# Arguments replay() and PrefixIndex refuse, with their message (test_testing.py
# checks that kvprefix.testing.check refuses the same in the same words).
REFUSED_ARGUMENTS = [
    ({"model": "lmcache"}, "model must be 'spec', 'vllm' or 'sglang', not 'lmcache'"),
    ({"match_limit": "none"}, "match_limit must be 'all' or 'all-but-last'"),
    ({"model": "sglang", "trigger": "before"},
     "trigger must be 'after-insert' or 'on-allocate', not 'before'"),
    ({"trigger": "after-insert"},
     'trigger: a trigger needs model "sglang"; the model is "spec"'),
    ({"model": "vllm", "trigger": "on-allocate"},
     'trigger: a trigger needs model "sglang"; the model is "vllm"'),
    ({"model": "vllm", "match_limit": "all"},
     'match_limit: model "vllm" never matches a request\'s last token'),
    ({"model": "vllm", "policy": "fifo"}, 'policy: model "vllm" has one order'),
    ({"model": "sglang", "policy": "lfu"}, 'policy: model "sglang" orders edges'),
    ({"model": "vllm", "engine": "radix"}, "engine 'radix' does not implement model 'vllm'"),
]


@pytest.mark.parametrize("arguments, message", REFUSED_ARGUMENTS)
def test_refused_arguments_raise_value_error_naming_them(arguments, message):
    with pytest.raises(ValueError) as error:
        kvprefix.replay([[1, 2]], **arguments)
    assert message in str(error.value)
    cache = {name: value for name, value in arguments.items() if name != "engine"}
    with pytest.raises(ValueError) as error:
        kvprefix.PrefixIndex(arguments.get("engine", "reference"), **cache)
    assert message in str(error.value)


def test_curve_of_each_model_equals_replay_at_each_capacity():
    # vllm and sglang replay once per capacity; spec under all-but-last is
    # one pass: each equals replay() at every capacity.
    requests = [[1, 2, 3], [1, 2, 4], [1, 2, 3], [5, 6], [1, 2, 3, 4], [5, 6, 7]] * 3
    for arguments in ({"model": "vllm"}, {"model": "sglang", "trigger": "on-allocate"},
                      {"model": "sglang"}, {"match_limit": "all-but-last"}):
        curve = kvprefix.curve(requests, capacities=[0, 1, 2, 3, 5, 8, 100], **arguments)
        for capacity, matched in zip(curve["capacities"], curve["matched_tokens"]):
            replayed = kvprefix.replay(requests, capacity=int(capacity), **arguments)
            assert int(matched) == replayed["matched_tokens"], (arguments, capacity)
        assert curve["request_tokens"] == sum(map(len, requests))
    with pytest.raises(ValueError, match="trigger: a trigger needs model"):
        kvprefix.curve(requests, trigger="on-allocate")


@pytest.mark.parametrize("model", ["vllm", "sglang"])
def test_curve_target_hit_ratios_of_a_model_equal_the_cli(model):
    """curve(target_hit_ratios=...) of vllm and sglang runs `kvprefix curve
    --target-hit-ratio`'s bisection (cli/capacity_search.h): the same
    capacities, matched tokens and distinct prefixes on the conversation
    trace (block mode: a request's tokens are its hash ids); a target above
    the unbounded cache's hit ratio has capacity None in both."""
    import subprocess
    trace = os.path.join(os.path.dirname(__file__), "..", "..", "data", "mooncake",
                         "conversation_trace.jsonl")
    with open(trace) as lines:
        requests = [json.loads(line)["hash_ids"] for line in lines if line.strip()]
    targets = [0.1, 0.3, 0.5]
    printed = subprocess.run(
        [os.environ.get("KVPREFIX_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "kvprefix")), "curve", trace, "--model", model,
         "--target-hit-ratio", ",".join(map(str, targets)), "--format", "jsonl"],
        check=True, capture_output=True, text=True).stdout
    cli = [json.loads(line) for line in printed.splitlines()]
    curve = kvprefix.curve(requests, model=model, target_hit_ratios=targets)
    assert [t["capacity"] for t in curve["targets"]] == [r["capacity"] for r in cli]
    assert [t["matched_tokens"] for t in curve["targets"]] == [
        r["matched_tokens"] for r in cli]
    assert cli[0]["capacity"] is not None and cli[2]["capacity"] is None
    # One capacity less misses the target: what the bisection checked.
    below = kvprefix.curve(requests, model=model,
                           capacities=[cli[0]["capacity"] - 1])
    assert below["hit_ratios"][0] < targets[0]
