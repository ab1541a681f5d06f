"""kvprefix: the longest reusable KV-cache prefix of each LLM request.

The package re-exports every public name of its C++ extension,
kvprefix._kvprefix (pybind11): find_prefix_matches, PrefixIndex, replay,
curve, read_trace, engines, match_file, run_command_line, the exceptions
CapacityError and InputError, ..., and __version__, the version of the
CMake project it was built from. `python3 -m kvprefix match|replay|curve
...` is the command-line tool's `kvprefix match|replay|curve ...` (see
kvprefix/__main__.py).
"""
from kvprefix._kvprefix import *  # noqa: F401,F403 (every public name)
from kvprefix._kvprefix import __version__  # noqa: F401


def _present_as_ours():
    """Classes and exceptions print as kvprefix.X, not kvprefix._kvprefix.X."""
    for value in list(globals().values()):
        if isinstance(value, type) and value.__module__ == "kvprefix._kvprefix":
            value.__module__ = __name__


_present_as_ours()
