#!/usr/bin/python3
"""Hit ratio against capacity for the benchmark report (SPEC §8).

Usage: bench/curves.py --build BUILD_DIR --data-dir DIR --img-dir DIR
                       [--mooncake-dir DIR] [--points N]

For each Mooncake trace in block and in token mode: the exact LRU curve at N
log-spaced capacities (`kvprefix curve`, one pass), then `kvprefix replay`
with every policy of `kvprefix policies` at a few of those capacities: LRU's
as a check of the curve, the others (FIFO, LFU) as points beside it. In block mode also
the curves of the cache models of SPEC §9 (`kvprefix curve --model vllm`,
`--model sglang`: after-insert, LRU) at the LRU curve's capacities, one
replay per capacity, drawn as lines, and one `kvprefix replay --model M` per
model as a check of its curve. Capacities get a second axis in GiB for
Llama-3-8B in fp16 (128 KiB of KV cache a token: 2 x 32 layers x 8 KV heads
x 128 dims x 2 bytes). Writes DIR/curve_<trace>_<mode>.csv (the curve),
..._replays.csv (the replays, in the order of `kvprefix policies` at each
capacity) and ..._<model>.csv (a model's curve), and draws
docs/img/curve_<trace>_<mode>.png with cli/plot_curve.py. Fails if an LRU
or a model replay differs from its curve.
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import time

KV_BYTES_PER_TOKEN = 131072  # Llama-3-8B, fp16
TRACES = {"conversation": "conversation_trace.jsonl",
          "synthetic": "synthetic_trace.jsonl"}
REPLAYS = 5  # capacities replayed with every policy per curve
CURVE_POLICY = "lru"  # the policy whose hit ratios `kvprefix curve` gives
# The models of SPEC §9 drawn beside LRU: `--model` -> the chart's label.
# Block mode only: there a node is a 512-token block, the models' page. In
# token mode (a node is a token, page size 1) vLLM's pool would hold
# 1-token blocks, which no deployment runs (vLLM's default block is 16
# tokens), and a curve at another page size counts capacity in pages, not
# the chart's tokens. It would cost too: one vllm replay of the token-mode
# conversation trace at 8.7 M tokens took 50 s and 1.6 GB (2 vCPUs).
MODELS = {"vllm": "vLLM block pool",
          "sglang": "SGLang radix cache (after-insert, LRU)"}
MODEL_MODES = ("block",)


def run(command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def policies(cli):
    """The eviction policies, in the tool's order: `kvprefix policies`."""
    return [line.split()[0] for line in run([cli, "policies"]).splitlines()
            if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--img-dir", required=True)
    parser.add_argument("--mooncake-dir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "mooncake"))
    parser.add_argument("--points", type=int, default=40)
    args = parser.parse_args()
    cli = os.path.join(args.build, "kvprefix")
    plot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli",
                        "plot_curve.py")
    os.makedirs(args.data_dir, exist_ok=True)
    os.makedirs(args.img_dir, exist_ok=True)
    all_policies = policies(cli)
    if CURVE_POLICY not in all_policies:
        sys.exit(f"curves: {cli} policies has no {CURVE_POLICY}: {all_policies}")
    for name, file in TRACES.items():
        trace = os.path.join(args.mooncake_dir, file)
        for mode in ("block", "token"):
            stem = f"curve_{name}_{mode}"
            print(f"curves: {stem}", file=sys.stderr)
            curve_csv = run([cli, "curve", trace, "--mode", mode, "--points",
                             str(args.points), "--kv-bytes-per-token",
                             str(KV_BYTES_PER_TOKEN), "--format", "csv"])
            rows = list(csv.DictReader(io.StringIO(curve_csv)))
            # A few capacities spread over the curve, the largest excluded
            # (there every policy keeps everything).
            step = max(1, (len(rows) - 1) // REPLAYS)
            chosen = rows[step - 1:len(rows) - 1:step][:REPLAYS]

            def replay(capacity, *options):
                return json.loads(run([
                    cli, "replay", trace, "--mode", mode, "--capacity", capacity,
                    "--kv-bytes-per-token", str(KV_BYTES_PER_TOKEN), *options]))

            replays = []
            for row in chosen:
                for policy in all_policies:
                    summary = replay(row["capacity"], "--policy", policy)
                    replays.append({"policy": policy, "capacity": row["capacity"],
                                    "capacity_bytes": summary["capacity_bytes"],
                                    "matched_tokens": summary["matched_tokens"],
                                    "request_tokens": summary["request_tokens"],
                                    "hit_ratio": summary["hit_ratio"]})
                    if (policy == CURVE_POLICY
                            and str(summary["matched_tokens"]) != row["matched_tokens"]):
                        sys.exit(f"curves: {stem}: LRU replay at {row['capacity']} matched "
                                 f"{summary['matched_tokens']}, the curve says "
                                 f"{row['matched_tokens']}")
            with open(os.path.join(args.data_dir, stem + ".csv"), "w") as f:
                f.write(curve_csv)
            # Each model's curve at the LRU curve's capacities, and one
            # replay, at the middle replayed capacity, that must agree.
            lines = {}
            for model, label in (MODELS.items() if mode in MODEL_MODES else ()):
                started = time.monotonic()
                model_csv = run([
                    cli, "curve", trace, "--mode", mode, "--model", model,
                    "--capacities", ",".join(row["capacity"] for row in rows),
                    "--kv-bytes-per-token", str(KV_BYTES_PER_TOKEN), "--format",
                    "csv"])
                print(f"curves: {stem} {model}: {len(rows)} capacities in "
                      f"{time.monotonic() - started:.1f} s wall", file=sys.stderr)
                check = chosen[len(chosen) // 2]["capacity"]
                curve_at = {r["capacity"]: r["matched_tokens"]
                            for r in csv.DictReader(io.StringIO(model_csv))}
                summary = replay(check, "--model", model)
                if str(summary["matched_tokens"]) != curve_at.get(check):
                    sys.exit(f"curves: {stem}: {model} replay at {check} matched "
                             f"{summary['matched_tokens']}, the {model} curve says "
                             f"{curve_at.get(check)}")
                lines[label] = os.path.join(args.data_dir, f"{stem}_{model}.csv")
                with open(lines[label], "w") as f:
                    f.write(model_csv)
            replays_path = os.path.join(args.data_dir, stem + "_replays.csv")
            with open(replays_path, "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(replays[0]))
                writer.writeheader()
                writer.writerows(replays)
            # Each policy but the curve's is a set of points on the chart.
            extras = {}
            for policy in all_policies:
                if policy == CURVE_POLICY:
                    continue
                extras[policy] = os.path.join(args.data_dir, f"{stem}_{policy}.tmp.csv")
                with open(extras[policy], "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=list(replays[0]))
                    writer.writeheader()
                    writer.writerows(r for r in replays if r["policy"] == policy)
            unit = "512-token blocks" if mode == "block" else "tokens"
            image = subprocess.run(
                ["/usr/bin/python3", plot, "--format", "png", "--title",
                 f"{file}, {mode} mode: hit ratio against capacity\n({unit}; "
                 "GiB for Llama-3-8B fp16)", "--capacity-label",
                 f"capacity ({unit})"]
                + [argument for label, path in lines.items()
                   for argument in ("--line", f"{label}, a replay per capacity={path}")]
                + [argument for policy, path in extras.items()
                   for argument in ("--extra", f"{policy.upper()} (replay)={path}")],
                input=curve_csv.encode(), check=True, capture_output=True).stdout
            for path in extras.values():
                os.remove(path)
            with open(os.path.join(args.img_dir, stem + ".png"), "wb") as f:
                f.write(image)


if __name__ == "__main__":
    main()
