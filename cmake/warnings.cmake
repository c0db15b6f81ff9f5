# Every target of ours builds with warnings as errors. Generated code (protobuf)
# is compiled in its own target without this function.
function(tr_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
    -Werror)
endfunction()
