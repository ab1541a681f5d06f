"""The twelve routers of SPEC §11.5 with §11.3's stream, key hash and ring.

A router is an object with choose(k, tokens, arrival_us, views) -> worker
index, where k is the arrival index, `views` the §11.2 views (worker.View)
of every worker at the routing instant. It keeps its own state (stream,
tree, trie) and never changes a worker. All scores are Fractions (§11.3:
no floating point decides a route).
"""
import bisect
from fractions import Fraction

from .document import exact_decimal

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(x):
    """§7's splitmix64 (64-bit unsigned, wrapping)."""
    z = (x + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class Stream:
    """§11.3: draw i is splitmix64((S + i·0x9E3779B97F4A7C15) mod 2^64)."""

    def __init__(self, seed):
        self.seed = seed
        self.i = 0

    def draw(self):
        value = splitmix64((self.seed + self.i * GOLDEN) & MASK)
        self.i += 1
        return value

    def below(self, k):
        assert k >= 1
        return self.draw() % k   # one draw, also when k = 1


def key_hash(tokens):
    """§11.3: h_0 = 0, h_i = splitmix64(h_{i−1} XOR s_i), tokens as 64-bit
    two's complement."""
    h = 0
    for s in tokens:
        h = splitmix64(h ^ (s & MASK))
    return h


class Ring:
    """§11.3: point (w, v) at splitmix64(w·2^32 + v), sorted by (position,
    w, v); the owner of a key is the worker of the first point at or after
    key_hash(key), or of the first point."""

    def __init__(self, workers, points_per_worker):
        self.points = sorted((splitmix64((w << 32) + v), w, v)
                             for w in range(workers)
                             for v in range(points_per_worker))
        self.positions = [p[0] for p in self.points]

    def owner(self, key):
        i = bisect.bisect_left(self.positions, key_hash(key))
        return self.points[i if i < len(self.points) else 0][1]


def first_smallest(values):
    """§11.3 "the first": the lowest index among the smallest values."""
    best = min(values)
    return values.index(best)


def m_pages(view, tokens, page_size):
    """§11.2: m_w = peek_match_w(x) / P (a rational)."""
    return Fraction(view.peek_match(tokens)[0], page_size)


# ---- the policies, §11.5 --------------------------------------------------

class RoundRobin:
    def choose(self, k, tokens, arrival, views):
        return k % len(views)


class Random:
    def __init__(self, seed):
        self.stream = Stream(seed)

    def choose(self, k, tokens, arrival, views):
        return self.stream.below(len(views))   # also when N = 1


class LeastLoaded:
    def choose(self, k, tokens, arrival, views):
        return first_smallest([v.load for v in views])


class PowerOfTwo:
    def __init__(self, seed):
        self.stream = Stream(seed)

    def choose(self, k, tokens, arrival, views):
        N = len(views)
        if N == 1:
            return 0                           # no draw
        i1 = self.stream.below(N)
        i2 = (i1 + 1 + self.stream.below(N - 1)) % N
        return i1 if views[i1].load <= views[i2].load else i2


class ConsistentHash:
    def __init__(self, workers, hash_prefix, ring_points):
        self.K = hash_prefix
        self.ring = Ring(workers, ring_points)

    def choose(self, k, tokens, arrival, views):
        return self.ring.owner(tokens[:self.K])  # first K tokens (or all)


class PrefixHash:
    def __init__(self, workers, hash_prefix, ring_points, load_factor):
        self.K = hash_prefix
        self.ring = Ring(workers, ring_points)
        self.L = load_factor

    def choose(self, k, tokens, arrival, views):
        N = len(views)
        w0 = self.ring.owner(tokens[:self.K])
        T = sum(v.load for v in views)

        def ok(w):
            return T == 0 or views[w].load * N <= (T + 1) * self.L

        if ok(w0):
            return w0
        acceptable = [w for w in range(N) if ok(w)]
        if acceptable:
            return min(acceptable, key=lambda w: (views[w].load, w))
        return w0


class Precise:
    def __init__(self, page_size):
        self.P = page_size

    def choose(self, k, tokens, arrival, views):
        m = [m_pages(v, tokens, self.P) for v in views]
        # the largest m_w; ties: the smallest load, then the first
        return min(range(len(views)), key=lambda w: (-m[w], views[w].load, w))


class Llmd:
    def __init__(self, seed, page_size, prefix_weight, queue_weight):
        self.stream = Stream(seed)
        self.P = page_size
        self.wp = prefix_weight
        self.wq = queue_weight

    def choose(self, k, tokens, arrival, views):
        N = len(views)
        m = [m_pages(v, tokens, self.P) for v in views]
        present = [w for w in range(N) if m[w] > 0]
        prefix = [Fraction(0)] * N                 # step 1
        if present:
            lo = min(m[w] for w in present)
            hi = max(m[w] for w in present)
            for w in present:
                prefix[w] = Fraction(1) if hi == lo else (m[w] - lo) / (hi - lo)
        loads = [v.load for v in views]            # step 2
        lo, hi = min(loads), max(loads)
        queue = [Fraction(1) if hi == lo else Fraction(hi - loads[w], hi - lo)
                 for w in range(N)]
        score = [self.wp * prefix[w] + self.wq * queue[w] for w in range(N)]
        best = max(score)                          # step 3
        tied = [w for w in range(N) if score[w] == best]
        if len(tied) == 1:
            return tied[0]                         # no draw
        return tied[self.stream.below(len(tied))]


class Dynamo:
    def __init__(self, seed, page_size, model, prefill_load_scale,
                 overlap_score_credit, decode_active_request_weight, ties):
        self.stream = Stream(seed)
        self.P = page_size
        self.model = model
        self.sigma = prefill_load_scale
        self.c = overlap_score_credit
        self.rho = decode_active_request_weight
        self.ties = ties

    def choose(self, k, tokens, arrival, views):
        P, n = self.P, len(tokens)
        costs = []
        for v in views:                            # step 1
            m = m_pages(v, tokens, P)
            raw = Fraction(v.unprefilled_tokens + n, P)
            prefill = self.sigma * max(raw - self.c * m, 0)
            # §11.2 pinned_pages: pinned / P for sglang (tokens), else pinned
            pinned_pages = (Fraction(v.pinned, P) if self.model == "sglang"
                            else Fraction(v.pinned))
            decode = pinned_pages + (-(-n // P)) - m
            costs.append(prefill + decode + self.rho * v.load)
        if self.ties == "first":                   # step 2
            return first_smallest(costs)
        best, count = 0, 1                         # reservoir, nothing drawn yet
        for w in range(1, len(views)):
            if costs[w] < costs[best]:
                best, count = w, 1
            elif costs[w] == costs[best]:
                count += 1
                if self.stream.below(count) == 0:
                    best = w
        return best


class TreeNode:
    """A node of sglang-cache-aware's approximate tree: one token."""

    def __init__(self, parent, token):
        self.parent = parent
        self.token = token
        self.children = {}
        self.stamps = {}          # worker -> stamp, for each owner


class SglangCacheAware:
    def __init__(self, workers, cache_threshold, balance_abs_threshold,
                 balance_rel_threshold, max_tree_size, eviction_interval_us,
                 fallback):
        self.N = workers
        self.root = TreeNode(None, None)
        self.root.stamps = {w: 0 for w in range(workers)}  # owns the root
        self.size = [0] * workers
        self.clock = 0
        self.cache_threshold = cache_threshold
        self.abs = balance_abs_threshold
        self.rel = balance_rel_threshold
        self.max_tree_size = max_tree_size
        self.interval = eviction_interval_us
        self.next_eviction = eviction_interval_us
        self.fallback = fallback

    def _tick(self):
        self.clock += 1
        return self.clock

    def _nodes(self):
        stack, out = [self.root], []
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children.values())
        return out

    def _evict(self, arrival):
        """Step 1."""
        if self.interval == 0 or arrival < self.next_eviction:
            return
        for w in range(self.N):
            while self.size[w] > self.max_tree_size:
                leaves = [n for n in self._nodes()
                          if n is not self.root and w in n.stamps
                          and not any(w in c.stamps for c in n.children.values())]
                victim = min(leaves, key=lambda n: n.stamps[w])
                # §11.5: stamps of w's leaves are distinct; check it.
                assert [n.stamps[w] for n in leaves].count(
                    victim.stamps[w]) == 1, "two leaves-for-w share a stamp"
                del victim.stamps[w]
                self.size[w] -= 1
                if not victim.stamps:             # nobody owns it: it leaves
                    del victim.parent.children[victim.token]
        self.next_eviction = (arrival // self.interval + 1) * self.interval

    def _insert(self, tokens, w):
        """Step 5."""
        t = self._tick()
        node = self.root
        node.stamps[w] = t
        for token in tokens:
            if token not in node.children:
                node.children[token] = TreeNode(node, token)
            node = node.children[token]
            if w not in node.stamps:
                self.size[w] += 1
            node.stamps[w] = t

    def choose(self, k, tokens, arrival, views):
        self._evict(arrival)                       # step 1
        loads = [v.load for v in views]            # step 2
        lo, hi = min(loads), max(loads)
        if hi - lo > self.abs and hi > self.rel * lo:
            chosen = first_smallest(loads)
            self._insert(tokens, chosen)
            return chosen
        t = self._tick()                           # step 3
        node, M = self.root, 0
        for token in tokens:
            if token not in node.children:
                break
            node = node.children[token]
            M += 1
        tenant = min(node.stamps)                  # the first owner of z
        while node is not None:
            node.stamps[tenant] = t
            node = node.parent
        n = len(tokens)                            # step 4
        if n > 0 and Fraction(M, n) > self.cache_threshold:
            chosen = tenant
        elif self.fallback == "smallest-tree":
            chosen = first_smallest(self.size)
        else:
            chosen = first_smallest(loads)
        self._insert(tokens, chosen)               # step 5
        return chosen


class ChunkNode:
    def __init__(self):
        self.children = {}        # chunk (tuple) -> ChunkNode
        self.workers = set()


class VllmPrefix:
    def __init__(self, seed, chunk, min_match):
        self.stream = Stream(seed)
        self.C = chunk
        self.min_match = min_match
        self.root = ChunkNode()

    def _chunks(self, tokens):
        return [tuple(tokens[i:i + self.C])
                for i in range(0, len(tokens), self.C)]

    def choose(self, k, tokens, arrival, views):
        N = len(views)
        candidates, M, node = set(range(N)), 0, self.root   # step 1
        for chunk in self._chunks(tokens):
            if chunk not in node.children:
                break
            node = node.children[chunk]
            both = candidates & node.workers
            if not both:
                break
            M += self.C                    # also for a shorter last chunk
            candidates = both
        if M < self.min_match:                               # step 2
            chosen = first_smallest([v.load for v in views])
        else:
            ordered = sorted(candidates)
            chosen = ordered[self.stream.below(len(ordered))]
        node = self.root                                     # step 3
        node.workers.add(chosen)
        for chunk in self._chunks(tokens):
            node = node.children.setdefault(chunk, ChunkNode())
            node.workers.add(chosen)
        return chosen


class VllmKvaware:
    def __init__(self, kv_aware_threshold):
        self.T = kv_aware_threshold

    def choose(self, k, tokens, arrival, views):
        matches = [v.peek_match(tokens)[0] for v in views]
        best = max(matches)
        w_star = matches.index(best)
        if best < len(tokens) - self.T:
            return first_smallest([v.load for v in views])
        return w_star


# ---- §11.1: the router object of a document --------------------------------

# Each policy's parameters with their defaults (§11.5); "unit" defaults
# depend on the token unit (§11.1).
PARAMETERS = {
    "round-robin": {},
    "random": {},
    "least-loaded": {},
    "power-of-two": {},
    "consistent-hash": {"hash_prefix": "unit", "ring_points": 150},
    "prefix-hash": {"hash_prefix": "unit", "ring_points": 150,
                    "load_factor": Fraction(5, 4)},
    "precise": {},
    "llmd": {"prefix_weight": Fraction(2), "queue_weight": Fraction(1)},
    "dynamo": {"prefill_load_scale": Fraction(1),
               "overlap_score_credit": Fraction(1),
               "decode_active_request_weight": Fraction(0),
               "ties": "random"},
    "sglang-cache-aware": {"cache_threshold": Fraction(3, 10),
                           "balance_abs_threshold": 64,
                           "balance_rel_threshold": Fraction(3, 2),
                           "max_tree_size": 2 ** 26,
                           "eviction_interval_us": 120000000,
                           "fallback": "smallest-tree"},
    "vllm-prefix": {"chunk": "unit", "min_match": 0},
    "vllm-kvaware": {"kv_aware_threshold": "unit"},
}
DECIMALS = {"load_factor", "prefix_weight", "queue_weight",
            "prefill_load_scale", "overlap_score_credit",
            "decode_active_request_weight", "cache_threshold",
            "balance_rel_threshold"}
# §11.1: hash_prefix, chunk, kv_aware_threshold for a token (documents,
# token mode) and for a 512-token block (Mooncake block mode).
UNIT_DEFAULTS = {"token": {"hash_prefix": 256, "chunk": 32,
                           "kv_aware_threshold": 2000},
                 "block": {"hash_prefix": 1, "chunk": 1,
                           "kv_aware_threshold": 4}}


def make_router(router, workers, settings, unit="token"):
    """The router of a document's `router` object (§11.1)."""
    name = router["name"]
    params = {}
    for member, default in PARAMETERS[name].items():
        value = router.get(member, default)
        if value == "unit" and member not in router:
            value = UNIT_DEFAULTS[unit][member]
        if member in DECIMALS:
            value = exact_decimal(value)
        params[member] = value
    for member in router:
        if member not in ("name", "seed") and member not in params:
            raise ValueError(f"$.router.{member}: not a parameter of {name}")
    seed = router.get("seed", 0)
    P = settings.page_size
    if name == "round-robin":
        return RoundRobin()
    if name == "random":
        return Random(seed)
    if name == "least-loaded":
        return LeastLoaded()
    if name == "power-of-two":
        return PowerOfTwo(seed)
    if name == "consistent-hash":
        return ConsistentHash(workers, **params)
    if name == "prefix-hash":
        return PrefixHash(workers, **params)
    if name == "precise":
        return Precise(P)
    if name == "llmd":
        return Llmd(seed, P, **params)
    if name == "dynamo":
        return Dynamo(seed, P, settings.model, **params)
    if name == "sglang-cache-aware":
        return SglangCacheAware(workers, **params)
    if name == "vllm-prefix":
        return VllmPrefix(seed, **params)
    if name == "vllm-kvaware":
        return VllmKvaware(**params)
    raise ValueError(f"$.router.name: unknown policy {name!r}")
