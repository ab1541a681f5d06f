"""`kvprefix replay` (the C++ serving replay, SPEC §10, and its routing
across workers, §11) against the shared cases and against the oracle of
this folder on random documents: the "brute-force implementation" of
issues 42 and 43's exhaustive checks.

The CLI is $KVPREFIX_CLI (ctest sets it and then these tests must run);
without it, plain pytest skips them.
"""
import json
import os
import random
import shlex
import subprocess
import tempfile
from decimal import Decimal

import pytest

from serve_oracle import replay
from test_serve_oracle import (assert_same_answer, case_files, load_case,
                               random_document)

CLI = os.environ.get("KVPREFIX_CLI")
needs_cli = pytest.mark.skipif(not CLI, reason="KVPREFIX_CLI is not set")


SECTION_10_MEMBERS = ("arrivals_us", "output_lengths", "max_running",
                      "prefill_us_per_token", "decode_us_per_token",
                      "overhead_us", "output")


def run_cli(document, *options):
    """The CLI's run on `document` (written as JSON, each Decimal as the
    number its text is: §11.1's decimals are read exactly as typed)."""
    text = json.dumps(document, default=lambda d: f"@@{d}@@")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(text.replace('"@@', "").replace('@@"', ""))
        f.flush()
        return subprocess.run(
            [CLI, "replay", f.name, "--input-format", "requests", *options],
            capture_output=True, text=True, check=False)


def cli_replay(document, *options):
    """The CLI's answer for `document`, parsed (doubles as floats). A
    document without §10 members is a §8 one, answered as §5 says, unless a
    §10 flag is given: its default, --max-running 1, makes it a serving
    replay (§10.1: "a §8/§9 document is a §10 document with every
    default")."""
    if not options and not any(m in document for m in SECTION_10_MEMBERS):
        options = ("--max-running", "1")
    run = run_cli(document, *options)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def section_10(path):
    document, _ = load_case(path)
    return "workers" not in document and "router" not in document


@needs_cli
@pytest.mark.parametrize(
    "path", [p for p in case_files("serve") if section_10(p)],
    ids=os.path.basename)
def test_cli_answers_every_serve_case(path):
    document, expected = load_case(path)
    assert_same_answer(cli_replay(document), expected)


@needs_cli
@pytest.mark.parametrize("seed,routed_too", [(42, False), (43, True)],
                         ids=["section_10", "routed"])
def test_cli_agrees_with_the_oracle_on_random_documents(seed, routed_too):
    # 300 random §10 documents, and 300 routed ones (§11: every policy,
    # 1 to 4 workers, random seeds and key lengths): whole answers.
    rng = random.Random(seed)
    for _ in range(300):
        document = random_document(rng, routed_too=routed_too)
        expected = json.loads(json.dumps(replay(document)))
        assert_same_answer(cli_replay(document), expected), document


@needs_cli
def test_flags_replace_the_documents_members():
    # §10.1: "options given replace the document's members".
    document = {"requests": [[1, 2, 3], [1, 2, 3]], "model": "vllm",
                "arrivals_us": [0, 1], "output_lengths": [10, 0],
                "decode_us_per_token": 1, "max_running": 1}
    with_flag = cli_replay(document, "--max-running", "2")
    document["max_running"] = 2
    assert with_flag == json.loads(json.dumps(replay(document)))
    assert [r["matched_length"] for r in with_flag["requests"]] == [0, 2]


# ---- SPEC §11: routing across workers ---------------------------------------

@needs_cli
@pytest.mark.parametrize(
    "path", [p for p in case_files("serve") if not section_10(p)],
    ids=os.path.basename)
def test_cli_answers_every_routing_case(path):
    # r01, r08, r12 and r19 are §11.6's whole-document examples.
    document, expected = load_case(path)
    assert_same_answer(cli_replay(document), expected)


@needs_cli
def test_cli_routing_options_replace_the_documents_members():
    # §11.1: options replace members; --router replaces the whole object;
    # routing options make a §10 document a routed one.
    document = {"requests": [[1], [2], [3], [4]], "arrivals_us": [0, 1, 2, 3]}
    answer = cli_replay(document, "--workers", "2")
    assert [r["worker"] for r in answer["requests"]] == [0, 1, 0, 1]
    assert answer["totals"]["router"] == "round-robin"
    routed = dict(document, workers=4,
                  router={"name": "prefix-hash", "load_factor": Decimal("2")})
    expected = json.loads(json.dumps(replay(dict(
        routed, router={"name": "random", "seed": 7}))))
    assert cli_replay(routed, "--router", "random", "--seed", "7") == expected
    expected = json.loads(json.dumps(replay(dict(
        routed, router={"name": "prefix-hash", "load_factor": Decimal("0.5"),
                        "hash_prefix": 0}))))
    assert cli_replay(routed, "--load-factor", "0.5", "--hash-prefix",
                      "0") == expected


@needs_cli
@pytest.mark.parametrize("members,place", [
    ({"workers": 0}, "$.workers"),
    ({"workers": 2 ** 31}, "$.workers"),
    ({"router": {"name": "round-robin", "load_factor": 2}},
     "$.router.load_factor"),
    ({"router": {"load_factor": 2, "name": "round-robin"}},
     "$.router.load_factor"),
    ({"router": {"name": "prefix-hash", "load_factor": 0}},
     "$.router.load_factor"),
    ({"router": {"name": "llmd", "prefix_weight": Decimal("1e3")}},
     "$.router.prefix_weight"),
    ({"router": {"name": "llmd", "prefix_weight": -1}},
     "$.router.prefix_weight"),
    ({"router": {"name": "sglang-cache-aware",
                 "cache_threshold": Decimal("1.5")}},
     "$.router.cache_threshold"),
    ({"router": {"name": "dynamo", "ties": "last"}}, "$.router.ties"),
    ({"router": {"name": "vllm-prefix", "chunk": 0}}, "$.router.chunk"),
    ({"router": {"name": "random", "seed": -1}}, "$.router.seed"),
    ({"router": {"name": "random", "foo": 1}}, "$.router.foo"),
    ({"router": {"seed": 1}}, "$.router"),
    ({"router": {"name": "sglang"}}, "$.router.name"),
    ({"router": []}, "$.router"),
    ({"router": None}, "$.router"),
])
def test_cli_routing_errors_name_the_member(members, place):
    # §11.1 and §11.7: one line naming the member, exit 2, no output.
    run = run_cli(dict({"requests": [[1]]}, **members))
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert f": {place}: " in run.stderr, run.stderr


@needs_cli
@pytest.mark.parametrize("options,named", [
    (("--load-factor", "2"), "--load-factor"),
    (("--router", "dynamo", "--hash-prefix", "1"), "--hash-prefix"),
    (("--router", "prefix-hash", "--load-factor", "0"), "--load-factor"),
    (("--router", "llmd", "--prefix-weight", "-1"), "--prefix-weight"),
    (("--router", "llmd", "--prefix-weight", "1e3"), "--prefix-weight"),
    (("--router", "sglang"), "--router"),
    (("--workers", "0"), "--workers"),
    (("--router", "dynamo", "--ties", "last"), "--ties"),
])
def test_cli_routing_usage_errors_name_the_option(options, named):
    run = run_cli({"requests": [[1]]}, *options)
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert named in run.stderr, run.stderr


@needs_cli
def test_verify_serving_cmd_agrees_with_the_oracle():
    """`kvprefix verify --serving --cmd` runs this oracle as the external
    serving replay on generated §10 documents: every answer, byte for
    byte, is the C++ reference's."""
    here = os.path.dirname(os.path.abspath(__file__))
    command = (f"cd {shlex.quote(here)} && PYTHONDONTWRITEBYTECODE=1 "
               "/usr/bin/python3 "
               "-m serve_oracle /dev/stdin")
    run = subprocess.run(
        [CLI, "verify", "--cmd", command, "--format", "requests",
         "--serving", "--runs", "60", "--seed", "7"],
        capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK: 60 inputs agree with the reference" in run.stdout
