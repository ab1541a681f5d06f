"""The package around the extension: its version is the CMake project's,
its policies() the tool's `kvprefix policies`, and `python3 -m kvprefix
match|replay|curve` prints the very bytes, error line and exit status of
the tool's `kvprefix match|replay|curve` (the tool is $KVPREFIX_CLI, which
ctest sets, or build/kvprefix)."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

import kvprefix
import kvprefix.testing

REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CLI = os.environ.get("KVPREFIX_CLI", os.path.join(REPOSITORY, "build", "kvprefix"))


def cmake_project_version():
    with open(os.path.join(REPOSITORY, "CMakeLists.txt")) as cmake_lists:
        return re.search(r"project\(kvprefix\s+VERSION\s+([0-9.]+)",
                         cmake_lists.read()).group(1)


def test_version_is_the_cmake_projects():
    assert kvprefix.__version__ == cmake_project_version()
    # ctest passes ${PROJECT_VERSION}: the value CMake itself read.
    assert kvprefix.__version__ == os.environ.get("KVPREFIX_PROJECT_VERSION",
                                                  kvprefix.__version__)


def run(command, stdin=None):
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120)


def python_m_kvprefix(*args, stdin=None):
    return run([sys.executable, "-m", "kvprefix", *args], stdin=stdin)


@pytest.fixture(scope="module")
def cli():
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"no kvprefix tool at {CLI} (set KVPREFIX_CLI)")
    return CLI


def test_version_flags_print_the_same_line(cli):
    expected = f"kvprefix {cmake_project_version()}\n".encode()
    assert run([cli, "--version"]).stdout == expected
    assert python_m_kvprefix("--version").stdout == expected


def test_policies_are_the_clis_list_with_its_default(cli):
    lines = run([cli, "policies"]).stdout.decode().splitlines()
    assert kvprefix.policies() == [line.split()[0] for line in lines]
    assert [line for line in lines if line.endswith(" (default)")] == [
        kvprefix.default_policy() + " (default)"]
    assert kvprefix.policies() == ["lru", "fifo", "lfu"]
    assert kvprefix.default_policy() == "lru"
    assert kvprefix.PrefixIndex(capacity=1).policy == kvprefix.default_policy()
    assert kvprefix.testing.CacheOptions().policy == kvprefix.default_policy()


def inputs():
    """The examples (the seed's and chat.json) and the regression cases."""
    paths = sorted(glob.glob(os.path.join(REPOSITORY, "examples", "*.json")))
    assert len(paths) >= 4, paths
    cases = sorted(glob.glob(os.path.join(REPOSITORY, "tests", "data", "cases", "*.json")))
    assert len(cases) >= 19, cases
    # A case file is no SPEC §4 document ("expected" is not a member): bad input.
    return [pytest.param(path, id=os.path.relpath(path, REPOSITORY))
            for path in paths + cases[:3]]


# What differs from run to run in `replay`'s summary: the two timings, and
# memory_bytes, as a bounded cache's hash tables are seeded per process
# (Abseil) and may hold another capacity in each run.
VARYING = re.compile(rb'"(read_seconds|replay_seconds|memory_bytes)":[0-9.]+')


def assert_same_as_cli(cli, args, stdin=None, command="match"):
    expected = run([cli, command, *args], stdin=stdin)
    actual = python_m_kvprefix(command, *args, stdin=stdin)
    assert (actual.returncode, VARYING.sub(rb'"\1":T', actual.stdout),
            actual.stderr) == (
        expected.returncode, VARYING.sub(rb'"\1":T', expected.stdout),
        expected.stderr)
    return actual


@pytest.mark.parametrize("path", inputs())
def test_python_m_kvprefix_match_prints_the_clis_bytes(cli, path):
    assert_same_as_cli(cli, [path])


def test_seed_example_prints_the_seeds_output(cli):
    result = assert_same_as_cli(cli, [os.path.join(REPOSITORY, "examples", "seed-1.json")])
    assert result.stdout == (
        b'{"matches":[{"matched_length":2,"cache_node":2,"uncached_suffix":[9]},'
        b'{"matched_length":1,"cache_node":4,"uncached_suffix":[5]},'
        b'{"matched_length":0,"cache_node":0,"uncached_suffix":[5]}]}\n')


@pytest.mark.parametrize("engine", kvprefix.engines())
def test_every_engine_and_standard_input(cli, engine):
    with open(os.path.join(REPOSITORY, "examples", "chat.json"), "rb") as chat:
        document = chat.read()
    assert_same_as_cli(cli, ["--engine", engine], stdin=document)
    assert_same_as_cli(cli, ["-", "--engine", engine], stdin=document)


@pytest.mark.parametrize("page_size", ["1", "2", "3"])
def test_page_size_prints_the_clis_bytes(cli, page_size):
    for name in ["seed-1.json", "chat.json"]:
        assert_same_as_cli(
            cli, [os.path.join(REPOSITORY, "examples", name), "--page-size", page_size])


@pytest.mark.parametrize("document", [
    b'{"cached_sequences":[[1]],"requests":[[1.5]]}',
    b'{"cached_sequences":[[1]],"requests":[[2147483648]]}',
    b'{"cached_sequences":[[1]]}',
    b'{"cached_sequences":[[1]],"requests":[[1]]',
    b'{"cached_sequences":[],"requests":[]} x',
    b'\xff',
    b'',
])
def test_bad_input_gives_the_clis_error_line_and_status_2(cli, tmp_path, document):
    path = tmp_path / "bad input.json"
    path.write_bytes(document)
    result = assert_same_as_cli(cli, [str(path)])
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.startswith(f"kvprefix: {path}: ".encode())
    assert result.stderr.count(b"\n") == 1
    assert_same_as_cli(cli, [], stdin=document)


def test_unreadable_file_gives_the_clis_error_line_and_status_1(cli, tmp_path):
    result = assert_same_as_cli(cli, [str(tmp_path / "absent.json")])
    assert result.returncode == 1 and b"cannot open" in result.stderr


def test_match_file_returns_bytes_and_raises_input_error(tmp_path):
    path = tmp_path / "input.json"
    path.write_bytes(b'{"cached_sequences":[[7],[7]],"requests":[[7,8]]}')
    assert kvprefix.match_file(str(path)) == (
        b'{"matches":[{"matched_length":1,"cache_node":1,"uncached_suffix":[8]}]}\n')
    path.write_bytes(b'{"cached_sequences":[[7]],"requests":[[true]]}')
    with pytest.raises(kvprefix.InputError, match=r"^.*input\.json: \$\.requests\[0\]\[0\]: "):
        kvprefix.match_file(str(path))
    assert issubclass(kvprefix.InputError, ValueError)
    with pytest.raises(ValueError, match="unknown engine"):
        kvprefix.match_file(str(path), engine="btree")
    with pytest.raises(OSError):
        kvprefix.match_file(str(tmp_path / "absent.json"))


def test_match_file_rejects_a_path_with_a_null_byte(tmp_path):
    # "a\0b" once read the file "a", as a C string ends at the NUL.
    (tmp_path / "a").write_bytes(b'{"cached_sequences":[],"requests":[]}')
    with pytest.raises(ValueError, match="embedded null byte"):
        kvprefix.match_file(str(tmp_path / "a") + "\0b")


CONVERSATION = os.path.join(REPOSITORY, "data", "mooncake", "conversation_trace.jsonl")
SMALL_TRACE = (b'{"input_length": 1000, "hash_ids": [1, 2]}\n'
               b'{"input_length": 1500, "hash_ids": [1, 2, 3]}\n\n'
               b'{"input_length": 10, "hash_ids": [4]}\n')


@pytest.mark.parametrize("command,args", [
    ("replay", [CONVERSATION]),
    ("replay", [CONVERSATION, "--capacity", "2000", "--policy", "fifo", "--engine", "hash"]),
    ("replay", [CONVERSATION, "--capacity", "1MiB", "--kv-bytes-per-token", "1024",
                "--page-size", "2"]),
    ("curve", [CONVERSATION, "--points", "5"]),
    ("curve", [CONVERSATION, "--capacities", "10,100,1000", "--kv-bytes-per-token", "8"]),
    ("replay", ["--help"]),
    ("curve", ["--help"]),
], ids=lambda value: value if isinstance(value, str) else " ".join(
    os.path.basename(a) for a in value))
def test_replay_and_curve_print_the_clis_bytes(cli, command, args):
    result = assert_same_as_cli(cli, args, command=command)
    assert result.returncode == 0 and result.stdout and not result.stderr


def test_replay_and_curve_read_standard_input_and_token_mode(cli, tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_bytes(SMALL_TRACE)
    for command in ["replay", "curve"]:
        for args in [[str(path), "--mode", "token", "--vocab", "7"], ["-"],
                     ["-", "--mode", "token", "--page-size", "3"]]:
            result = assert_same_as_cli(cli, args, stdin=SMALL_TRACE, command=command)
            assert result.returncode == 0
    summary = json.loads(python_m_kvprefix("replay", str(path)).stdout)
    assert (summary["requests"], summary["request_tokens"], summary["matched_tokens"]) == (
        3, 6, 2)  # block mode: a token per hash id; [1, 2] is matched once


@pytest.mark.parametrize("command,args,status", [
    ("replay", ["BAD"], 2),  # a bad line: its file, line and JSON location
    ("curve", ["BAD", "--mode", "token"], 2),
    ("replay", ["ABSENT"], 1),
    ("curve", ["ABSENT"], 1),
    ("replay", [CONVERSATION, "--capacity", "-1"], 2),
    ("replay", [CONVERSATION, "--bogus"], 2),
    ("replay", [CONVERSATION, "--mode", "tokens"], 2),
    ("replay", [], 2),
    ("curve", [CONVERSATION, "--capacities", ""], 2),
    ("curve", [CONVERSATION, "--capacities", "1", "--points", "2"], 2),
    ("curve", [CONVERSATION, "--plot", "curve.txt"], 2),
    ("match", ["--engine", "btree"], 2),
    ("match", ["--page-size", "0"], 2),
])
def test_replay_and_curve_errors_are_the_clis(cli, tmp_path, command, args, status):
    (tmp_path / "BAD").write_bytes(SMALL_TRACE + b'{"input_length": 600, "hash_ids": [5]}\n')
    args = [str(tmp_path / a) if a in ("BAD", "ABSENT") else a for a in args]
    result = assert_same_as_cli(cli, args, command=command)
    assert result.returncode == status and result.stdout == b""
    assert result.stderr.startswith(b"kvprefix: ") and result.stderr.count(b"\n") == 1


@pytest.mark.parametrize("args", [[], ["bogus"], ["--bogus"]])
def test_a_missing_or_unknown_command_is_a_usage_error(args):
    result = python_m_kvprefix(*args)
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.endswith(b"(commands: match, replay, curve)\n")
