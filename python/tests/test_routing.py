"""kvprefix.replay's routing across workers (SPEC section 11): every routed
shared case of tests/data/cases/serve/ (r*) gives the case's answer and the
CLI's JSON, N = 1 is section 10's answer, and every error of the section 11
arguments names the argument."""
import decimal
import json
import os
import pathlib
import subprocess

import pytest

import kvprefix

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
CASES = REPOSITORY / "tests" / "data" / "cases" / "serve"
CLI = os.environ.get("KVPREFIX_CLI", str(REPOSITORY / "build" / "kvprefix"))

# A document's members that are replay()'s arguments of the same name.
SAME_NAME = ("capacity", "policy", "page_size", "model", "match_limit", "trigger",
             "namespaces", "arrivals_us", "output_lengths", "max_running",
             "prefill_us_per_token", "decode_us_per_token", "overhead_us", "output",
             "workers")


def arguments_of(document):
    """replay()'s keyword arguments for a routed document."""
    arguments = {name: document[name] for name in SAME_NAME if name in document}
    router = dict(document.get("router", {}))
    if "name" in router:
        arguments["router"] = router.pop("name")
    if "seed" in router:
        arguments["seed"] = router.pop("seed")
    if router:
        arguments["router_parameters"] = router
    if "router" not in arguments and "workers" not in arguments:
        arguments["workers"] = 1
    return arguments


def routed_cases():
    cases = []
    for path in sorted(CASES.glob("r*.json")):
        cases.append(pytest.param(path, id=path.stem))
    return cases


def test_the_routed_cases_are_found():
    assert len(routed_cases()) >= 16


@pytest.fixture(scope="module")
def cli():
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"no kvprefix tool at {CLI} (set KVPREFIX_CLI)")
    return CLI


@pytest.mark.parametrize("path", routed_cases())
def test_routed_case_gives_the_cases_answer_and_the_clis(path, cli, tmp_path):
    case = json.loads(path.read_text(encoding="utf-8"))
    document = case["document"]
    answer = kvprefix.replay(document["requests"], **arguments_of(document))
    # The case's expected answer, member order and types included.
    expected = case["expected"]
    assert list(answer) == ["requests", "totals", "per_worker"]
    assert answer["requests"] == expected["requests"]
    assert list(answer["totals"]) == list(expected["totals"])
    for name, value in expected["totals"].items():
        assert answer["totals"][name] == value, name
        assert type(answer["totals"][name]) is type(value), name
    assert answer["per_worker"] == expected["per_worker"]
    # The CLI's JSON of the same document, parsed.
    document_path = tmp_path / "document.json"
    document_path.write_text(json.dumps(document), encoding="utf-8")
    run = subprocess.run([cli, "replay", str(document_path), "--input-format", "requests"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == answer
    assert json.dumps(answer, separators=(",", ":")) + "\n" == run.stdout


def test_one_worker_is_the_serving_replay():
    requests = [[1, 2, 3], [1, 2], [1, 2, 3, 4], [5]]
    serving = dict(max_running=2, arrivals_us=[0, 1, 2, 3], output_lengths=[3, 0, 2, 1],
                   decode_us_per_token=2)
    one = kvprefix.replay(requests, **serving)
    for router in ("round-robin", "precise", "sglang-cache-aware", "dynamo"):
        routed = kvprefix.replay(requests, workers=1, router=router, **serving)
        assert [{k: v for k, v in r.items() if k != "worker"}
                for r in routed["requests"]] == one["requests"]
        assert routed["per_worker"] == [one["totals"]]
        assert routed["totals"]["workers"] == 1
        assert routed["totals"]["router"] == router
        assert routed["totals"]["imbalance_requests"] == 1.0


@pytest.mark.skipif("KVPREFIX_POLICY_ROUTER_PLUGIN" not in os.environ,
                    reason="the test router plugin is built with the tests")
def test_a_router_plugin_routes_as_the_policy_it_exports(monkeypatch):
    # tests/router_plugin/'s plugin exports the policy KVPREFIX_TEST_POLICY
    # names: routed by it, the answer is the policy's, but for the name.
    plugin = "plugin:" + os.environ["KVPREFIX_POLICY_ROUTER_PLUGIN"]
    monkeypatch.setenv("KVPREFIX_TEST_POLICY", "prefix-hash")
    requests = [[i % 3, i % 2, i] for i in range(12)]
    serving = dict(max_running=2, arrivals_us=list(range(12)), decode_us_per_token=3,
                   workers=3, seed=5, router_parameters={"hash_prefix": 2, "load_factor": 1.5})
    own = kvprefix.replay(requests, router=plugin, **serving)
    policy = kvprefix.replay(requests, router="prefix-hash", **serving)
    assert own["requests"] == policy["requests"]
    assert own["per_worker"] == policy["per_worker"]
    assert own["totals"]["router"] != "prefix-hash"
    own["totals"].pop("router")
    policy["totals"].pop("router")
    assert own["totals"] == policy["totals"]
    with pytest.raises(Exception, match="no-such-router"):
        kvprefix.replay(requests, router="plugin:/no-such-router.so", workers=2)


def test_round_robin_counts_and_parameters():
    requests = [[i % 3, i] for i in range(10)]
    answer = kvprefix.replay(requests, workers=4, router="round-robin")
    # SPEC section 11.9: worker w gets ceil((R - w) / N) of R requests.
    assert [w["requests"] for w in answer["per_worker"]] == [3, 3, 2, 2]
    assert [r["worker"] for r in answer["requests"]] == [i % 4 for i in range(10)]
    assert answer["totals"]["imbalance_requests"] == 3 * 4 / 10
    # Decimals read exactly from any of their forms, the same answer.
    forms = [1.5, "1.5", decimal.Decimal("1.5")]
    answers = [kvprefix.replay(requests, workers=3, router="prefix-hash", max_running=2,
                               router_parameters={"load_factor": form, "hash_prefix": 1})
               for form in forms]
    assert answers[0] == answers[1] == answers[2]
    # Consistent hashing on the first token: equal heads, equal workers.
    hashed = kvprefix.replay(requests, workers=3, router="consistent-hash",
                             router_parameters={"hash_prefix": 1})
    by_head = {}
    for request, served in zip(requests, hashed["requests"]):
        by_head.setdefault(request[0], set()).add(served["worker"])
    assert all(len(workers) == 1 for workers in by_head.values())


ROUTING_ERRORS = [
    (dict(workers=0), ValueError, "workers must be from 1 to 2147483647, not 0"),
    (dict(workers="2"), TypeError, "workers must be an int, not str"),
    (dict(router="fastest"), ValueError, "router must be 'round-robin', 'random'"),
    (dict(router=3), TypeError, "router must be a str"),
    (dict(seed=-1), ValueError, "seed must be from 0 to 18446744073709551615, not -1"),
    (dict(router_parameters=[1]), TypeError, "router_parameters must be a dict, not list"),
    (dict(router_parameters={"foo": 1}), ValueError,
     "router_parameters['foo']: no router takes such a parameter"),
    (dict(router_parameters={"load_factor": 2}), ValueError,
     "router_parameters['load_factor']: router 'round-robin' takes no such parameter"),
    (dict(router="prefix-hash", router_parameters={"load_factor": 0}), ValueError,
     "router_parameters['load_factor'] must be a decimal above 0"),
    (dict(router="prefix-hash", router_parameters={"load_factor": "1e3"}), ValueError,
     "router_parameters['load_factor'] must be"),
    (dict(router="prefix-hash", router_parameters={"hash_prefix": 1.0}), TypeError,
     "router_parameters['hash_prefix'] must be an int, not float"),
    (dict(router="dynamo", router_parameters={"ties": "last"}), ValueError,
     "router_parameters['ties'] must be"),
    (dict(router="dynamo", router_parameters={"ties": True}), TypeError,
     "router_parameters['ties'] must be a str, not bool"),
]


@pytest.mark.parametrize("arguments,error,message", ROUTING_ERRORS)
def test_bad_routing_arguments_raise_naming_the_argument(arguments, error, message):
    with pytest.raises(error) as raised:
        kvprefix.replay([[1, 2], [1, 2, 3], [4]], **arguments)
    assert message in str(raised.value)
