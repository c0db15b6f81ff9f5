# What every target of ours gets: tr_target_defaults(<target> [TESTS]).
#
# Warnings. Every target of ours builds with warnings as errors under GCC. Generated code
# (protobuf) is compiled in its own target without this function. Under clang (the sanitizer
# pass of scripts/test, and scripts/fuzz) the check is clang's thread-safety analysis alone: the
# ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations, errors when broken. GCC's set of
# warnings stays the gate for everything else (clang's differ, e.g. on libgit2's init macros).
#
# Precompiled headers (-DTR_PCH=ON, which scripts/test sets for its clang pass). A file of ours
# spends about two thirds of its clang compile time in the standard library, abseil, fmt,
# nlohmann/json and GoogleTest; with TR_PCH each clang target of three files or more parses them
# once. Clang only: GCC loads its whole (170 MB) precompiled header into every file, which costs
# a small file more than parsing (scripts/test's GCC pass is a unity build instead). Off by
# default: ccache does not cache files built with one, and without one a missing #include shows
# (a plain build, as the default one, keeps that check; neither pass of scripts/test does).
option(TR_PCH "Precompile the headers nearly every file includes, per target" OFF)

set(TR_PCH_HEADERS
  <algorithm> <atomic> <chrono> <condition_variable> <cstdint> <filesystem> <fstream>
  <functional> <map> <memory> <mutex> <optional> <set> <sstream> <stop_token> <string>
  <string_view> <thread> <utility> <vector>
  [["absl/status/status.h"]] [["absl/status/statusor.h"]] [["absl/strings/str_cat.h"]]
  [["fmt/format.h"]] [["nlohmann/json.hpp"]])
set(TR_PCH_TEST_HEADERS [["gmock/gmock.h"]] [["gtest/gtest.h"]])

function(tr_target_defaults target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TESTS" "" "")
  # The walls between layers are checked before the target compiles (CMakeLists.txt).
  add_dependencies(${target} layers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety -Werror=thread-safety)
  else()
    target_compile_options(${target} PRIVATE
      -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
      -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
      -Werror)
  endif()
  get_target_property(sources ${target} SOURCES)
  list(LENGTH sources source_count)
  if(TR_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND source_count GREATER_EQUAL 3)
    set(headers ${TR_PCH_HEADERS})
    if(arg_TESTS)
      list(APPEND headers ${TR_PCH_TEST_HEADERS})
    endif()
    target_precompile_headers(${target} PRIVATE ${headers})
  endif()
endfunction()
