# Every target of ours builds with warnings as errors under GCC. Generated code (protobuf) is
# compiled in its own target without this function. Under clang (the sanitizer pass of
# scripts/test, and scripts/fuzz) the check is clang's thread-safety analysis alone: the
# ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations, errors when broken. GCC's set of
# warnings stays the gate for everything else (clang's differ, e.g. on libgit2's init macros).
function(tr_warnings target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety -Werror=thread-safety)
    return()
  endif()
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
    -Werror)
endfunction()
