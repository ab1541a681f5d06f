"""kvprefix.replay's serving replay (SPEC section 10): SPEC section 10.8's
examples, the shared cases of tests/data/cases/serve/, every error of the
section 10 arguments, namespaces, the engine rule, and the section 10.7
theorem on the documents kvprefix.testing.strategies.serve_documents draws."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings

import kvprefix
from kvprefix.testing import SERVE_MEMBERS, serve_answer
from kvprefix.testing.strategies import OUTPUTS, serve_documents

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
CASES = REPOSITORY / "tests" / "data" / "cases" / "serve"
CLI = os.environ.get("KVPREFIX_CLI", str(REPOSITORY / "build" / "kvprefix"))

REQUEST_KEYS = ["matched_length", "cache_node", "arrival_us", "start_us", "prefill_end_us",
                "finish_us", "wait_us", "refused", "waited_for_room"]
TOTALS_KEYS = ["requests", "request_tokens", "matched_tokens", "hit_ratio", "refused",
               "waited_for_room", "evicted_pages", "peak_pinned", "peak_running",
               "peak_queued", "mean_wait_us", "p50_wait_us", "p99_wait_us", "makespan_us"]


def rows(answer):
    """Each request's (matched_length, cache_node, start_us, finish_us), as
    SPEC section 10.8 gives them."""
    return [(r["matched_length"], r["cache_node"], r["start_us"], r["finish_us"])
            for r in answer["requests"]]


# SPEC section 10.8, in its order: (requests, arguments, expected rows).
EXAMPLES = [
    ([[1, 2]] * 3, dict(max_running=2),
     [(0, 0, 0, 0), (0, 0, 0, 0), (2, 2, 0, 0)]),
    ([[1, 2]] * 3, dict(max_running=2, arrivals_us=[0, 1, 5], output_lengths=[5, 0, 0],
                        decode_us_per_token=1),
     [(0, 0, 0, 5), (0, 0, 1, 1), (2, 2, 5, 5)]),
    ([[1, 2, 3]] * 2, dict(model="vllm", max_running=2, arrivals_us=[0, 1],
                           output_lengths=[10, 0], decode_us_per_token=1),
     [(0, 0, 0, 10), (2, 2, 1, 1)]),
    ([[1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 5]],
     dict(model="sglang", trigger="on-allocate", max_running=3, prefill_us_per_token=1,
          decode_us_per_token=1, arrivals_us=[0, 2, 3], output_lengths=[10, 10, 0]),
     [(0, 0, 0, 13), (0, 0, 2, 16), (3, 1, 3, 4)]),
    ([[1, 2, 3], [4, 5, 6], [7]],
     dict(model="vllm", capacity=4, max_running=4, arrivals_us=[0, 1, 2],
          output_lengths=[10, 0, 0], decode_us_per_token=1),
     [(0, 0, 0, 10), (0, 0, 10, 10), (0, 0, 10, 10)]),
    ([[1, 2], [1, 2, 3, 4], [1, 2, 5]], dict(model="vllm", capacity=3, max_running=2),
     [(0, 0, 0, 0), (0, 0, 0, 0), (2, 2, 0, 0)]),
    ([[1, 2], [3, 4, 5, 6, 7], [1, 2]],
     dict(model="sglang", trigger="on-allocate", capacity=4, max_running=1),
     [(0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)]),
    ([[1, 2, 3, 4], [1, 2, 3, 4, 5]],
     dict(model="vllm", max_running=1, arrivals_us=[0, 100], output_lengths=[2, 3],
          prefill_us_per_token=7, decode_us_per_token=11, overhead_us=13),
     [(0, 0, 0, 63), (4, 4, 100, 153)]),
]


@pytest.mark.parametrize("requests,arguments,expected", EXAMPLES)
def test_the_examples_of_section_10_8(requests, arguments, expected):
    assert rows(kvprefix.replay(requests, **arguments)) == expected


def test_waits_and_refusals_of_section_10_8():
    waited = kvprefix.replay([[1, 2, 3], [4, 5, 6], [7]], **EXAMPLES[4][1])
    assert [r["waited_for_room"] for r in waited["requests"]] == [False, True, False]
    assert [r["wait_us"] for r in waited["requests"]] == [0, 9, 8]
    assert waited["totals"]["mean_wait_us"] == 17 / 3
    assert (waited["totals"]["p50_wait_us"], waited["totals"]["p99_wait_us"]) == (8, 9)
    assert waited["totals"]["makespan_us"] == 10
    refused = kvprefix.replay([[1, 2], [1, 2, 3, 4], [1, 2, 5]], **EXAMPLES[5][1])
    assert [r["refused"] for r in refused["requests"]] == [False, True, False]
    assert refused["totals"]["refused"] == 1
    evicting = kvprefix.replay([[1, 2], [3, 4, 5, 6, 7], [1, 2]], **EXAMPLES[6][1])
    assert evicting["totals"]["evicted_pages"] == 2


def test_the_answer_has_the_members_of_section_10_5_in_order():
    answer = kvprefix.replay([[1, 2], [1, 2, 3]], max_running=2)
    assert list(answer) == ["requests", "totals"]
    assert [list(r) for r in answer["requests"]] == [REQUEST_KEYS] * 2
    assert list(answer["totals"]) == TOTALS_KEYS
    assert isinstance(answer["totals"]["hit_ratio"], float)
    assert isinstance(answer["totals"]["mean_wait_us"], float)
    assert isinstance(answer["requests"][0]["refused"], bool)


def test_no_requests_gives_zero_totals():
    totals = kvprefix.replay([], max_running=3)["totals"]
    assert totals == dict(zip(TOTALS_KEYS, [0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0, 0.0, 0, 0, 0]))


def test_section_10_7_example_under_section_8_and_section_10():
    document = {"requests": [[1], [1], [2, 3, 4]], "capacity": 2, "policy": "lfu"}
    expected = [(0, 0), (1, 1), (0, 0)]
    sequential = kvprefix.replay(document["requests"], capacity=2, policy="lfu")
    assert [(m["matched_length"], m["cache_node"]) for m in sequential["matches"]] == expected
    served = serve_answer(document)
    assert [row[:2] for row in rows(served)] == expected


def test_without_section_10_arguments_replay_is_unchanged():
    answer = kvprefix.replay([[1, 2], [1, 2]], capacity=5)
    assert answer["matches"][1] == {"matched_length": 2, "cache_node": 2,
                                    "uncached_suffix": []}
    assert answer["engine"] == kvprefix.default_engine()
    assert "totals" not in answer


@pytest.mark.parametrize("name", SERVE_MEMBERS)
def test_any_one_section_10_argument_makes_a_serving_replay(name):
    value = {"arrivals_us": [0, 0], "output_lengths": [0, 0], "output": "none"}.get(name, 1)
    answer = kvprefix.replay([[1, 2], [1, 2]], **{name: value})
    assert list(answer) == ["requests", "totals"]
    assert answer["requests"][1]["matched_length"] == 2


def test_integer_sequences_of_every_kind_are_read():
    expected = kvprefix.replay([[1], [1], [1]], arrivals_us=[0, 2, 2],
                               output_lengths=[1, 0, 3], decode_us_per_token=1)
    for arrivals in ((0, 2, 2), np.array([0, 2, 2]), np.array([0, 2, 2], dtype=np.uint8),
                     [np.int64(0), np.uint64(2), 2]):
        assert kvprefix.replay([[1], [1], [1]], arrivals_us=arrivals,
                               output_lengths=np.array([1, 0, 3], dtype=np.int32),
                               decode_us_per_token=np.int64(1)) == expected
    assert [r["finish_us"] for r in expected["requests"]] == [1, 2, 5]


def test_the_largest_values_are_taken():
    answer = kvprefix.replay([[1]], arrivals_us=[2 ** 53], output_lengths=[1],
                             max_running=2 ** 31 - 1, decode_us_per_token=2 ** 32,
                             prefill_us_per_token=2 ** 32, overhead_us=2 ** 32)
    (request,) = answer["requests"]
    assert request["start_us"] == 2 ** 53
    assert request["prefill_end_us"] == 2 ** 53 + 2 * 2 ** 32
    assert request["finish_us"] == 2 ** 53 + 3 * 2 ** 32
    assert answer["totals"]["makespan_us"] == 3 * 2 ** 32


def test_mean_wait_is_the_nearest_double_to_the_exact_quotient():
    # B = 1, decode 1 us per token: waits 0, o0 and o0 + o1, whose sum
    # 2 o0 + o1 is no double: float(sum) / 3 is 7643955327539589.0, one
    # below the double nearest to the exact quotient.
    o0, o1 = 8014687441826738, 6902491098965293
    answer = kvprefix.replay([[1], [2], [3]], output_lengths=[o0, o1, 0],
                             decode_us_per_token=1)
    assert [r["wait_us"] for r in answer["requests"]] == [0, o0, o0 + o1]
    assert answer["totals"]["mean_wait_us"] == (2 * o0 + o1) / 3 == 7643955327539590.0


def test_waits_summing_past_2_to_the_64_are_exact():
    # Five requests one after another, each running d us (5 d < 2^64):
    # waits 0, d, 2d, 3d, 4d, summing to 10 d > 2^64; the mean is 2 d.
    output = 2 ** 53 // 5
    d = 2 ** 11 * output
    answer = kvprefix.replay([[1]] * 5, output_lengths=[output] * 5,
                             decode_us_per_token=2 ** 11)
    assert [r["wait_us"] for r in answer["requests"]] == [0, d, 2 * d, 3 * d, 4 * d]
    assert 10 * d > 2 ** 64
    totals = answer["totals"]
    assert totals["mean_wait_us"] == float(2 * d)
    assert (totals["p50_wait_us"], totals["p99_wait_us"]) == (2 * d, 4 * d)
    assert totals["makespan_us"] == 5 * d


def test_namespaces_in_a_serving_replay():
    requests = [[1, 2], [1, 2], [1, 2]]
    answer = kvprefix.replay(requests, namespaces=["a", "b", "a"], arrivals_us=[0, 1, 2])
    assert [row[:2] for row in rows(answer)] == [(0, 0), (0, 0), (2, 2)]
    alone = kvprefix.replay(requests, arrivals_us=[0, 1, 2])
    assert [row[:2] for row in rows(alone)] == [(0, 0), (2, 2), (2, 2)]
    same = kvprefix.replay(requests, namespaces=["x", "x", "x"], arrivals_us=[0, 1, 2])
    assert rows(same) == rows(alone)


# The engines with a request lifecycle for each model (engines/registry.h's
# MakeServingCache): they take every serving argument. Every other engine
# answers one request at a time.
LIFECYCLE = {"spec": {"reference", "hash"}, "vllm": {"reference", "hash"},
             "sglang": {"reference", "radix"}}
MODEL_ENGINES = [(model, engine) for model in LIFECYCLE for engine in kvprefix.engines()]
ENGINE_REQUESTS = [[1, 2, 3], [1, 2], [1, 2, 3, 4], [5], [1, 2, 3, 4, 6], [1, 2, 3]]


def engine_arguments(model, **arguments):
    return dict(model=model, capacity=3, arrivals_us=[0, 1, 1, 4, 9, 9],
                output_lengths=[3, 0, 2, 1, 0, 2], decode_us_per_token=2,
                prefill_us_per_token=1, overhead_us=1, **arguments)


def answer_or_refusal(engine, arguments):
    """The answer of `engine`, or None if it lacks the model."""
    try:
        return kvprefix.replay(ENGINE_REQUESTS, engine=engine, **arguments)
    except ValueError as error:
        if "does not implement model" not in str(error):
            raise
        return None


@pytest.mark.parametrize("model,engine", MODEL_ENGINES)
def test_every_engine_answers_one_at_a_time_as_the_reference(model, engine):
    arguments = engine_arguments(model, max_running=1)
    answer = answer_or_refusal(engine, arguments)
    if answer is None:
        assert engine not in LIFECYCLE[model]
        return
    assert answer == kvprefix.replay(ENGINE_REQUESTS, **arguments)


@pytest.mark.parametrize("model,engine", MODEL_ENGINES)
@pytest.mark.parametrize("running,output", [(3, "none"), (1, "unique"), (3, "unique")])
def test_only_lifecycle_engines_run_requests_together(model, engine, running, output):
    arguments = engine_arguments(model, max_running=running, output=output)
    reference = kvprefix.replay(ENGINE_REQUESTS, **arguments)
    if engine in LIFECYCLE[model]:
        assert kvprefix.replay(ENGINE_REQUESTS, engine=engine, **arguments) == reference
        return
    with pytest.raises(ValueError) as raised:
        kvprefix.replay(ENGINE_REQUESTS, engine=engine, **arguments)
    message = str(raised.value)
    if "does not implement model" in message:
        return
    lifecycle = ", ".join(e for e in kvprefix.engines() if e in LIFECYCLE[model])
    assert message == (f"engine: '{engine}' answers a serving replay of model '{model}' "
                       f"one request at a time (max_running 1, output 'none'), not "
                       f"max_running {running} with output '{output}'; engines with a "
                       f"request lifecycle for it: {lifecycle} "
                       f'(engine="reference" implements every model)')


def test_requests_run_together_in_the_engine_test():
    # The documents above do run requests together and wait, so that the
    # engines' agreement is about pins, not a sequential replay.
    totals = kvprefix.replay(ENGINE_REQUESTS, **engine_arguments("vllm", max_running=3))["totals"]
    assert totals["peak_running"] >= 2
    assert totals["peak_queued"] >= 2


SERVE_ERRORS = [
    # (arguments, exception, text the message must contain)
    (dict(arrivals_us=5), TypeError, "arrivals_us: expected a sequence of ints, got int"),
    (dict(arrivals_us="012"), TypeError, "arrivals_us: expected a sequence of ints, got str"),
    (dict(arrivals_us=[0, 1.5, 2]), TypeError, "arrivals_us[1] must be an int, not float"),
    (dict(arrivals_us=[0, None, 2]), TypeError, "arrivals_us[1] must be an int, not NoneType"),
    (dict(arrivals_us=[True, 1, 2]), TypeError, "arrivals_us[0] must be an int, not bool"),
    (dict(arrivals_us=[np.True_, 1, 2]), TypeError, "arrivals_us[0] must be an int, not numpy.bool_"),
    (dict(arrivals_us=np.array([0.0, 1.0, 2.0])), TypeError, "arrivals_us[0] must be an int"),
    (dict(arrivals_us=[-1, 1, 2]), ValueError,
     "arrivals_us[0] must be from 0 to 9007199254740992, not -1"),
    (dict(arrivals_us=[0, 1, 2 ** 53 + 1]), ValueError,
     "arrivals_us[2] must be from 0 to 9007199254740992, not 9007199254740993"),
    (dict(arrivals_us=[0, 2 ** 64]), ValueError, "arrivals_us[1] must be from 0 to"),
    (dict(arrivals_us=[0, 1]), ValueError,
     "arrivals_us: expected 3 ints (one per item of requests), found 2"),
    (dict(arrivals_us=[0, 1, 2, 3]), ValueError, "expected 3 ints (one per item of requests), found 4"),
    (dict(arrivals_us=[0, 5, 3]), ValueError,
     "arrivals_us[2]: 3 is smaller than the arrival before it (5)"),
    (dict(output_lengths=7), TypeError, "output_lengths: expected a sequence of ints, got int"),
    (dict(output_lengths=[0, "1", 2]), TypeError, "output_lengths[1] must be an int, not str"),
    (dict(output_lengths=[0, 1, -3]), ValueError, "output_lengths[2] must be from 0 to 9007199254740992"),
    (dict(output_lengths=[0]), ValueError,
     "output_lengths: expected 3 ints (one per item of requests), found 1"),
    (dict(max_running=0), ValueError, "max_running must be from 1 to 2147483647, not 0"),
    (dict(max_running=2 ** 31), ValueError, "max_running must be from 1 to 2147483647, not 2147483648"),
    (dict(max_running="2"), TypeError, "max_running must be an int, not str"),
    (dict(max_running=2.0), TypeError, "max_running must be an int, not float"),
    (dict(max_running=True), TypeError, "max_running must be an int, not bool"),
    (dict(prefill_us_per_token=-1), ValueError,
     "prefill_us_per_token must be from 0 to 4294967296, not -1"),
    (dict(prefill_us_per_token=2 ** 32 + 1), ValueError,
     "prefill_us_per_token must be from 0 to 4294967296, not 4294967297"),
    (dict(prefill_us_per_token=0.5), TypeError, "prefill_us_per_token must be an int, not float"),
    (dict(decode_us_per_token=2 ** 32 + 1), ValueError,
     "decode_us_per_token must be from 0 to 4294967296"),
    (dict(decode_us_per_token=[1]), TypeError, "decode_us_per_token must be an int, not list"),
    (dict(overhead_us=-5), ValueError, "overhead_us must be from 0 to 4294967296, not -5"),
    (dict(overhead_us="1"), TypeError, "overhead_us must be an int, not str"),
    (dict(output="all"), ValueError, "output must be 'none' or 'unique', not 'all'"),
    (dict(output=1), TypeError, "output must be a str, 'none' or 'unique', not int"),
    (dict(output=b"none"), TypeError, "output must be a str"),
    (dict(max_running=2, engine="nope"), ValueError, "unknown engine 'nope' (available: reference"),
    (dict(max_running=2, engine=5), TypeError, "engine must be a str or None, not int"),
    (dict(max_running=1, engine="radix", model="vllm"), ValueError,
     "engine 'radix' does not implement model 'vllm'"),
    (dict(max_running=2, namespaces=["a"]), ValueError,
     "namespaces: expected 3 namespaces (one per item of requests), found 1"),
    (dict(max_running=2, namespaces=["a", 1, "b"]), TypeError,
     "namespaces[1]: expected a namespace (a str), got int"),
    (dict(max_running=2, capacity=-1), ValueError, "capacity must be from 0"),
    (dict(max_running=2, model="vllm", match_limit="all"), ValueError, "match_limit"),
    (dict(max_running=2, trigger="on-allocate"), ValueError, "trigger"),
    (dict(output_lengths=[2 ** 53, 0, 0], decode_us_per_token=2 ** 32), ValueError,
     "request 0: its finish passes 2^64 - 1 us"),
]


@pytest.mark.parametrize("arguments,error,message", SERVE_ERRORS)
def test_bad_serving_arguments_raise_naming_the_argument(arguments, error, message):
    with pytest.raises(error) as raised:
        kvprefix.replay([[1, 2], [1, 2, 3], [4]], **arguments)
    assert message in str(raised.value)


def test_bad_requests_of_a_serving_replay():
    with pytest.raises(TypeError, match=r"requests\[1\]\[0\]: expected an int token"):
        kvprefix.replay([[1], ["x"]], max_running=2)
    with pytest.raises(OverflowError, match=r"requests\[0\]\[0\]: token 2147483648"):
        kvprefix.replay([[2 ** 31]], max_running=2)


def test_unique_output_tokens_past_int32_are_refused():
    with pytest.raises(ValueError, match='output "unique"'):
        kvprefix.replay([[2 ** 31 - 2]], output="unique", output_lengths=[4])


def shared_cases():
    """The single-worker cases of tests/data/cases/serve/ (SPEC section 11's
    routed ones, with "workers" or "router", are not section 10's)."""
    cases = []
    for path in sorted(CASES.glob("s*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if "workers" not in case["document"] and "router" not in case["document"]:
            cases.append(pytest.param(case, id=path.stem))
    return cases


def test_the_shared_cases_are_found():
    assert len(shared_cases()) >= 19


@pytest.mark.parametrize("case", shared_cases())
def test_shared_case_agrees(case):
    answer = serve_answer(case)
    expected = case["expected"]
    assert answer["requests"] == expected["requests"]
    assert list(answer["totals"]) == list(expected["totals"])
    for name, value in expected["totals"].items():
        assert answer["totals"][name] == value, name
        assert type(answer["totals"][name]) is type(value), name


def test_serve_answer_takes_documents_and_refuses_other_members():
    document = {"requests": [[1, 2], [1, 2]], "max_running": 2}
    assert serve_answer(document) == serve_answer({"document": document, "expected": {}})
    assert serve_answer(document) == kvprefix.replay([[1, 2], [1, 2]], max_running=2)
    with pytest.raises(ValueError, match="unknown member 'workers'"):
        serve_answer({"requests": [[1]], "workers": 2})
    with pytest.raises(TypeError, match="document: expected a dict, got list"):
        serve_answer([[1]])
    with pytest.raises(ValueError, match="engine: 'radix' answers"):
        serve_answer(document, engine="radix")
    assert serve_answer(document, engine="hash") == serve_answer(document)


def test_serve_documents_rejects_unknown_models():
    with pytest.raises(ValueError, match="models"):
        serve_documents(models=("lmcache",))


def sequential(document):
    """Section 8's or 9's matches of `document` without its section 10
    members."""
    replay_members = {k: v for k, v in document.items()
                      if k not in SERVE_MEMBERS and k != "requests"}
    answer = kvprefix.replay(document["requests"], engine="reference", **replay_members)
    return [(m["matched_length"], m["cache_node"]) for m in answer["matches"]]


@settings(max_examples=300, deadline=None)
@given(serve_documents(max_running=1, output="none"))
def test_one_at_a_time_gives_the_sequential_answers(document):
    # SPEC section 10.7: with B = 1 and output "none", whatever the
    # arrivals and durations, the matches are section 8's and 9's.
    served = serve_answer(document)
    assert [row[:2] for row in rows(served)] == sequential(document)


@settings(max_examples=300, deadline=None)
@given(serve_documents())
def test_every_answer_keeps_the_clock_rules(document):
    answer = serve_answer(document)
    arrivals = document.get("arrivals_us", [0] * len(document["requests"]))
    for request, arrival in zip(answer["requests"], arrivals):
        assert request["arrival_us"] == arrival
        assert request["start_us"] <= request["prefill_end_us"] <= request["finish_us"]
        assert request["wait_us"] == request["start_us"] - arrival
        if request["refused"]:
            assert request["matched_length"] == request["cache_node"] == 0
            assert request["start_us"] == request["finish_us"]
    totals = answer["totals"]
    assert totals["peak_running"] <= document.get("max_running", 1)
    assert totals["requests"] == len(document["requests"])
    assert totals["refused"] == sum(r["refused"] for r in answer["requests"])


@settings(max_examples=200, deadline=None)
@given(serve_documents())
def test_lifecycle_engines_agree_with_the_reference(document):
    reference = serve_answer(document)
    for engine in sorted(LIFECYCLE[document.get("model", "spec")] - {"reference"}):
        assert serve_answer(document, engine=engine) == reference, engine


@pytest.fixture(scope="module")
def cli():
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"no kvprefix tool at {CLI} (set KVPREFIX_CLI)")
    return CLI


@settings(max_examples=60, deadline=None)
@given(document=serve_documents())
def test_the_tool_gives_the_same_answer(cli, tmp_path_factory, document):
    # `kvprefix replay DOCUMENT --input-format requests` answers a section
    # 10 document (one with max_running, so never a section 8 answer).
    document.setdefault("max_running", 1)
    path = tmp_path_factory.mktemp("serve") / "document.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    run = subprocess.run([cli, "replay", str(path), "--input-format", "requests"],
                         capture_output=True, check=True)
    assert json.loads(run.stdout) == serve_answer(document)
