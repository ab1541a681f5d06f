#!/usr/bin/python3
"""Wrong on purpose: LRU evicts the wrong end of a chain. Among the victim
leaf's ancestors with the same stamp (one chain of one request's path) the
shallowest goes, and its one child moves up to its parent, as when a radix
run is trimmed at its head instead of its tail.
kvprefix verify --format requests: wrong-answer."""
import replay_cache


class EvictsChainHeadCache(replay_cache.ReplayCache):
    def evict_one(self):
        leaf = min(self.candidates(), key=self.key)
        if self.policy != "lru":
            self.remove(leaf)
            return
        head = leaf  # the bug: climb to the top of the equal-stamp chain
        while (self.parent[head][0] != 0 and
               self.stamp[self.parent[head][0]] == self.stamp[leaf]):
            head = self.parent[head][0]
        if head == leaf:
            self.remove(leaf)
            return
        parent, page = self.parent[head]
        [(child_page, child)] = self.children[head].items()
        if child_page != page and child_page in self.children[parent]:
            # A sibling holds the page the child would move up to: no room,
            # so this one eviction is the right one (no crash on a clash).
            self.remove(leaf)
            return
        del self.parent[head]
        del self.children[head]
        del self.children[parent][page]
        del self.stamp[head]
        del self.count[head]
        self.children[parent][child_page] = child
        self.parent[child] = (parent, child_page)


if __name__ == "__main__":
    replay_cache.main(EvictsChainHeadCache)
