#!/usr/bin/python3
"""The router table's speed against the Python oracle of SPEC §10/§11.

    bench/routers_vs_oracle.py --cli build/kvprefix [--workers 2,4,8,16] \\
        [--sample 2,16] [--traces conversation,synthetic] \\
        [--lines conversation=1000]

Runs `kvprefix replay TRACE --workers LIST --router all` once per trace
(block mode, model spec, B = 64, prefill 25,600 µs and decode 10,240,000 µs
per block) and times its wall clock; then replays the rows of every router
at the --sample counts with tests/serve/serve_oracle (in this process, the
trace read once), checks that each row's totals are the table's, column for
column, and times each. The oracle's time of a row not sampled is
interpolated linearly in N between the sampled counts (a routed replay
costs a + b·N), so the table's Python time is the sampled rows' plus the
interpolated ones'. With --lines TRACE=L the oracle replays the trace's
first L lines only (checked against a kvprefix table of those lines) and
its times are scaled by the trace's lines / L: a lower bound of the
oracle's time when its cost grows at least linearly with the requests (it
does: 1,000 lines of the conversation trace take about a twelfth of its
12,031 lines' time, or less). Prints both times and their ratio; exit
status 1 if any sampled row differs.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile
import time
from decimal import Decimal

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SOURCE, "tests", "serve"))
from serve_oracle.replay import answer_text, replay  # noqa: E402
from serve_oracle.trace import trace_document  # noqa: E402

SERVING = {"max_running": 64, "prefill_us_per_token": 25600,
           "decode_us_per_token": 10240000}


def table(cli, path, workers):
    """(seconds, rows by (router, N)) of one table command."""
    command = [cli, "replay", path, "--model", "spec", "--max-running", "64",
               "--prefill-us-per-token", "25600", "--decode-us-per-token",
               "10240000", "--workers", workers, "--router", "all",
               "--table-format", "csv"]
    began = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - began
    rows = {(row["router"], int(row["workers"])): row
            for row in csv.DictReader(io.StringIO(run.stdout))}
    return seconds, rows


def oracle_row(document, router, workers):
    """(seconds, totals as text) of the oracle's replay of one row."""
    document = dict(document, workers=workers, router={"name": router})
    began = time.perf_counter()
    answer = replay(document, "block")
    seconds = time.perf_counter() - began
    del answer["requests"]
    return seconds, answer_text(answer)


def interpolate(times, n):
    """The time at N from the sampled (N, seconds), linear in N."""
    if n in times:
        return times[n]
    counts = sorted(times)
    low = max([c for c in counts if c < n], default=counts[0])
    high = min([c for c in counts if c > n], default=counts[-1])
    if low == high:
        return times[low]
    return times[low] + (times[high] - times[low]) * (n - low) / (high - low)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--workers", default="2,4,8,16")
    parser.add_argument("--sample", default="2,16")
    parser.add_argument("--traces", default="conversation,synthetic")
    parser.add_argument("--routers", default="",
                        help="sample only these routers (default: all)")
    parser.add_argument("--lines", action="append", default=[],
                        metavar="TRACE=L",
                        help="the oracle replays TRACE's first L lines only")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    sample = [int(n) for n in args.sample.split(",")]
    total_cpp = total_python = 0.0
    differ = 0
    limits = {trace: int(lines) for trace, _, lines in
              (item.partition("=") for item in args.lines)}
    for trace in args.traces.split(","):
        path = os.path.join(SOURCE, "data", "mooncake", f"{trace}_trace.jsonl")
        cpp_seconds, rows = table(args.cli, path, args.workers)
        total_cpp += cpp_seconds
        print(f"{trace}: kvprefix table of {len(rows)} rows: "
              f"{cpp_seconds:.2f} s wall", flush=True)
        scale = 1.0
        if trace in limits:
            with open(path) as whole:
                lines = whole.readlines()
            scale = len(lines) / limits[trace]
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as part:
                part.writelines(lines[:limits[trace]])
                part.flush()
                _, rows = table(args.cli, part.name, args.workers)
            print(f"  the oracle replays its first {limits[trace]} lines, "
                  f"times scaled by {scale:.2f}", flush=True)
        document = trace_document(path, "block", limits.get(trace), **SERVING)
        routers = list(dict.fromkeys(router for router, _ in rows))
        if args.routers:
            routers = [r for r in routers if r in args.routers.split(",")]
        python_seconds = 0.0
        for router in routers:
            times = {}
            for n in sample:
                seconds, text = oracle_row(document, router, n)
                times[n] = seconds
                row = rows[(router, n)]
                expected = ('{"totals":{"requests":%s,"request_tokens":%s,'
                            '"matched_tokens":%s,"hit_ratio":%s,' % (
                                row["requests"], row["request_tokens"],
                                row["matched_tokens"], row["hit_ratio"]))
                same = text.startswith(expected) and all(
                    f'"{column}":{row[column]}' in text
                    for column in row if column not in ("router", "workers",
                                                        "replay_seconds"))
                differ += not same
                print(f"  oracle {router} N={n}: {seconds:.2f} s"
                      f"{'' if same else '  DIFFERS from the table'}",
                      flush=True)
            python_seconds += scale * sum(interpolate(times, n)
                                          for n in counts)
        total_python += python_seconds
        print(f"{trace}: oracle, {len(routers)} routers x {counts}: "
              f"{python_seconds:.1f} s ({len(sample)} counts run, "
              f"the others interpolated)", flush=True)
    print(f"whole table: kvprefix {total_cpp:.2f} s, Python oracle "
          f"{total_python:.1f} s: {total_python / total_cpp:.0f}x")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
