#!/usr/bin/python3
"""Wrong on purpose: every node is an eviction candidate, not only the
leaves, so a parent can go before its children, which stay behind,
unreachable, still counted. kvprefix verify --format requests: wrong-answer."""
import replay_cache


class EvictsNonLeafCache(replay_cache.ReplayCache):
    def candidates(self):
        return list(self.stamp)  # the bug: inner nodes too

    def remove(self, node):
        # An orphan's parent is gone already: only its own entries go.
        parent, page = self.parent.pop(node)
        self.children.get(parent, {}).pop(page, None)
        del self.children[node]
        del self.stamp[node]
        del self.count[node]


if __name__ == "__main__":
    replay_cache.main(EvictsNonLeafCache)
