"""`kvprefix replay` (the C++ serving replay, SPEC §10) against the shared
cases and against the oracle of this folder on random documents: the
"brute-force implementation" of issue 42's exhaustive checks.

The CLI is $KVPREFIX_CLI (ctest sets it and then these tests must run);
without it, plain pytest skips them.
"""
import json
import os
import random
import subprocess
import tempfile

import pytest

from serve_oracle import replay
from test_serve_oracle import (assert_same_answer, case_files, load_case,
                               random_document)

CLI = os.environ.get("KVPREFIX_CLI")
needs_cli = pytest.mark.skipif(not CLI, reason="KVPREFIX_CLI is not set")


SECTION_10_MEMBERS = ("arrivals_us", "output_lengths", "max_running",
                      "prefill_us_per_token", "decode_us_per_token",
                      "overhead_us", "output")


def cli_replay(document, *options):
    """The CLI's answer for `document`, parsed (doubles as floats). A
    document without §10 members is a §8 one, answered as §5 says, unless a
    §10 flag is given: its default, --max-running 1, makes it a serving
    replay (§10.1: "a §8/§9 document is a §10 document with every
    default")."""
    if not options and not any(m in document for m in SECTION_10_MEMBERS):
        options = ("--max-running", "1")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(document, f, default=str)
        f.flush()
        run = subprocess.run(
            [CLI, "replay", f.name, "--input-format", "requests", *options],
            capture_output=True, text=True, check=False)
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
def test_cli_agrees_with_the_oracle_on_random_documents():
    rng = random.Random(42)
    for _ in range(300):
        document = random_document(rng)
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
