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

LruPageOneCache is a cache that implements less, the policy lru and page
size 1 only: it refuses any other options by name (Unsupported), which
kvprefix.testing.check skips and counts (make_cache turns it into
kvprefix.testing.Refused), and which the line-protocol program below
answers with verify's refusal answer {"refused": ...}.

Run as a program it is a line-protocol cache for `kvprefix verify --cmd
... --protocol lines --format requests`: one SPEC section 8 replay document
a line on standard input, one SPEC section 5 answer line each:

    python3 prefix_cache.py --lines             # PrefixCache
    python3 prefix_cache.py --lines --lru-page-1  # LruPageOneCache

NoRefreshOnHit is PrefixCache with the commonest LRU bug: a node is stamped
when it is created and never again, so a hit does not make the matched
prefix recent (nor, under LFU, count it) and LRU evicts the least recently
*inserted* leaf. It answers
every batch input, every unbounded replay and every FIFO replay right;
kvprefix.testing finds a replay where it does not and shrinks it to a few
short requests (test_prefix_cache.py).
"""
import heapq
import json
import sys


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


class Unsupported(ValueError):
    """Options a cache does not implement (it names them)."""


class LruPageOneCache(PrefixCache):
    """PrefixCache implementing the policy lru and page size 1 only."""

    def __init__(self, capacity=None, policy="lru", page_size=1):
        if policy != "lru" or page_size != 1:
            raise Unsupported(f"LruPageOneCache implements the policy lru "
                              f"and page size 1 only, not {policy} with page "
                              f"size {page_size}")
        super().__init__(capacity, policy, page_size)


class NoRefreshOnHit(PrefixCache):
    """Wrong: only the nodes a request creates get its stamp."""

    def touch(self, path):
        for node in path:
            self.stamp.setdefault(node, self.clock)
            self.count.setdefault(node, 1)


def make_cache(cache_class):
    """make_cache(options) for kvprefix.testing.check: a new cache_class;
    options it does not implement (a model, or Unsupported) are refused
    with kvprefix.testing.Refused, which check() skips and counts."""
    def make(options):
        import kvprefix.testing  # the checker's, not the cache's, import
        try:
            return new_cache(cache_class, options.capacity, options.policy,
                             options.page_size, options.model,
                             options.match_limit)
        except Unsupported as refusal:
            raise kvprefix.testing.Refused(str(refusal)) from None
    return make


def new_cache(cache_class, capacity, policy, page_size, model="spec",
              match_limit="all"):
    """A new cache_class; Unsupported for a model it does not follow."""
    if model != "spec" or match_limit != "all":
        raise Unsupported(f"{cache_class.__name__} implements model spec "
                          f"with match limit all only (SPEC section 8)")
    return cache_class(capacity, policy, page_size)


def answer(document, cache_class):
    """The SPEC section 5 answer to a replay document (a dict), or verify's
    refusal answer for options the cache does not implement."""
    try:
        cache = new_cache(cache_class, document.get("capacity"),
                          document.get("policy", "lru"),
                          document.get("page_size", 1),
                          document.get("model", "spec"),
                          document.get("match_limit", "all"))
    except Unsupported as refusal:
        return {"refused": str(refusal)}
    # SPEC section 8.1: with namespaces, every request's first token is
    # keyed with its namespace, so equal prompts of two namespaces (LoRA
    # adapters, cache salts) share nothing.
    namespaces = document.get("namespaces")
    matches = []
    for i, request in enumerate(document["requests"]):
        key = ([(namespaces[i], request[0])] + request[1:]
               if namespaces and request else request)
        length, node = cache.access(key)
        matches.append({"matched_length": length, "cache_node": node,
                        "uncached_suffix": request[length:]})
    return {"matches": matches}


def main(arguments):
    if arguments[:1] != ["--lines"] or arguments[1:] not in ([], ["--lru-page-1"]):
        sys.exit("usage: prefix_cache.py --lines [--lru-page-1]")
    cache_class = LruPageOneCache if arguments[1:] else PrefixCache
    for line in sys.stdin:
        print(json.dumps(answer(json.loads(line), cache_class),
                         separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
