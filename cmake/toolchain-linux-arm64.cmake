# Cross-compiling for linux/arm64 with Debian's cross toolchain (g++-aarch64-linux-gnu) against
# the arm64 tree TR_SYSROOT (scripts/release.d/arm64-sysroot); scripts/release passes both:
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-linux-arm64.cmake -DTR_SYSROOT=<tree> ...
# Programs (protoc, the gRPC plugin, git) are the host's; libraries, headers and CMake packages
# come from the tree only.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# try_compile projects read this file again: they get TR_SYSROOT too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TR_SYSROOT)
if(NOT TR_SYSROOT)
  message(FATAL_ERROR "set TR_SYSROOT to the arm64 tree (scripts/release.d/arm64-sysroot)")
endif()
set(CMAKE_SYSROOT ${TR_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${TR_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the tree's .pc files and prefixes their paths with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${TR_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    "${TR_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${TR_SYSROOT}/usr/share/pkgconfig")
# The host's protoc for FindProtobuf (the tree's is an arm64 binary).
set(Protobuf_PROTOC_EXECUTABLE /usr/bin/protoc CACHE FILEPATH "host protoc")
