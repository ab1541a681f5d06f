#!/usr/bin/python3
"""Turns kvprefix_bench JSON output into a Markdown report with PNG charts.

Usage:
  bench/report.py --out docs/benchmarks.md --img-dir docs/img \
      [--baseline OLD.json ...] [--e2e e2e.json] [--command CMD] \
      [--noisy-cv 0.10] RUN.json [RERUN.json ...]
  bench/report.py --list-noisy [--noisy-cv 0.10] RUN.json
      prints a --benchmark_filter regex of the rows whose cv is above the
      threshold (nothing when there are none), for bench/run_report.sh

RUN.json files are Google Benchmark JSON (--benchmark_format=json or
--benchmark_out) from bench/kvprefix_bench; several files are merged into one
run, and a benchmark in a later file replaces the same benchmark of an
earlier one: the later file is a rerun, and the report marks the row
("rerun", with the first cv). Benchmark names follow
BM_<Op>/<engine>/<workload>/<size>; an engine named at run time
(kvprefix_bench --kvprefix_engine) is "plugin:<name>" (a plugin) or
"virtual:<name>" (a built-in engine through the PrefixIndex interface), and
is shown beside the built-in engines everywhere, plus, when the run has the
built-in engine of the same name, a table of its cost against it. Every figure uses the median over the
repetitions, and ratios are between engines of the same run. A row whose
coefficient of variation of CPU time is above --noisy-cv (default 10%) is
flagged as noisy; bench/run_report.sh reruns such rows alone once.

--baseline compares the run with an older one (several files merge as the
runs do) through Google Benchmark's own tools/compare.py (Debian:
libbenchmark-tools, /usr/share/benchmark/compare.py; override with
--compare-py): a two-sided Mann-Whitney U test per benchmark, and the report
lists the differences with p < --alpha. With too few repetitions the test
cannot reach p < alpha at all (3 against 3: p >= 0.1); the report then says
so instead of counting the benchmarks that changed.

--e2e is the JSON written by bench/e2e.py (CLI wall times).

Needs Python 3 and matplotlib (Debian: python3-matplotlib); compare.py also
needs scipy (python3-scipy).
"""

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

# The key workloads: the table the engines are judged by.
KEY_WORKLOADS = [
    ("mooncake-conversation", "Mooncake conversation (token mode)"),
    ("no-sharing", "no sharing"),
    ("wide", "wide"),
]
# One fixed look per engine (colour-blind-safe palette plus hatching and
# markers) so that engines stay distinguishable in print and in grey.
STYLES = [
    ("#0072B2", "", "o"),
    ("#D55E00", "//", "s"),
    ("#009E73", "..", "^"),
    ("#CC79A7", "xx", "D"),
    ("#E69F00", "\\\\", "v"),
    ("#56B4E9", "++", "P"),
    ("#F0E442", "--", "X"),
    ("#000000", "oo", "*"),
]
REFERENCE = "reference"
# Prefixes of the engines kvprefix_bench --kvprefix_engine adds: a plugin
# (plugin/kvprefix_plugin.h), and a built-in engine behind PrefixIndex.
PLUGIN, VIRTUAL = "plugin:", "virtual:"
# The plugin target: at most 10% more time than the same code compiled in.
PLUGIN_OVERHEAD = 0.10
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Rows whose coefficient of variation of CPU time is above this are noisy:
# flagged, and rerun alone once by bench/run_report.sh. 10%: in the
# published run (2 vCPUs, load 1.6) the median row's cv was 6.6%, and the
# third of the rows above 10% were those disturbed by other jobs.
NOISY_CV = 0.10
MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
# Workload families drawn as curves (sweep charts) rather than bars.
SWEEPS = ("shared-prefix", "sequence-count")


class Result:
    """The median of one benchmark's repetitions (plus its spread)."""

    def __init__(self, op, engine, workload, size, cache=None):
        self.op, self.engine, self.workload, self.size = op, engine, workload, size
        self.cache = cache  # "lru10", "fifo50", ... or None (unbounded)
        self.median = {}  # field -> value of the "median" aggregate
        self.cv = None  # coefficient of variation of cpu_time
        self.repetitions = 0
        self.error = None
        self.first = None  # the replaced Result when this one is a rerun

    @property
    def label(self):
        suffix = f"/{self.cache}" if self.cache else ""
        return f"{self.workload}/{self.size}{suffix}"

    def get(self, field):
        return self.median.get(field)

    def tokens_per_second(self):
        return self.get("items_per_second")

    def ns_per_token(self):
        rate = self.tokens_per_second()
        return 1e9 / rate if rate else None


def parse_name(run_name):
    """BM_<Op>/<engine>/<workload>/<size>[/<cache>] -> (op, engine, workload,
    size, cache); cache is e.g. "lru10" (LRU at 10% of the distinct prefixes)
    or None for an unbounded index."""
    parts = run_name.split("/")
    if len(parts) not in (4, 5) or not parts[0].startswith("BM_"):
        return None
    return (parts[0][3:], parts[1], parts[2], int(parts[3]),
            parts[4] if len(parts) == 5 else None)


def load_runs(paths):
    """Merges benchmark JSON files; returns (context, results, raw dicts).
    A benchmark of a later file replaces (reruns) the same one of an earlier
    file; the replaced Result is kept as the new one's `first`."""
    context, results, raws = None, collections.OrderedDict(), []
    for path in paths:
        with open(path) as f:
            raw = json.load(f)
        raws.append(raw)
        context = context or raw["context"]
        fresh = {}
        for bench in raw["benchmarks"]:
            name = bench.get("run_name", bench["name"])
            parsed = parse_name(name)
            if parsed is None:
                continue
            if name not in fresh:
                fresh[name] = Result(*parsed)
                fresh[name].first = results.get(name)
            result = fresh[name]
            if bench.get("error_occurred"):
                result.error = bench.get("error_message", "error")
            elif bench.get("run_type") == "aggregate":
                if bench.get("aggregate_name") == "median":
                    result.median = bench
                elif bench.get("aggregate_name") == "cv":
                    result.cv = bench.get("cpu_time")
            else:
                result.repetitions += 1
                if result.repetitions == 1 and not result.median:
                    result.median = bench  # single-repetition runs
        results.update(fresh)
    return context, list(results.values()), raws


def merged_benchmarks(paths):
    """The JSON of several runs as one: the context of the first, and each
    benchmark's entries from the last file that has it (as load_runs)."""
    merged = None
    for path in paths:
        with open(path) as f:
            raw = json.load(f)
        if merged is None:
            merged = raw
            continue
        names = {b.get("run_name", b["name"]) for b in raw["benchmarks"]}
        merged["benchmarks"] = [b for b in merged["benchmarks"]
                                if b.get("run_name", b["name"]) not in names]
        merged["benchmarks"] += raw["benchmarks"]
    return merged


def noisy(result, threshold):
    return result.cv is not None and result.cv > threshold and not result.error


def noisy_filter(results, threshold):
    """A --benchmark_filter regex matching exactly the noisy rows, or ""."""
    names = [f"BM_{r.op}/{r.engine}/{r.label}" for r in results
             if noisy(r, threshold)]
    if not names:
        return ""
    # Google Benchmark's filter is a POSIX extended regex: escape its
    # metacharacters (the names hold none today but '.' may come).
    escape = lambda name: re.sub(r"([.^$|()\[\]*+?{}\\])", r"\\\1", name)
    return "^(" + "|".join(escape(n) for n in names) + ")$"


def display_path(path, context=None):
    """A path as the report shows it: relative to the source tree it lies in
    (this repository, or the one the benchmark binary was built in, found
    from the run's "executable": <source>/<build>/bench/kvprefix_bench), so
    that no machine's folder names reach a published report."""
    if not path or not os.path.isabs(path):
        return path
    roots = [REPOSITORY]
    executable = (context or {}).get("executable", "")
    if os.path.isabs(executable):
        roots.append(os.path.dirname(os.path.dirname(os.path.dirname(executable))))
    for root in roots:
        if os.path.commonpath([root, os.path.abspath(path)]) == root:
            return os.path.relpath(path, root)
    return path


def engines_in(context, results):
    """Engines in AllEngines order (recorded by kvprefix_bench), else first seen."""
    seen = context.get("engines", "").split()
    for r in results:
        if r.engine not in seen and r.op in ("Build", "Match", "Replay"):
            seen.append(r.engine)
    return seen


OPS = ["Build", "Match", "Replay", "ParseJson", "WriteJson"]


def sort_results(context, results, engines):
    """Catalog order of workloads, then operation, then engine order."""
    labels = context.get("workloads", "").split()

    def key(r):
        return (labels.index(r.label) if r.label in labels else len(labels),
                r.workload, r.size, OPS.index(r.op) if r.op in OPS else len(OPS),
                engines.index(r.engine) if r.engine in engines else len(engines))
    return sorted(results, key=key)


def find(results, op, engine, workload, size=None, cache=None):
    for r in results:
        if (r.op, r.engine, r.workload, r.cache) == (op, engine, workload, cache) and (
            size is None or r.size == size
        ) and not r.error:
            return r
    return None


def fmt(value, digits=3):
    if value is None:
        return "–"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    return f"{value:,.{decimals}f}"


def count(value):
    """An integer count (nodes, evictions) with thousands separators."""
    return "–" if value is None else f"{round(value):,}"


def mtok(result):
    rate = result.tokens_per_second() if result else None
    return rate / 1e6 if rate else None


def milliseconds(result):
    """Wall time per iteration, in ms."""
    return result.get("real_time") * MS_PER_UNIT[result.get("time_unit")]


def ratio(result, base):
    if not result or not base or not base.tokens_per_second():
        return None
    return result.tokens_per_second() / base.tokens_per_second()


# ----------------------------------------------------------------- charts ---


def style_of(engines, engine):
    return STYLES[engines.index(engine) % len(STYLES)]


def save(fig, img_dir, name):
    path = os.path.join(img_dir, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return name


def grouped_bars(results, engines, op, value_of, ylabel, title, img_dir, name,
                 log=True, hline=None, skip_engines=()):
    """One group of bars per workload, one bar per engine."""
    shown = [e for e in engines if e not in skip_engines]
    labels = []
    for r in results:
        if (r.op == op and r.label not in labels and not r.error
                and r.workload not in SWEEPS and not r.cache):
            labels.append(r.label)
    if not labels or not shown:
        return None
    width = 0.8 / len(shown)
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(labels) * len(shown) / 2), 5))
    for i, engine in enumerate(shown):
        color, hatch, _ = style_of(engines, engine)
        xs, ys = [], []
        for j, label in enumerate(labels):
            workload, size = label.rsplit("/", 1)
            result = find(results, op, engine, workload, int(size))
            value = value_of(result) if result else None
            if value:
                xs.append(j + (i - (len(shown) - 1) / 2) * width)
                ys.append(value)
        ax.bar(xs, ys, width, label=engine, color=color, hatch=hatch,
               edgecolor="black", linewidth=0.4)
    if hline is not None:
        ax.axhline(hline, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.set_xlabel("workload / size")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(title="engine", fontsize=8, loc="upper left",
              bbox_to_anchor=(1.0, 1.0))
    return save(fig, img_dir, name)


def sweep_chart(results, engines, workload, xlabel, title, img_dir, name, base):
    """ns/token against the workload size, log-log, Build and Match panels."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    drawn = False
    for ax, op in zip(axes, ("Build", "Match")):
        for engine in engines:
            points = sorted((r.size, r.ns_per_token()) for r in results
                            if (r.op, r.engine, r.workload) == (op, engine, workload)
                            and not r.error and r.ns_per_token())
            if not points:
                continue
            drawn = True
            color, _, marker = style_of(engines, engine)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker,
                    color=color, label=engine)
        ax.set_xscale("log", base=base)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"{op.lower()} time (ns per token)")
        ax.set_title(f"{op}: {title}")
        ax.grid(which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(title="engine", fontsize=8)
    if not drawn:
        plt.close(fig)
        return None
    fig.tight_layout()
    return save(fig, img_dir, name)


# --------------------------------------------------------------- sections ---


def library_build_note(context):
    """Google Benchmark's own build type, with what it means here."""
    build = context.get("library_build_type", "–")
    if build != "debug":
        return f"library built as {build}"
    return ("library built as debug (Debian's libbenchmark is compiled without "
            "NDEBUG: the harness keeps its own checks; the timed loops are "
            "inline in benchmark.h and compiled with the flags above)")


def context_section(context, results, command, paths, baseline_note):
    reps = max((r.repetitions for r in results), default=0)
    caches = ", ".join(
        f"L{c['level']} {c['type'][0].lower()} {c['size'] // 1024} KiB"
        + (f" x{c['num_sharing']}" if c.get("num_sharing", 0) > 1 else "")
        for c in context.get("caches", []))
    rows = [
        ("command", f"`{command}`" if command else "not recorded in the run's JSON"),
        ("date", context.get("date", "–")),
        ("commit", context.get("commit", "–")),
        ("host", context.get("host_name", "–")),
        ("CPU", f"{context.get('cpu_model', '–')}, {context.get('num_cpus')} CPUs "
                f"at {context.get('mhz_per_cpu')} MHz"),
        ("caches", caches or "–"),
        ("load average at start", ", ".join(
            f"{x:.2f}" for x in context.get("load_avg", []))),
        ("compiler", context.get("compiler", "–")),
        ("flags", f"`{context.get('cxx_flags', '').strip()}` "
                  f"({context.get('build_type', '–')})"),
        ("Google Benchmark", library_build_note(context)),
        ("repetitions", f"{reps} per benchmark, random interleaving: "
                        f"{context.get('random_interleaving', 'unknown')}, "
                        f"min time {context.get('min_time', 'default')} s"),
        ("Mooncake traces", f"{display_path(context.get('mooncake_dir', '–'), context)} "
                            f"(first {context.get('mooncake_requests', '?')} requests)"),
        ("raw data", ", ".join(f"`{p}`" for p in paths)),
        ("baseline", baseline_note or "none"),
    ]
    lines = ["## Machine and run", "", "| | |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    lines += ["", "Every number is the median of the repetitions; throughput is "
              "tokens per CPU-second of the benchmark thread (page faults "
              "included). Ratios compare engines within this one run.", ""]
    return lines


def key_table(results, engines):
    lines = [
        "## Build, warm match and memory on the three key workloads", "",
        "| workload | engine | build (M tokens/s) | build vs reference | "
        "match (M tokens/s) | match vs reference | bytes/node | nodes |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for workload, title in KEY_WORKLOADS:
        for engine in engines:
            build = find(results, "Build", engine, workload)
            match = find(results, "Match", engine, workload)
            if not build and not match:
                continue
            ref_build = find(results, "Build", REFERENCE, workload)
            ref_match = find(results, "Match", REFERENCE, workload)
            any_r = build or match
            lines.append(
                f"| {title} ({any_r.label}) | {engine} | {fmt(mtok(build))} | "
                f"{fmt(ratio(build, ref_build))}× | {fmt(mtok(match))} | "
                f"{fmt(ratio(match, ref_match))}× | {fmt(any_r.get('bytes_per_node'))} | "
                f"{count(any_r.get('nodes'))} |")
    return lines + [""]


def model_of(cache):
    """The model of a BM_Replay/<engine>/<workload>/<size>/<model><capacity>
    row's cache (bench/engine_bench.cc's RegisterModelReplays), else None
    (unbounded, or §8's <policy><percent>)."""
    named = re.fullmatch(r"(.+?)(\d+)", cache or "")
    return named.group(1) if named and named.group(1) in MODELS else None


def capacity_section(results, engines):
    """Replays with a capacity against the same engine unbounded and
    against the reference with the same capacity (the model rows have a
    section of their own)."""
    bounded = [r for r in results if r.op == "Replay" and r.cache and not r.error
               and not model_of(r.cache)]
    if not bounded:
        return []
    lines = ["## Capacity-bounded replay (SPEC §8)", "",
             "`BM_Replay/<engine>/<workload>/<size>/<policy><percent>`: the whole "
             "trace replayed with a capacity of that percentage of its distinct "
             "prefixes (nodes); `<policy>-huge`: a capacity of 10^9 nodes, "
             "which the trace never fills. "
             "Time relative to the same engine's unbounded replay "
             "(target: radix in token mode within 2×) and speed relative to the "
             "reference with the same capacity (target: every optimized engine ≥ 5×).",
             "", "| workload | cache | engine | ms | M tokens/s | time vs unbounded | "
             "vs reference | hit ratio | evictions |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in bounded:
        unbounded = find(results, "Replay", r.engine, r.workload, r.size)
        reference = find(results, "Replay", REFERENCE, r.workload, r.size, r.cache)
        slowdown = (r.get("real_time") / unbounded.get("real_time")
                    if unbounded else None)
        speedup = ratio(r, reference) if r.engine != REFERENCE else None
        lines.append(
            f"| {r.workload}/{r.size} | {r.cache} | {r.engine} | "
            f"{fmt(milliseconds(r))} | {fmt(mtok(r))} | "
            f"{fmt(slowdown) + '×' if slowdown else ''} | "
            f"{fmt(speedup) + '×' if speedup else ''} | "
            f"{fmt(r.get('hit_ratio'))} | {count(r.get('evictions'))} |")
    return lines + [""]


def models_section(results, engines):
    """The model rows: a table per workload, a row per model (MODELS order),
    the columns of each engine that implements it, whose speed is set
    against the model's own reference (the reference engine of that
    model)."""
    rows = [r for r in results
            if r.op == "Replay" and model_of(r.cache) and not r.error]
    if not rows:
        return []
    lines = ["## Cache models (SPEC §9)", "",
             "`BM_Replay/<engine>/<workload>/<size>/<model><capacity>`: the whole "
             "block-mode trace (a token is a 512-token block's hash, SPEC §7, so "
             "M tokens/s are M blocks/s) replayed on a fresh cache per iteration "
             "under each model at the same capacity in blocks: `spec` is §8's LRU, "
             "`vllm` vLLM's block pool (§9.2, match limit all-but-last), `sglang` "
             "SGLang's radix cache (§9.3, trigger after-insert, LRU), "
             "`sglang-on-allocate` the same with trigger on-allocate; ms is the wall "
             "time of one replay. Each model "
             "runs on the engines that implement it; vs reference is the speed "
             "over that model's reference engine. Warm benchmark: medians of the "
             "repetitions of this run (end-to-end runs of the CLI, a fresh process "
             "each, are under End to end). Hit ratio: matched / request tokens, "
             "the same for every engine of a model (else marked). Bytes/node is "
             "memory_bytes / node_count: per block for spec and vllm, per tree "
             "node (an edge of one or more blocks) for sglang.", ""]
    workloads = list(dict.fromkeys((r.workload, r.size) for r in rows))
    for workload, size in workloads:
        group = [r for r in rows if (r.workload, r.size) == (workload, size)]
        shown = [e for e in engines if any(r.engine == e for r in group)]
        caches = sorted({r.cache for r in group},
                        key=lambda c: (list(MODELS).index(model_of(c)), c))
        # The reference's speed over itself is no column.
        columns = [(e, what) for e in shown for what in
                   ("ms", "M tokens/s", "vs reference", "bytes/node")
                   if not (e == REFERENCE and what == "vs reference")]
        lines += [f"### {workload}/{size}", "",
                  "| model | cache | hit ratio | "
                  + " | ".join(f"{e} {what}" for e, what in columns) + " |",
                  "| --- | --- | ---: |" + " ---: |" * len(columns)]
        for cache in caches:
            by_engine = {r.engine: r for r in group if r.cache == cache}
            base = by_engine.get(REFERENCE)
            ratios = {fmt(r.get("hit_ratio"), 4) for r in by_engine.values()}
            hit = (ratios.pop() if len(ratios) == 1 else
                   "**differ: " + ", ".join(sorted(ratios)) + "**")
            cells = []
            for engine, what in columns:
                r = by_engine.get(engine)
                speedup = ratio(r, base)
                values = {"ms": fmt(milliseconds(r)), "M tokens/s": fmt(mtok(r)),
                          "vs reference": fmt(speedup) + "×" if speedup else "–",
                          "bytes/node": fmt(r.get("bytes_per_node"))} if r else {}
                cells.append(values.get(what, "–"))
            lines.append(f"| {MODELS[model_of(cache)]} | {cache} | {hit} | "
                         + " | ".join(cells) + " |")
        lines.append("")
    return lines


def fastest_on_mooncake(results, engines):
    lines = []
    for op in ("Match", "Replay", "Build"):
        ranked = sorted(((find(results, op, e, "mooncake-conversation"), e)
                         for e in engines), key=lambda p: -(mtok(p[0]) or 0))
        if ranked and ranked[0][0]:
            best, engine = ranked[0]
            lines.append(f"- {op}: **{engine}** at {fmt(mtok(best))} M tokens/s "
                         f"on {best.label}")
    if not lines:
        return []
    return ["### Fastest engine on the real (Mooncake conversation) workload",
            ""] + lines + [""]


def answers_section(results, engines):
    """Every engine's answer_digest must equal the reference's."""
    bad, own_ids = [], []
    checked = 0
    for r in results:
        if r.op != "Match" or r.engine == REFERENCE or r.error:
            continue
        ref = find(results, "Match", REFERENCE, r.workload, r.size)
        if not ref:
            continue
        checked += 1
        if ref.get("answer_digest") == r.get("answer_digest"):
            continue
        # A plugin may number its nodes its own way (SPEC §1, verify's
        # length-only comparison): then only the matched lengths must agree.
        if (r.engine.startswith(PLUGIN) and r.get("length_digest") is not None
                and r.get("length_digest") == ref.get("length_digest")):
            own_ids.append(f"{r.engine} on {r.label}")
        else:
            bad.append(f"{r.engine} on {r.label}")
    if not checked:
        return []
    verdict = ("every engine returned exactly the reference's answers "
               f"({checked} engine × workload pairs)" if not bad else
               "**answers differ from the reference:** " + ", ".join(bad))
    if own_ids and not bad:
        verdict = (f"every engine returned the reference's matched lengths "
                   f"({checked} engine × workload pairs), and its node IDs too "
                   "but for plugins that number nodes their own way: "
                   + ", ".join(own_ids))
    elif own_ids:
        verdict += ("; the same matched lengths with the plugin's own node IDs: "
                    + ", ".join(own_ids))
    return ["Answer check (digest of every matched length and node ID): "
            + verdict + ".", ""]


def builtin_of(engine):
    """The built-in engine a run-time engine label names ("plugin:radix" ->
    "radix"), or None for a built-in engine."""
    for prefix in (PLUGIN, VIRTUAL):
        if engine.startswith(prefix):
            return engine[len(prefix):]
    return None


def plugin_section(results, engines, context):
    """Where the run-time engines came from, and each one's CPU time against
    the built-in engine of the same name in this run (the plugin target:
    at most PLUGIN_OVERHEAD more), with the virtual-call rows between."""
    named = [e for e in engines if builtin_of(e) is not None]
    if not named:
        return []
    lines = ["## Engines named at run time", "",
             "`kvprefix_bench --kvprefix_engine=NAME` rows: `plugin:<name>` is a "
             "cache loaded as a shared library through the C ABI "
             "(plugin/kvprefix_plugin.h, one indirect call per sequence), "
             "`virtual:<name>` a built-in engine called through the PrefixIndex "
             "interface (one virtual call per sequence); the built-in rows call "
             "the engine's own type directly.", "",
             "| engine | from |", "| --- | --- |"]
    for engine in named:
        source = context.get(f"engine_source:{engine}", "–")
        if source.startswith(PLUGIN):
            source = PLUGIN + display_path(source[len(PLUGIN):], context)
        lines.append(f"| {engine} | `{source}` |")
    lines.append("")
    rows = []
    for r in results:
        compiled = find(results, r.op, builtin_of(r.engine) or "", r.workload,
                        r.size, r.cache) if r.engine.startswith(PLUGIN) else None
        if r.error or r.op not in ("Match", "Replay") or not compiled:
            continue
        virtual = find(results, r.op, VIRTUAL + compiled.engine, r.workload,
                       r.size, r.cache)
        time = lambda x: x.get("cpu_time") if x else None
        over = time(r) / time(compiled) if time(compiled) else None
        over_virtual = time(r) / time(virtual) if time(virtual) else None
        rows.append((r, compiled, virtual, over, over_virtual))
    if not rows:
        return lines
    # The target is set on the real workloads; on synthetic ones of a few
    # tokens a sequence the per-call cost weighs more, and is shown too.
    limit = 1 + PLUGIN_OVERHEAD
    mooncake = [row[3] for row in rows
                if row[3] and row[0].workload.startswith("mooncake")]
    if mooncake:
        worst = max(mooncake)
        verdict = (f"on the Mooncake rows the worst is {worst:.3f}×"
                   + (" (**over the target**)" if worst > limit else
                      " (within the target)"))
    else:
        verdict = "this run has no Mooncake rows to judge the target by"
    lines += [f"CPU time of each plugin row over the same engine compiled in, "
              f"on Match and Replay (target: at most {limit:.2f}×, "
              f"{100 * PLUGIN_OVERHEAD:.0f}% more, on the Mooncake workloads); "
              f"{verdict}. Over the virtual rows it is what the C ABI costs "
              "beyond a virtual call. Medians of one run (interleaved).", "",
              "| benchmark | compiled in (M tokens/s) | virtual (M tokens/s) | "
              "plugin (M tokens/s) | plugin / compiled in (time) | "
              "plugin / virtual (time) |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r, compiled, virtual, over, over_virtual in rows:
        mark = lambda x: (f"**{fmt(x)}×**" if x and x > limit else
                          f"{fmt(x)}×" if x else "–")
        lines.append(f"| BM_{r.op}/{r.engine}/{r.label} | {fmt(mtok(compiled))} | "
                     f"{fmt(mtok(virtual))} | {fmt(mtok(r))} | {mark(over)} | "
                     f"{fmt(over_virtual) + '×' if over_virtual else '–'} |")
    return lines + [""]


def cv_cell(r, threshold):
    """The cv column: the cv, "noisy" when above the threshold, and for a
    rerun row the cv of the first run it replaces."""
    if r.cv is None:
        return ""
    cell = f"{100 * r.cv:.1f}%"
    if noisy(r, threshold):
        cell = f"**{cell} noisy**"
    if r.first is not None and r.first.cv is not None:
        cell += f" (rerun; first run {100 * r.first.cv:.1f}%)"
    return cell


def noise_note(results, threshold):
    """One paragraph: how many rows were rerun and how many stay noisy."""
    rerun = [r for r in results if r.first is not None]
    still = [r for r in results if noisy(r, threshold)]
    limit = f"{100 * threshold:.0f}%"
    if rerun:
        text = (f"{len(rerun)} rows had a cv above {limit} and were rerun alone "
                f"once; they show the rerun, marked \"rerun\" with the first "
                f"run's cv. {len(still)} rows are still above {limit} (\"noisy\"): "
                "read them as rough.")
    elif still:
        text = (f"{len(still)} rows have a cv above {limit} (\"noisy\") and were "
                "not rerun (bench/run_report.sh reruns them; this run's JSON has "
                "no rerun): read them as rough.")
    else:
        text = f"Every row's cv is at most {limit}."
    return [text, ""]


def full_table(results, engines, threshold=NOISY_CV):
    lines = ["## All results", "",
             "Medians; cv is the coefficient of variation of CPU time over the "
             "repetitions.", ""] + noise_note(results, threshold) + [
             "| benchmark | M tokens/s | ns/token | vs reference | bytes/node | "
             "nodes | hit ratio | cv |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        if r.error:
            lines.append(f"| BM_{r.op}/{r.engine}/{r.label} | error: {r.error} "
                         "| | | | | | |")
            continue
        base = find(results, r.op, REFERENCE, r.workload, r.size, r.cache)
        hit = r.get("hit_ratio")
        lines.append(
            f"| BM_{r.op}/{r.engine}/{r.label} | {fmt(mtok(r))} | "
            f"{fmt(r.ns_per_token())} | "
            f"{fmt(ratio(r, base)) + '×' if base and r.engine != REFERENCE else ''} | "
            f"{fmt(r.get('bytes_per_node'))} | {count(r.get('nodes'))} | "
            f"{fmt(hit) if hit is not None else ''} | {cv_cell(r, threshold)} |")
    return lines + [""]


def io_section(results, e2e):
    lines = []
    # The reader the CLI runs ("io"), not its strict or fallback-kernel
    # variants, which the full table lists beside it.
    parse = next((r for r in results if r.op == "ParseJson" and r.engine == "io"
                  and not r.error), None)
    write = next((r for r in results if r.op == "WriteJson" and r.engine == "io"
                  and not r.error), None)
    if not parse and not e2e:
        return lines
    lines += ["## End to end: the CLI", ""]
    if e2e:
        mb = e2e["input_bytes"] / 1e6
        lines += [f"Input: `{e2e['input']}`, {mb:,.0f} MB of SPEC §4 JSON. One run "
                  "of `kvprefix match --engine E INPUT --output FILE` per engine; wall "
                  "and CPU (user + system) seconds from wait4(2). Every engine wrote "
                  "the same bytes: "
                  f"{'yes' if e2e.get('outputs_identical') else 'NO'}.", "",
                  "| engine | wall (s) | CPU (s) | MB/s of JSON in (wall) | "
                  "MB/s per CPU-second | peak RSS (MB) |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for run in e2e.get("match", []):
            lines.append(f"| {run['engine']} | {run['seconds']:.2f} | "
                         f"{run['cpu_seconds']:.2f} | {mb / run['seconds']:,.0f} | "
                         f"{mb / run['cpu_seconds']:,.0f} | "
                         f"{run['max_rss_kb'] / 1024:,.0f} |")
        lines.append("")
    if parse or write:
        lines += ["The JSON stages timed apart (Google Benchmark on the same "
                  "document, in memory, no file I/O):", "",
                  "| stage | benchmark | CPU ms | MB/s | M tokens/s |",
                  "| --- | --- | ---: | ---: | ---: |"]
        for stage, r in (("parse", parse), ("write", write)):
            if r:
                lines.append(
                    f"| {stage} | BM_{r.op}/{r.engine}/{r.label} | "
                    f"{fmt(r.get('cpu_time'))} | {fmt(r.get('bytes_per_second') / 1e6)} | "
                    f"{fmt(mtok(r))} |")
        lines.append("")
    if e2e and parse and write:
        lines += stage_breakdown(e2e, parse, write)
    if e2e and e2e.get("replay"):
        lines += ["`kvprefix replay --mode token` on each whole Mooncake trace; read "
                  "and replay seconds as the CLI reports them:", "",
                  "| trace | engine | requests | request tokens | hit ratio | nodes | "
                  "bytes/node | read (s) | replay (s) | M tokens/s replayed | "
                  "wall (s) | peak RSS (MB) |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                  "| ---: | ---: |"]
        for run in e2e["replay"]:
            s = run["summary"]
            lines.append(
                f"| {run['trace']} | {run['engine']} | {s['requests']:,} | "
                f"{s['request_tokens']:,} | {s['hit_ratio']:.4f} | {s['nodes']:,} | "
                f"{s['memory_bytes'] / max(1, s['nodes']):.2f} | "
                f"{s['read_seconds']:.2f} | {s['replay_seconds']:.2f} | "
                f"{s['request_tokens'] / 1e6 / s['replay_seconds']:,.0f} | "
                f"{run['seconds']:.2f} | {run['max_rss_kb'] / 1024:,.0f} |")
        lines.append("")
    return lines + model_replays_section(results, e2e) + targets_section(e2e)


def model_replays_section(results, e2e):
    """bench/e2e.py's model replays, each beside the warm benchmark row of
    the same replay."""
    runs = e2e.get("model_replay") if e2e else None
    if not runs:
        return []
    lines = ["`kvprefix replay TRACE --mode block --model M --engine E --capacity C` "
             "(SPEC §9) on each whole trace: fresh processes, "
             f"{runs[0]['runs']} each, medians (wall: process start, page faults, "
             "reading and parsing the trace included; replay: the replay alone, "
             "as the CLI reports it, in whole ms); load average "
             + ", ".join(f"{x:.2f}" for x in e2e.get("load_avg_start", []))
             + " at the start of bench/e2e.py. Warm is the benchmark of the same "
             "replay (`BM_Replay/E/mooncake-<trace>-blocks/<lines>/<model><C>`, "
             "Cache models above: one process, the trace in memory, a median of "
             "its repetitions), from the benchmark run, not from this one.", "",
             "| trace | model | engine | capacity (blocks) | hit ratio | "
             "replay (ms) | wall (ms) | peak RSS (MB) | warm (ms) | wall / warm |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for run in runs:
        # conversation_trace.jsonl -> the benchmark's mooncake-conversation-blocks
        workload = f"mooncake-{run['trace'].split('_')[0]}-blocks"
        warm = find(results, "Replay", run["engine"], workload,
                    cache=f"{run['model']}{run['capacity']}")
        lines.append(
            f"| {run['trace']} | {run['model']} | {run['engine']} | "
            f"{run['capacity']:,} | {run['summary']['hit_ratio']:.4f} | "
            f"{1e3 * run['replay_seconds']:,.0f} | {fmt(1e3 * run['seconds'])} | "
            f"{run['max_rss_kb'] / 1024:,.0f} | "
            f"{fmt(milliseconds(warm)) if warm else '–'} | "
            f"{fmt(1e3 * run['seconds'] / milliseconds(warm)) + '×' if warm else '–'} |")
    return lines + [""]


def targets_section(e2e):
    """The before/after table of bench/e2e.py --baseline-cli: both builds in
    one run, alternating, medians of three fresh processes."""
    rows = e2e.get("targets") if e2e else None
    if not rows:
        return []
    old = e2e.get("baseline_name", "baseline")
    load = lambda key: ", ".join(f"{x:.2f}" for x in e2e.get(key, []))
    lines = [f"### Before and after: this build against {old}", "",
             f"Both binaries run the same commands in this one run, alternating, "
             f"three fresh processes each; medians. Load average {load('load_avg_start')} "
             f"before, {load('load_avg_end')} after. Command: `bench/e2e.py --build "
             f"BUILD --baseline-cli OLD/kvprefix --baseline-name {old} --out e2e.json`.",
             "", f"| target | command | wall {old} (s) | wall now (s) | speed-up | "
             f"peak RSS {old} (MB) | peak RSS now (MB) | RSS ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        before, after = row["before"], row["after"]
        lines.append(
            f"| {row['target']} | `{row['command']}` | {before['seconds']:.2f} | "
            f"{after['seconds']:.2f} | {before['seconds'] / after['seconds']:.1f}x | "
            f"{before['max_rss_kb'] / 1024:,.0f} | {after['max_rss_kb'] / 1024:,.0f} | "
            f"{after['max_rss_kb'] / before['max_rss_kb']:.2f} |")
    return lines + [""]


def stage_breakdown(e2e, parse, write):
    """Splits each CLI run's CPU time into parse, write and the rest."""
    parse_s = parse.get("cpu_time") / 1e3
    write_s = write.get("cpu_time") / 1e3
    lines = ["Split of each CLI run's CPU time: parse and write from the two "
             "benchmarks; the rest is reading and writing the files, building the "
             "index and matching.", "",
             "| engine | parse (s) | read + build + match + file write (s) | "
             "JSON write (s) |",
             "| --- | ---: | ---: | ---: |"]
    for run in e2e.get("match", []):
        rest = run["cpu_seconds"] - parse_s - write_s
        lines.append(f"| {run['engine']} | {parse_s:.2f} | {rest:.2f} | {write_s:.2f} |")
    return lines + [""]


def describe_run(paths):
    """One line naming a run's commit, date, load and repetitions (several
    files: the first, and how many rows the others rerun)."""
    raw = merged_benchmarks(paths)
    context = raw["context"]
    reps = max((b.get("repetitions", 1) for b in raw["benchmarks"]), default=0)
    load = ", ".join(f"{x:.1f}" for x in context.get("load_avg", []))
    text = (f"commit {context.get('commit', '?')}, {context.get('date', '?')}, "
            f"{len({b.get('run_name') for b in raw['benchmarks']})} benchmarks x "
            f"{reps} repetitions, load average {load}")
    if len(paths) > 1:
        with open(paths[0]) as f:
            first = {b.get("run_name") for b in json.load(f)["benchmarks"]}
        rerun = set()
        for path in paths[1:]:
            with open(path) as f:
                rerun |= {b.get("run_name") for b in json.load(f)["benchmarks"]}
        text += f", {len(rerun & first)} of them rerun"
    return text


def repetition_counts(raw):
    """run_name -> number of iteration (non-aggregate) entries."""
    counts = collections.Counter()
    for b in raw["benchmarks"]:
        if b.get("run_type") != "aggregate" and not b.get("error_occurred"):
            counts[b.get("run_name", b["name"])] += 1
    return counts


def smallest_p(n, m):
    """The smallest p-value compare.py's two-sided Mann-Whitney U test can
    give for n against m repetitions: that of two samples that do not
    overlap at all, computed with the same scipy call (exact for small
    samples: 2 / C(n + m, n)). compare.py runs no test below 2."""
    if min(n, m) < 2:
        return 1.0
    from scipy.stats import mannwhitneyu
    return mannwhitneyu(list(range(n)), list(range(n, n + m)),
                        alternative="two-sided").pvalue


def repetitions_needed(alpha):
    """The fewest repetitions, the same in both runs, that can give p < alpha."""
    n = 2
    while smallest_p(n, n) >= alpha and n < 100:
        n += 1
    return n


def compare_section(baselines, run_paths, compare_py, alpha):
    """Runs compare.py and keeps the statistically significant changes."""
    with tempfile.TemporaryDirectory() as tmp:
        old_raw, new_raw = merged_benchmarks(baselines), merged_benchmarks(run_paths)
        files = []
        for name, raw in (("baseline.json", old_raw), ("contender.json", new_raw)):
            files.append(os.path.join(tmp, name))
            with open(files[-1], "w") as f:
                json.dump(raw, f)
        dump = os.path.join(tmp, "diff.json")
        command = [sys.executable, compare_py, "--no-color", "-a", "--alpha",
                   str(alpha), "-d", dump, "benchmarks"] + files
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            return ["## Comparison with the baseline", "",
                    f"compare.py failed: `{proc.stderr.strip()[-500:]}`", ""]
        with open(dump) as f:
            diff = json.load(f)
    old_reps, new_reps = repetition_counts(old_raw), repetition_counts(new_raw)
    rows, logs, tested, untestable = [], [], 0, collections.Counter()
    reference_logs = []  # the reference engine's rows: the noise floor
    for entry in diff:
        m = entry["measurements"]
        if entry.get("run_type") == "aggregate" or not m:
            continue
        old = sorted(x["cpu_time"] for x in m)[len(m) // 2]
        new = sorted(x["cpu_time_other"] for x in m)[len(m) // 2]
        # compare.py's OVERALL_GEOMEAN spans each file's own benchmarks,
        # which misleads when the two runs hold different sets: use the
        # common ones.
        if old > 0 and new > 0:
            logs.append(math.log(new / old))
            if entry["name"].split("/")[1:2] == ["reference"]:
                reference_logs.append(logs[-1])
        n, k = old_reps[entry["name"]], new_reps[entry["name"]]
        if smallest_p(n, k) >= alpha:
            untestable[(n, k)] += 1
            continue
        tested += 1
        utest = entry.get("utest") or {}
        p = utest.get("cpu_pvalue")
        if p is None or p >= alpha:
            continue
        rows.append((entry["name"], old, new, (new - old) / old, p,
                     f"{n} vs {k}", entry["time_unit"]))
    lines = ["## Comparison with the baseline run", "",
             f"`{os.path.basename(compare_py)} benchmarks <baseline> <this run>`, "
             f"baseline: {describe_run(baselines)} "
             "(Google Benchmark's tool, two-sided Mann-Whitney U test on CPU time).", ""]
    if untestable:
        pairs = "; ".join(f"{count} with {n} against {k} repetitions, where the "
                          f"smallest p the test can give is {smallest_p(n, k):.3g}"
                          for (n, k), count in sorted(untestable.items()))
        lines += [f"**Too few repetitions for the U test: {sum(untestable.values())} "
                  f"of the {sum(untestable.values()) + tested} benchmarks in both "
                  f"runs cannot reach p < {alpha} whatever their times** ({pairs}). "
                  "They are neither changed nor unchanged as far as this test can "
                  f"tell; rerun both runs with at least {repetitions_needed(alpha)} "
                  "repetitions (KVPREFIX_BENCH_REPETITIONS) to test them.", ""]
    if tested:
        lines += [f"{len(rows)} of the {tested} benchmarks that could be tested "
                  f"changed with p < {alpha}; medians shown (negative change = "
                  "faster now).", ""]
    if logs:
        lines += [f"Geometric mean change of median CPU time over the {len(logs)} "
                  f"benchmarks in both runs: "
                  f"{100 * (math.exp(sum(logs) / len(logs)) - 1):+.1f}%"
                  + (" (not tested for significance)" if not tested else "")
                  + ".", ""]
    if reference_logs:
        # Said, not assumed: the reference's code may differ between the two
        # commits, and then its rows are no noise floor.
        lines += [f"The reference engine's rows alone ({len(reference_logs)} in both runs): "
                  f"{100 * (math.exp(sum(reference_logs) / len(reference_logs)) - 1):+.1f}%. "
                  "Where its code is the same in both commits (`git diff <baseline "
                  "commit> <this commit> -- reference/` prints nothing), that is the "
                  "noise floor between the runs: other jobs on the machine (see the "
                  "load averages) or a machine of another speed.", ""]
    if rows:
        lines += ["| benchmark | baseline | this run | change | p | repetitions (baseline vs this run) |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for name, old, new, change, p, reps, unit in sorted(rows, key=lambda r: r[3]):
            lines.append(f"| {name} | {fmt(old)} {unit} | {fmt(new)} {unit} | "
                         f"{100 * change:+.1f}% | {p:.4f} | {reps} |")
        lines.append("")
    return lines


def charts_section(results, engines, img_dir, out_dir):
    lines = ["## Charts", ""]
    charts = [
        (grouped_bars(results, engines, "Build", mtok, "build throughput (M tokens/s, log)",
                      "Build: inserted tokens per second", img_dir, "build_throughput.png"),
         "Build throughput per engine per workload"),
        (grouped_bars(results, engines, "Match", mtok, "warm match throughput (M tokens/s, log)",
                      "Match (warm): request tokens per second", img_dir,
                      "match_throughput.png"),
         "Warm match throughput per engine per workload"),
        (grouped_bars(results, engines, "Build",
                      lambda r: ratio(r, find(results, "Build", REFERENCE, r.workload, r.size)),
                      "speed-up over reference (×, log)", "Build: speed-up over the reference",
                      img_dir, "build_speedup.png", hline=1.0, skip_engines=(REFERENCE,)),
         "Build speed-up over the reference (dashed line: 1×)"),
        (grouped_bars(results, engines, "Match",
                      lambda r: ratio(r, find(results, "Match", REFERENCE, r.workload, r.size)),
                      "speed-up over reference (×, log)", "Match: speed-up over the reference",
                      img_dir, "match_speedup.png", hline=1.0, skip_engines=(REFERENCE,)),
         "Match speed-up over the reference (dashed line: 1×)"),
        (sweep_chart(results, engines, "shared-prefix", "shared-prefix length (tokens)",
                     "32 sequences sharing a prefix", img_dir, "shared_prefix_sweep.png", 2),
         "ns per token against shared-prefix length (log-log)"),
        (sweep_chart(results, engines, "sequence-count", "number of cached sequences",
                     "128-token sequences", img_dir, "sequence_count_sweep.png", 10),
         "ns per token against number of sequences (log-log)"),
        (grouped_bars(results, engines, "Build", lambda r: r.get("bytes_per_node"),
                      "memory (bytes per node, log)", "Memory: bytes per node after build",
                      img_dir, "bytes_per_node.png"),
         "Bytes per node (memory_bytes() / nodes)"),
        (grouped_bars(results, engines, "Replay", mtok, "replay throughput (M tokens/s, log)",
                      "Replay: match then insert, trace tokens per second", img_dir,
                      "replay_throughput.png"),
         "Replay throughput (SPEC §3)"),
    ]
    rel = os.path.relpath(img_dir, out_dir)
    for name, caption in charts:
        if name:
            lines += [f"### {caption}", "", f"![{caption}]({rel}/{name})", ""]
    return lines


# The Mooncake paper's Table 2: prefix-cache hit ratio with an unbounded cache.
PAPER_RATIOS = {"conversation": "~40%", "synthetic": "~66%"}
# The policy whose hit ratios `kvprefix curve` computes (SPEC §8, "The LRU
# curve"); the other policies' columns come from the replays CSVs.
CURVE_POLICY = "lru"
# The cache models of SPEC §9: `--model` -> how the report names it. Their
# curves (bench/curves.py's curve_<trace>_<mode>_<model>.csv, block mode
# only) give the curves table a column each; their BM_Replay rows
# (.../<model>10000, bench/engine_bench.cc) the models table, beside model
# spec's (§8's LRU).
MODELS = {"spec": "spec (§8 LRU)", "vllm": "vLLM", "sglang": "SGLang",
          "sglang-on-allocate": "SGLang, on-allocate"}
CURVE_MODELS = ("vllm", "sglang")


def read_csv(path):
    import csv
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def curves_section(data_dir, img_dir, out_dir):
    """Hit ratio against capacity (bench/curves.py's CSVs and charts)."""
    stems = [(trace, mode) for trace in ("conversation", "synthetic")
             for mode in ("block", "token")]
    present = [(t, m) for t, m in stems
               if os.path.exists(os.path.join(data_dir, f"curve_{t}_{m}.csv"))]
    if not present:
        return []
    replays = {(t, m): read_csv(os.path.join(data_dir, f"curve_{t}_{m}_replays.csv"))
               for t, m in present}
    # The policies replayed, in the order bench/curves.py wrote them (that of
    # `kvprefix policies`): the curve's own first, then the others.
    policies = [CURVE_POLICY]
    for rows in replays.values():
        for r in rows:
            if r["policy"] not in policies:
                policies.append(r["policy"])
    # Each model's curve, capacity -> row, where bench/curves.py drew one.
    model_curves = {}
    for (t, m) in present:
        for model in CURVE_MODELS:
            path = os.path.join(data_dir, f"curve_{t}_{m}_{model}.csv")
            if os.path.exists(path):
                model_curves[t, m, model] = {r["capacity"]: r for r in read_csv(path)}
    models = [model for model in CURVE_MODELS
              if any(key[2] == model for key in model_curves)]
    model_text = ""
    if models:
        model_modes = sorted({m for _, m, _ in model_curves})
        model_text = (
            " In " + " and ".join(f"{m} mode" for m in model_modes) + ", lines "
            "for SPEC §9's cache models, "
            + " and ".join(f"{MODELS[model]} (`--model {model}`)" for model in models)
            + " (SGLang's with its defaults: trigger after-insert, LRU), at the "
            "same capacities, one replay per capacity (`kvprefix curve --model M "
            "--capacities ...`), each checked by one `kvprefix replay --model M` "
            "at a replayed capacity (bench/curves.py fails otherwise). vLLM always "
            "matches all of a request but its last token (SPEC §9.1) and refuses "
            "a request needing more blocks than the pool has (§9.2): hence its "
            "lower ratios at the smallest capacities. Token mode has no model "
            "lines: a node is a token there, and vLLM's pool of 1-token blocks "
            "(page size 1) is no deployment's (vLLM's default block is 16 "
            "tokens), while another page size counts capacity in pages, not "
            "the chart's tokens.")
    others = ", ".join(f"`--policy {p}`" for p in policies[1:]) or "no other policy"
    lines = ["## Hit ratio against capacity (SPEC §8)", "",
             "The exact LRU hit ratio at 40 log-spaced capacities from one pass "
             "over each whole trace (`kvprefix curve`: Mattson's stack algorithm "
             f"on radix runs), with `kvprefix replay` ({others}) at five "
             "capacities as points; at each of those capacities an LRU replay was "
             "run too and matched exactly what the curve says (bench/curves.py "
             "fails otherwise). A node is a 512-token block in block mode and a "
             "token in token mode; the top axis is the KV cache those nodes need "
             "for Llama-3-8B in fp16 (128 KiB a token)." + model_text + " Data: "
             f"`{display_path(data_dir)}/curve_*.csv`.", "",
             "| trace | mode | distinct prefixes (nodes) | unbounded hit ratio | "
             "Mooncake paper (Table 2) |", "| --- | --- | ---: | ---: | ---: |"]
    for trace, mode in present:
        rows = read_csv(os.path.join(data_dir, f"curve_{trace}_{mode}.csv"))
        last = rows[-1]
        lines.append(f"| {trace} | {mode} | {int(last['capacity']):,} | "
                     f"{float(last['hit_ratio']):.1%} | {PAPER_RATIOS[trace]} |")
    lines += ["", "With an unbounded cache the released traces give a few points "
              "less than the paper's rounded figures (its Table 2 does not say how "
              "it counts a request's partial last block, or requests in flight "
              "together). Token mode counts tokens, so a match that ends inside a "
              "block (a request that is a prefix of a longer one) counts the "
              "tokens it shares, where block mode counts whole blocks: hence "
              "token mode's slightly higher ratios.",
              "", "| trace | mode | capacity (nodes) | KV cache | "
              + " | ".join([p.upper() for p in policies]
                           + [MODELS[model] for model in models]) + " |",
              "| --- | --- | ---: | ---: |" + " ---: |" * (len(policies) + len(models))]
    for trace, mode in present:
        by_capacity = collections.OrderedDict()
        for r in replays[trace, mode]:
            by_capacity.setdefault(r["capacity"], {})[r["policy"]] = r
        for capacity, by_policy in by_capacity.items():
            gib = int(next(iter(by_policy.values()))["capacity_bytes"]) / 2**30
            cells = [by_policy.get(p) for p in policies] + [
                model_curves.get((trace, mode, model), {}).get(capacity)
                for model in models]
            ratios = [f"{float(cell['hit_ratio']):.2%}" if cell else "–"
                      for cell in cells]
            lines.append(f"| {trace} | {mode} | {int(capacity):,} | {gib:,.1f} GiB | "
                         + " | ".join(ratios) + " |")
    lines.append("")
    rel = os.path.relpath(img_dir, out_dir)
    for trace, mode in present:
        name = f"curve_{trace}_{mode}.png"
        if os.path.exists(os.path.join(img_dir, name)):
            lines += [f"![{trace} trace, {mode} mode]({rel}/{name})", ""]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+",
                        help="benchmark JSON files (one run; later files rerun rows)")
    parser.add_argument("--out", help="Markdown file to write")
    parser.add_argument("--img-dir", help="folder for the PNG charts")
    parser.add_argument("--baseline", action="append",
                        help="older benchmark JSON to compare with (repeatable: "
                             "a baseline and its rerun)")
    parser.add_argument("--compare-py", default="/usr/share/benchmark/compare.py")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--e2e", help="JSON written by bench/e2e.py")
    parser.add_argument("--command",
                        help="the command that produced the run, for the header "
                             "(default: the \"command\" the run's JSON records)")
    parser.add_argument("--no-curves", action="store_true",
                        help="leave out the hit-ratio curves (bench/curves.py's "
                             "CSVs beside the first run), e.g. when they are "
                             "from an older run")
    parser.add_argument("--noisy-cv", type=float, default=NOISY_CV,
                        help="cv of CPU time above which a row is noisy (0.10)")
    parser.add_argument("--list-noisy", action="store_true",
                        help="print a --benchmark_filter of the noisy rows and exit")
    args = parser.parse_args()

    context, results, _ = load_runs(args.runs)
    if args.list_noisy:
        print(noisy_filter(results, args.noisy_cv))
        return
    if not args.out or not args.img_dir:
        parser.error("--out and --img-dir are required (unless --list-noisy)")
    engines = engines_in(context, results)
    results = sort_results(context, results, engines)
    os.makedirs(args.img_dir, exist_ok=True)
    e2e = None
    if args.e2e and os.path.exists(args.e2e):
        with open(args.e2e) as f:
            e2e = json.load(f)

    command = args.command or context.get("command")
    produced = (f"Produced on this machine by one command: `{command}`." if command
                else "Produced on this machine by kvprefix_bench; the run's JSON "
                     "records no command (see Machine and run for its settings).")
    lines = ["# kvprefix benchmarks", "",
             f"{produced} Engines: " + ", ".join(engines) + ". Benchmark names are "
             "`BM_<Op>/<engine>/<workload>/<size>` (bench/workloads.h says what "
             "each workload models and what its size counts).", ""]
    lines += key_table(results, engines)
    lines += fastest_on_mooncake(results, engines)
    lines += capacity_section(results, engines)
    lines += models_section(results, engines)
    lines += answers_section(results, engines)
    lines += plugin_section(results, engines, context)
    out_dir = os.path.dirname(os.path.abspath(args.out))
    shown_paths = [display_path(os.path.abspath(p)) for p in args.runs]
    baseline_note = describe_run(args.baseline) if args.baseline else None
    lines += context_section(context, results, command, shown_paths, baseline_note)
    lines += io_section(results, e2e)
    lines += charts_section(results, engines, args.img_dir, out_dir)
    if not args.no_curves:
        lines += curves_section(os.path.dirname(os.path.abspath(args.runs[0])),
                                args.img_dir, out_dir)
    if args.baseline:
        lines += compare_section(args.baseline, args.runs, args.compare_py, args.alpha)
    lines += full_table(results, engines, args.noisy_cv)
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out} and charts in {args.img_dir}")


if __name__ == "__main__":
    main()
