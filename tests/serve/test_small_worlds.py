"""Exhaustive small worlds: every SPEC §10 document of a small world (three
requests over two tokens, every model, capacities 1, 2 and 4, pages of
one or two tokens, one or two running, three arrival patterns, output none
or unique), replayed by the
C++ reference through the Python module (kvprefix.testing.serve_answer)
and by this folder's brute-force oracle: the whole answers are equal.
Issue 42's "exhaustive small worlds against a brute-force implementation".
"""
import itertools
import os

import pytest

from serve_oracle import replay
from test_serve_oracle import assert_same_answer

SEQUENCES = ([], [1], [1, 2], [2, 1], [1, 1])
MODELS = ({"policy": "lru"}, {"policy": "fifo"}, {"model": "vllm"},
          {"model": "sglang", "trigger": "after-insert"},
          {"model": "sglang", "trigger": "on-allocate"})
ARRIVALS = ([0, 0, 0], [0, 1, 1], [0, 1, 2])
OUTPUTS = ({"output_lengths": [0, 0, 0]},
           {"output_lengths": [2, 0, 3], "output": "unique"})


def small_world():
    """Every document of the world, in a fixed order (22,500 of them)."""
    for requests in itertools.product(SEQUENCES, repeat=3):
        for model, capacity, page, running, arrivals, output in \
                itertools.product(MODELS, (1, 2, 4), (1, 2), (1, 2), ARRIVALS,
                                  OUTPUTS):
            document = {"requests": [list(r) for r in requests],
                        "capacity": capacity, "page_size": page, **model,
                        "arrivals_us": arrivals, "max_running": running,
                        "prefill_us_per_token": 1, "decode_us_per_token": 1,
                        **output}
            yield document


def test_every_document_of_a_small_world_is_the_oracles():
    if os.environ.get("KVPREFIX_SERVE_NEEDS_MODULE"):
        import kvprefix.testing as testing
    else:
        testing = pytest.importorskip("kvprefix.testing")
    count = 0
    for document in small_world():
        assert_same_answer(testing.serve_answer(document), replay(document))
        count += 1
    assert count == 5 ** 3 * 5 * 3 * 2 * 2 * 3 * 2


def test_the_comparison_sees_a_difference():
    """The check is not vacuous: one running instead of two differs."""
    if os.environ.get("KVPREFIX_SERVE_NEEDS_MODULE"):
        import kvprefix.testing as testing
    else:
        testing = pytest.importorskip("kvprefix.testing")
    document = {"requests": [[1, 2], [1, 2]], "model": "vllm",
                "arrivals_us": [0, 0], "output_lengths": [3, 0],
                "decode_us_per_token": 1, "max_running": 2}
    with pytest.raises(AssertionError):
        assert_same_answer(testing.serve_answer(document),
                           replay({**document, "max_running": 1}))
