# Drives the `embed-example` test (cmake -P): installs the already built Fuse
# into a scratch prefix, configures and builds examples/embed against it as an
# outside project would (find_package(Fuse) via CMAKE_PREFIX_PATH), and runs
# the example. Any failing step fails the test. Fuse itself is not rebuilt:
# `cmake --install` only copies what the build produced.
#
# Variables (-D...):
#   FUSE_BUILD_DIR   Fuse's build tree
#   PREFIX           install prefix (recreated on every run)
#   SOURCE_DIR       examples/embed
#   BINARY_DIR       the example's build tree (recreated on every run)
#   BUILD_TYPE, CXX_COMPILER, C_COMPILER, MAKE_PROGRAM, LAUNCHER
#                    forwarded from Fuse's build (LAUNCHER: ccache, or empty)
cmake_minimum_required(VERSION 3.20)

foreach(var FUSE_BUILD_DIR PREFIX SOURCE_DIR BINARY_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "test.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run_step name)
  message(STATUS "embed-example: ${name}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE result
    COMMAND_ECHO STDOUT)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "embed-example: ${name} failed (${result})")
  endif()
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${BINARY_DIR}")

run_step("install Fuse"
  "${CMAKE_COMMAND}" --install "${FUSE_BUILD_DIR}" --prefix "${PREFIX}")
# The tools are installed too, and run from the prefix.
run_step("run the installed fusec" "${PREFIX}/bin/fusec" --version)
run_step("run the installed fuse-opt" "${PREFIX}/bin/fuse-opt" --version)

set(configure_args -G Ninja -S "${SOURCE_DIR}" -B "${BINARY_DIR}"
  "-DCMAKE_PREFIX_PATH=${PREFIX}")
foreach(pair
    "BUILD_TYPE;CMAKE_BUILD_TYPE"
    "CXX_COMPILER;CMAKE_CXX_COMPILER"
    "C_COMPILER;CMAKE_C_COMPILER"
    "MAKE_PROGRAM;CMAKE_MAKE_PROGRAM"
    "LAUNCHER;CMAKE_CXX_COMPILER_LAUNCHER"
    "LAUNCHER;CMAKE_C_COMPILER_LAUNCHER")
  list(GET pair 0 from)
  list(GET pair 1 to)
  if(${from})
    list(APPEND configure_args "-D${to}=${${from}}")
  endif()
endforeach()
run_step("configure examples/embed" "${CMAKE_COMMAND}" ${configure_args})

run_step("build examples/embed" "${CMAKE_COMMAND}" --build "${BINARY_DIR}")

run_step("run fuse-embed-example" "${BINARY_DIR}/fuse-embed-example")
