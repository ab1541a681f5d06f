# kvprefix_public_library(<target> <name> [PRIVATE_HEADERS <header>...])
#
# Makes the library <target>, defined in the current folder, one that users
# link as kvprefix::<name>, whether they add the repository with
# add_subdirectory (the ALIAS made here) or find the installed package (the
# target exported under its EXPORT_NAME by cmake/kvprefix_install.cmake).
# Every header of the folder, but the PRIVATE_HEADERS (those that include a
# private dependency's headers, such as simdjson's), becomes the target's
# HEADERS file set, based at the repository root: includes stay written from
# the root (`#include "optimized/radix_trie.h"`) in the build tree and, below
# include/kvprefix/, in an installed tree.
function(kvprefix_public_library target name)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "PRIVATE_HEADERS")
  add_library(kvprefix::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  foreach(header IN LISTS arg_PRIVATE_HEADERS)
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${header})
      message(FATAL_ERROR "${target}: no private header ${header}")
    endif()
    list(REMOVE_ITEM headers ${CMAKE_CURRENT_SOURCE_DIR}/${header})
  endforeach()
  target_sources(${target} PUBLIC FILE_SET HEADERS
                 BASE_DIRS ${PROJECT_SOURCE_DIR} FILES ${headers})
  set_property(GLOBAL APPEND PROPERTY KVPREFIX_PUBLIC_LIBRARIES ${target})
endfunction()
