"""kvprefix.PrefixIndex (online use, SPEC section 3) and kvprefix.engines()."""
import concurrent.futures
import random

import pytest

import dict_trie
import kvprefix

ENGINES = kvprefix.engines()


def test_engines_lists_the_reference_first_and_the_default():
    assert ENGINES[0] == "reference"
    assert len(set(ENGINES)) == len(ENGINES)
    assert kvprefix.default_engine() in ENGINES


@pytest.mark.parametrize("engine", ENGINES)
def test_insert_returns_node_ids_and_match_returns_the_seed_dict(engine):
    index = kvprefix.PrefixIndex(engine=engine)
    assert index.engine == engine
    assert index.node_count == 0
    assert index.insert([1, 2]) == 2
    assert index.insert((1, 2, 3)) == 3
    assert index.insert([4]) == 4
    assert index.insert([1, 2]) == 2
    assert index.insert([]) == 0
    assert index.node_count == 4
    assert index.match([1, 2, 9]) == {"matched_length": 2, "cache_node": 2,
                                      "uncached_suffix": [9]}
    assert index.match([]) == {"matched_length": 0, "cache_node": 0,
                               "uncached_suffix": []}
    assert index.node_count == 4  # matching inserts nothing
    assert repr(index) == "<kvprefix.PrefixIndex engine='%s' node_count=4>" % engine


@pytest.mark.parametrize("engine", ENGINES)
def test_memory_bytes_grows_with_the_index(engine):
    index = kvprefix.PrefixIndex(engine)
    empty = index.memory_bytes
    for start in range(0, 20000, 100):
        index.insert(range(start, start + 100))
    assert index.node_count == 20000
    # Every node holds at least its token: 4 bytes.
    assert index.memory_bytes >= empty + 20000 * 4


@pytest.mark.parametrize("engine", ENGINES)
def test_interleaved_insert_and_match_answer_like_the_batch_job(engine):
    rng = random.Random(7)
    index = kvprefix.PrefixIndex(engine)
    inserted = []
    for _ in range(300):
        sequence = [rng.randrange(3) for _ in range(rng.randrange(8))]
        if rng.random() < 0.5:
            inserted.append(sequence)
            expected = dict_trie.find_prefix_matches(inserted, [sequence])
            assert index.insert(sequence) == expected["matches"][0]["cache_node"]
        else:
            expected = dict_trie.find_prefix_matches(inserted, [sequence])
            assert index.match(sequence) == expected["matches"][0]
    # The last node created ends the sequence that created it.
    final = dict_trie.find_prefix_matches(inserted, inserted)["matches"]
    assert index.node_count == max(m["cache_node"] for m in final)


@pytest.mark.parametrize("engine", ENGINES)
def test_threads_share_one_index_safely(engine):
    # Inserts and matches run without the GIL; the index's lock must keep
    # concurrent threads from corrupting it.
    rng = random.Random(11)
    sequences = [[rng.randrange(50) for _ in range(rng.randrange(1, 200))]
                 for _ in range(2000)]
    index = kvprefix.PrefixIndex(engine)

    def work(part):
        for sequence in sequences[part::4]:
            index.insert(sequence)
            assert index.match(sequence)["matched_length"] == len(sequence)

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for done in [pool.submit(work, part) for part in range(4)]:
            done.result()  # re-raises a failed assertion of that thread
    expected = kvprefix.find_prefix_matches(sequences, sequences, engine="reference")
    assert index.node_count == max(m["cache_node"] for m in expected["matches"])
    for sequence in sequences:
        assert index.match(sequence)["matched_length"] == len(sequence)
