#!/usr/bin/python3
"""End-to-end throughput of the `kvprefix` CLI, for the benchmark report.

Usage: bench/e2e.py --build BUILD_DIR --out e2e.json [--cli PATH] [--mooncake-dir DIR]
                    [--engines a,b] [--replay-engines a,b]
                    [--baseline-cli OLD_KVPREFIX] [--baseline-name NAME]

1. Writes a SPEC §4 input of at least 200 MB with kvprefix_make_input (the
   first 3,000 requests of the Mooncake conversation trace in token mode:
   1,500 cached, 1,500 requests; a synthetic multi-turn input of about the
   same size when the trace is absent), then times one `kvprefix match` per
   engine on it (wall seconds and peak RSS from wait4), and checks that every
   engine wrote byte-identical output.
2. Times `kvprefix replay --mode token` on each whole Mooncake trace, and
   the cache models of SPEC §9 in block mode at a capacity of 10,000 blocks
   (`kvprefix replay --mode block --model M --engine E --capacity 10000`:
   spec on radix, vllm on hash and reference, sglang on radix and
   reference), three fresh processes each, medians: the fresh-process
   counterparts of the warm BM_Replay/E/mooncake-<trace>-blocks/<lines>/
   <model>10000 rows.

3. With --baseline-cli (e.g. a build of an older commit), the before/after
   end-to-end targets, side by side in this one run: the old and the new CLI
   alternate, three runs each, and the median wall time and peak RSS are kept:
   token-mode replay of the conversation trace (radix), `match` on the input
   of step 1 (radix), and `match` on an adversarial input (300 parents x 300
   children, tokens k x 2^16) in double-array and radix for peak memory.

The load average is recorded before and after. The parse and write stages are timed apart by BM_ParseJson / BM_WriteJson in
kvprefix_bench; bench/report.py puts the two together. Temporary files go
to $TMPDIR and are removed.
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TRACES = ("conversation_trace.jsonl", "synthetic_trace.jsonl")
# Step 2's model replays: (model, engines), and their capacity in blocks,
# those of bench/engine_bench.cc's model rows.
MODEL_REPLAYS = (("spec", ("radix",)), ("vllm", ("hash", "reference")),
                 ("sglang", ("radix", "reference")))
MODEL_CAPACITY = 10_000
MODEL_RUNS = 3


def timed(command, stdout):
    """Runs `command`; returns (wall s, CPU s, peak RSS in KiB). Raises on failure."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}: {stderr}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def replay(cli, arguments, tmp):
    """Times one `kvprefix replay ARGUMENTS`; returns (wall s, CPU s, peak
    RSS in KiB, its JSON summary)."""
    summary_path = os.path.join(tmp, "replay.txt")
    with open(summary_path, "w") as summary_file:
        seconds, cpu, rss = timed([cli, "replay"] + arguments, summary_file)
    with open(summary_path) as summary_file:
        return seconds, cpu, rss, json.loads(summary_file.read())  # one JSON line


def digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def adversarial_document(path):
    """A SPEC §4 input whose cached sequences are [p * 2^16, c * 2^16] for
    p, c < 300 (90,300 nodes), the family layout that once cost the
    double-array engine 6.9 KB per node; the requests are the same pairs."""
    pairs = [[p << 16, c << 16] for p in range(300) for c in range(300)]
    with open(path, "w") as f:
        json.dump({"cached_sequences": pairs, "requests": pairs}, f)


def before_after(cli, baseline_cli, document, trace, tmp, runs=3):
    """Times each target with both binaries, alternating; returns one row per
    target with the median wall seconds and peak RSS (KiB) of each."""
    adversarial = os.path.join(tmp, "adversarial.json")
    adversarial_document(adversarial)
    output = os.path.join(tmp, "target-output.json")
    targets = [
        ("replay, token mode, conversation trace, radix",
         ["replay", "--engine", "radix", "--mode", "token", trace]),
        ("match, 3,000-request input, radix",
         ["match", "--engine", "radix", document, "--output", output]),
        ("match, 300 x 300 adversarial input, double-array",
         ["match", "--engine", "double-array", adversarial, "--output", output]),
        ("match, 300 x 300 adversarial input, radix",
         ["match", "--engine", "radix", adversarial, "--output", output]),
    ]
    rows = []
    for name, arguments in targets:
        samples = {"before": [], "after": []}
        for _ in range(runs):
            for side, binary in (("before", baseline_cli), ("after", cli)):
                seconds, _, rss = timed([binary] + arguments, subprocess.DEVNULL)
                samples[side].append((seconds, rss))
        row = {"target": name, "command": "kvprefix " + " ".join(
            os.path.basename(a) if os.path.isabs(a) else a for a in arguments)}
        for side, values in samples.items():
            row[side] = {"seconds": statistics.median(v[0] for v in values),
                         "max_rss_kb": statistics.median(v[1] for v in values)}
        rows.append(row)
        print(f"{name}: {row['before']['seconds']:.2f} s -> "
              f"{row['after']['seconds']:.2f} s", file=sys.stderr)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="CMake build folder")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--cli", help="the kvprefix binary (default: BUILD_DIR/kvprefix)")
    parser.add_argument("--mooncake-dir", default=os.environ.get(
        "KVPREFIX_MOONCAKE_DIR",
        os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "..", "data", "mooncake")))
    parser.add_argument("--engines", help="comma-separated; default: all")
    parser.add_argument("--replay-engines",
                        help="comma-separated; default: all but the reference, "
                             "whose std::map trie would need ~10 GB for a whole trace")
    parser.add_argument("--baseline-cli",
                        help="an older kvprefix binary to compare against (step 3)")
    parser.add_argument("--baseline-name", default="baseline",
                        help="how the report names the older build, e.g. a commit")
    args = parser.parse_args()

    cli = args.cli or os.path.join(args.build, "kvprefix")
    make_input = os.path.join(args.build, "bench", "kvprefix_make_input")
    listing = subprocess.run([cli, "engines"], capture_output=True, text=True,
                             check=True).stdout
    all_engines = [line.split()[0] for line in listing.splitlines() if line.strip()]
    engines = args.engines.split(",") if args.engines else all_engines
    replay_engines = (args.replay_engines.split(",") if args.replay_engines
                      else [e for e in all_engines if e != "reference"])
    have_mooncake = os.path.exists(os.path.join(args.mooncake_dir, TRACES[0]))
    workload = "mooncake-conversation/3000" if have_mooncake else "multi-turn/8000"
    result = {"workload": workload, "match": [], "replay": [], "model_replay": [],
              "load_avg_start": os.getloadavg()}

    with tempfile.TemporaryDirectory() as tmp:
        document = os.path.join(tmp, "input.json")
        env = dict(os.environ, KVPREFIX_MOONCAKE_DIR=args.mooncake_dir)
        subprocess.run([make_input, workload, document], check=True, env=env)
        result["input"] = f"kvprefix_make_input {workload}"
        result["input_bytes"] = os.path.getsize(document)
        digests = {}
        for engine in engines:
            output = os.path.join(tmp, f"output-{engine}.json")
            seconds, cpu, rss = timed([cli, "match", "--engine", engine, document,
                                  "--output", output], subprocess.DEVNULL)
            digests[engine] = digest(output)
            os.remove(output)
            result["match"].append({"engine": engine, "seconds": seconds, "cpu_seconds": cpu,
                                    "max_rss_kb": rss})
            print(f"match {engine}: {seconds:.2f} s", file=sys.stderr)
        result["outputs_identical"] = len(set(digests.values())) == 1
        if not result["outputs_identical"]:
            sys.exit(f"error: engines wrote different outputs: {digests}")

        for trace in TRACES if have_mooncake else ():
            path = os.path.join(args.mooncake_dir, trace)
            for engine in replay_engines:
                seconds, cpu, rss, summary = replay(
                    cli, ["--engine", engine, "--mode", "token", path], tmp)
                result["replay"].append({"trace": trace, "engine": engine,
                                         "seconds": seconds, "cpu_seconds": cpu,
                                         "max_rss_kb": rss, "summary": summary})
                print(f"replay {trace} {engine}: {seconds:.2f} s", file=sys.stderr)
            for model, model_engines in MODEL_REPLAYS:
                for engine in model_engines:
                    runs = [replay(cli, ["--engine", engine, "--mode", "block",
                                         "--model", model, "--capacity",
                                         str(MODEL_CAPACITY), path], tmp)
                            for _ in range(MODEL_RUNS)]
                    result["model_replay"].append({
                        "trace": trace, "model": model, "engine": engine,
                        "capacity": MODEL_CAPACITY, "runs": MODEL_RUNS,
                        "seconds": statistics.median(r[0] for r in runs),
                        "cpu_seconds": statistics.median(r[1] for r in runs),
                        "max_rss_kb": statistics.median(r[2] for r in runs),
                        "replay_seconds": statistics.median(
                            r[3]["replay_seconds"] for r in runs),
                        "summary": runs[0][3]})
                    print(f"replay {trace} --model {model} {engine}: "
                          f"{result['model_replay'][-1]['seconds']:.2f} s",
                          file=sys.stderr)

        if args.baseline_cli and have_mooncake:
            result["baseline_name"] = args.baseline_name
            result["targets"] = before_after(
                cli, args.baseline_cli, document,
                os.path.join(args.mooncake_dir, TRACES[0]), tmp)
    result["load_avg_end"] = os.getloadavg()

    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
