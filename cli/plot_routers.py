#!/usr/bin/env python3
"""Draws a router table for `kvprefix replay --workers 1,2,4 --router all --plot`.

Reads the table as CSV on standard input (the header router,workers,...,
hit_ratio,imbalance_requests,...; cli/router_table.h) and writes the image
(--format png or svg) to standard output, so that the caller writes the file
atomically. Two panels against the worker count N (log-2 axis), one line
per router: the hit ratio (matched / request tokens), and imbalance_requests
(the busiest worker's requests over the mean; 1 is even, N is everything on
one worker, drawn as a dotted grey line).
"""
import argparse
import csv
import sys

# Beside this script (the source tree's cli/, or share/kvprefix/).
from plot_curve import load_pyplot, write_image

MARKERS = "os^vD<>pP*Xh"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    parser.add_argument("--title", default="router table")
    args = parser.parse_args()
    plt = load_pyplot()
    import matplotlib.ticker  # matplotlib is there: load_pyplot checked

    lines = {}  # router: [(N, hit ratio, imbalance)], in the table's order
    for row in csv.DictReader(sys.stdin):
        lines.setdefault(row["router"], []).append(
            (int(row["workers"]), float(row["hit_ratio"]),
             float(row["imbalance_requests"])))
    figure, (hits, imbalance) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=80)
    counts = sorted({n for points in lines.values() for n, _, _ in points})
    for number, (router, points) in enumerate(lines.items()):
        points.sort()
        style = dict(marker=MARKERS[number % len(MARKERS)], markersize=4,
                     linewidth=1.2, color=f"C{number % 10}",
                     linestyle="-" if number < 10 else "--", label=router)
        hits.plot([p[0] for p in points], [p[1] for p in points], **style)
        imbalance.plot([p[0] for p in points], [p[2] for p in points], **style)
    if counts:
        imbalance.plot(counts, counts, ":", color="grey", linewidth=1,
                       label="all on one worker (N)")
    for axes in (hits, imbalance):
        axes.set_xscale("log", base=2)
        axes.set_xticks(counts)
        axes.set_xticklabels([str(n) for n in counts])
        axes.set_xlabel("workers N")
        axes.grid(True, which="both", alpha=0.3)
    hits.set_ylim(bottom=0)
    hits.set_ylabel("hit ratio (matched / request tokens)")
    imbalance.set_yscale("log", base=2)
    imbalance.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    imbalance.set_ylabel("imbalance_requests (max / mean requests)")
    imbalance.legend(loc="upper left", fontsize=7, ncol=2)
    figure.suptitle(args.title, fontsize=9)
    write_image(figure, args.format)


if __name__ == "__main__":
    main()
