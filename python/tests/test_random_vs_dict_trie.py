"""Every engine equals the plain-Python dict trie (dict_trie.py) on seeded
random inputs: small alphabets so that prefixes are shared and matches end
inside longer sequences, empty sequences, and extreme int32 tokens."""
import random

import numpy as np
import pytest

import dict_trie
import kvprefix


def random_sequences(rng, count, alphabet, max_length):
    return [[rng.choice(alphabet) for _ in range(rng.randrange(max_length + 1))]
            for _ in range(count)]


WORLDS = [
    # (alphabet, max length, cached count, request count)
    ([0, 1], 6, 20, 50),
    ([-2 ** 31, -1, 0, 2 ** 31 - 1], 10, 100, 200),
    (list(range(20)), 40, 300, 300),
    (list(range(1000)), 5, 2000, 500),
]


@pytest.mark.parametrize("engine", kvprefix.engines())
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("world", range(len(WORLDS)))
def test_engine_equals_dict_trie_on_random_input(engine, seed, world):
    alphabet, max_length, cached_count, request_count = WORLDS[world]
    rng = random.Random(seed * 100 + world)
    cached = random_sequences(rng, cached_count, alphabet, max_length)
    # Requests extend cached sequences, so that they share long prefixes.
    requests = [rng.choice(cached) + s for s in
                random_sequences(rng, request_count, alphabet, 3)]
    requests += random_sequences(rng, request_count, alphabet, max_length)
    expected = dict_trie.find_prefix_matches(cached, requests)
    assert kvprefix.find_prefix_matches(cached, requests, engine=engine) == expected
    as_numpy = [np.array(s, dtype=np.int64) for s in requests]
    assert kvprefix.find_prefix_matches(cached, as_numpy, engine=engine) == expected
