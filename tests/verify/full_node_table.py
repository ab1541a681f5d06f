#!/usr/bin/python3
"""Wrong on purpose: nodes live in a fixed table of 500 entries sized for a
test workload; once it is full, inserts stop creating nodes without a word,
so only inputs with more than 500 distinct prefixes show the bug (it needs
the sizes --max-size asks for). kvprefix verify: wrong-answer."""
import prefix_cache


class FullNodeTableTrie(prefix_cache.PrefixTrie):
    TABLE_SIZE = 500  # nodes besides the root

    def insert(self, sequence):
        node = 0
        for token in sequence:
            child = self.children[node].get(token)
            if child is None:
                if len(self.children) > self.TABLE_SIZE:
                    return  # the bug: the table is full, the rest is dropped
                child = self.new_node()
                self.children[node][token] = child
            node = child


if __name__ == "__main__":
    prefix_cache.main(FullNodeTableTrie)
