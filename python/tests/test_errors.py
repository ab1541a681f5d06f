"""Bad input raises the exception a Python user expects, naming the place,
and never crashes the interpreter or breaks the module for later calls."""
import array
import pathlib

import numpy as np
import pytest

import kvprefix
import kvprefix.testing


class BrokenSequence:
    """A sequence whose items cannot be read."""

    def __len__(self):
        return 2

    def __getitem__(self, index):
        raise RuntimeError("cannot read item %d" % index)


BAD_REQUESTS = [
    # (requests, exception, text the message must contain)
    (None, TypeError, "requests: expected a sequence of token sequences, got NoneType"),
    (5, TypeError, "got int"),
    ("abc", TypeError, "got str"),
    ({1: [1]}, TypeError, "got dict"),
    ({(1,)}, TypeError, "got set"),
    ([None], TypeError, "requests[0]: expected a sequence of int tokens, got NoneType"),
    (["12"], TypeError, "requests[0]: expected a sequence of int tokens, got str"),
    ([b"12"], TypeError, "got bytes"),
    ([bytearray(b"12")], TypeError, "got bytearray"),
    ([1, 2], TypeError, "requests[0]: expected a sequence of int tokens, got int"),
    ([[1, [2]]], TypeError, "requests[0][1]: expected an int token, got list"),
    ([[[1]]], TypeError, "requests[0][0]: expected an int token, got list"),
    ([[1, "2"]], TypeError, "requests[0][1]: expected an int token, got str"),
    ([[1.0]], TypeError, "expected an int token, got float"),
    ([[True]], TypeError, "expected an int token, got bool"),
    ([[1, None]], TypeError, "requests[0][1]: expected an int token, got NoneType"),
    ([[np.True_]], TypeError, "expected an int token"),
    ([[np.float64(1)]], TypeError, "expected an int token"),
    ([[2 ** 31]], OverflowError, "requests[0][0]: token 2147483648 is outside"),
    ([[-2 ** 31 - 1]], OverflowError, "token -2147483649 is outside"),
    ([[0, 2 ** 100]], OverflowError, "requests[0][1]: token 1267650600228229401496703205376"),
    ([[-2 ** 200]], OverflowError, "is outside the int32 range"),
    ([[np.int64(2 ** 40)]], OverflowError, "token 1099511627776 is outside"),
    ([np.array([1, 2 ** 31], dtype=np.int64)], OverflowError, "requests[0][1]: token 2147483648"),
    ([np.array([-2 ** 31 - 1], dtype=np.int64)], OverflowError, "token -2147483649"),
    ([np.array([2 ** 32 - 1], dtype=np.uint32)], OverflowError, "token 4294967295"),
    ([np.array([2 ** 64 - 1], dtype=np.uint64)], OverflowError, "token 18446744073709551615"),
    ([np.array([1.0, 2.0])], TypeError, "expected a buffer of integers"),
    ([np.array([1.5], dtype=np.float32)], TypeError, "format 'f'"),
    ([np.array([True])], TypeError, "format '?'"),
    ([np.array([1, 2], dtype=">i4")], TypeError, "format '>i'"),
    ([np.zeros((2, 2), dtype=np.int32)], TypeError, "expected a one-dimensional buffer, got 2"),
    ([np.array(5, dtype=np.int32)], TypeError, "got 0 dimensions"),
    ([np.int32(5)], TypeError, "requests[0]"),
    (np.zeros((2, 2, 2), dtype=np.int32), TypeError, "requests[0]: expected a one-dimensional"),
    ([array.array("d", [1.0])], TypeError, "format 'd'"),
    ([BrokenSequence()], RuntimeError, "cannot read item 0"),
]


@pytest.mark.parametrize("requests,error,message", BAD_REQUESTS)
def test_bad_requests_raise_the_expected_error(requests, error, message):
    with pytest.raises(error) as raised:
        kvprefix.find_prefix_matches([[1, 2]], requests)
    assert message in str(raised.value)


@pytest.mark.parametrize("requests,error,message", BAD_REQUESTS)
def test_bad_cached_sequences_raise_the_expected_error(requests, error, message):
    with pytest.raises(error) as raised:
        kvprefix.find_prefix_matches(requests, [[1, 2]])
    assert message.replace("requests", "cached_sequences") in str(raised.value)


@pytest.mark.parametrize("sequence,error", [
    (None, TypeError), ("ab", TypeError), (7, TypeError), ([1.5], TypeError),
    ([False], TypeError), ([2 ** 31], OverflowError),
    (np.zeros((1, 3), dtype=np.int64), TypeError),
])
def test_prefix_index_rejects_bad_sequences(sequence, error):
    index = kvprefix.PrefixIndex()
    index.insert([1])
    with pytest.raises(error):
        index.insert(sequence)
    with pytest.raises(error):
        index.match(sequence)
    assert index.node_count == 1  # a refused insert changed nothing
    assert index.match([1, 2])["matched_length"] == 1


def test_unknown_engine_is_a_value_error_listing_the_engines():
    for call in (lambda: kvprefix.find_prefix_matches([], [], engine="nope"),
                 lambda: kvprefix.PrefixIndex(engine="nope"),
                 lambda: kvprefix.PrefixIndex("")):
        with pytest.raises(ValueError) as raised:
            call()
        assert "unknown engine" in str(raised.value)
        assert "reference" in str(raised.value)


def test_engine_name_must_be_a_string():
    with pytest.raises(TypeError):
        kvprefix.find_prefix_matches([], [], engine=None)
    with pytest.raises(TypeError):
        kvprefix.PrefixIndex(3)


class ClearingToken:
    """A token whose __index__ empties the list being converted."""

    def __init__(self, target):
        self.target = target

    def __index__(self):
        self.target.clear()
        return 1


def test_input_changed_during_conversion_does_not_crash():
    sequence = [1, 2]
    sequence.append(ClearingToken(sequence))
    sequence += list(range(1000))
    outer = [sequence, [5]]
    outer.append([ClearingToken(outer)] + [6] * 1000)
    outer += [[7]] * 1000
    result = kvprefix.find_prefix_matches(outer, [[1, 2, 1], [5]])
    # Conversion stopped where the lists ended: [1, 2, 1] and [5] were read.
    assert result == {"matches": [
        {"matched_length": 3, "cache_node": 3, "uncached_suffix": []},
        {"matched_length": 1, "cache_node": 4, "uncached_suffix": []}]}


def test_module_still_works_after_errors():
    with pytest.raises(OverflowError):
        kvprefix.find_prefix_matches([[1]], [[2 ** 63]])
    assert kvprefix.find_prefix_matches([[1]], [[1, 2]]) == {
        "matches": [{"matched_length": 1, "cache_node": 1, "uncached_suffix": [2]}]}


# Every argument of every function of the module, with a value of the wrong
# type (TypeError) and one of the right type but wrong (ValueError), as
# CPython's own functions raise them. A wrong type for model, match_limit or
# trigger raised ValueError, for replay's engine RuntimeError, for curve's
# points ValueError, and kvprefix.testing's counts and choices ValueError
# (its `shrink` took any object); a negative max_shrink_attempts of
# check_document raised TypeError.
_PROJECT = pathlib.Path(__file__).resolve().parents[2]
_R = [[1, 2], [1, 2, 3]]
_SEED = "examples/seed-2.json"
_TRACE = "data/mooncake/synthetic_trace.jsonl"
_DOCUMENT = {"requests": [[1]]}


def _no_cache(options):
    return None


EVERY_ARGUMENT = [
    # (name, call taking the value, a wrong type, a wrong value)
    ("find_prefix_matches(cached_sequences)",
     lambda v: kvprefix.find_prefix_matches(v, _R), 5, None),
    ("find_prefix_matches(requests)",
     lambda v: kvprefix.find_prefix_matches(_R, v), 5, None),
    ("find_prefix_matches(engine)",
     lambda v: kvprefix.find_prefix_matches(_R, _R, v), 5, "nope"),
    ("find_prefix_matches(page_size)",
     lambda v: kvprefix.find_prefix_matches(_R, _R, page_size=v), "1", 0),
    ("replay(requests)", lambda v: kvprefix.replay(v), 5, None),
    ("replay(capacity)", lambda v: kvprefix.replay(_R, capacity=v), "1", -1),
    ("replay(policy)", lambda v: kvprefix.replay(_R, policy=v), 1, "LRU"),
    ("replay(page_size)", lambda v: kvprefix.replay(_R, page_size=v), 1.0, 0),
    ("replay(engine)", lambda v: kvprefix.replay(_R, engine=v), 1, "nope"),
    ("replay(model)", lambda v: kvprefix.replay(_R, model=v), 1, "lmcache"),
    ("replay(match_limit)", lambda v: kvprefix.replay(_R, match_limit=v), 1, "none"),
    ("replay(trigger)",
     lambda v: kvprefix.replay(_R, model="sglang", trigger=v), 1, "before"),
    ("curve(requests)", lambda v: kvprefix.curve(v), 5, None),
    ("curve(page_size)", lambda v: kvprefix.curve(_R, page_size=v), "1", 0),
    ("curve(capacities)", lambda v: kvprefix.curve(_R, capacities=v), 5, [-1]),
    ("curve(capacities[0])", lambda v: kvprefix.curve(_R, capacities=[v]), "1", -1),
    ("curve(points)", lambda v: kvprefix.curve(_R, points=v), "3", 0),
    ("curve(target_hit_ratios)",
     lambda v: kvprefix.curve(_R, target_hit_ratios=v), 5, [2]),
    ("curve(target_hit_ratios[0])",
     lambda v: kvprefix.curve(_R, target_hit_ratios=[v]), "0.5", -0.1),
    ("curve(model)", lambda v: kvprefix.curve(_R, model=v), 1, "lmcache"),
    ("curve(match_limit)", lambda v: kvprefix.curve(_R, match_limit=v), 1, "none"),
    ("curve(trigger)",
     lambda v: kvprefix.curve(_R, model="sglang", trigger=v), 1, "before"),
    ("match_file(path)", lambda v: kvprefix.match_file(v), 5, "a\0b"),
    ("match_file(engine)", lambda v: kvprefix.match_file(_SEED, v), 5, "nope"),
    ("match_file(page_size)",
     lambda v: kvprefix.match_file(_SEED, page_size=v), "1", 0),
    ("read_trace(path)", lambda v: kvprefix.read_trace(v), 5, "a\0b"),
    ("read_trace(mode)", lambda v: kvprefix.read_trace(_TRACE, mode=v), 5, "blocks"),
    ("read_trace(vocab)", lambda v: kvprefix.read_trace(_TRACE, vocab=v), "1", 0),
    ("run_command_line(arguments)", lambda v: kvprefix.run_command_line(v), 5, ["a\0b"]),
    ("PrefixIndex(engine)", lambda v: kvprefix.PrefixIndex(v), 5, "nope"),
    ("PrefixIndex(capacity)", lambda v: kvprefix.PrefixIndex(capacity=v), "1", -1),
    ("PrefixIndex(policy)", lambda v: kvprefix.PrefixIndex(policy=v), 5, "LRU"),
    ("PrefixIndex(page_size)", lambda v: kvprefix.PrefixIndex(page_size=v), "1", 0),
    ("PrefixIndex(model)", lambda v: kvprefix.PrefixIndex(model=v), 5, "lmcache"),
    ("PrefixIndex(match_limit)",
     lambda v: kvprefix.PrefixIndex(match_limit=v), 5, "none"),
    ("PrefixIndex(trigger)",
     lambda v: kvprefix.PrefixIndex("reference", model="sglang", trigger=v), 5, "before"),
    ("PrefixIndex.insert(sequence)", lambda v: kvprefix.PrefixIndex().insert(v), 5, None),
    ("PrefixIndex.match(request)", lambda v: kvprefix.PrefixIndex().match(v), 5, None),
    ("PrefixIndex.access(request)", lambda v: kvprefix.PrefixIndex().access(v), 5, None),
    ("testing.check(make_cache)", lambda v: kvprefix.testing.check(v, runs=1), 5, None),
    ("testing.check(runs)", lambda v: kvprefix.testing.check(_no_cache, runs=v), "1", -1),
    ("testing.check(seed)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, seed=v), "1", -1),
    ("testing.check(max_size)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, max_size=v), "1", -1),
    ("testing.check(format)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, format=v), 1, "json"),
    ("testing.check(capacity)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, capacity=v), "1", -1),
    ("testing.check(policy)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, policy=v), 1, "LRU"),
    ("testing.check(page_size)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, page_size=v), "1", 0),
    ("testing.check(model)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, format="requests", model=v),
     None, "lmcache"),
    ("testing.check(match_limit)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, format="requests",
                                      match_limit=v), 1, "none"),
    ("testing.check(trigger)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, format="requests",
                                      model="sglang", trigger=v), 1, "before"),
    ("testing.check(compare)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, compare=v), 1, "bytes"),
    ("testing.check(documents)",
     lambda v: kvprefix.testing.check(_no_cache, runs=0, documents=v), 5,
     ["/nonexistent-folder"]),
    ("testing.check(shrink)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, shrink=v), "yes", None),
    ("testing.check(max_shrink_attempts)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, max_shrink_attempts=v), "1", -1),
    ("testing.check(shrink_seconds)",
     lambda v: kvprefix.testing.check(_no_cache, runs=1, shrink_seconds=v), "1", -1),
    ("testing.check_document(document)",
     lambda v: kvprefix.testing.check_document(_no_cache, v), 5, {"requests": 5}),
    ("testing.check_document(compare)",
     lambda v: kvprefix.testing.check_document(_no_cache, _DOCUMENT, compare=v), 1, "bytes"),
    ("testing.check_document(shrink)",
     lambda v: kvprefix.testing.check_document(_no_cache, _DOCUMENT, shrink=v), "no", None),
    ("testing.check_document(max_shrink_attempts)",
     lambda v: kvprefix.testing.check_document(_no_cache, _DOCUMENT,
                                               max_shrink_attempts=v), "1", -1),
    ("testing.check_document(shrink_seconds)",
     lambda v: kvprefix.testing.check_document(_no_cache, _DOCUMENT,
                                               shrink_seconds=v), "1", -1),
    ("testing.assert_matches_reference(document)",
     lambda v: kvprefix.testing.assert_matches_reference(kvprefix.PrefixIndex(), v),
     5, {"requests": 5}),
    ("testing.assert_matches_reference(compare)",
     lambda v: kvprefix.testing.assert_matches_reference(kvprefix.PrefixIndex(),
                                                         _DOCUMENT, compare=v), 1, "bytes"),
    ("testing.reference_answer(document)",
     lambda v: kvprefix.testing.reference_answer(v), 5, {"requests": 5}),
    ("testing.load_documents(documents)",
     lambda v: kvprefix.testing.load_documents(v), 5, ["/nonexistent-folder"]),
]


@pytest.mark.parametrize("name, call, wrong_type, wrong_value", EVERY_ARGUMENT,
                         ids=[row[0] for row in EVERY_ARGUMENT])
def test_every_argument_raises_type_error_for_a_type_value_error_for_a_value(
        name, call, wrong_type, wrong_value, monkeypatch):
    monkeypatch.chdir(_PROJECT)
    if wrong_type is not None:
        with pytest.raises(TypeError):
            call(wrong_type)
    if wrong_value is None:
        # No wrong value of the right type but one out of range: a token
        # outside int32 is OverflowError, as CPython's int conversions raise
        # it (BAD_REQUESTS); a flag or a callable has none at all.
        return
    # A missing file or folder is an OSError (FileNotFoundError), not a
    # ValueError, as open() raises it.
    expected = OSError if wrong_value == ["/nonexistent-folder"] else ValueError
    with pytest.raises(expected):
        call(wrong_value)
