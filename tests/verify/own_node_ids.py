#!/usr/bin/python3
"""Right lengths, its own node IDs: numbers its nodes from 1001 (a cache
with its own structure has no kvprefix node IDs, SPEC §1). kvprefix verify:
wrong-answer by default, OK with --compare lengths."""
import prefix_cache


class OwnNodeIdsTrie(prefix_cache.PrefixTrie):
    def match(self, request):
        length, node = super().match(request)
        return length, node + 1000 if node else node


if __name__ == "__main__":
    prefix_cache.main(OwnNodeIdsTrie)
