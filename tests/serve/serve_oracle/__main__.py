"""python3 -m serve_oracle (run from tests/serve/): replay a §10/§11
document or a Mooncake trace with the oracle and print the answer, for
comparison with the C++ serving replay (issues 42 and 43) and its speed.

  python3 -m serve_oracle DOCUMENT.json
  python3 -m serve_oracle TRACE.jsonl --mode block --lines 2000 \\
      --set max_running=64 --set model=vllm --set capacity=2000 \\
      --set workers=4 --set 'router={"name":"precise"}'

A trace's answer is printed without `requests` (§10.5, §11.8); the replay's
seconds go to stderr.
"""
import argparse
import json
import sys
import time
from decimal import Decimal

from .replay import answer_text, replay
from .trace import trace_document


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m serve_oracle")
    parser.add_argument("path", help="a document (.json) or a trace (.jsonl)")
    parser.add_argument("--mode", choices=("block", "token"), default="block")
    parser.add_argument("--lines", type=int, default=None,
                        help="the trace's first LINES lines only")
    parser.add_argument("--set", action="append", default=[],
                        metavar="MEMBER=JSON",
                        help="add or replace a member (a bare word is a string)")
    args = parser.parse_args(argv)
    members = {}
    for item in args.set:
        name, _, value = item.partition("=")
        try:
            members[name] = json.loads(value, parse_float=Decimal)
        except json.JSONDecodeError:
            members[name] = value          # a bare name: model=vllm
    trace = args.path.endswith(".jsonl")
    if trace:
        document = trace_document(args.path, args.mode, args.lines, **members)
        unit = args.mode
    else:
        with open(args.path) as f:
            document = json.load(f, parse_float=Decimal)
        document = document.get("document", document)  # a case file too
        document.update(members)
        unit = "token"
    began = time.perf_counter()
    answer = replay(document, unit)
    seconds = time.perf_counter() - began
    if trace:
        del answer["requests"]
    sys.stdout.write(answer_text(answer))
    print(f"replayed {len(document['requests'])} requests in {seconds:.2f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
