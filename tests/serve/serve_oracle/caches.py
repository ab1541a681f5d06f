"""The three cache models of SPEC §8 and §9 with §10.4's pins: what an
attempt, a prefill end and a finish do to one worker's cache.

Every cache has the same face, used by worker.py:
  attempt(req)     -> ("start", matched_length, cache_node) | ("refuse",) |
                      ("wait",)                                     (§10.4)
  prefill_end(req), finish(req)                                     (§10.4)
  peek_match(tokens) -> (matched_length, cache_node), changing nothing (§10.6)
  pinned()         -> §10.5's peak_pinned quantity now (§10.6 `pinned`)
  cached_pages()   -> §10.6 `cached_pages`
  evicted_pages()  -> §10.5 `evicted_pages` so far
An empty request (n = 0) never reaches a cache (§10.4; worker.py answers it).
  audit()          -> asserts the model's invariants (tests call it after
                      every step when AUDIT is set)
Everything is brute force on purpose: scans over every node, no heaps.
"""
from .document import pages

START, REFUSE, WAIT = "start", "refuse", "wait"

# When True, worker.py calls audit() after every attempt, prefill end and
# finish (the tests set it; a replay of a long trace leaves it off).
AUDIT = False


def match_pages_limit(n, page_size, match_limit):
    """§9.1: the most pages a match may walk: ⌊n/P⌋, or ⌊(n−1)/P⌋ under
    all-but-last (0 when n = 0)."""
    if match_limit == "all-but-last":
        return (n - 1) // page_size if n > 0 else 0
    return n // page_size


# --------------------------------------------------------------------------
# Model `spec`: §8's trie of pages, with a pin count per node (§10.4).
# --------------------------------------------------------------------------
class SpecNode:
    def __init__(self, node_id, parent, symbol):
        self.id = node_id
        self.parent = parent
        self.symbol = symbol
        self.children = {}   # page -> SpecNode
        self.stamp = 0       # §8 step 3
        self.count = 0       # §8 step 3 (lfu); 0 when created
        self.pins = 0        # §10.4: 0 when created


class SpecCache:
    def __init__(self, settings):
        self.capacity = settings.capacity   # C nodes, None = unbounded
        self.policy = settings.policy
        self.page_size = settings.page_size
        self.match_limit = settings.match_limit
        self.root = SpecNode(0, None, None)
        self.nodes = {}        # id -> node, every node present but the root
        self.next_id = 1       # §8 step 2: IDs never given again
        self.finishes = 0      # §10.4: the stamp k of a finish
        self.evicted = 0

    def _match_path(self, tokens):
        """§8 step 1 cut by §9.1: the nodes walked (root excluded)."""
        limit = match_pages_limit(len(tokens), self.page_size, self.match_limit)
        path = []
        node = self.root
        for page in pages(tokens, self.page_size)[:limit]:
            if page not in node.children:
                break
            node = node.children[page]
            path.append(node)
        return path

    def _answer(self, path):
        return (len(path) * self.page_size, path[-1].id if path else 0)

    def peek_match(self, tokens):
        return self._answer(self._match_path(tokens))

    def attempt(self, req):
        # §10.4 spec attempt: always starts; pin the matched path (root never).
        path = self._match_path(req.tokens)
        for node in path:
            node.pins += 1
        req.cache_state = path
        return (START,) + self._answer(path)

    def prefill_end(self, req):
        pass  # §10.4: nothing

    def finish(self, req):
        # §10.4 spec finish: unpin, then §8 steps 2-4 on the stored sequence.
        for node in req.cache_state:
            node.pins -= 1
        self.finishes += 1
        stamp = self.finishes
        node = self.root
        for page in pages(req.stored, self.page_size):
            if page not in node.children:          # §8 step 2: insert
                child = SpecNode(self.next_id, node, page)
                self.next_id += 1
                node.children[page] = child
                self.nodes[child.id] = child
            node = node.children[page]
            node.stamp = stamp                     # §8 step 3: touch
            node.count += 1
        while self.capacity is not None and len(self.nodes) > self.capacity:
            self._evict_one()                      # §8 step 4

    def _evict_one(self):
        leaves = [n for n in self.nodes.values()
                  if not n.children and n.pins == 0]
        if self.policy == "lru":
            key = lambda n: n.stamp
        elif self.policy == "fifo":
            key = lambda n: n.id
        else:  # lfu: count, then stamp
            key = lambda n: (n.count, n.stamp)
        best = min(leaves, key=key)
        # §8: the choice is unique (stamps of leaves are distinct); check it.
        assert sum(1 for n in leaves if key(n) == key(best)) == 1, \
            "§8: two leaves tie for eviction"
        del best.parent.children[best.symbol]
        del self.nodes[best.id]
        self.evicted += 1

    def pinned(self):
        return sum(1 for n in self.nodes.values() if n.pins > 0)

    def audit(self):
        for node in self.nodes.values():
            assert node.pins >= 0
            # prefix-closed, and a pinned node's parent is pinned (a path)
            assert node.parent is self.root or node.parent.id in self.nodes
            assert node.parent is self.root or node.parent.pins >= node.pins
            assert node.parent.children[node.symbol] is node
        # §10.4: the cache never holds more than C nodes after a finish
        assert self.capacity is None or len(self.nodes) <= self.capacity

    def cached_pages(self):
        return len(self.nodes)

    def evicted_pages(self):
        return self.evicted


# --------------------------------------------------------------------------
# Model `vllm`: §9.2's block pool, with a reference count per block (§10.4).
# --------------------------------------------------------------------------
class Block:
    def __init__(self, block_id):
        self.id = block_id
        self.count = 0       # reference count: above 0 = pinned
        self.chain = None    # the chain it holds (a tuple of pages), or None


class VllmCache:
    def __init__(self, settings):
        self.capacity = settings.capacity   # C blocks, None = unbounded
        self.page_size = settings.page_size
        self.blocks = {}
        self.free = []        # the free queue: head first
        if self.capacity is not None:
            for block_id in range(1, self.capacity + 1):   # 1 ... C ascending
                self.blocks[block_id] = Block(block_id)
                self.free.append(block_id)
        self.next_id = 1      # unbounded: IDs never used before
        self.index = {}       # chain -> block IDs holding it, oldest first
        self.evicted = 0

    def _hits(self, tokens):
        """§9.2 step 1: the hit blocks (always all-but-last)."""
        prompt_pages = pages(tokens, self.page_size)
        hits = []
        for k in range(1, match_pages_limit(len(tokens), self.page_size,
                                            "all-but-last") + 1):
            holders = self.index.get(tuple(prompt_pages[:k]), [])
            if not holders:
                break
            hits.append(holders[0])
        return hits

    def _answer(self, hits):
        return (len(hits) * self.page_size, hits[-1] if hits else 0)

    def peek_match(self, tokens):
        return self._answer(self._hits(tokens))

    def attempt(self, req):
        P = self.page_size
        n, L = req.n, req.stored_length
        N = -(-L // P)         # ⌈L/P⌉
        F = n // P
        hits = self._hits(req.tokens)                 # step 1
        h = len(hits)
        if self.capacity is not None and N > self.capacity:
            return (REFUSE,)                          # step 2
        if self.capacity is not None:                 # room
            taken = (N - h) + sum(1 for b in hits if self.blocks[b].count == 0)
            if taken > len(self.free):
                return (WAIT,)
        for b in hits:                                # step 3: touch
            if self.blocks[b].count == 0:
                self.free.remove(b)
            self.blocks[b].count += 1
        allocated = []
        for _ in range(N - h):                        # step 4: allocate
            if self.capacity is None:
                block = Block(self.next_id)
                self.blocks[block.id] = block
                self.next_id += 1
            else:
                block = self.blocks[self.free.pop(0)]
                if block.chain is not None:           # the only eviction
                    self.index[block.chain].remove(block.id)
                    block.chain = None
                    self.evicted += 1
            block.count = 1
            allocated.append(block.id)
        req.cache_state = hits + allocated            # blocks 1 ... N
        prompt_pages = pages(req.tokens, P)
        for k in range(h + 1, F + 1):                 # step 5: cache
            self._hold(req.cache_state[k - 1], tuple(prompt_pages[:k]))
        return (START,) + self._answer(hits)

    def _hold(self, block_id, chain):
        self.blocks[block_id].chain = chain
        self.index.setdefault(chain, []).append(block_id)

    def prefill_end(self, req):
        pass  # §10.4: nothing

    def finish(self, req):
        P = self.page_size
        F = req.n // P
        stored_pages = pages(req.stored, P)
        # §10.4: under "unique", blocks F+1 ... ⌊L/P⌋ hold the stored chains
        # (under "none" L = n and the range is empty).
        for k in range(F + 1, req.stored_length // P + 1):
            self._hold(req.cache_state[k - 1], tuple(stored_pages[:k]))
        for block_id in reversed(req.cache_state):    # free: k = N ... 1
            block = self.blocks[block_id]
            block.count -= 1
            if block.count == 0:
                self.free.append(block_id)

    def pinned(self):
        return sum(1 for b in self.blocks.values() if b.count > 0)

    def audit(self):
        for block in self.blocks.values():
            assert block.count >= 0
            if block.chain is not None:
                assert self.index[block.chain].count(block.id) == 1
        for chain, holders in self.index.items():
            assert all(self.blocks[b].chain == chain for b in holders)
        # the free queue is exactly the blocks with count 0, each once
        assert sorted(self.free) == sorted(
            b.id for b in self.blocks.values() if b.count == 0)

    def cached_pages(self):
        return sum(1 for b in self.blocks.values() if b.chain is not None)

    def evicted_pages(self):
        return self.evicted


# --------------------------------------------------------------------------
# Model `sglang`: §9.3's radix tree, a lock count per node under both
# triggers and slots held by running requests (§10.4).
# --------------------------------------------------------------------------
class RadixNode:
    def __init__(self, node_id, parent, edge, time):
        self.id = node_id
        self.parent = parent
        self.edge = edge         # a tuple of pages (non-empty but for the root)
        self.children = {}      # first page -> RadixNode
        self.a = time           # access time
        self.c = time           # creation time
        self.lock = 0


class SglangCache:
    def __init__(self, settings):
        self.capacity = settings.capacity   # C pages, C·P tokens
        self.page_size = settings.page_size
        self.policy = settings.policy       # lru: a, fifo: c
        self.match_limit = settings.match_limit
        self.trigger = settings.trigger
        self.clock = 0
        self.next_id = 1
        self.root = RadixNode(0, None, (), 0)
        self.nodes = []          # every node but the root, present
        self.held = 0            # slots held by running requests outside the tree
        self.evicted_tokens = 0

    # §9.3's clock: "tick" is the next time.
    def _tick(self):
        self.clock += 1
        return self.clock

    def _new_node(self, parent, edge):
        node = RadixNode(self.next_id, parent, edge, 0)
        self.next_id += 1
        node.a = node.c = self._tick()
        parent.children[edge[0]] = node
        self.nodes.append(node)
        return node

    def _size(self):
        """The tree's size: the total length of its edges, in tokens."""
        return sum(len(n.edge) for n in self.nodes) * self.page_size

    def _split(self, child, j):
        """§9.3 split(child, j): a new node takes the first j pages and the
        child's place; it copies the child's lock count (§10.4)."""
        parent = child.parent
        new = self._new_node(parent, child.edge[:j])   # replaces child under parent
        new.lock = child.lock
        child.edge = child.edge[j:]
        child.parent = new
        new.children[child.edge[0]] = child
        return new

    @staticmethod
    def _common(edge, key):
        j = 0
        while j < len(edge) and j < len(key) and edge[j] == key[j]:
            j += 1
        return j

    def _match(self, key):
        """§9.3 match(key), key already cut to pages: (tokens walked, node)."""
        if not key:
            return 0, self.root
        t = self._tick()
        self.root.a = t
        node, walked = self.root, 0
        while key and key[0] in node.children:
            child = node.children[key[0]]
            child.a = t
            j = self._common(child.edge, key)
            if j < len(child.edge):
                node = self._split(child, j)
                walked += j
                break
            node = child
            key = key[j:]
            walked += j
        return walked * self.page_size, node

    def _insert(self, key):
        """§9.3 insert(key), key already cut to pages."""
        t = self._tick()
        self.root.a = t
        node = self.root
        while key:
            if key[0] not in node.children:
                self._new_node(node, tuple(key))   # the rest: one new leaf
                return
            child = node.children[key[0]]
            child.a = t
            j = self._common(child.edge, key)
            if j < len(child.edge):
                # diverges from the edge, or ends inside it: split; the
                # tail (child) keeps a = t, the new node its fresh times.
                node = self._split(child, j)
            else:
                node = child
            key = key[j:]

    def _evict(self, demand):
        """§9.3 evict(D): unlocked leaves, smallest priority first."""
        freed = 0
        while freed < demand:
            candidates = [n for n in self.nodes
                          if not n.children and n.lock == 0]
            if not candidates:
                break
            victim = min(candidates,
                         key=(lambda n: n.a) if self.policy == "lru"
                         else (lambda n: n.c))
            del victim.parent.children[victim.edge[0]]
            self.nodes.remove(victim)
            freed += len(victim.edge) * self.page_size
        self.evicted_tokens += freed

    def _lock(self, node, delta):
        """Add delta to the lock count of node and its ancestors, the root
        excepted."""
        while node is not self.root:
            node.lock += delta
            node = node.parent

    def _match_key(self, tokens):
        """§9.3: the request, or its first n − 1 tokens (all-but-last)."""
        if self.match_limit == "all-but-last":
            tokens = tokens[:len(tokens) - 1]
        return pages(tokens, self.page_size)

    def _locked_tokens(self):
        return sum(len(n.edge) for n in self.nodes if n.lock > 0) * self.page_size

    def _evictable(self):
        """§10.4: tokens of every node (root aside) with lock count 0."""
        return sum(len(n.edge) for n in self.nodes if n.lock == 0) * self.page_size

    def peek_match(self, tokens):
        """§10.6: the match, changing nothing; where it would split,
        cache_node is the next unused ID."""
        key = self._match_key(tokens)
        node, walked = self.root, 0
        while key and key[0] in node.children:
            child = node.children[key[0]]
            j = self._common(child.edge, key)
            if j < len(child.edge):
                return (walked + j) * self.page_size, self.next_id
            node, key, walked = child, key[j:], walked + j
        return walked * self.page_size, node.id

    def attempt(self, req):
        m, x = self._match(self._match_key(req.tokens))   # a tick, times, split
        self._lock(x, +1)
        if self.trigger == "after-insert":
            req.cache_state = x              # §10.4: always starts
            req.held = 0
            return (START, m, x.id)
        L = req.stored_length
        need = L - m
        if self.capacity is not None:
            CP = self.capacity * self.page_size
            if L > CP:                       # refuse as §9.3 does
                self._evict(need)
                self._lock(x, -1)
                return (REFUSE,)
            free = CP - self._size() - self.held
            if need > free + self._evictable():
                self._lock(x, -1)            # wait; the match's effects stay
                return (WAIT,)
            if free < need:
                self._evict(need)            # §9.3: the whole need
        req.cache_state = x
        req.held = need
        req.matched = m
        self.held += need
        return (START, m, x.id)

    def prefill_end(self, req):
        if self.trigger == "after-insert":
            return                           # nothing
        K = pages(req.tokens, self.page_size)
        self._insert(K)
        leave = len(K) * self.page_size - req.matched
        req.held -= leave
        self.held -= leave
        _, reached = self._match(K)          # a tick
        self._lock(reached, +1)
        self._lock(req.cache_state, -1)
        req.cache_state = reached

    def finish(self, req):
        stored = pages(req.stored, self.page_size)
        if self.trigger == "after-insert":
            self._lock(req.cache_state, -1)
            self._insert(stored)
            if self.capacity is not None:
                CP = self.capacity * self.page_size
                if self._size() > CP:
                    self._evict(self._size() - CP)
            return
        self._insert(stored)
        self.held -= req.held
        req.held = 0
        self._lock(req.cache_state, -1)

    def pinned(self):
        return self._locked_tokens() + self.held

    def audit(self):
        assert self.held >= 0
        for node in self.nodes:
            assert node.lock >= 0 and node.edge
            assert node.parent.children[node.edge[0]] is node
            assert node.parent is self.root or node.parent in self.nodes
            # a lock covers the node's ancestors: a parent has at least it
            assert node.parent is self.root or node.parent.lock >= node.lock
        if self.trigger == "on-allocate" and self.capacity is not None:
            # §10.4: slots are C·P = tree + held + free, free >= 0
            assert self._size() + self.held <= self.capacity * self.page_size

    def cached_pages(self):
        return self._size() // self.page_size   # edges are whole pages

    def evicted_pages(self):
        return self.evicted_tokens // self.page_size


def make_cache(settings):
    return {"spec": SpecCache, "vllm": VllmCache,
            "sglang": SglangCache}[settings.model](settings)
