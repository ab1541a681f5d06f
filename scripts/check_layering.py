#!/usr/bin/env python3
"""Fails on any #include that points up the layering of the repository.

Every C++ file's `#include "folder/file.h"` lines are read; the include's
first path component is the folder it depends on, and the file's own
top-level folder must be allowed to include it by LAYERS below (the README's
layout table says the same). Includes whose first component is no folder of
the table (absl/, hwy/: third-party headers written with quotes) are not
checked; a top-level folder holding C++ files that the table does not know
is an error, so a new folder cannot slip past the check.

Usage:
  scripts/check_layering.py [ROOT]    check the tree at ROOT (default: the
                                      repository holding this script)
  scripts/check_layering.py --self-test
                                      prove the check fails on a bad include

Exit status: 0 clean, 1 an include points up (each printed as
FILE:LINE: "INCLUDE": FOLDER/ may not include INCLUDED/), 2 usage error.
"""

import os
import re
import sys
import tempfile

# The layering, bottom first: each folder and the folders it may include
# (itself always). Every dependency points down this list; no folder
# includes cli/ but cli/ and python/ (whose `python3 -m kvprefix` runs the
# tool's command line, cli/run.h); shipped code (everything but testing/,
# tests/, fuzz/, bench/) never includes testing/.
_CORE = ["kvprefix"]
_ENGINES = _CORE + ["reference", "optimized", "models", "plugin", "engines"]
_PRODUCT = _ENGINES + ["router", "io", "serve", "checking", "verify"]
LAYERS = {
    "kvprefix": [],
    "reference": _CORE,
    "optimized": _CORE,
    # models/ (SPEC §9: vllm/, sglang/, each model beside its reference).
    "models": _CORE,
    "plugin": _CORE,
    "engines": _ENGINES,
    # router/ (SPEC §11's policies) reads the core and plugin/ (a router
    # plugin's C table and the library loader); io/ reads and
    # writes its documents; serve/ (SPEC §10's serving replay: workers and
    # the clock over ServingCache) runs the workers and calls it.
    "router": _CORE + ["plugin"],
    "io": _CORE + ["router"],
    "serve": _CORE + ["router"],
    "checking": _ENGINES + ["router", "io", "serve"],
    "verify": _ENGINES + ["router", "io", "serve", "checking"],
    "cli": _PRODUCT,
    "testing": _PRODUCT,
    "tests": _PRODUCT + ["testing"],
    "fuzz": _PRODUCT + ["testing"],
    "bench": _PRODUCT + ["testing"],
    "python": _PRODUCT + ["cli"],
    # examples/ uses kvprefix as a user does: only the libraries that are
    # installed and exported (kvprefix::kvprefix, ::io, ::checking).
    "examples": _ENGINES + ["router", "io", "serve", "checking"],
}

_SOURCE = re.compile(r"\.(cc|h|cpp|hpp)$")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def _sources(root):
    """Yields (path relative to root, top-level folder) of every C++ file."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith((".", "build")))
        for name in sorted(files):
            if _SOURCE.search(name):
                path = os.path.relpath(os.path.join(folder, name), root)
                yield path, path.split(os.sep)[0]


def check(root):
    """Returns the list of problems found in the tree at `root`."""
    problems = []
    for path, top in _sources(root):
        if top == path:  # a C++ file at the root: no folder to place it
            problems.append(f"{path}: C++ file outside every folder")
            continue
        if top not in LAYERS:
            problems.append(f"{path}: folder {top}/ is not in the layering "
                            "table of scripts/check_layering.py")
            continue
        allowed = set(LAYERS[top]) | {top}
        with open(os.path.join(root, path), encoding="utf-8") as source:
            for number, line in enumerate(source, start=1):
                match = _INCLUDE.match(line)
                if not match:
                    continue
                included = match.group(1).split("/")[0]
                if included in LAYERS and included not in allowed:
                    problems.append(
                        f'{path}:{number}: "{match.group(1)}": {top}/ may '
                        f"not include {included}/ (allowed: "
                        f"{', '.join(sorted(allowed))})")
    return problems


def _write(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w", encoding="utf-8") as out:
        out.write(text)


def self_test():
    """Checks the checker on small trees; returns 0 if it behaves."""
    with tempfile.TemporaryDirectory() as root:
        _write(root, "kvprefix/types.h", "#include <cstdint>\n")
        _write(root, "engines/registry.h",
               '#include "kvprefix/types.h"\n#include "absl/x.h"\n')
        _write(root, "build/cli/ignored.cc", '#include "tests/x.h"\n')
        if check(root):
            print("self-test: a clean tree was rejected:", check(root))
            return 1
        _write(root, "kvprefix/batch.h",
               '#include "kvprefix/types.h"\n  #  include "engines/registry.h"\n')
        _write(root, "newfolder/x.cc", "int x;\n")
        found = check(root)
        expected = [
            'kvprefix/batch.h:2: "engines/registry.h": kvprefix/ may not '
            "include engines/ (allowed: kvprefix)",
            "newfolder/x.cc: folder newfolder/ is not in the layering table "
            "of scripts/check_layering.py",
        ]
        if found != expected:
            print("self-test: expected", expected, "found", found)
            return 1
    print("self-test: OK (a clean tree passes; an upward include and an "
          "unknown folder fail, named by file and line)")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"layering: {len(problems)} include(s) point up "
              "(see the table in scripts/check_layering.py and README.md)")
        return 1
    print(f"layering: OK, every include points down ({len(LAYERS)} folders)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
