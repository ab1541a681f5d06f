"""Bad input raises the exception a Python user expects, naming the place,
and never crashes the interpreter or breaks the module for later calls."""
import array

import numpy as np
import pytest

import kvprefix


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
