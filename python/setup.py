"""Builds the kvprefix package with the project's CMake build.

setuptools has no CMake support of its own and scikit-build is not packaged
by Debian 12, so build_ext is replaced by a configure-and-build of the one
target `kvprefix_python` (the extension kvprefix._kvprefix); the built
extension is then copied where setuptools expects it, beside the package's
Python sources (src/kvprefix/). Only the libraries' dependencies, CLI11
and pybind11 are needed: the configure turns the tests and benchmarks off,
and of the tool's code only the commands `python3 -m kvprefix` runs
(kvprefix_cli_commands) are built.

The CMake build tree is build-python/ at the repository's top, reused by
the next install. It is a sibling of the build/ that `scripts/dev.sh build`
makes, so that the two compile each source with the same relative paths and
flags: with a compiler launcher, CMAKE_CXX_COMPILER_LAUNCHER=ccache in the
environment (CMake reads it, and CMAKE_BUILD_PARALLEL_LEVEL, from there),
ccache with its base_dir at or above the repository finds the objects the
other compiled (the packaging test's pip build takes seconds, not minutes).
KVPREFIX_BUILD_DIR=PATH (absolute: pip runs this from its own folder)
reuses a configured build tree instead, such as
the build/ that `scripts/dev.sh build` made, which already holds the
extension: nothing is compiled again.

pip shows a build's output only with -v, and a first build compiles the
library (about 9 minutes on 2 cores): what runs, and the compiler's
[done/total] progress, also go to the terminal (/dev/tty) when there is
one, so that `pip install` never sits silent.

The version is the top-level CMakeLists.txt's, the one place it is set.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE_DIR = pathlib.Path(__file__).resolve().parent.parent


def project_version():
    """The version of project(kvprefix VERSION ...) in CMakeLists.txt."""
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    return re.search(r"project\(kvprefix\s+VERSION\s+([0-9.]+)", text).group(1)


def open_terminal():
    """The terminal, for progress pip would hide, or None."""
    if sys.stderr.isatty():
        return None  # run by hand: stderr is the terminal already
    try:
        return open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        return None


def progress(terminal, line):
    """Writes `line` to stderr (pip -v shows it) and to the terminal."""
    print(line, file=sys.stderr, flush=True)
    if terminal is not None:
        terminal.write(line + "\n")
        terminal.flush()


def run(command, terminal):
    """Runs `command`, passing each line of its output on as progress."""
    with subprocess.Popen(command, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            progress(terminal, line.rstrip("\n"))
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        terminal = open_terminal()
        reused = os.environ.get("KVPREFIX_BUILD_DIR")
        if reused:
            build_dir = pathlib.Path(reused).resolve()
            progress(terminal, f"kvprefix: building kvprefix_python in the "
                               f"existing build tree {build_dir} "
                               f"(KVPREFIX_BUILD_DIR)")
        else:
            build_dir = SOURCE_DIR / "build-python"
            progress(terminal, "kvprefix: compiling the C++ extension with "
                               "CMake (the first build takes about 9 minutes "
                               "on 2 cores; KVPREFIX_BUILD_DIR=$PWD/build reuses "
                               "the tree scripts/dev.sh build made)")
            run(["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir),
                 "-DCMAKE_BUILD_TYPE=Release", "-DKVPREFIX_PYTHON=ON",
                 "-DKVPREFIX_CLI=ON", "-DKVPREFIX_TESTS=OFF",
                 "-DKVPREFIX_BENCH=OFF", "-DKVPREFIX_INSTALL=OFF",
                 "-DPYTHON_EXECUTABLE=" + sys.executable], terminal)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        run(["cmake", "--build", str(build_dir), "--target", "kvprefix_python",
             "--parallel", jobs], terminal)
        if terminal is not None:
            terminal.close()
        built = next((build_dir / "python" / "kvprefix").glob("_kvprefix*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    version=project_version(),
    package_dir={"": "src"},
    packages=["kvprefix", "kvprefix.testing"],
    ext_modules=[Extension("kvprefix._kvprefix", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
