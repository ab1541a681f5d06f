"""Check your own prefix cache, written in Python, against kvprefix's reference.

`check(make_cache)` runs the inputs `kvprefix verify` generates (batch
inputs, SPEC section 4, and replay documents with capacities, every
eviction policy of kvprefix.policies() and page sizes, SPEC section 8; with
check(model="vllm") or model="sglang" the documents of that cache model,
SPEC section 9, as `kvprefix verify --model` generates them) and your own
documents on a fresh cache each, in this process, compares every answer
with the reference engine's, and on the first disagreement shrinks the
input with verify's shrinker and raises CheckFailure, an AssertionError
carrying the minimal case. No process is started per input.

The cache under test is any object with the methods

  insert(tokens)  -> the node ID of the sequence's last token, or None
  match(tokens)   -> the longest cached prefix (shapes below); inserts nothing
  access(tokens)  -> optional: the serving step of SPEC section 8 (match,
                     insert, touch the path, evict down to the capacity),
                     returning the match of its first step; without it a
                     replay calls match(tokens), then insert(tokens)

where `tokens` is a new list of ints (int32 values) at each call. A match is
answered as any of: an int (matched_length); a tuple or list
(matched_length, cache_node); a dict, or an object with attributes, holding
matched_length and optionally cache_node and uncached_suffix (what
kvprefix.PrefixIndex.match returns). With compare="all" (the default)
matched_length and cache_node must equal the reference's (SPEC section 1's
node IDs: 1, 2, 3, ... in creation order, never reused), and so must an
insert's node ID unless it returns None; compare="lengths" compares
matched_length only (and so the uncached suffix), for a cache without
kvprefix's node IDs, as real caches are. An uncached_suffix, when an answer
has one, must be the request's tokens from matched_length on.

    import kvprefix.testing

    def make_cache(options):          # a kvprefix.testing.CacheOptions
        return MyCache(options.capacity, options.policy, options.page_size)

    kvprefix.testing.check(make_cache, runs=1000, seed=1, compare="lengths")

A cache of a model (a vLLM-like block pool) reads options.model,
options.match_limit and options.trigger too, and is checked with
check(make_cache, model="vllm").

Hypothesis strategies for token lists and documents are in
kvprefix.testing.strategies (it imports hypothesis; this module does not).
serve_answer(document) is kvprefix.replay's answer to a SPEC section 10
document (a serving replay on one worker), such as
strategies.serve_documents draws.
"""
import json
import os
import random
import time
from dataclasses import dataclass
from typing import NamedTuple, Optional

from kvprefix import _kvprefix

_native = _kvprefix._testing

__all__ = ["CacheOptions", "CheckFailure", "CheckResult", "GENERATED",
           "Refused", "SERVE_MEMBERS", "assert_matches_reference", "check",
           "check_document", "load_documents", "reference_answer",
           "serve_answer"]

# What make_cache raises for options the cache does not implement (a
# ValueError): check() skips the input and counts it, never a failure.
# kvprefix.PrefixIndex raises it when a plugin's create refuses its options.
Refused = _kvprefix.Refused

# The value of check()'s capacity, policy, page_size, model, match_limit and
# trigger that leaves them as each generated document draws them.
GENERATED = "generated"

_FORMATS = ("batch", "requests", "both")
_COMPARES = ("all", "lengths")


class CacheOptions(NamedTuple):
    """The cache make_cache(options) is asked for (SPEC sections 8 and 9).

    capacity: nodes kept besides the root (pages when page_size > 1; blocks
    or pages for models vllm and sglang), or None for an unbounded cache;
    policy: one of kvprefix.policies(), by default kvprefix.default_policy()
    ("lru"); page_size: tokens per node (a trailing partial page is neither
    inserted nor matched). model: the rules the cache follows (SPEC section
    9), "spec" (section 8's trie, the default), "vllm" (vLLM's block pool)
    or "sglang" (SGLang's radix cache); match_limit: "all" or
    "all-but-last" (a match covers at most n - 1 tokens, in whole pages;
    always so for vllm); trigger: when sglang evicts, "after-insert" (the
    default, and what every other model has) or "on-allocate" (a request's
    whole demand before its insert, refusing it when that is not enough).
    The names are the CLI's (--model, --match-limit, --trigger), and
    kvprefix.PrefixIndex takes them, trigger for model "sglang" only.
    A batch input (SPEC section 4) always asks for CacheOptions(None,
    "lru", 1, "spec", "all", "after-insert").

    The three model fields come last with the defaults of a SPEC section 8
    cache, so a make_cache that reads capacity, policy and page_size by name
    works as before; one that unpacks the tuple (MyCache(*options)) now gets
    six values.
    """
    capacity: Optional[int] = None
    policy: str = _kvprefix.default_policy()
    page_size: int = 1
    model: str = "spec"
    match_limit: str = "all"
    trigger: str = "after-insert"

    @classmethod
    def from_document(cls, document):
        """The options of `document`, a SPEC section 4 or 8 document or a
        case (a dict) as load_documents takes it: its members, the model's
        match limit (SPEC section 9.4: "all-but-last" for vllm) where it
        names none, and the defaults for what it leaves out (all of them
        for a batch document). Raises kvprefix.InputError for a document
        the strict reader refuses (a combination SPEC section 9.4 refuses
        included)."""
        return cls(*_parse(json.dumps(document), document, "document").options)


@dataclass(frozen=True)
class CheckResult:
    """What check() checked when every answer agreed.

    str() of it is the report, as `kvprefix verify` prints it: "OK: 1000
    inputs agree with the reference (0.3 s)", and when make_cache refused
    some (kvprefix.Refused) a second line "skipped: 322 inputs whose cache
    make_cache refuses, the first: ...".
    """
    inputs: int        # documents checked, given and generated
    requests: int      # their requests (each a match or an access)
    seconds: float     # wall time of the whole check
    seed: int          # the seed of the generated inputs
    skipped: int = 0   # inputs whose options make_cache refused
    skip_reason: Optional[str] = None  # the first refusal's message

    @property
    def inputs_per_second(self):
        return self.inputs / self.seconds if self.seconds > 0 else float("inf")

    def __str__(self):
        text = (f"OK: {self.inputs} inputs agree with the reference "
                f"({self.seconds:.1f} s)")
        if self.skipped:
            text += (f"\nskipped: {self.skipped} inputs whose cache "
                     f"make_cache refuses, the first: {self.skip_reason}")
        return text


class CheckFailure(AssertionError):
    """The cache under test disagreed with the reference.

    Attributes:
      kind: "wrong-answer" (an answer differs), "wrong-shape" (an answer of
        none of the accepted shapes, or without cache_node under
        compare="all") or "crash" (make_cache or a method raised an
        Exception; it is also this error's __cause__ and `exception`).
      input_name: the input that failed first, e.g. "generated replay
        document 47 (--seed 1, size 47)" (`kvprefix verify --seed 1 --format
        requests` generates the same input 47), or "document 0" / a file name.
      case: the minimal failing case as a dict in the format of the
        regression cases of tests/data/cases/ (what `kvprefix verify` writes):
        {"cached_sequences", "requests", "expected", "source"} for a batch
        input, {"document", "expected", "source"} for a replay document, with
        the reference's answer as "expected". case_json is its text (one line
        with a newline): write_case(path) saves it, and `kvprefix verify
        --cases` and check(documents=[path]) read it back.
      document: the shrunk input alone (SPEC section 4 or 8 document, a
        dict); original_document: the input before shrinking.
      step: "insert", "match", "access" or "make_cache": the call that went
        wrong; index: its position (in cached_sequences for a batch input's
        insert, else in requests); request: the request's index (None for a
        batch insert and make_cache); tokens: the call's tokens.
      expected, actual: the reference's answer and the cache's, as dicts
        {"matched_length", "cache_node", "uncached_suffix"} for a match
        (actual's cache_node None when the answer had none), ints for an
        insert's node ID; actual is the returned object as it was when its
        shape is wrong, None for a crash.
      shrink_attempts: checks the shrinker made (0: shrinking was off);
        the message says "not shrunk: ..." when none of the smaller inputs
        tried failed.
      message: the report (also str(error)).
    """

    def __init__(self, report, compare):
        self.kind = report["kind"]
        self.input_name = report["input_name"]
        self.compare = compare
        self.step = report["step"]
        self.index = report["index"]
        self.request = report["request"]
        self.tokens = report["tokens"]
        self.expected = report["expected"]
        self.actual = report["actual"]
        self.exception = report["exception"]
        self.shrink_attempts = report["shrink_attempts"]
        self.case_json = report["case"]
        self.case = json.loads(self.case_json)
        self.document = json.loads(report["document"])
        self.original_document = json.loads(report["original_document"])
        lines = [f"{self.kind} on {self.input_name}"]
        if report["shrink_report"]:
            lines.append(report["shrink_report"])
        lines.append(report["message"].rstrip("\n"))
        lines.append("case: " + self.case_json.rstrip("\n"))
        self.message = "\n".join(lines)
        super().__init__(self.message)

    def write_case(self, path):
        """Writes the minimal case file (case_json) to `path`."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.case_json)


def _document_kind(document, where):
    if not isinstance(document, dict):
        raise TypeError(f"{where}: expected a dict (a SPEC section 4 or 8 "
                        f"document or a case), a path or a folder, got "
                        f"{type(document).__name__}")
    is_case = "expected" in document or "source" in document
    if "document" in document:
        return "requests-case"
    if "cached_sequences" in document:
        return "batch-case" if is_case else "batch"
    return "requests-case" if is_case else "requests"


def _parse(text, document, name):
    try:
        return _native.parse_input(text, _document_kind(document, name), name)
    except _kvprefix.InputError as error:
        raise _kvprefix.InputError(f"{name}: {error}") from None


def load_documents(documents):
    """The inputs of `documents`, in order, for check(documents=...).

    Each item is a dict (a SPEC section 4 document {"cached_sequences",
    "requests"}, a SPEC section 8 replay document {"requests", "capacity",
    "policy", "page_size"} or a case file's dict, told apart by their
    members; a replay document may name a cache model, SPEC section 9, in
    "model", "match_limit" and "trigger"), or a path (str or os.PathLike) of
    a JSON file holding one, or of a folder whose *.json files are read in
    name order (tests/data/cases, tests/data/cases/capacity). Documents are read as strictly as `kvprefix
    verify` reads them: a bad one raises kvprefix.InputError naming the
    document or file and the JSON location; an unreadable file OSError; a
    folder without *.json files ValueError.
    """
    inputs = []
    for number, item in enumerate(documents):
        if isinstance(item, dict):
            name = f"document {number}"
            inputs.append(_parse(json.dumps(item), item, name))
            continue
        if not isinstance(item, (str, os.PathLike)):
            _document_kind(item, f"documents[{number}]")  # raises TypeError
        path = os.fspath(item)
        if os.path.isdir(path):
            paths = sorted(os.path.join(path, name) for name in os.listdir(path)
                           if name.endswith(".json"))
            if not paths:
                raise ValueError(f"{path}: a folder without *.json files")
        else:
            paths = [path]
        for file_path in paths:
            with open(file_path, encoding="utf-8") as file:
                text = file.read()
            try:
                document = json.loads(text)
            except ValueError:
                document = {}  # the strict reader names the problem
            inputs.append(_parse(text, document, file_path))
    return inputs


# A wrong type raises TypeError, a wrong value ValueError, as CPython's own
# functions do.
def _check_choice(name, value, choices):
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, one of "
                        f"{', '.join(map(repr, choices))}, got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, choices))}, "
                         f"got {value!r}")


def _option_list(name, value):
    """check()'s models, policies, page_sizes or capacities as a list of
    str: None (every value), a str (one, or comma-separated), an int, or an
    iterable of those."""
    if value is None:
        return []
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return [str(value)]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name}: expected None, a str, an int or a list of "
                        f"them, got {type(value).__name__}") from None
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise TypeError(f"{name}: expected str or int items, got "
                            f"{type(item).__name__} ({item!r})")
    return [str(item) for item in items]


def _count(name, value, low, high=None):
    bound = f"from {low}" + (f" to {high}" if high is not None else "")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int {bound}, got "
                        f"{type(value).__name__}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name}: expected an int {bound}, got {value!r}")
    return value


def _check_shrink(make_cache, shrink, max_shrink_attempts, shrink_seconds):
    if not callable(make_cache):
        raise TypeError(f"make_cache: expected a callable, got {type(make_cache).__name__}")
    if not isinstance(shrink, bool):
        raise TypeError(f"shrink: expected a bool, got {type(shrink).__name__}")
    _count("max_shrink_attempts", max_shrink_attempts, 0)
    if isinstance(shrink_seconds, bool) or not isinstance(shrink_seconds, (int, float)):
        raise TypeError(f"shrink_seconds: expected a number, got "
                        f"{type(shrink_seconds).__name__}")
    if not 0 <= shrink_seconds <= 1e6:
        raise ValueError(f"shrink_seconds: expected 0 to 1e6, got {shrink_seconds!r}")


def check(make_cache, *, runs=1000, seed=None, max_size=100, format="both",
          capacity=GENERATED, policy=GENERATED, page_size=GENERATED,
          model=GENERATED, match_limit=GENERATED, trigger=GENERATED,
          compare="all", documents=(), shrink=True, max_shrink_attempts=5000,
          shrink_seconds=120.0, models=None, match_limits=None, policies=None,
          page_sizes=None, capacities=None):
    """Checks the cache make_cache(options) builds against the reference.

    make_cache(options) is called with a CacheOptions for every input (and
    every shrinking attempt) and must return a fresh, empty cache (see the
    module's doc for its methods). First `documents` (see load_documents)
    are checked, then `runs` generated inputs of each `format`: "batch"
    (SPEC section 4: every cached sequence inserted, then every request
    matched, on an unbounded cache), "requests" (SPEC section 8 replay
    documents: every request accessed, on the document's cache) or "both"
    (the batch inputs first). They are exactly the inputs `kvprefix verify
    --runs RUNS --seed SEED --max-size MAX_SIZE` generates (with `--format
    requests` for replay documents): sizes from 0 to max_size, shared
    prefixes, duplicates, empty sequences, extreme int32 tokens, capacities
    that make about three documents in four evict, every policy of
    kvprefix.policies(), page sizes 1 to 3. seed None draws one
    (CheckResult.seed and the failure's input_name tell it).

    capacity, policy and page_size replace what the generated replay
    documents draw (not what given documents say), for a cache that supports
    less: capacity None (never evict) or an int (nodes besides the root),
    policy one of kvprefix.policies(), page_size an int from 1; GENERATED
    keeps the drawn value (a forced page size scales a drawn capacity by the
    documents' distinct prefixes at each page size, so that as many evict).

    model, match_limit and trigger make the generated replay documents a
    cache model's (SPEC section 9), as `kvprefix verify --format requests
    --model M --match-limit L --trigger T` does: model "spec", "vllm" or
    "sglang" (GENERATED: plain SPEC section 8 documents, model "spec"),
    match_limit "all" or "all-but-last", trigger "after-insert" or
    "on-allocate" (sglang only). Each GENERATED one varies as verify varies
    it: vllm's match limit is "all-but-last" and its policy lru; sglang
    draws a match limit and a trigger per document and keeps a drawn fifo
    (any other policy becomes lru); spec keeps its documents, match limit
    "all". make_cache then gets them in CacheOptions.model, match_limit and
    trigger, and a failure's input_name carries the flags ("generated replay
    document 3 (--seed 1, size 3, --model vllm)"). Given documents keep
    their own "model". A name not listed, or a combination SPEC section 9.4
    refuses (a trigger without "sglang", vllm with match_limit "all" or a
    policy other than lru, sglang with lfu), is a ValueError naming the
    argument, as is any of the three with format="batch" (SPEC section 4's
    batch inputs have no cache model) or with runs=0.

    models, match_limits, policies, page_sizes and capacities name the
    options the cache implements, as `kvprefix verify --models
    --match-limits --policies --page-sizes --capacities` and the fuzzer's
    KVPREFIX_FUZZ_* variables do: each None (every value), or a list (or a
    comma-separated str) of model names, match limits, policy names, page
    sizes, and capacities ("unbounded", "bounded" for any, or ints). The generated replay documents are made ones it takes
    (only what a document has that is not listed changes), so a cache of
    lru and page size 1 only is checked with policies=["lru"],
    page_sizes=[1]. Each replaces its singular argument (give one of model
    and models, ...). Batch inputs and
    given documents are not changed.

    A cache refuses options it does not implement by raising
    kvprefix.testing.Refused (kvprefix.Refused, a ValueError) from
    make_cache: that input is skipped, not failed, and counted in
    CheckResult.skipped with the first refusal in CheckResult.skip_reason
    (str(result) says so). kvprefix.PrefixIndex raises it for a plugin whose
    create refuses the options. Refusing every input checked nothing: a
    ValueError.

    compare "all" or "lengths": see the module's doc.

    The first input whose answers differ is shrunk (unless shrink is False)
    with `kvprefix verify`'s shrinker, within max_shrink_attempts checks and
    shrink_seconds: requests, tokens and token values dropped or brought
    toward 0, the capacity toward 0, the policy toward the default, the
    page size toward 1 and the model's options toward trigger
    "after-insert", match limit "all" and model "spec" (within SPEC section
    9.4's combinations), each step kept only if the cache still fails the
    same way: a bug of a model alone keeps the model in the minimal case.
    Then CheckFailure is raised with the minimal case.

    Returns a CheckResult when every answer agreed. Raises CheckFailure
    (an AssertionError); TypeError for an argument of the wrong type,
    ValueError for a wrong value; TypeError when the cache lacks a method it
    needs (insert and match; or access); what
    load_documents raises; and whatever BaseException that is not an
    Exception (KeyboardInterrupt) the cache raises.
    """
    _check_choice("format", format, _FORMATS)
    _check_choice("compare", compare, _COMPARES)
    _count("runs", runs, 0)
    _count("max_size", max_size, 0, 100000)
    _check_shrink(make_cache, shrink, max_shrink_attempts, shrink_seconds)
    if seed is None:
        seed = random.SystemRandom().randrange(2 ** 32)
    _count("seed", seed, 0, 2 ** 64 - 1)
    override_capacity = capacity != GENERATED
    if override_capacity and capacity is not None:
        _count("capacity", capacity, 0, 2 ** 64 - 2)
    if policy != GENERATED:
        _check_choice("policy", policy, _kvprefix.policies())
    if page_size != GENERATED:
        _count("page_size", page_size, 1, 2 ** 31 - 1)
    forced_model = {name: value for name, value in (
        ("model", model), ("match_limit", match_limit), ("trigger", trigger))
        if value != GENERATED}
    if forced_model and format == "batch":
        raise ValueError(f"{', '.join(forced_model)}: for the replay "
                         f"documents of format 'requests' or 'both' only "
                         f"(SPEC section 4's batch inputs have no cache model)")
    if forced_model and runs == 0:
        # As verify refuses --model without generated documents: a given
        # document runs under its own "model", not under these.
        raise ValueError(f"{', '.join(forced_model)}: for generated replay "
                         f"documents only, and runs=0 generates none (a given "
                         f"document runs under its own \"model\")")
    implemented = {name: _option_list(name, value) for name, value in (
        ("models", models), ("match_limits", match_limits),
        ("policies", policies),
        ("page_sizes", page_sizes), ("capacities", capacities))}
    for single, value, plural in (
            ("model", model, "models"),
            ("match_limit", match_limit, "match_limits"),
            ("policy", policy, "policies"),
            ("page_size", page_size, "page_sizes"),
            ("capacity", capacity, "capacities")):
        if implemented[plural] and value != GENERATED:
            raise ValueError(f"{single} and {plural}: give one ({single} "
                             f"forces one value, {plural} lists those the "
                             f"cache implements)")
    if any(implemented.values()) and (format == "batch" or runs == 0):
        raise ValueError(f"{', '.join(k for k, v in implemented.items() if v)}"
                         f": for generated replay documents only (format "
                         f"'requests' or 'both', runs > 0)")
    generated_model = _native.generated_model(
        forced_model, None if policy == GENERATED else policy)
    given = load_documents(documents)
    if not given and runs == 0:
        raise ValueError("nothing to check: runs=0 and no documents")
    start = time.perf_counter()
    inputs = requests = skipped = 0
    skip_reason = None
    formats = ("batch", "requests") if format == "both" else (format,)
    for number, each in enumerate(formats):
        result = _native.run(
            make_cache, CacheOptions, given if number == 0 else [], each,
            runs, seed, max_size, override_capacity,
            None if not override_capacity else capacity,
            None if policy == GENERATED else policy,
            None if page_size == GENERATED else page_size, generated_model,
            implemented, compare, shrink, max_shrink_attempts,
            float(shrink_seconds))
        inputs += result["inputs"]
        requests += result["requests"]
        skipped += result["skipped"]
        skip_reason = skip_reason or result["skip_reason"]
        if result["failure"] is not None:
            _raise(result["failure"], compare)
    if inputs == 0:
        # "OK: 0 inputs agree" would be a false success, as in verify.
        raise ValueError(f"nothing checked: make_cache refuses the cache of "
                         f"each of the {skipped} inputs, the first: "
                         f"{skip_reason}")
    return CheckResult(inputs, requests, time.perf_counter() - start, seed,
                       skipped, skip_reason)


def _raise(report, compare):
    failure = CheckFailure(report, compare)
    raise failure from failure.exception


def check_document(make_cache, document, *, compare="all", shrink=True,
                   max_shrink_attempts=5000, shrink_seconds=120.0):
    """check() on the one document `document` (a dict, a path: see
    load_documents; a folder checks each of its files): None when every
    answer agrees, else CheckFailure, shrunk unless shrink is False; when
    make_cache refuses a document's options (kvprefix.testing.Refused), a
    CheckResult whose `skipped` counts them and `skip_reason` says why (not
    None: that document was not checked)."""
    _check_choice("compare", compare, _COMPARES)
    _check_shrink(make_cache, shrink, max_shrink_attempts, shrink_seconds)
    skipped = checked = requests = 0
    skip_reason = None
    for each in load_documents([document]):
        report = _native.check_input(make_cache, CacheOptions, each, compare,
                                     shrink, max_shrink_attempts,
                                     float(shrink_seconds))
        if report is not None and "refused" in report:
            skipped += 1
            skip_reason = skip_reason or report["refused"]
        elif report is not None:
            _raise(report, compare)
        else:
            checked += 1
            requests += each.requests
    if skipped:
        return CheckResult(checked, requests, 0.0, 0, skipped, skip_reason)


def assert_matches_reference(cache, document, *, compare="all"):
    """Asserts that `cache` answers `document` as the reference does.

    For Hypothesis tests (kvprefix.testing.strategies), which shrink the
    document themselves: no shrinking here. `cache` is the cache under test,
    fresh and built with the document's options
    (CacheOptions.from_document(document)), or a callable make_cache(options)
    returning one (a class, a function). `document` is a SPEC section 4 or 8
    document or a case (a dict). Raises CheckFailure (an AssertionError) on
    the first disagreement, as check_document(..., shrink=False).
    """
    if isinstance(cache, type) or not (hasattr(cache, "match") or
                                       hasattr(cache, "access")):
        make_cache = cache
    else:
        built = []

        def make_cache(options):
            if built:
                raise RuntimeError("assert_matches_reference: a cache object "
                                   "checks one document; pass make_cache")
            built.append(options)
            return cache
    check_document(make_cache, document, compare=compare, shrink=False)


def reference_answer(document):
    """The reference's SPEC section 5 answer to `document` (a dict or a path
    as load_documents takes), as a dict {"matches": [...]}: for a replay
    document each request's match at step 1 of SPEC section 8."""
    (each,) = load_documents([document])
    return json.loads(each.reference_answer)


# The members SPEC section 10.1 adds to a replay document, and
# kvprefix.replay's arguments of the same names.
SERVE_MEMBERS = ("arrivals_us", "output_lengths", "max_running",
                 "prefill_us_per_token", "decode_us_per_token", "overhead_us",
                 "output")

# The members of a SPEC section 8/9 replay document: replay's arguments of
# the same names.
_REPLAY_MEMBERS = ("requests", "capacity", "policy", "page_size", "model",
                   "match_limit", "trigger", "namespaces")


def serve_answer(document, *, engine=None):
    """The SPEC section 10.5 answer to the section 10 replay document
    `document` on one worker, as kvprefix.replay returns it: {"requests":
    [...], "totals": {...}}.

    `document` is a dict (a SPEC section 8/9 replay document, optionally
    with the members of SERVE_MEMBERS, as kvprefix.testing.strategies.
    serve_documents draws them), or a case {"document": ..., "expected":
    ...} of tests/data/cases/serve/. A document without a section 10
    member is answered with every default (SPEC section 10.1: max_running
    1, ...), which section 10.7 says gives its section 8/9 matches. engine
    None is "reference" (every model's serving replay); an engine without
    the model's request lifecycle takes max_running 1 with output "none"
    only (kvprefix.replay's doc). Raises TypeError for a
    document that is not a dict, ValueError naming a member the section 10
    replay of one worker does not take (section 11's "workers" and
    "router" included), and what kvprefix.replay raises for the members'
    values."""
    if not isinstance(document, dict):
        raise TypeError(f"document: expected a dict, got {type(document).__name__}")
    if "document" in document:
        document = document["document"]
    for member in document:
        if member not in _REPLAY_MEMBERS and member not in SERVE_MEMBERS:
            raise ValueError(f"document: unknown member {member!r} (a SPEC "
                             f"section 10 replay document has "
                             f"{', '.join(_REPLAY_MEMBERS + SERVE_MEMBERS)})")
    arguments = {name: value for name, value in document.items() if name != "requests"}
    arguments.setdefault("max_running", 1)  # a serving replay, as section 10.1
    return _kvprefix.replay(document.get("requests"), engine=engine, **arguments)
