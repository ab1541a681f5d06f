"""kvprefix.read_trace (SPEC section 7) and the summary kvprefix.replay
returns: the tokens of both modes against the SPEC's formula and the tool's
own conversion, errors with the tool's messages, and the summary against
hand-worked counts and the tool's `kvprefix replay` (the tool is
$KVPREFIX_CLI, which ctest sets, or build/kvprefix)."""
import array
import json
import os
import subprocess
import sys

import pytest

import kvprefix

REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CLI = os.environ.get("KVPREFIX_CLI", os.path.join(REPOSITORY, "build", "kvprefix"))
CONVERSATION = os.path.join(REPOSITORY, "data", "mooncake", "conversation_trace.jsonl")
TRACE = (b'{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [1, 2]}\n'
         b'\n'
         b'{"input_length": 1025, "hash_ids": [1, 2, 7]}\n'
         b'{"input_length": 3, "hash_ids": [2147483647]}\n')


@pytest.fixture(scope="module")
def cli():
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"no kvprefix tool at {CLI} (set KVPREFIX_CLI)")
    return CLI


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_bytes(TRACE)
    return path


def splitmix64(x):
    """SPEC section 7, in Python's unbounded ints."""
    mask = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def token_mode(input_length, hash_ids, vocab):
    """Each block's tokens splitmix64(hash_id * 512 + j) mod vocab; the last
    block holds what remains of input_length."""
    return [splitmix64(h * 512 + j) % vocab
            for i, h in enumerate(hash_ids)
            for j in range(min(512, input_length - 512 * i))]


def as_lists(requests):
    return [[int(token) for token in request] for request in requests]


def test_block_mode_is_one_token_per_hash_id(trace):
    assert as_lists(kvprefix.read_trace(trace)) == [[1, 2], [1, 2, 7], [2147483647]]
    assert as_lists(kvprefix.read_trace(str(trace), mode="block")) == [
        [1, 2], [1, 2, 7], [2147483647]]


@pytest.mark.parametrize("vocab", [1, 1000, 128256, 2 ** 31])
def test_token_mode_expands_each_block_by_the_spec(trace, vocab):
    requests = kvprefix.read_trace(os.fsencode(trace), mode="token", vocab=vocab)
    assert as_lists(requests) == [token_mode(1000, [1, 2], vocab),
                                  token_mode(1025, [1, 2, 7], vocab),
                                  token_mode(3, [2147483647], vocab)]
    assert [len(r) for r in requests] == [1000, 1025, 3]


def test_default_vocab_is_llama_3s(trace):
    assert as_lists(kvprefix.read_trace(trace, mode="token")) == as_lists(
        kvprefix.read_trace(trace, mode="token", vocab=128256))


def test_tokens_equal_the_tools_conversion(cli, tmp_path):
    # `kvprefix convert mooncake` writes the requests the tool reads; the
    # first 200 requests of the trace are 2.3 M tokens.
    trace = tmp_path / "trace.jsonl"
    with open(CONVERSATION, "rb") as conversation:
        trace.write_bytes(b"".join(conversation.readline() for _ in range(200)))
    output = tmp_path / "input.json"
    subprocess.run([cli, "convert", "mooncake", str(trace), "--mode", "token",
                    "--vocab", "5000", "--cached-fraction", "0", "-o", str(output)],
                   check=True, timeout=300)
    with open(output) as converted:
        expected = json.load(converted)["requests"]
    requests = kvprefix.read_trace(trace, mode="token", vocab=5000)
    assert len(requests) == len(expected) == 200
    assert all(r.tolist() == e for r, e in zip(requests, expected))


def test_returns_int32_numpy_views_of_one_array(trace):
    numpy = pytest.importorskip("numpy")
    requests = kvprefix.read_trace(trace)
    assert all(isinstance(r, numpy.ndarray) and r.dtype == numpy.int32 and r.ndim == 1
               for r in requests)
    assert requests[0].base is requests[2].base is not None
    assert kvprefix.read_trace(os.devnull) == []


def test_returns_arrays_of_the_array_module_without_numpy(trace):
    # numpy set to None in sys.modules: `import numpy` raises ImportError.
    program = (
        "import sys; sys.modules['numpy'] = None\n"
        "import kvprefix\n"
        "requests = kvprefix.read_trace(sys.argv[1])\n"
        "print([(type(r).__name__, r.typecode, r.tolist()) for r in requests])\n"
        "print(kvprefix.replay(requests)['matched_tokens'])\n")
    result = subprocess.run([sys.executable, "-c", program, str(trace)],
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout == (
        "[('array', 'i', [1, 2]), ('array', 'i', [1, 2, 7]), "
        "('array', 'i', [2147483647])]\n2\n")


def cli_error(cli, *args):
    result = subprocess.run([cli, "replay", *args], capture_output=True, timeout=60)
    assert result.returncode in (1, 2) and result.stderr.startswith(b"kvprefix: ")
    return result.stderr[len(b"kvprefix: "):-1].decode()


@pytest.mark.parametrize("line", [
    b'{"input_length": 600, "hash_ids": [5]}',      # the last block over 512
    b'{"input_length": 1, "hash_ids": [-1]}',
    b'{"input_length": 1, "hash_ids": [2147483648]}',
    b'{"input_length": 1, "hash_ids": [1]',
    b'{"hash_ids": [1]}',
    b'\xff',
])
def test_bad_input_raises_input_error_with_the_clis_message(cli, tmp_path, line):
    path = tmp_path / "bad trace.jsonl"
    path.write_bytes(TRACE + line + b"\n")
    with pytest.raises(kvprefix.InputError) as raised:
        kvprefix.read_trace(path)
    assert str(raised.value) == cli_error(cli, str(path))
    assert str(raised.value).startswith(f"{path}: line 5: ")


def test_unreadable_file_raises_os_error_with_the_clis_message(cli, tmp_path):
    path = tmp_path / "absent.jsonl"
    with pytest.raises(OSError) as raised:
        kvprefix.read_trace(path)
    assert str(raised.value) == cli_error(cli, str(path))
    assert "cannot open" in str(raised.value)


@pytest.mark.parametrize("arguments,error", [
    ({"mode": "tokens"}, ValueError), ({"vocab": 0}, ValueError),
    ({"vocab": 2 ** 31 + 1}, ValueError), ({"vocab": 1.5}, TypeError),
    ({"vocab": True}, TypeError)])
def test_bad_arguments_raise(trace, arguments, error):
    with pytest.raises(error):
        kvprefix.read_trace(trace, **arguments)


def test_a_path_with_a_null_byte_raises(trace):
    with pytest.raises(ValueError, match="embedded null byte"):
        kvprefix.read_trace(str(trace) + "\0x")


SUMMARY_KEYS = ["engine", "capacity", "policy", "page_size", "requests",
                "request_tokens", "matched_tokens", "hit_ratio", "nodes",
                "peak_nodes", "evictions", "memory_bytes"]


def test_replay_summary_by_hand():
    # [1,2] creates 2 nodes; [1,2,3] matches 2 and adds 1; [4] adds 1, and
    # with capacity 3 evicts the least recently used leaf, 3 (peak_nodes counts
    # after evictions).
    result = kvprefix.replay([[1, 2], [1, 2, 3], [4]], capacity=3, engine="reference")
    assert [m["matched_length"] for m in result["matches"]] == [0, 2, 0]
    assert {k: result[k] for k in SUMMARY_KEYS if k != "memory_bytes"} == {
        "engine": "reference", "capacity": 3, "policy": "lru", "page_size": 1,
        "requests": 3, "request_tokens": 6, "matched_tokens": 2,
        "hit_ratio": 2 / 6, "nodes": 3, "peak_nodes": 3, "evictions": 1}
    assert result["memory_bytes"] > 0
    empty = kvprefix.replay([])
    assert (empty["matches"], empty["capacity"], empty["hit_ratio"], empty["nodes"]) == (
        [], None, 0.0, 0)


@pytest.mark.parametrize("engine", kvprefix.engines())
@pytest.mark.parametrize("options,cli_options", [
    ({}, []),
    ({"capacity": 3000, "policy": "fifo"}, ["--capacity", "3000", "--policy", "fifo"]),
    ({"capacity": 500, "page_size": 2}, ["--capacity", "500", "--page-size", "2"]),
])
def test_replay_of_read_trace_is_the_clis_summary(cli, engine, options, cli_options):
    result = subprocess.run([cli, "replay", CONVERSATION, "--engine", engine, *cli_options],
                            capture_output=True, check=True, timeout=300)
    expected = json.loads(result.stdout)
    summary = kvprefix.replay(kvprefix.read_trace(CONVERSATION), engine=engine, **options)
    assert len(summary["matches"]) == expected["requests"] == 12031
    # Every member but memory_bytes: a bounded cache's hash tables are seeded
    # per process (Abseil), so their sizes differ between runs.
    same = [k for k in SUMMARY_KEYS if k != "memory_bytes"]
    assert {k: summary[k] for k in same} == {k: expected[k] for k in same}
    assert summary["memory_bytes"] > 0 and expected["memory_bytes"] > 0
    assert expected["matched_tokens"] > 0 and (
        expected["evictions"] > 0) == ("capacity" in options)


def test_curve_takes_read_traces_requests(trace):
    requests = kvprefix.read_trace(trace)
    curve = kvprefix.curve(requests, capacities=[3, 100])
    assert list(curve["matched_tokens"]) == [
        kvprefix.replay(requests, capacity=c)["matched_tokens"] for c in (3, 100)]
