#!/usr/bin/python3
"""Wrong on purpose: a duplicate cached sequence gets new nodes (and the old
path is replaced by them), as when duplicate store events are counted as new
blocks. kvprefix verify: wrong-answer."""
import prefix_cache


class DuplicateNodesTrie(prefix_cache.PrefixTrie):
    def __init__(self):
        super().__init__()
        self.seen = set()

    def insert(self, sequence):
        key = tuple(sequence)
        if key not in self.seen:
            self.seen.add(key)
            super().insert(sequence)
            return
        node = 0
        for token in sequence:  # the bug: a fresh node for every token
            child = self.new_node()
            self.children[node][token] = child
            node = child


if __name__ == "__main__":
    prefix_cache.main(DuplicateNodesTrie)
