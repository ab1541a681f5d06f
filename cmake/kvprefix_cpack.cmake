# `cpack -G DEB` in the build folder makes build/kvprefix_<version>_<arch>.deb:
# one package holding everything `cmake --install` installs (the tool, the
# static libraries, the headers, the CMake package, kvprefix.pc and the docs)
# below /usr. Its Depends are the shared libraries the tool loads, computed
# by dpkg-shlibdeps (Debian's dpkg-dev and file packages); building against
# the libraries also needs the -dev packages of their dependencies, which it
# Recommends. `kvprefix curve --plot` runs share/kvprefix/plot_curve.py from
# the package with /usr/bin/python3 and matplotlib, which it Suggests.
set(KVPREFIX_PACKAGE_MAINTAINER
    "Seed 4c6cdf52 maintainers <maintainers@users.noreply.a-seed-4c6cdf52.example>"
    CACHE STRING "Maintainer of the .deb (name <email>)")

set(CPACK_PACKAGE_NAME kvprefix)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY ${PROJECT_DESCRIPTION})
set(CPACK_PACKAGE_CONTACT ${KVPREFIX_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR})
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # kvprefix_0.3.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${KVPREFIX_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The first line of the control file's Description is the summary above.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "kvprefix keeps a token trie of cached sequences and matches each request
from the root until its first missing token, giving the matched length, the
cache node ID and the uncached suffix (the job of SGLang's RadixCache and
vLLM's prefix caching). The package holds the kvprefix command-line tool,
the C++20 static libraries with their headers (include/kvprefix), the CMake
package (find_package(kvprefix)) and kvprefix.pc.")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "libabsl-dev, libsimdjson-dev, libfmt-dev, libhwy-dev")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS python3-matplotlib)
include(CPack)
