#!/usr/bin/env python3
"""Draws an LRU hit-ratio curve for `kvprefix curve --plot`.

Reads the curve as CSV on standard input (capacity,capacity_bytes,
matched_tokens,request_tokens,hit_ratio, optionally mark,target_hit_ratio)
and writes the image (--format png or svg) to standard output, so that the
caller writes the file atomically. Hit ratio against capacity in nodes on a
log scale (--capacity-label says what a node is); with capacity_bytes, a
second axis in GiB. A row's mark (cli/plot.h) puts it on the line ("line"),
marks a capacity asked for ("capacity"), marks the smallest capacity reaching
target_hit_ratio ("target"; no capacity: unreachable) or leaves it out
("point"); rows without a mark are the line. `--extra LABEL=FILE` adds other
curves' points (the same CSV columns) as markers, e.g. FIFO replays at a few
capacities; `--line LABEL=FILE` adds another curve drawn as a line through
its points, e.g. a cache model's curve at the same capacities as LRU's.
"""
import argparse
import csv
import io
import sys


def read_rows(stream):
    return list(csv.DictReader(stream))


def points(rows):
    """(capacities, ratios, byte sizes) of the rows that have a capacity."""
    rows = [row for row in rows if row["capacity"]]
    return ([int(row["capacity"]) for row in rows],
            [float(row["hit_ratio"]) for row in rows],
            [row.get("capacity_bytes") or "" for row in rows])


def labelled_points(spec):
    """--extra or --line's LABEL=FILE: (label, points of FILE's rows)."""
    label, _, path = spec.partition("=")
    with open(path, newline="") as extra_file:
        return label, points(read_rows(extra_file))


def gib_text(row):
    if not row.get("capacity_bytes"):
        return ""
    return f", {int(row['capacity_bytes']) / 2**30:.4g} GiB"


def load_pyplot():
    """matplotlib's pyplot on the Agg backend; exits naming the package
    when matplotlib is missing. plot_routers.py uses it too."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("matplotlib is not installed (Debian: apt install python3-matplotlib)")
    return plt


def write_image(figure, image_format):
    """Writes `figure` (tight layout) as `image_format` to standard output."""
    figure.tight_layout()
    image = io.BytesIO()
    figure.savefig(image, format=image_format)
    sys.stdout.buffer.write(image.getvalue())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    parser.add_argument("--title", default="LRU hit ratio")
    parser.add_argument("--capacity-label", default="capacity (nodes)")
    parser.add_argument("--line-label", default="LRU (exact, one pass)",
                        help="the legend of the curve's line")
    parser.add_argument("--extra", action="append", default=[],
                        metavar="LABEL=FILE")
    parser.add_argument("--line", action="append", default=[],
                        metavar="LABEL=FILE")
    args = parser.parse_args()
    plt = load_pyplot()

    rows = read_rows(sys.stdin)
    line = [row for row in rows if row.get("mark", "line") in ("line", None)]
    asked = [row for row in rows if row.get("mark") == "capacity"]
    targets = [row for row in rows if row.get("mark") == "target"]
    capacities, ratios, byte_sizes = points(line)
    figure, axes = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    axes.plot([max(c, 1) for c in capacities], ratios, label=args.line_label)
    if asked:
        asked_capacities, asked_ratios, _ = points(asked)
        axes.plot([max(c, 1) for c in asked_capacities], asked_ratios, "o",
                  markersize=4, color="C0", label="capacities asked for")
    # Lines first, so that the points (replays at a few capacities) are
    # drawn over them; each line dashed its own way, so that lines lying on
    # the LRU curve (and on each other) stay visible.
    extra_ratios = []  # every series' ratios, for the y axis's top
    styles = [("--", "-."), ("o",)]
    for style_cycle, specs in zip(styles, (args.line, args.extra)):
        for number, spec in enumerate(specs):
            label, (capacities_of, ratios_of, _) = labelled_points(spec)
            axes.plot([max(c, 1) for c in capacities_of], ratios_of,
                      style_cycle[number % len(style_cycle)], linewidth=1.5,
                      label=label)
            extra_ratios += ratios_of
    for number, row in enumerate(targets):
        target = float(row["target_hit_ratio"])
        color = f"C{(number + 1) % 10}"
        axes.axhline(target, color=color, linestyle=":", linewidth=1)
        if row["capacity"]:
            capacity = max(int(row["capacity"]), 1)
            axes.axvline(capacity, color=color, linestyle=":", linewidth=1)
            axes.plot([capacity], [float(row["hit_ratio"])], "D", color=color,
                      label=f"hit ratio {target:g}: {int(row['capacity']):,} nodes"
                            f"{gib_text(row)}")
        else:
            axes.plot([], [], ":", color=color,
                      label=f"hit ratio {target:g}: unreachable (at most "
                            f"{float(row['hit_ratio']):.3g})")
    axes.set_xscale("log")
    axes.set_xlabel(args.capacity_label)
    axes.set_ylabel("hit ratio (matched / request tokens)")
    top_ratio = max(ratios + extra_ratios
                    + [float(row["target_hit_ratio"]) for row in targets] + [0.05])
    axes.set_ylim(0, top_ratio * 1.1)
    axes.grid(True, which="both", alpha=0.3)
    axes.set_title(args.title, fontsize=10)
    if capacities and all(byte_sizes) and capacities[-1] > 0:
        gib_per_node = int(byte_sizes[-1]) / capacities[-1] / 2**30
        top = axes.secondary_xaxis(
            "top", functions=(lambda c: c * gib_per_node, lambda g: g / gib_per_node))
        top.set_xlabel("KV cache (GiB)")
    axes.legend(loc="upper left", fontsize=8)
    write_image(figure, args.format)


if __name__ == "__main__":
    main()
