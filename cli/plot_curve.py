#!/usr/bin/env python3
"""Draws an LRU hit-ratio curve for `kvprefix curve --plot`.

Reads the curve as CSV on standard input (capacity,capacity_bytes,
matched_tokens,request_tokens,hit_ratio) and writes the image (--format png
or svg) to standard output, so that the caller writes the file atomically.
Hit ratio against capacity in nodes on a log scale; with capacity_bytes, a
second axis in GiB. `--extra LABEL=FILE` adds other curves' points (the same
CSV columns) as markers, e.g. FIFO replays at a few capacities.
"""
import argparse
import csv
import io
import sys


def read_curve(stream):
    rows = list(csv.DictReader(stream))
    capacities = [int(row["capacity"]) for row in rows]
    ratios = [float(row["hit_ratio"]) for row in rows]
    byte_sizes = [row.get("capacity_bytes") or "" for row in rows]
    return capacities, ratios, byte_sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    parser.add_argument("--title", default="LRU hit ratio")
    parser.add_argument("--extra", action="append", default=[],
                        metavar="LABEL=FILE")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("matplotlib is not installed (Debian: apt install python3-matplotlib)")

    capacities, ratios, byte_sizes = read_curve(sys.stdin)
    figure, axes = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    axes.plot([max(c, 1) for c in capacities], ratios, label="LRU (exact, one pass)")
    for extra in args.extra:
        label, _, path = extra.partition("=")
        with open(path, newline="") as points:
            extra_capacities, extra_ratios, _ = read_curve(points)
        axes.plot(extra_capacities, extra_ratios, "o", label=label)
    axes.set_xscale("log")
    axes.set_xlabel("capacity (nodes)")
    axes.set_ylabel("hit ratio (matched / request tokens)")
    axes.set_ylim(0, max(ratios + [0.05]) * 1.1)
    axes.grid(True, which="both", alpha=0.3)
    axes.set_title(args.title, fontsize=10)
    if all(byte_sizes) and capacities and capacities[-1] > 0:
        gib_per_node = int(byte_sizes[-1]) / capacities[-1] / 2**30
        top = axes.secondary_xaxis(
            "top", functions=(lambda c: c * gib_per_node, lambda g: g / gib_per_node))
        top.set_xlabel("KV cache (GiB)")
    axes.legend(loc="upper left")
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format=args.format)
    sys.stdout.buffer.write(image.getvalue())


if __name__ == "__main__":
    main()
