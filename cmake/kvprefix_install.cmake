# What `cmake --install` and `cpack` put where (included by the top-level
# CMakeLists.txt when KVPREFIX_INSTALL is on):
#
#   bin/kvprefix                          the tool (when KVPREFIX_CLI is on)
#   include/kvprefix/<folder>/*.h         the public headers of core,
#                                         reference, optimized, engines, io,
#                                         checking
#   lib/libkvprefix_<library>.a           their static libraries
#   lib/cmake/kvprefix/                   the CMake package (find_package)
#   lib/pkgconfig/kvprefix.pc             the pkg-config file
#   share/doc/kvprefix/                   README, CHANGELOG, SPEC
#
# Headers keep their repository folders below include/kvprefix/, so users'
# includes are the repository's (`#include "optimized/radix_trie.h"`) and
# generic folder names such as io/ or engines/ never land in include/
# itself; the exported targets and kvprefix.pc add include/kvprefix to the
# include path.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KVPREFIX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kvprefix CACHE STRING
    "Where the CMake package (kvprefixConfig.cmake) is installed, relative to the prefix")
get_property(kvprefix_libraries GLOBAL PROPERTY KVPREFIX_PUBLIC_LIBRARIES)
set(kvprefix_installed ${kvprefix_libraries})
if(KVPREFIX_CLI)
  list(APPEND kvprefix_installed kvprefix)
endif()
install(TARGETS ${kvprefix_installed} EXPORT kvprefixTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvprefix
        FILE_SET generated_headers DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kvprefix)
install(EXPORT kvprefixTargets NAMESPACE kvprefix::
        DESTINATION ${KVPREFIX_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/kvprefixConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kvprefixConfig.cmake
  INSTALL_DESTINATION ${KVPREFIX_INSTALL_CMAKEDIR})
# Before 1.0, a minor release may change the API: 0.2 satisfies only 0.2.x.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/kvprefixConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kvprefixConfig.cmake
              ${PROJECT_BINARY_DIR}/kvprefixConfigVersion.cmake
        DESTINATION ${KVPREFIX_INSTALL_CMAKEDIR})

# kvprefix.pc finds its prefix from its own place (${pcfiledir}), so the
# installed tree may be moved, as `cmake --install --prefix` and cpack do.
file(RELATIVE_PATH KVPREFIX_PC_TO_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" KVPREFIX_PC_TO_PREFIX "${KVPREFIX_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/kvprefix.pc.in
               ${PROJECT_BINARY_DIR}/kvprefix.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kvprefix.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(PROGRAMS ${PROJECT_SOURCE_DIR}/cli/plot_curve.py
                 ${PROJECT_SOURCE_DIR}/cli/plot_routers.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kvprefix)

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
              ${PROJECT_SOURCE_DIR}/docs/SPEC.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

include(${CMAKE_CURRENT_LIST_DIR}/kvprefix_cpack.cmake)
