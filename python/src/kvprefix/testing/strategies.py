"""Hypothesis strategies for token lists and kvprefix documents.

Importing this module imports hypothesis (Debian's python3-hypothesis);
kvprefix and kvprefix.testing do not. Use them with
kvprefix.testing.assert_matches_reference under pytest; Hypothesis then
shrinks a failing document itself:

    from hypothesis import given
    from kvprefix.testing import CacheOptions, assert_matches_reference
    from kvprefix.testing.strategies import replay_documents

    @given(replay_documents(policy="lru"))
    def test_my_cache(document):
        options = CacheOptions.from_document(document)
        cache = MyCache(options.capacity, options.policy, options.page_size)
        assert_matches_reference(cache, document, compare="lengths")

Random independent token lists rarely share a prefix, so the sequences here
are drawn as checking/recipe.h draws kvprefix verify's: each is fresh or made
from an earlier one (a duplicate, a prefix, an extension, a copy with one
token changed), over a small alphabet, so that matches end inside cached
sequences, at branch points and on evicted paths. They shrink toward few
short sequences over the token 0.

replay_documents(models=strategies.MODELS) draws documents of SPEC section
9's cache models too (vLLM's block pool, SGLang's radix cache), each with
options SPEC section 9.4 accepts; a cache that implements one model is
tested with models=("vllm",).

serve_documents() draws SPEC section 10 documents: a replay document of any
model with arrivals, output lengths, a number of requests running at once
and service times, which kvprefix.replay (or kvprefix.testing.serve_answer)
replays on one worker:

    from hypothesis import given
    from kvprefix.testing import serve_answer
    from kvprefix.testing.strategies import serve_documents

    @given(serve_documents())
    def test_nothing_runs_before_it_arrives(document):
        for request in serve_answer(document)["requests"]:
            assert request["arrival_us"] <= request["start_us"]
"""
from itertools import accumulate
from typing import NamedTuple, Optional

from hypothesis import strategies as st

from kvprefix import _kvprefix

__all__ = ["DISTINCT_PERCENT", "MODELS", "OUTPUTS", "SERVE_TOKENS", "TOKENS", "batch_documents",
           "replay_documents", "sequences", "serve_documents", "token_lists"]

# The default token alphabet: small values (siblings collide), and the
# int32 limits and -1, where packed or hashed keys go wrong. Shrinks to 0.
TOKENS = st.sampled_from((0, 1, 2, 3, -1, 2 ** 31 - 1, -2 ** 31))

# How often each derivation is drawn, as checking/recipe.h weighs a cache
# workload's: requests come back to earlier ones (a system prompt or a
# conversation seen again), so that hits touch nodes eviction must rank.
_DERIVATIONS = (("fresh",) * 2 + ("duplicate",) * 6 + ("prefix",) * 4 +
                ("extension",) * 3 + ("near-copy",) * 2)

# The default capacity of replay_documents: drawn in percent of the
# requests' distinct prefixes D (in pages), as `kvprefix verify` draws it,
# so that most documents evict and some keep everything.
DISTINCT_PERCENT = "distinct-percent"


class _Combination(NamedTuple):
    model: str
    match_limit: str
    policy: str
    trigger: Optional[str]  # None: the document names none (not sglang)
    members: dict  # the document's "policy", "model", "match_limit", "trigger"


# Every combination of SPEC section 9 options section 9.4 accepts, from
# kvprefix/cache.h's lists and rules (no second copy here), in their order:
# each model's first has policy lru, match limit "all" where allowed.
_COMBINATIONS = tuple(_Combination(*each) for each in _kvprefix._testing.model_combinations())

# The cache models (SPEC section 9), "spec" (section 8's trie) first:
# replay_documents' models=.
MODELS = tuple(dict.fromkeys(each.model for each in _COMBINATIONS))


def _strategy(value):
    """A strategy as given, or one that always draws the value given."""
    return value if isinstance(value, st.SearchStrategy) else st.just(value)


def token_lists(*, tokens=None, min_size=0, max_size=8):
    """Lists of tokens (ints of the int32 range) drawn from `tokens` (a
    strategy; default TOKENS), of min_size to max_size tokens."""
    return st.lists(TOKENS if tokens is None else tokens, min_size=min_size,
                    max_size=max_size)


def _build(recipes, pool=()):
    """The sequences the recipes make, each from `pool` and those before it."""
    earlier = [list(sequence) for sequence in pool]
    built = []
    for kind, source, position, fresh in recipes:
        if not earlier or kind == "fresh":
            sequence = list(fresh)
        else:
            base = earlier[source % len(earlier)]
            if kind == "duplicate":
                sequence = list(base)
            elif kind == "prefix":
                sequence = base[:position % (len(base) + 1)]
            elif kind == "extension":
                sequence = base + list(fresh)
            else:  # near-copy: one token changed
                sequence = list(base)
                if sequence:
                    sequence[position % len(sequence)] = fresh[0]
        earlier.append(sequence)
        built.append(sequence)
    return built


def _recipes(tokens, min_size, max_size, max_fresh):
    recipe = st.tuples(st.sampled_from(_DERIVATIONS), st.integers(0, 1023),
                       st.integers(0, 63),
                       token_lists(tokens=tokens, min_size=1, max_size=max_fresh))
    return st.lists(recipe, min_size=min_size, max_size=max_size)


def sequences(*, tokens=None, min_size=0, max_size=12, max_fresh=4):
    """Lists of min_size to max_size token lists, each fresh or derived from
    an earlier one (see the module's doc); up to max_fresh fresh tokens each."""
    return _recipes(tokens, min_size, max_size, max_fresh).map(_build)


# The namespaces (SPEC section 8.1) a document's sequences draw from when
# asked to (namespaces=NAMESPACES): the default "" and two others, as
# `kvprefix verify`'s generated documents have them.
NAMESPACES = ("", "lora-a", "salt-b")


def _check_namespaces(namespaces):
    """None, or a non-empty list or tuple of str; else ValueError."""
    if namespaces is None:
        return None
    if (isinstance(namespaces, str) or not isinstance(namespaces, (list, tuple))
            or not namespaces or not all(isinstance(n, str) for n in namespaces)):
        raise ValueError(f"namespaces: expected None or a non-empty list of str, "
                         f"got {namespaces!r}")
    return tuple(namespaces)


def _draw_namespaces(draw, namespaces, count):
    """One of `namespaces` for each of `count` sequences (shrinking toward
    the first)."""
    return draw(st.lists(st.sampled_from(namespaces), min_size=count,
                         max_size=count))


def batch_documents(*, tokens=None, max_cached=10, max_requests=10,
                    max_fresh=4, namespaces=None):
    """SPEC section 4 documents {"cached_sequences": [...], "requests":
    [...]}: up to max_cached cached sequences (derived from each other) and
    1 to max_requests requests (derived from the cached sequences and each
    other). namespaces: None (the default) for none, or a non-empty list of
    str (e.g. NAMESPACES) that each sequence's namespace is drawn from
    (SPEC section 8.1: members "cached_namespaces" and "namespaces"; equal
    sequences in two namespaces share nothing). Raises ValueError (when
    called) for another value of namespaces."""
    return _batch_documents(tokens, max_cached, max_requests, max_fresh,
                            _check_namespaces(namespaces))


@st.composite
def _batch_documents(draw, tokens, max_cached, max_requests, max_fresh,
                     namespaces):
    cached = draw(sequences(tokens=tokens, max_size=max_cached,
                            max_fresh=max_fresh))
    recipes = draw(_recipes(tokens, 1, max_requests, max_fresh))
    document = {"cached_sequences": cached, "requests": _build(recipes, cached)}
    if namespaces is not None:
        document["cached_namespaces"] = _draw_namespaces(draw, namespaces, len(cached))
        document["namespaces"] = _draw_namespaces(draw, namespaces,
                                                  len(document["requests"]))
    return document


def replay_documents(*, capacity=DISTINCT_PERCENT,
                     policy=st.sampled_from(_kvprefix.policies()),
                     page_size=st.sampled_from((1, 2, 3)), models=None, tokens=None,
                     min_requests=1, max_requests=20, max_fresh=3, namespaces=None):
    """SPEC section 8 replay documents {"requests": [...], "capacity": C,
    "policy": one of kvprefix.policies(), "page_size": P} ("capacity" left
    out when None: unbounded). capacity, policy and page_size are each a
    value or a strategy; by default any policy, pages of 1 to 3 tokens, and a
    capacity of DISTINCT_PERCENT: 0 to 99 % of the requests' distinct
    prefixes D in pages (they must evict) four times in five, else None
    (unbounded). The min_requests to max_requests requests are a
    conversation: each fresh (1 to max_fresh tokens) or derived from earlier
    ones. Hypothesis draws short lists most of the time; a bug that takes
    several requests to show (an eviction order) is found sooner with a
    larger min_requests.

    models: None (the default) for SPEC section 8 documents as above, with
    no model members; else a non-empty list or tuple of names of MODELS
    ("spec", "vllm", "sglang"), and each document is of one of them (SPEC
    section 9), drawn evenly, with a match limit and, for sglang, a trigger
    drawn among those section 9.4 accepts with its policy; a drawn policy the
    model does not have becomes lru, as `kvprefix verify --model` makes it
    (vllm has lru only, sglang lru and fifo). The document then names
    "model", "match_limit" and "trigger" as kvprefix writes them, where they
    differ from the defaults ("spec"; "all", but "all-but-last" for vllm;
    "after-insert"): CacheOptions.from_document reads them back. Shrinks
    toward the first model listed, lru, match limit "all" and trigger
    "after-insert".

    namespaces: None (the default) for none, or a non-empty list of str
    (e.g. NAMESPACES) that each request's namespace is drawn from (SPEC
    section 8.1: member "namespaces"). Raises ValueError (when called) for a
    name not in MODELS or an empty list, and as batch_documents for
    namespaces."""
    if models is not None:
        if isinstance(models, str) or not models or any(m not in MODELS for m in models):
            raise ValueError(f"models: expected None or a non-empty list of "
                             f"{', '.join(map(repr, MODELS))}, got {models!r}")
        models = tuple(models)
    return _replay_documents(capacity, policy, page_size, models, tokens, min_requests,
                             max_requests, max_fresh, _check_namespaces(namespaces))


@st.composite
def _replay_documents(draw, capacity, policy, page_size, models, tokens, min_requests,
                      max_requests, max_fresh, namespaces=None):
    document = {"requests": draw(sequences(tokens=tokens, min_size=min_requests,
                                           max_size=max_requests,
                                           max_fresh=max_fresh))}
    drawn_policy = draw(_strategy(policy))
    drawn_page_size = draw(_strategy(page_size))
    if isinstance(capacity, str) and capacity == DISTINCT_PERCENT:
        # 100 to 124 stand for unbounded: one document in five.
        percent = draw(st.integers(0, 124))
        drawn_capacity = None if percent >= 100 else (
            _distinct_prefixes(document["requests"], drawn_page_size) * percent
            // 100)
    else:
        drawn_capacity = draw(_strategy(capacity))
    if drawn_capacity is not None:
        document["capacity"] = drawn_capacity
    document["policy"] = drawn_policy
    document["page_size"] = drawn_page_size
    if models is not None:
        document.update(draw(_model_members(models, drawn_policy)))
    if namespaces is not None:
        document["namespaces"] = _draw_namespaces(draw, namespaces,
                                                  len(document["requests"]))
    return document


# SPEC section 10.1's "output" values, the default first.
OUTPUTS = tuple(_kvprefix._testing.output_modes())

# serve_documents' default alphabet: TOKENS with 2^30 for 2^31 - 1, so that
# output "unique" has room above the largest token for its output tokens
# (each equal to no other token of the replay, SPEC section 10.4; a replay
# whose output tokens would pass 2^31 - 1 raises ValueError).
SERVE_TOKENS = st.sampled_from((0, 1, 2, 3, -1, 2 ** 30, -2 ** 31))


def serve_documents(*, models=MODELS, capacity=DISTINCT_PERCENT,
                    policy=st.sampled_from(_kvprefix.policies()),
                    page_size=st.sampled_from((1, 2)), tokens=SERVE_TOKENS,
                    min_requests=1, max_requests=12, max_fresh=3,
                    max_running=st.integers(1, 4), output=st.sampled_from(OUTPUTS),
                    max_gap_us=3, max_output_length=4, max_us_per_token=3):
    """SPEC section 10 documents: replay_documents(models=models, ...)'s
    (the cache: capacity, policy, page_size, model, match_limit, trigger;
    the requests, over SERVE_TOKENS by default) with the section 10.1
    members "arrivals_us" (each the one before it plus 0 to max_gap_us:
    requests arrive together and apart), "output_lengths" (0 to
    max_output_length tokens each), "max_running" and "output" (each a
    value or a strategy; by default 1 to 4 and any of OUTPUTS) and the
    service times "prefill_us_per_token", "decode_us_per_token" and
    "overhead_us" (0 to max_us_per_token each). Each member is left out
    (its default) in some documents; they shrink toward the defaults
    (max_running 1, output "none", zero times) and few short requests,
    where section 10.7 says the answers are section 8's and 9's.
    kvprefix.testing.serve_answer(document) replays one. Raises ValueError
    (when called) as replay_documents does for `models`."""
    documents = replay_documents(capacity=capacity, policy=policy,
                                 page_size=page_size, models=models, tokens=tokens,
                                 min_requests=min_requests, max_requests=max_requests,
                                 max_fresh=max_fresh)
    return _serve_documents(documents, max_running, output, max_gap_us,
                            max_output_length, max_us_per_token)


@st.composite
def _serve_documents(draw, documents, max_running, output, max_gap_us,
                     max_output_length, max_us_per_token):
    document = draw(documents)
    count = len(document["requests"])
    gaps = st.lists(st.integers(0, max_gap_us), min_size=count, max_size=count)
    rate = st.integers(0, max_us_per_token)
    members = {
        "arrivals_us": gaps.map(lambda each: list(accumulate(each))),
        "output_lengths": st.lists(st.integers(0, max_output_length),
                                   min_size=count, max_size=count),
        "max_running": _strategy(max_running),
        "prefill_us_per_token": rate,
        "decode_us_per_token": rate,
        "overhead_us": rate,
        "output": _strategy(output),
    }
    for name, values in members.items():
        value = draw(st.one_of(st.none(), values))
        if value is not None:
            document[name] = value
    return document


def _model_members(models, policy):
    """A strategy of the members of a document of one of `models` with
    `policy` (the model's first policy if it has not that one)."""
    def of_model(model):
        valid = [each for each in _COMBINATIONS if each.model == model]
        with_policy = [each for each in valid if each.policy == policy] or [
            each for each in valid if each.policy == valid[0].policy]
        return st.sampled_from([each.members for each in with_policy])
    return st.sampled_from(models).flatmap(of_model)


def _distinct_prefixes(requests, page_size):
    """The nodes of the unbounded trie of `requests` over pages (SPEC 8)."""
    prefixes = set()
    for request in requests:
        whole = len(request) - len(request) % page_size
        prefixes.update(tuple(request[:end])
                        for end in range(page_size, whole + 1, page_size))
    return len(prefixes)
