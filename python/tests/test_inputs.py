"""Every accepted input form gives the same answer as plain lists: tuples,
NumPy arrays of each integer type (also strided), array.array, NumPy integer
scalars, a 2-D array used as a list of equal-length rows."""
import array

import numpy as np
import pytest

import kvprefix

CACHED = [[1, 2], [1, 2, 3], [4], [-2147483648, 2147483647, 0]]
REQUESTS = [[1, 2, 9], [4, 5], [5], [], [-2147483648, 2147483647, 0, 7]]
EXPECTED = kvprefix.find_prefix_matches(CACHED, REQUESTS, engine="reference")


def as_tuples(sequences):
    return tuple(tuple(s) for s in sequences)


def as_numpy(dtype):
    return lambda sequences: [np.array(s, dtype=dtype) for s in sequences]


def as_array(typecode):
    return lambda sequences: [array.array(typecode, s) for s in sequences]


def as_strided(sequences):
    # Every other element of an int64 array twice as long: a non-contiguous view.
    return [np.repeat(np.array(s, dtype=np.int64), 2)[::2] for s in sequences]


def as_numpy_scalars(sequences):
    return [[np.int64(t) for t in s] for s in sequences]


class Token(int):
    """An int subclass, read through __index__."""


def as_int_subclass(sequences):
    return [[Token(t) for t in s] for s in sequences]


def as_memoryview(sequences):
    return [memoryview(array.array("i", s)) for s in sequences]


CONVERSIONS = {
    "tuples": as_tuples,
    "numpy-int32": as_numpy(np.int32),
    "numpy-int64": as_numpy(np.int64),
    "numpy-strided": as_strided,
    "numpy-scalars": as_numpy_scalars,
    "array-i": as_array("i"),
    "array-l": as_array("l"),
    "array-q": as_array("q"),
    "memoryview": as_memoryview,
    "int-subclass": as_int_subclass,
}


@pytest.mark.parametrize("engine", kvprefix.engines())
@pytest.mark.parametrize("form", CONVERSIONS)
def test_input_form_matches_plain_lists(form, engine):
    convert = CONVERSIONS[form]
    result = kvprefix.find_prefix_matches(convert(CACHED), convert(REQUESTS),
                                          engine=engine)
    assert result == EXPECTED
    for match in result["matches"]:
        assert all(type(token) is int for token in match["uncached_suffix"])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16,
                                   np.uint32, np.uint64])
def test_small_and_unsigned_integer_arrays_are_read_by_value(dtype):
    cached = [np.array([1, 2, 3], dtype=dtype)]
    result = kvprefix.find_prefix_matches(cached, [np.array([1, 2, 7], dtype=dtype)])
    assert result == {"matches": [{"matched_length": 2, "cache_node": 2,
                                   "uncached_suffix": [7]}]}


def test_two_dimensional_array_is_a_list_of_rows():
    cached = np.array([[1, 2, 3], [1, 2, 4]], dtype=np.int32)
    requests = np.array([[1, 2, 4, 9]], dtype=np.int64)
    result = kvprefix.find_prefix_matches(cached, requests)
    assert result == {"matches": [{"matched_length": 3, "cache_node": 4,
                                   "uncached_suffix": [9]}]}


def test_numpy_input_is_not_modified_or_kept():
    tokens = np.array([5, 6, 7], dtype=np.int32)
    index = kvprefix.PrefixIndex()
    assert index.insert(tokens) == 3
    tokens[:] = 0  # the index copied the tokens, so this changes nothing
    assert index.match([5, 6, 7])["matched_length"] == 3
