#!/usr/bin/python3
"""Wrong on purpose, in its lines mode (--lines): every input shares one
trie, never emptied, so an input's answers see what the inputs before it
cached. Each input alone is answered right. kvprefix verify --protocol
lines: wrong-answer, reported with a note that a new process answers the
input right."""
import prefix_cache


class KeptTrie(prefix_cache.PrefixTrie):
    children = [{}]  # the bug: one table for every trie, never emptied

    def __init__(self):
        pass  # keeps the class's table instead of a fresh one


if __name__ == "__main__":
    prefix_cache.main(KeptTrie)
