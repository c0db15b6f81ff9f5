# Checks the walls of cmake/layers.cmake: every #include "..." of base/, core/, gitsource/,
# reconciler/ and talos-sim (tests/sim/) names a header of the file's own layer or of one its
# layer MAY include.
#   cmake -DTR_SOURCE_DIR=<source root> [-DTR_STAMP=<file>] -P cmake/check_layers.cmake
# Prints each include that runs upward (file:line: what, and the two layers) and fails; touches
# TR_STAMP when every include is in order (the build's record that the check ran).
cmake_minimum_required(VERSION 3.25)
if(NOT TR_SOURCE_DIR)
  message(FATAL_ERROR "check_layers: -DTR_SOURCE_DIR=<source root> is missing")
endif()

set(tr_layer_names)
# tr_layer(<name> FILES <globs>... MAY <layers>...): see cmake/layers.cmake.
macro(tr_layer name)
  cmake_parse_arguments(tr_arg "" "" "FILES;MAY" ${ARGN})
  list(APPEND tr_layer_names ${name})
  set(tr_patterns_${name})
  foreach(glob ${tr_arg_FILES})
    string(REPLACE "." "\\." regex "${glob}")
    string(REPLACE "*" ".*" regex "${regex}")
    list(APPEND tr_patterns_${name} "^${regex}$")
  endforeach()
  set(tr_may_${name} ${name} ${tr_arg_MAY})
endmacro()
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)

# The layer of `path` (from the source root) into `out`; empty when no layer holds it.
function(tr_layer_of path out)
  foreach(name ${tr_layer_names})
    foreach(regex ${tr_patterns_${name}})
      if(path MATCHES "${regex}")
        set(${out} ${name} PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(problems)
file(GLOB_RECURSE files RELATIVE ${TR_SOURCE_DIR}
  ${TR_SOURCE_DIR}/base/*.h ${TR_SOURCE_DIR}/base/*.cc
  ${TR_SOURCE_DIR}/core/*.h ${TR_SOURCE_DIR}/core/*.cc
  ${TR_SOURCE_DIR}/gitsource/*.h ${TR_SOURCE_DIR}/gitsource/*.cc
  ${TR_SOURCE_DIR}/reconciler/*.h ${TR_SOURCE_DIR}/reconciler/*.cc
  ${TR_SOURCE_DIR}/tests/sim/*.h ${TR_SOURCE_DIR}/tests/sim/*.cc)
list(SORT files)
foreach(file ${files})
  tr_layer_of(${file} layer)
  if(NOT layer)
    list(APPEND problems "${file}: in no layer of cmake/layers.cmake")
    continue()
  endif()
  # One list element a line: the list separator and brackets (which hold separators) go first.
  file(READ ${TR_SOURCE_DIR}/${file} text)
  string(REGEX REPLACE "[][;]" "," text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(NOT line MATCHES "^#include \"((base|core|gitsource|reconciler|tests/sim)/[^\"]+)\"")
      continue()
    endif()
    set(header ${CMAKE_MATCH_1})
    tr_layer_of(${header} header_layer)
    if(NOT header_layer)
      list(APPEND problems "${file}:${number}: ${header} is in no layer of cmake/layers.cmake")
    elseif(NOT header_layer IN_LIST tr_may_${layer})
      list(APPEND problems
        "${file}:${number}: ${header}: ${layer} may not include ${header_layer}")
    endif()
  endforeach()
endforeach()

if(problems)
  list(LENGTH problems count)
  list(JOIN problems "\n" text)
  message(FATAL_ERROR "${text}\n${count} include(s) against the walls of cmake/layers.cmake "
                      "(docs/architecture.md, \"Walls\")")
endif()
if(TR_STAMP)
  file(TOUCH ${TR_STAMP})
endif()
