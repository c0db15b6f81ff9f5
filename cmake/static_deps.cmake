# tr_link_static_deps(<executable>): links the daemon's code and, from their static archives,
# gRPC, protobuf, Abseil, libgit2 (with what it needs) and yaml-cpp, dropping the code nothing
# calls (--gc-sections). The process then maps a fraction of those libraries' text: idle RSS
# 29.5 -> 25.3 MiB for one cluster (docs/benchmarks.md), and the image needs fewer packages.
# OpenSSL, spdlog, fmt, date-tz and cpp-httplib stay shared: Debian ships no archive of the
# last four, and cpp-httplib's library links the shared OpenSSL (one copy of it in the process).
function(tr_link_static_deps target)
  # The tree of a cross build (cmake/toolchain-linux-arm64.cmake), or the host's.
  set(dir ${CMAKE_SYSROOT}/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  set(archives)
  foreach(name grpc++ grpc address_sorting re2 upb cares gpr protobuf git2 mbedtls mbedx509
               mbedcrypto http_parser ssh2 pcre2-8 yaml-cpp)
    if(NOT EXISTS ${dir}/lib${name}.a)
      message(FATAL_ERROR "${dir}/lib${name}.a is missing (scripts/bootstrap installs its -dev "
                          "package); -DTR_STATIC_DEPS=OFF links the shared libraries instead")
    endif()
    list(APPEND archives ${dir}/lib${name}.a)
  endforeach()
  file(GLOB absl_archives ${dir}/libabsl_*.a)
  # libgit2's Negotiate authentication; only the runtime library is installed (no -dev link).
  find_library(TR_GSSAPI_LIBRARY NAMES gssapi_krb5 libgssapi_krb5.so.2 REQUIRED)
  find_package(Threads REQUIRED)
  target_link_libraries(${target} PRIVATE
    -Wl,--gc-sections -Wl,--start-group
    $<TARGET_FILE:reconciler> $<TARGET_FILE:reconciler_features>
    $<TARGET_FILE:reconciler_loop> $<TARGET_FILE:reconciler_operations>
    $<TARGET_FILE:reconciler_clients> $<TARGET_FILE:reconciler_runtime>
    $<TARGET_FILE:gitsource> $<TARGET_FILE:core> $<TARGET_FILE:base>
    $<TARGET_FILE:talos_proto> ${archives} ${absl_archives}
    -Wl,--end-group
    spdlog::spdlog fmt::fmt date::date-tz PkgConfig::TR_HTTPLIB ${TR_GSSAPI_LIBRARY}
    OpenSSL::SSL OpenSSL::Crypto ZLIB::ZLIB Threads::Threads ${CMAKE_DL_LIBS} rt atomic)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  add_dependencies(${target} reconciler reconciler_features reconciler_loop reconciler_operations
                   reconciler_clients reconciler_runtime gitsource core base talos_proto)
endfunction()
