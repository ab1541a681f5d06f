#!/usr/bin/python3
"""Hit ratio and p99 wait against concurrency for the report (SPEC §10).

Usage: bench/serving_sweep.py --build BUILD_DIR --data-dir DIR --img-dir DIR
                              [--mooncake-dir DIR]

For each Mooncake trace in block mode, each cache model (spec lru, vllm,
sglang on-allocate) and a few capacities (1,000, 4,000 and 10,000 blocks):
`kvprefix replay --max-running B` for B = 1, 2, 4, ..., 128 with the
issue's service time (prefill 25,600 µs and decode 10,240,000 µs per
512-token block, ⌈output_length / 512⌉ output blocks). Writes
DIR/serving_<trace>.csv (one row per model, capacity and B) and draws
IMG_DIR/serving_<trace>.png: per model, the hit ratio and the p99 wait
(seconds; linear below 1 s, logarithmic above) against B, one line per
capacity.
"""

import argparse
import csv
import json
import os
import subprocess
import sys

TRACES = {"conversation": "conversation_trace.jsonl",
          "synthetic": "synthetic_trace.jsonl"}
MODELS = {"spec": ["--model", "spec"],
          "vllm": ["--model", "vllm"],
          "sglang": ["--model", "sglang", "--trigger", "on-allocate"]}
CAPACITIES = (1000, 4000, 10000)
RUNNING = (1, 2, 4, 8, 16, 32, 64, 128)
SERVICE = ["--prefill-us-per-token", "25600",
           "--decode-us-per-token", "10240000"]
COLUMNS = ("model", "capacity", "max_running", "hit_ratio", "waited_for_room",
           "p50_wait_us", "p99_wait_us", "mean_wait_us")


def serve(cli, trace, model, capacity, running):
    """The totals of one serving replay."""
    run = subprocess.run(
        [cli, "replay", trace, *MODELS[model], "--capacity", str(capacity),
         "--max-running", str(running), *SERVICE],
        capture_output=True, text=True, check=True)
    return json.loads(run.stdout)["totals"]


def sweep(cli, trace):
    rows = []
    for model in MODELS:
        for capacity in CAPACITIES:
            for running in RUNNING:
                totals = serve(cli, trace, model, capacity, running)
                rows.append({"model": model, "capacity": capacity,
                             "max_running": running,
                             **{k: totals[k] for k in COLUMNS[3:]}})
                print(f"{os.path.basename(trace)} {model} C={capacity} "
                      f"B={running}: {totals['hit_ratio']:.4f}, p99 "
                      f"{totals['p99_wait_us'] / 1e6:.1f} s", file=sys.stderr)
    return rows


def draw(rows, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(2, len(MODELS), figsize=(13, 7),
                                sharex=True, squeeze=False)
    for column, model in enumerate(MODELS):
        for capacity in CAPACITIES:
            mine = [r for r in rows
                    if r["model"] == model and r["capacity"] == capacity]
            b = [r["max_running"] for r in mine]
            axes[0][column].plot(b, [r["hit_ratio"] for r in mine],
                                 marker="o", label=f"{capacity:,} blocks")
            axes[1][column].plot(
                b, [r["p99_wait_us"] / 1e6 for r in mine],
                marker="o", label=f"{capacity:,} blocks")
        axes[0][column].set_title(model if model != "sglang"
                                  else "sglang (on-allocate)")
        axes[0][column].set_ylabel("hit ratio")
        axes[1][column].set_ylabel("p99 wait (s)")
        # Waits span 0 to days: linear below 1 s, logarithmic above.
        axes[1][column].set_yscale("symlog", linthresh=1)
        axes[1][column].set_xlabel("requests running at most (B)")
        axes[1][column].set_xscale("log", base=2)
        axes[0][column].legend(fontsize=8)
        for row in axes:
            row[column].grid(True, alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--data-dir", default="docs/data")
    parser.add_argument("--img-dir", default="docs/img")
    parser.add_argument("--mooncake-dir", default="data/mooncake")
    args = parser.parse_args()
    cli = os.path.join(args.build, "kvprefix")
    for name, file in TRACES.items():
        trace = os.path.join(args.mooncake_dir, file)
        rows = sweep(cli, trace)
        with open(os.path.join(args.data_dir, f"serving_{name}.csv"), "w",
                  newline="") as out:
            writer = csv.DictWriter(out, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        draw(rows, f"{file}, block mode: hit ratio and p99 wait against "
                   "concurrency (prefill 25.6 ms, decode 10.24 s per block)",
             os.path.join(args.img_dir, f"serving_{name}.png"))


if __name__ == "__main__":
    main()
