"""A user's prefix cache in plain Python, and a subtly wrong variant of it.

PrefixCache is what a serving system's KV-cache index does (SPEC section
8): a trie over pages of `page_size` tokens holding at most `capacity`
nodes besides the root, evicting leaves by LRU, FIFO or LFU. Its node IDs are
SPEC section 1's (1, 2, 3, ... in creation order, never reused), so it is
checked with compare="all"; a cache without such IDs is checked with
compare="lengths".

Leaves waiting for eviction are kept in a heap ranked by their last use
(LRU), their ID (FIFO) or their use count, then their last use (LFU);
entries that went stale (the node was evicted, got a child, or was used
again) are skipped when they come up, so an eviction costs O(log nodes).
A policy it does not know is refused (ValueError), never taken for another.

NoRefreshOnHit is PrefixCache with the commonest LRU bug: a node is stamped
when it is created and never again, so a hit does not make the matched
prefix recent (nor, under LFU, count it) and LRU evicts the least recently
*inserted* leaf. It answers
every batch input, every unbounded replay and every FIFO replay right;
kvprefix.testing finds a replay where it does not and shrinks it to a few
short requests (test_prefix_cache.py).
"""
import heapq


# A leaf's rank per policy (SPEC section 8 step 4): the smallest goes first.
RANKS = {"lru": lambda cache, node: cache.stamp[node],
         "fifo": lambda cache, node: node,
         "lfu": lambda cache, node: (cache.count[node], cache.stamp[node])}


class PrefixCache:
    def __init__(self, capacity=None, policy="lru", page_size=1):
        if policy not in RANKS:
            raise ValueError(f"PrefixCache implements {', '.join(RANKS)}, "
                             f"not {policy!r}")
        self.capacity = capacity  # None: unbounded
        self.rank_of = RANKS[policy]
        self.page_size = page_size
        self.children = {0: {}}  # node -> {page: child}
        self.parent = {}  # node -> (its parent, its page); the root excluded
        self.stamp = {}  # node -> the last insert (request) that touched it
        self.count = {}  # node -> how many inserts touched it (LFU)
        self.next_id = 1
        self.clock = 0
        self.leaves = []  # heap of (rank, node), some of them stale

    def pages(self, tokens):
        """Whole pages of the sequence (a trailing partial page dropped)."""
        size = self.page_size
        if size == 1:
            return tokens
        return [tuple(tokens[i:i + size])
                for i in range(0, len(tokens) - size + 1, size)]

    def match(self, tokens):
        """(matched tokens, node reached): the longest cached prefix."""
        node = length = 0
        children = self.children
        for page in self.pages(tokens):
            child = children[node].get(page)
            if child is None:
                break
            node = child
            length += 1
        return length * self.page_size, node

    def insert(self, tokens):
        """Inserts the sequence, touches its path and evicts down to the
        capacity; returns the node of its last page (0 for none)."""
        self.clock += 1
        node = 0
        path = []
        for page in self.pages(tokens):
            children = self.children[node]
            child = children.get(page)
            if child is None:
                child = self.next_id
                self.next_id += 1
                children[page] = child
                self.children[child] = {}
                self.parent[child] = (node, page)
            path.append(child)
            node = child
        if path:
            self.touch(path)
            if not self.children[node]:
                self.queue(node)
        self.evict()
        return node

    def access(self, tokens):
        """The serving step: the match first, then the insert."""
        match = self.match(tokens)
        self.insert(tokens)
        return match

    def touch(self, path):
        for node in path:
            self.stamp[node] = self.clock
            self.count[node] = self.count.get(node, 0) + 1

    def rank(self, node):
        return self.rank_of(self, node)

    def queue(self, leaf):
        heapq.heappush(self.leaves, (self.rank(leaf), leaf))

    def evict(self):
        if self.capacity is None:
            return
        while len(self.parent) > self.capacity:
            rank, node = heapq.heappop(self.leaves)
            if (node not in self.parent or self.children[node]
                    or rank != self.rank(node)):
                continue  # stale: evicted, no longer a leaf, or used since
            parent, page = self.parent.pop(node)
            del self.children[parent][page]
            del self.children[node]
            del self.stamp[node]
            del self.count[node]  # a node created again starts at 0
            if parent != 0 and not self.children[parent]:
                self.queue(parent)


class NoRefreshOnHit(PrefixCache):
    """Wrong: only the nodes a request creates get its stamp."""

    def touch(self, path):
        for node in path:
            self.stamp.setdefault(node, self.clock)
            self.count.setdefault(node, 1)


def make_cache(cache_class):
    """make_cache(options) for kvprefix.testing.check: a new cache_class."""
    return lambda options: cache_class(options.capacity, options.policy,
                                       options.page_size)
