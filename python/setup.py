"""Builds the kvprefix package with the project's CMake build.

setuptools has no CMake support of its own and scikit-build is not packaged
by Debian 12, so build_ext is replaced by a configure-and-build of the one
target `kvprefix_python` (the extension kvprefix._kvprefix); the built
extension is then copied where setuptools expects it, beside the package's
Python sources (src/kvprefix/). Only the libraries' dependencies, CLI11
and pybind11 are needed: the configure turns the tests and benchmarks off,
and of the tool's code only the commands `python3 -m kvprefix` runs
(kvprefix_cli_commands) are built.

The CMake build tree lives under build/ (setuptools' build_temp) and is
reused by the next install. CMake reads CMAKE_CXX_COMPILER_LAUNCHER (e.g.
ccache) and CMAKE_BUILD_PARALLEL_LEVEL from the environment.

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


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        subprocess.run(
            ["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir),
             "-DCMAKE_BUILD_TYPE=Release", "-DKVPREFIX_PYTHON=ON",
             "-DKVPREFIX_CLI=ON", "-DKVPREFIX_TESTS=OFF",
             "-DKVPREFIX_BENCH=OFF", "-DKVPREFIX_INSTALL=OFF",
             "-DPYTHON_EXECUTABLE=" + sys.executable],
            check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(
            ["cmake", "--build", str(build_dir), "--target", "kvprefix_python",
             "--parallel", jobs],
            check=True)
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
