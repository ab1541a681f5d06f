"""python3 -m kvprefix match [FILE] [--engine NAME] [--page-size P]

The command-line tool's `kvprefix match` from Python: the batch job (SPEC
§2) on a SPEC §4 file ("-" or none: standard input), answered on standard
output with the very bytes `kvprefix match` prints, because both run the
same C++ reader, engines and writer (kvprefix.match_file). Errors are the
tool's too (SPEC §6): one line on standard error, "kvprefix: " and the
message, and exit status 2 for bad input or usage, 1 for an input/output or
resource failure.
"""
import argparse
import os
import sys

import kvprefix

EXIT_IO_FAILURE = 1
EXIT_BAD_INPUT = 2


def _fail(status, message):
    print(f"kvprefix: {message}", file=sys.stderr)
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m kvprefix",
        description="kvprefix: the longest reusable KV-cache prefix of each "
                    "LLM request (the Python module's command line)")
    parser.add_argument("--version", action="version",
                        version=f"kvprefix {kvprefix.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    match = commands.add_parser(
        "match", help="insert every cached sequence, then match every request")
    match.add_argument("file", nargs="?", default="-", metavar="FILE",
                       help="SPEC §4 JSON input; - reads standard input")
    match.add_argument("--engine", default=kvprefix.default_engine(),
                       choices=kvprefix.engines(),
                       help="engine (default: %(default)s)")
    match.add_argument("--page-size", type=int, default=1, metavar="P",
                       help="tokens per page (SPEC §8; default: 1)")
    args = parser.parse_args(argv)

    try:
        output = kvprefix.match_file(args.file, engine=args.engine,
                                     page_size=args.page_size)
    except kvprefix.InputError as error:
        return _fail(EXIT_BAD_INPUT, error)
    except ValueError as error:  # a page size out of range
        return _fail(EXIT_BAD_INPUT, error)
    except kvprefix.CapacityError as error:
        return _fail(EXIT_IO_FAILURE, f"capacity: {error}")
    except MemoryError:
        return _fail(EXIT_IO_FAILURE, "out of memory")
    except OSError as error:
        return _fail(EXIT_IO_FAILURE, error)
    try:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    except OSError as error:
        # Nothing more reaches a closed pipe, not even the flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _fail(EXIT_IO_FAILURE, f"<stdout>: cannot write: {error.strerror}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
