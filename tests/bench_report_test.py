#!/usr/bin/python3
"""ctest bench_report: bench/report.py on small Google Benchmark JSON made here.

Checks what the report says about a comparison (a U test that cannot reach
significance with too few repetitions is named as such, not counted as "0
benchmarks changed"), noisy rows and their reruns, integer node counts,
paths, a plugin's rows (kvprefix_bench --kvprefix_engine=plugin:PATH) in
the tables, the charts and the overhead table, a column or row for each
eviction policy the data holds, and the cache models' (SPEC §9) benchmark
table, curve columns and end-to-end rows, and their lines in
cli/plot_curve.py's charts. Exits 77 (skipped, saying so) without Google Benchmark's compare.py,
scipy or matplotlib (scripts/dev.sh installs them).
"""

import importlib.util
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT = os.path.join(SOURCE, "bench", "report.py")
PLOT = os.path.join(SOURCE, "cli", "plot_curve.py")
COMPARE = "/usr/share/benchmark/compare.py"
failures = []


def check(condition, what, text=""):
    if not condition:
        failures.append(what)
        print(f"FAILED: {what}\n{text}", file=sys.stderr)


def run_json(times, repetitions, spread=None, nodes=3072.0, counters=None):
    """Google Benchmark JSON: each name in `times` (ms) run `repetitions`
    times, CPU times spread evenly over +-1% (or +-`spread[name]`) of it, so
    that the median is the given time, with the median and cv aggregates
    kvprefix_bench writes; `counters[name]` replaces counters of that row."""
    benchmarks = []
    for name, base in times.items():
        width = (spread or {}).get(name, 0.01)
        values = [base * (1 + width * (2 * i / (repetitions - 1) - 1))
                  for i in range(repetitions)] if repetitions > 1 else [base]
        common = {"run_name": name, "repetitions": repetitions, "threads": 1,
                  "time_unit": "ms", "nodes": nodes, "bytes_per_node": 8.5,
                  "hit_ratio": 0.5, "answer_digest": 7.0, "length_digest": 5.0}
        common.update((counters or {}).get(name, {}))
        for i, value in enumerate(values):
            benchmarks.append(dict(common, name=name, run_type="iteration",
                                   repetition_index=i, iterations=10,
                                   real_time=value, cpu_time=value,
                                   items_per_second=1e9 / value))
        median = statistics.median(values)
        benchmarks.append(dict(common, name=f"{name}_median", run_type="aggregate",
                               aggregate_name="median", iterations=repetitions,
                               real_time=median, cpu_time=median,
                               items_per_second=1e9 / median))
        if repetitions > 1:
            cv = statistics.stdev(values) / statistics.mean(values)
            benchmarks.append(dict(common, name=f"{name}_cv", run_type="aggregate",
                                   aggregate_name="cv", aggregate_unit="percentage",
                                   iterations=repetitions, real_time=cv, cpu_time=cv))
    context = {"date": "2026-01-01T00:00:00+00:00", "host_name": "host",
               "executable": "/elsewhere/src/build/bench/kvprefix_bench",
               "num_cpus": 2, "mhz_per_cpu": 2000, "caches": [], "load_avg": [0.5],
               "library_build_type": "debug", "build_type": "Release",
               "engines": "reference radix", "workloads": "wide/100",
               "mooncake_dir": "/elsewhere/src/data/mooncake",
               "mooncake_requests": "2000", "commit": "abc1234"}
    return {"context": context, "benchmarks": benchmarks}


def write(folder, name, run):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(run, f)
    return path


def report(folder, runs, baselines=(), options=()):
    out = os.path.join(folder, "report.md")
    command = [sys.executable, REPORT, "--out", out, "--img-dir",
               os.path.join(folder, "img"), "--command", "test", *options]
    for baseline in baselines:
        command += ["--baseline", baseline]
    proc = subprocess.run(command + list(runs), capture_output=True, text=True)
    check(proc.returncode == 0, f"report.py exited {proc.returncode}", proc.stderr)
    with open(out) as f:
        return f.read()


TIMES = {"BM_Match/reference/wide/100": 10.0, "BM_Match/radix/wide/100": 2.0}
SLOWER = {name: 1.5 * time for name, time in TIMES.items()}


def too_few_repetitions(folder):
    """2 against 2 repetitions, 50% slower: the U test's smallest p is 1/3."""
    text = report(folder, [write(folder, "new.json", run_json(SLOWER, 2))],
                  [write(folder, "old.json", run_json(TIMES, 2))])
    check("**Too few repetitions for the U test: 2 of the 2 benchmarks in both "
          "runs cannot reach p < 0.05 whatever their times**" in text,
          "2 against 2 repetitions: no 'Too few repetitions' line", text)
    check("the smallest p the test can give is 0.333" in text,
          "the smallest p of 2 against 2 is not given as 0.333", text)
    check("at least 4 repetitions" in text, "no advice of 4 repetitions", text)
    check("changed with p <" not in text,
          "an untestable comparison still counts benchmarks that changed", text)
    check("+50.0% (not tested for significance)" in text,
          "the geometric mean is not marked untested", text)


def enough_repetitions(folder):
    """5 against 5 repetitions, 50% slower: both changed (p = 2/252)."""
    text = report(folder, [write(folder, "new.json", run_json(SLOWER, 5))],
                  [write(folder, "old.json", run_json(TIMES, 5))])
    check("2 of the 2 benchmarks that could be tested changed with p < 0.05" in text,
          "5 against 5 repetitions: the two changes are not counted", text)
    check("Too few repetitions" not in text,
          "5 against 5 repetitions called too few", text)
    check("| BM_Match/radix/wide/100 | 2.00 ms | 3.00 ms | +50.0% | 0.0079 | 5 vs 5 |"
          in text, "the changed row is missing or wrong", text)
    # Former bug: the report called the reference's rows the noise floor
    # "whose code did not change", true or not; it now gives their change
    # and says when they are one.
    check("The reference engine's rows alone (1 in both runs): +50.0%. Where its code is the "
          "same in both commits" in text,
          "the reference's rows are not given apart with their condition", text)
    check("whose code did not change" not in text,
          "the report still asserts the reference's code did not change", text)


def noisy_rows_and_reruns(folder):
    """A row with a 30% spread is listed for a rerun and marked in the table."""
    first = write(folder, "first.json",
                  run_json(TIMES, 3, spread={"BM_Match/radix/wide/100": 0.3}))
    proc = subprocess.run([sys.executable, REPORT, "--list-noisy", first],
                          capture_output=True, text=True)
    check(proc.stdout == "^(BM_Match/radix/wide/100)$\n",
          f"--list-noisy printed {proc.stdout!r}", proc.stderr)
    text = report(folder, [first])
    check("| **30.0% noisy** |" in text, "the noisy row is not flagged", text)
    check("1 rows have a cv above 10% (\"noisy\") and were not rerun" in text,
          "no note of the noisy row", text)
    rerun = write(folder, "rerun.json",
                  run_json({"BM_Match/radix/wide/100": 4.0}, 3))
    text = report(folder, [first, rerun])
    check("| BM_Match/radix/wide/100 | 250 | 4.00 |" in text,
          "the table does not show the rerun's median", text)
    check("| 1.0% (rerun; first run 30.0%) |" in text,
          "the rerun row is not marked with the first run's cv", text)
    check("1 rows had a cv above 10% and were rerun alone once" in text and
          "0 rows are still above 10%" in text, "no note of the rerun", text)


def counts_and_paths(folder):
    text = report(folder, [write(folder, "run.json", run_json(TIMES, 3))])
    check("| 8.50 | 3,072 | 0.500 |" in text and "3,072.0" not in text,
          "node counts are not integers", text)
    check("| Mooncake traces | data/mooncake (first 2000 requests) |" in text,
          "the trace folder is not shown relative to its source tree", text)
    check("library built as debug (Debian's libbenchmark is compiled without "
          "NDEBUG" in text, "the debug library is not explained", text)


def load_report_module(path=REPORT, name="report"):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plugin_rows(folder):
    """A plugin's rows, as kvprefix_bench --kvprefix_engine=plugin:PATH and
    =radix write them: in the key table, the answer check (its own node IDs,
    the same lengths), the overhead table and the charts' bars."""
    times = dict(TIMES)
    times.update({"BM_Match/radix/mooncake-conversation/2000": 1.0,
                  "BM_Match/plugin:radix/mooncake-conversation/2000": 1.05,
                  "BM_Match/plugin:radix/wide/100": 2.4,
                  "BM_Match/virtual:radix/wide/100": 2.1,
                  "BM_Build/radix/wide/100": 1.0,
                  "BM_Build/plugin:radix/wide/100": 3.0})
    run = run_json(times, 3, counters={
        "BM_Match/plugin:radix/wide/100": {"answer_digest": 9.0}})
    for bench in run["benchmarks"]:  # a plugin without memory_bytes
        if bench["run_name"] == "BM_Build/plugin:radix/wide/100":
            del bench["bytes_per_node"]
    run["context"]["engines"] = "reference radix plugin:radix virtual:radix"
    run["context"]["engine_source:plugin:radix"] = (
        "plugin:/elsewhere/src/build/tests/plugin/libkvprefix_radix_plugin.so")
    run["context"]["engine_source:virtual:radix"] = "radix"
    text = report(folder, [write(folder, "run.json", run)])
    check("| wide (wide/100) | plugin:radix | 333 | –× | 417 | 4.17× | – | 3,072 |"
          in text, "the plugin's row of the key table is missing or wrong", text)
    check("Engines: reference, radix, plugin:radix, virtual:radix." in text,
          "the plugin is not listed among the engines", text)
    check("| plugin:radix | `plugin:build/tests/plugin/libkvprefix_radix_plugin.so` |"
          in text, "the plugin's path is not shown relative to its tree", text)
    check("| BM_Match/plugin:radix/wide/100 | 500 | 476 | 417 | **1.20×** | 1.14× |"
          in text, "the overhead row (plugin / compiled in, / virtual) is wrong", text)
    check("on the Mooncake rows the worst is 1.050× (within the target)" in text,
          "the target is not judged on the Mooncake row alone (5% slower)", text)
    check("| BM_Match/plugin:radix/mooncake-conversation/2000 | 1,000 | – | 952 | "
          "1.05× | – |" in text, "the Mooncake overhead row is missing", text)
    check("but for plugins that number nodes their own way: plugin:radix on "
          "wide/100" in text and "answers differ" not in text,
          "a plugin with its own node IDs and the same lengths is not told "
          "apart from wrong answers", text)
    # The charts' data: every engine's bar, the plugin's with its throughput.
    module = load_report_module()
    drawn = {}

    def record(fig, img_dir, name):
        drawn[name] = {bars.get_label(): [bar.get_height() for bar in bars]
                       for bars in fig.axes[0].containers}
        module.plt.close(fig)
        return name

    module.save = record
    context, results, _ = module.load_runs([os.path.join(folder, "run.json")])
    engines = module.engines_in(context, results)
    module.charts_section(results, engines, folder, folder)
    match = drawn.get("match_throughput.png", {})
    check(sorted(match) == ["plugin:radix", "radix", "reference", "virtual:radix"]
          and abs(match["plugin:radix"][0] - 1e9 / 2.4 / 1e6) < 1e-6,
          f"the match chart's bars are {match}, not every engine's with the "
          "plugin's throughput")
    memory = drawn.get("bytes_per_node.png", {})
    check(memory.get("plugin:radix") == [] and memory.get("radix") == [8.5],
          "the plugin without memory_bytes has a bytes-per-node bar: "
          f"{memory}")


def policy_columns(folder):
    """The policies come from the data, never from a fixed pair: the curves
    section's replay table has a column for each policy bench/curves.py
    replayed (every one of `kvprefix policies`; "clock" here stands for one
    added later), the curve's LRU first, and the capacity section a row for
    each BM_Replay cache, fifo's as lru's."""
    times = dict(TIMES)
    times.update({"BM_Replay/radix/wide/100": 4.0,
                  "BM_Replay/radix/wide/100/lru10": 5.0,
                  "BM_Replay/radix/wide/100/fifo10": 4.5})
    run = write(folder, "run.json", run_json(times, 1))
    with open(os.path.join(folder, "curve_conversation_block.csv"), "w") as f:
        f.write("capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
                "10,1073741824,25,100,0.25\n20,2147483648,40,100,0.4\n")
    with open(os.path.join(folder, "curve_conversation_block_replays.csv"), "w") as f:
        f.write("policy,capacity,capacity_bytes,matched_tokens,request_tokens,"
                "hit_ratio\nfifo,10,1073741824,20,100,0.2\n"
                "lru,10,1073741824,25,100,0.25\nclock,10,1073741824,22,100,0.22\n"
                "fifo,20,2147483648,30,100,0.3\nlru,20,2147483648,40,100,0.4\n"
                "clock,20,2147483648,35,100,0.35\n")
    text = report(folder, [run])
    check("| trace | mode | capacity (nodes) | KV cache | LRU | FIFO | CLOCK |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n"
          "| conversation | block | 10 | 1.0 GiB | 25.00% | 20.00% | 22.00% |\n"
          "| conversation | block | 20 | 2.0 GiB | 40.00% | 30.00% | 35.00% |\n"
          in text, "the replay table lacks a column per replayed policy", text)
    check("with `kvprefix replay` (`--policy fifo`, `--policy clock`) at five"
          in text, "the curves section does not name the replayed policies", text)
    check("| wide/100 | lru10 | radix | 5.00 |" in text
          and "| wide/100 | fifo10 | radix | 4.50 |" in text,
          "the capacity section lacks the lru or the fifo row", text)


def model_rows(folder):
    """The BM_Replay/.../<model>10000 rows: a table per trace, a row per
    model, each engine's columns (speed over that model's reference), a
    hit ratio the engines disagree on marked; no model row among §8's
    capacity rows; the models' curve columns (block mode only) and their
    end-to-end replays beside the warm rows."""
    conversation = "mooncake-conversation-blocks/12031"
    times = {f"BM_Replay/{engine}/{conversation}/{cache}": ms for engine, cache, ms in (
        ("reference", "spec10000", 20.0), ("radix", "spec10000", 2.5),
        ("reference", "vllm10000", 48.0), ("hash", "vllm10000", 12.0),
        ("reference", "sglang10000", 150.0), ("radix", "sglang10000", 2.5),
        ("reference", "sglang-on-allocate10000", 120.0),
        ("radix", "sglang-on-allocate10000", 2.4),
        ("radix", "lru10", 4.0))}
    counters = {f"BM_Replay/{engine}/{conversation}/{cache}": values
                for engine, cache, values in (
        ("reference", "spec10000", {"bytes_per_node": 2164.0, "hit_ratio": 0.2116}),
        ("radix", "spec10000", {"bytes_per_node": 14.46, "hit_ratio": 0.2116}),
        ("reference", "vllm10000", {"bytes_per_node": 4007.0, "hit_ratio": 0.2113}),
        ("hash", "vllm10000", {"bytes_per_node": 192.1, "hit_ratio": 0.2113}),
        ("reference", "sglang10000", {"bytes_per_node": 4919.0, "hit_ratio": 0.2068}),
        ("radix", "sglang10000", {"bytes_per_node": 315.4, "hit_ratio": 0.2068}),
        ("reference", "sglang-on-allocate10000", {"hit_ratio": 0.2067}),
        ("radix", "sglang-on-allocate10000", {"hit_ratio": 0.2068}))}
    run = run_json(times, 3, counters=counters)
    run["context"]["engines"] = "reference hash double-array radix"
    path = write(folder, "run.json", run)
    header = "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
    for stem, body in (
            ("block", "10,1073741824,25,100,0.25\n20,2147483648,40,100,0.4\n"),
            ("block_vllm", "10,1073741824,21,100,0.21\n20,2147483648,39,100,0.39\n"),
            ("block_sglang", "10,1073741824,24,100,0.24\n20,2147483648,38,100,0.38\n"),
            ("token", "10,1310720,5,100,0.05\n")):
        with open(os.path.join(folder, f"curve_conversation_{stem}.csv"), "w") as f:
            f.write(header + body)
    for mode, rows in (("block", "lru,20,2147483648,40,100,0.4\n"),
                       ("token", "lru,10,1310720,5,100,0.05\n")):
        with open(os.path.join(folder, f"curve_conversation_{mode}_replays.csv"),
                  "w") as f:
            f.write("policy," + header + rows)
    e2e = write(folder, "e2e.json", {
        "input": "kvprefix_make_input x", "input_bytes": 1e6, "match": [],
        "outputs_identical": True, "model_replay": [
            {"trace": "conversation_trace.jsonl", "model": "vllm", "engine": "hash",
             "capacity": 10000, "runs": 3, "seconds": 0.040, "cpu_seconds": 0.03,
             "max_rss_kb": 18432, "replay_seconds": 0.017,
             "summary": {"hit_ratio": 0.21133795}}]})
    text = report(folder, [path], options=["--e2e", e2e])
    check("| model | cache | hit ratio | reference ms | reference M tokens/s | "
          "reference bytes/node | hash ms | hash M tokens/s | hash vs reference | "
          "hash bytes/node | radix ms | radix M tokens/s | radix vs reference | "
          "radix bytes/node |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: | ---: |\n"
          "| spec (§8 LRU) | spec10000 | 0.2116 | 20.0 | 50.0 | 2,164 | – | – | – | – "
          "| 2.50 | 400 | 8.00× | 14.5 |\n"
          "| vLLM | vllm10000 | 0.2113 | 48.0 | 20.8 | 4,007 | 12.0 | 83.3 | 4.00× "
          "| 192 | – | – | – | – |\n"
          "| SGLang | sglang10000 | 0.2068 | 150 | 6.67 | 4,919 | – | – | – | – "
          "| 2.50 | 400 | 60.0× | 315 |\n"
          "| SGLang, on-allocate | sglang-on-allocate10000 | "
          "**differ: 0.2067, 0.2068** | 120 | 8.33 | 8.50 | – | – | – | – | 2.40 "
          "| 417 | 50.0× | 8.50 |\n" in text,
          "the models table is missing or wrong", text)
    check("### mooncake-conversation-blocks/12031" in text
          and "| mooncake-conversation-blocks/12031 | lru10 | radix | 4.00 |" in text
          and "| spec10000 |" not in text.split("## Cache models")[0],
          "a model row is among §8's capacity rows, or lru10 is missing", text)
    check("| trace | mode | capacity (nodes) | KV cache | LRU | vLLM | SGLang |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n"
          "| conversation | block | 20 | 2.0 GiB | 40.00% | 39.00% | 38.00% |\n"
          "| conversation | token | 10 | 0.0 GiB | 5.00% | – | – |\n" in text,
          "the curves table lacks the models' columns (block mode only)", text)
    check("| conversation_trace.jsonl | vllm | hash | 10,000 | 0.2113 | 17 | 40.0 | 18 "
          "| 12.0 | 3.33× |" in text,
          "the end-to-end model replay is not beside its warm row", text)


def curve_lines(folder):
    """cli/plot_curve.py draws each --line series (a model's curve in
    bench/curves.py's charts) as a dashed line through its points, under
    its label, the --extra series as points, and raises the y axis to the
    highest of all of them."""
    module = load_report_module(PLOT, "plot_curve")
    header = "capacity,capacity_bytes,matched_tokens,request_tokens,hit_ratio\n"
    model = os.path.join(folder, "vllm.csv")
    with open(model, "w") as f:
        f.write(header + "1,,0,100,0\n10,,30,100,0.3\n100,,60,100,0.6\n")
    fifo = os.path.join(folder, "fifo.csv")
    with open(fifo, "w") as f:
        f.write(header + "10,,20,100,0.2\n")
    figures = []
    import matplotlib.figure  # here: the test is skipped without matplotlib
    saved = matplotlib.figure.Figure.savefig
    matplotlib.figure.Figure.savefig = lambda figure, *a, **k: figures.append(figure)
    argv, stdin, stdout = sys.argv, sys.stdin, sys.stdout
    sys.argv = [PLOT, "--line", f"vLLM={model}", "--extra", f"FIFO (replay)={fifo}"]
    sys.stdin = io.StringIO(header + "1,,10,100,0.1\n10,,40,100,0.4\n100,,50,100,0.5\n")
    sys.stdout = io.TextIOWrapper(io.BytesIO())
    try:
        module.main()
    finally:
        matplotlib.figure.Figure.savefig = saved
        sys.argv, sys.stdin, sys.stdout = argv, stdin, stdout
    axes = figures[0].axes[0]
    drawn = {line.get_label(): (line.get_linestyle(), list(line.get_xdata()),
                                list(line.get_ydata())) for line in axes.get_lines()}
    check(drawn.get("vLLM") == ("--", [1, 10, 100], [0.0, 0.3, 0.6]),
          f"the --line series is not a dashed line through its points: {drawn}")
    check(drawn.get("FIFO (replay)") == ("None", [10], [0.2]),
          f"the --extra series is not points: {drawn}")
    check(abs(axes.get_ylim()[1] - 0.66) < 1e-9,
          f"the y axis ends at {axes.get_ylim()[1]}, not 1.1 x the line's 0.6")


def main():
    missing = [what for what, present in (
        (COMPARE, os.path.exists(COMPARE)),
        ("scipy", importlib.util.find_spec("scipy")),
        ("matplotlib", importlib.util.find_spec("matplotlib"))) if not present]
    if missing:
        print(f"skipped: {', '.join(missing)} missing (scripts/dev.sh installs "
              "libbenchmark-tools, python3-scipy, python3-matplotlib)")
        return 77
    for test in (too_few_repetitions, enough_repetitions, noisy_rows_and_reruns,
                 counts_and_paths, plugin_rows, policy_columns, model_rows,
                 curve_lines):
        before = len(failures)
        with tempfile.TemporaryDirectory() as folder:
            test(folder)
        print(f"{test.__name__}: {'ok' if len(failures) == before else 'FAILED'}")
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
