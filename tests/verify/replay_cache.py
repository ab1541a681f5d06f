#!/usr/bin/python3
"""A correct, plain-Python implementation of SPEC §8: a prefix cache with a
capacity, LRU, FIFO or LFU eviction and a page size.

Reads one SPEC §8 replay document ({"requests": [...], "capacity": C,
"policy": "lru", "page_size": P, "namespaces": [...]}; all but "requests"
optional) from standard
input, replays it (each request: match, insert, touch, evict) and prints
each request's match at step 1 as SPEC §5 does ({"matches": [...]},
compact, one trailing newline); with --lines, one document per line
(`--protocol lines`). `kvprefix verify --cmd ... --format requests` must
pass it; the deliberately wrong implementations beside it
subclass ReplayCache and change one method each, so each carries exactly one
bug. Eviction scans the leaves (O(nodes) per eviction): clear, not fast.
"""

import prefix_cache  # SPEC §5's answer, shared with the batch job


# What SPEC §8 step 4 orders leaves by, per policy: a policy this model does
# not know is a KeyError (verify reports a crash), never a silent other rule.
KEYS = {"lru": lambda cache, node: cache.stamp[node],  # least recently used
        "fifo": lambda cache, node: node,  # oldest created
        # least frequently used, the least recently used among equal counts
        "lfu": lambda cache, node: (cache.count[node], cache.stamp[node])}


class ReplayCache:
    """Nodes are pages (tuples of page_size tokens); the root is node 0."""

    def __init__(self, capacity=None, policy="lru", page_size=1):
        self.capacity = capacity  # None: unbounded
        self.policy = policy
        self.key_of = KEYS[policy]
        self.page_size = page_size
        self.children = {0: {}}  # node -> {page: child}
        self.parent = {}  # node -> (parent, page), the root excluded
        self.stamp = {}  # node -> the last request that touched it
        self.count = {}  # node -> how many requests touched it (lfu)
        self.next_id = 1
        self.request = 0

    def pages(self, request):
        """Whole pages only: a trailing partial page is dropped."""
        size = self.page_size
        return [tuple(request[i:i + size])
                for i in range(0, len(request) - size + 1, size)]

    def match(self, pages):
        """Returns (pages matched, node reached)."""
        node = 0
        for length, page in enumerate(pages):
            child = self.children[node].get(page)
            if child is None:
                return length, node
            node = child
        return len(pages), node

    def new_id(self):
        node = self.next_id
        self.next_id += 1
        return node

    def insert(self, pages):
        """Returns the request's path, root excluded, and the nodes created."""
        node, path, created = 0, [], []
        for page in pages:
            child = self.children[node].get(page)
            if child is None:
                child = self.new_id()
                self.children[node][page] = child
                self.children[child] = {}
                self.parent[child] = (node, page)
                created.append(child)
            path.append(child)
            node = child
        return path, created

    def touch(self, path, created):
        for node in path:
            self.stamp[node] = self.request
            # A new node starts at 0: its own request's touch makes it 1.
            self.count[node] = self.count.get(node, 0) + 1

    def candidates(self):
        """The nodes eviction may take: the leaves."""
        return [node for node in self.stamp if not self.children[node]]

    def key(self, node):
        return self.key_of(self, node)

    def remove(self, node):
        parent, page = self.parent.pop(node)
        del self.children[parent][page]
        del self.children[node]
        del self.stamp[node]
        del self.count[node]  # IDs are never given again: nothing to reuse

    def evict_one(self):
        self.remove(min(self.candidates(), key=self.key))

    def over_capacity(self):
        return self.capacity is not None and len(self.stamp) > self.capacity

    def access(self, request):
        """SPEC §8's four steps; returns (matched tokens, cache node)."""
        self.request += 1
        pages = self.pages(request)
        length, node = self.match(pages)
        path, created = self.insert(pages)
        self.touch(path, created)
        while self.over_capacity():
            self.evict_one()
        return length * self.page_size, node


def replay(document, cache_class=ReplayCache, fold=prefix_cache.fold_namespaces):
    """SPEC §8's replay of a parsed replay document (its namespaces, SPEC
    §8.1, folded into the first tokens)."""
    cache = cache_class(document.get("capacity"),
                        document.get("policy", "lru"),
                        document.get("page_size", 1))
    (keys,) = prefix_cache.keyed(document, ("requests",), fold)
    return {"matches": [prefix_cache.match_entry(request, *cache.access(key))
                        for request, key in zip(document["requests"], keys)]}


def main(cache_class=ReplayCache, fold=prefix_cache.fold_namespaces):
    prefix_cache.serve(lambda document: replay(document, cache_class, fold))


if __name__ == "__main__":
    main()
