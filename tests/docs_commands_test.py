#!/usr/bin/python3
"""Runs the commands the documents quote, and compares what they print.

    docs_commands_test.py --cli build/kvprefix --build build --source . \
        README.md ...

In each Markdown file, a fenced block's line `$ build/PROGRAM ARGS` (the
tool, build/kvprefix, or an example built in the tree) or
`$ PYTHONPATH=build/python ARGS` is a command, and the lines after it (up to the next `$ ` line or the fence) are
what it prints, standard output and standard error: lines starting with
"kvprefix:" are compared with standard error in order, the others with
standard output. A command quoted without output lines is not run (it names
files of the reader's, such as trace.jsonl). An expected line may elide
text with "..." (any characters, none included; a number's trailing digits,
"0.2115...", or a run of members, "...,"), a line that is "..." alone stands
for any number of lines, and a duration "(0.3 s)" matches any. Commands run
with /bin/sh from the source folder, with `build/kvprefix` replaced by
--cli and every other path starting with `build/` (a word's start, or
after `plugin:`) by one in the --build folder, which the printed lines
then name `build/` again. Prints each command and, for a mismatch, the expected line and what
was printed; exit status 1 if any command differs or none was found.
"""
import argparse
import re
import subprocess
import sys

PROMPTS = ("$ build/", "$ PYTHONPATH=build/python ")
BUILD_PATH = re.compile(r"(?<![\w/.-])build/")
DURATION = re.compile(r"\(\d+\.\d s\)")


def quoted_commands(text):
    """(line number, arguments, expected lines) of each quoted command."""
    commands = []
    in_block = False
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_block = not in_block
            current = None
            continue
        if not in_block:
            continue
        if line.startswith("$ "):
            current = None
            if line.startswith(PROMPTS):
                current = (number, line[2:], [])
                commands.append(current)
        elif current is not None:
            current[2].append(line)
    return [command for command in commands if command[2]]


def line_pattern(expected):
    expected = DURATION.sub("(...)", expected)
    pieces = [re.escape(piece) for piece in expected.split("...")]
    return re.compile("^" + ".*".join(pieces) + "$")


def matches(expected, printed):
    """True if the printed lines are the expected ones ("..." lines: any)."""
    if not expected:
        return not printed
    if expected[0] == "...":
        return any(matches(expected[1:], printed[skip:])
                   for skip in range(len(printed) + 1))
    return (bool(printed) and line_pattern(expected[0]).match(printed[0])
            is not None and matches(expected[1:], printed[1:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("files", nargs="+")
    arguments = parser.parse_args()
    failures = ran = 0
    for name in arguments.files:
        with open(f"{arguments.source}/{name}", encoding="utf-8") as file:
            commands = quoted_commands(file.read())
        for number, args, expected in commands:
            ran += 1
            print(f"{name}:{number}: $ {args}", flush=True)
            command = args
            if command.startswith("build/kvprefix "):
                command = arguments.cli + command[len("build/kvprefix"):]
            command = BUILD_PATH.sub(arguments.build.rstrip("/") + "/",
                                     command)
            run = subprocess.run(command, shell=True,
                                 cwd=arguments.source, capture_output=True,
                                 text=True, check=False)
            expected_err = [line for line in expected
                            if line.startswith("kvprefix:")]
            expected_out = [line for line in expected
                            if not line.startswith("kvprefix:")]
            build = arguments.build.rstrip("/") + "/"
            printed_out = run.stdout.replace(build, "build/").splitlines()
            printed_err = run.stderr.replace(build, "build/").splitlines()
            if (matches(expected_out, printed_out) and
                    matches(expected_err, printed_err)):
                continue
            failures += 1
            print(f"  differs (exit status {run.returncode}); expected:")
            print("".join(f"  | {line}\n" for line in expected), end="")
            print("  printed on standard output:")
            print("".join(f"  | {line}\n" for line in printed_out), end="")
            print("  on standard error:")
            print("".join(f"  | {line}\n" for line in printed_err), end="")
    if ran == 0:
        print("no quoted command found")
        return 1
    print(f"{ran} quoted commands, {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
