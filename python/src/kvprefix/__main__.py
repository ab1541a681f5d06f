"""python3 -m kvprefix match|replay|curve [ARGUMENTS...]

The command-line tool's `kvprefix match`, `kvprefix replay` and `kvprefix
curve` from Python: the arguments go, unchanged, to the tool's own parser
and commands, built into the extension (kvprefix.run_command_line), so
that for the same arguments both print the same bytes (SPEC §5, and each
command's summary or curve), the same one-line error on standard error
("kvprefix: " and the message) and exit with the same status (SPEC §6): 2
for bad input or usage, 1 for an input/output or resource failure.
`--help` and `--version` are the tool's too.
"""
import os
import signal
import sys

import kvprefix


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else argv
    # The command writes to file descriptors 1 and 2 itself: what Python
    # has buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    # Ctrl-C stops the command as it stops the tool; Python's handler would
    # only be run once the command is done.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return kvprefix.run_command_line([os.fsencode(a) for a in arguments])


if __name__ == "__main__":
    sys.exit(main())
