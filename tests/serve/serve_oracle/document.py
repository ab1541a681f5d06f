"""Reading a replay document (SPEC §8, §9.4, §10.1, §11.1) into plain data.

Only what the oracle needs: the members with their defaults, and each
request's prompt, arrival, output length and stored sequence (§10.4). Errors
are not the oracle's business (the C++ reader owns them); an unknown member
still raises ValueError so that a misspelt test document cannot pass
silently.
"""
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Optional

SEQUENTIAL_MEMBERS = ("requests", "capacity", "policy", "page_size", "model",
                      "match_limit", "trigger")  # §8, §9.4
SERVE_MEMBERS = ("arrivals_us", "output_lengths", "max_running",
                 "prefill_us_per_token", "decode_us_per_token", "overhead_us",
                 "output")  # §10.1
ROUTE_MEMBERS = ("workers", "router")  # §11.1


@dataclass
class Settings:
    """One worker's settings: the same for every worker (§11)."""
    model: str = "spec"               # §9.4
    capacity: Optional[int] = None    # §8: pages (nodes, blocks); None = unbounded
    policy: str = "lru"               # §8
    page_size: int = 1                # §8: P
    match_limit: str = "all"          # §9.1 (vllm: always all-but-last)
    trigger: str = "after-insert"     # §9.3
    max_running: int = 1              # §10.1: B
    prefill_us_per_token: int = 0     # §10.1
    decode_us_per_token: int = 0
    overhead_us: int = 0
    output: str = "none"              # §10.1: "none" or "unique"


@dataclass
class Request:
    """One request of the document (§10.4's names)."""
    index: int            # its place in the document: the arrival index k (§11.4)
    tokens: list          # the prompt, n = len(tokens)
    arrival: int          # arrivals_us
    output: int           # output_lengths: o
    stored: list = field(default_factory=list)  # the L tokens whose KV it stores

    @property
    def n(self):
        return len(self.tokens)

    @property
    def stored_length(self):  # L
        return len(self.stored)


class UniqueToken(tuple):
    """An output token of request r (§10.4: equal to no other token of the
    replay): ("out", r, j). Never equal to an int token."""


def stored_sequence(index, tokens, output, output_mode):
    """§10.4: the prompt followed by L − n unique output tokens, where L is n
    under "none" and n + max(o − 1, 0) under "unique" (L = 0 when n = 0)."""
    if output_mode == "none" or not tokens:
        return list(tokens)
    extra = max(output - 1, 0)
    return list(tokens) + [UniqueToken(("out", index, j)) for j in range(extra)]


def exact_decimal(value):
    """§11.1: a decimal parameter read exactly as the rational its text
    denotes. Documents should be parsed with json.loads(parse_float=Decimal);
    a Python float is taken as its shortest text (repr), which is what was
    typed."""
    if isinstance(value, bool):
        raise ValueError("a decimal, not a boolean")
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, Decimal):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(repr(value))
    raise ValueError(f"not a decimal: {value!r}")


def read_document(document):
    """(settings, requests, routing) of a document; routing is None for a
    document with neither `workers` nor `router` (answered as §10.5), else
    (N, router object) (answered as §11.8)."""
    known = SEQUENTIAL_MEMBERS + SERVE_MEMBERS + ROUTE_MEMBERS
    for member in document:
        if member not in known:
            raise ValueError(f"$.{member}: unknown member")
    settings = Settings()
    settings.model = document.get("model", "spec")
    settings.capacity = document.get("capacity")
    settings.policy = document.get("policy", "lru")
    settings.page_size = document.get("page_size", 1)
    # §9.4: match_limit defaults to "all", but "all-but-last" for vllm.
    default_limit = "all-but-last" if settings.model == "vllm" else "all"
    settings.match_limit = document.get("match_limit", default_limit)
    settings.trigger = document.get("trigger", "after-insert")
    settings.max_running = document.get("max_running", 1)
    settings.prefill_us_per_token = document.get("prefill_us_per_token", 0)
    settings.decode_us_per_token = document.get("decode_us_per_token", 0)
    settings.overhead_us = document.get("overhead_us", 0)
    settings.output = document.get("output", "none")

    prompts = document["requests"]
    count = len(prompts)
    arrivals = document.get("arrivals_us", [0] * count)  # §10.1 default: all 0
    outputs = document.get("output_lengths", [0] * count)  # default: all 0
    if len(arrivals) != count or len(outputs) != count:
        raise ValueError("$.arrivals_us or $.output_lengths: wrong length")
    for k in range(1, count):
        if arrivals[k] < arrivals[k - 1]:
            raise ValueError(f"$.arrivals_us[{k}]: smaller than the one before")
    requests = []
    for k, tokens in enumerate(prompts):
        requests.append(Request(index=k, tokens=list(tokens),
                                arrival=arrivals[k], output=outputs[k],
                                stored=stored_sequence(k, tokens, outputs[k],
                                                       settings.output)))
    routing = None
    if "workers" in document or "router" in document:
        routing = (document.get("workers", 1),
                   document.get("router", {"name": "round-robin"}))
    return settings, requests, routing


def pages(tokens, page_size):
    """§8: the sequence cut into pages of P tokens, a trailing partial page
    dropped; each page a tuple (compared by content)."""
    whole = len(tokens) // page_size
    return [tuple(tokens[i * page_size:(i + 1) * page_size])
            for i in range(whole)]
