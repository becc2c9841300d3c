# Install rules and the CMake package an embedder finds with
# `find_package(Fuse CONFIG)`, then links `Fuse::FuseJIT`.
#
# Plain install() commands only: LLVM's add_llvm_library / install machinery
# (AddLLVM is included at top level) is not used for Fuse's own targets.
# Nothing here changes how the build tree compiles or links; the $<INSTALL_
# INTERFACE:...> properties only appear in the installed FuseTargets.cmake.
#
# Layout under the prefix:
#   include/fuse/*.h                 public headers (+ generated Version.h,
#                                    <layer>/Passes.h.inc)
#   lib/libFuse*.a                   the libraries below
#   lib/cmake/Fuse/                  FuseConfig.cmake, FuseConfigVersion.cmake,
#                                    FuseTargets*.cmake (namespace Fuse::)
#   bin/fusec, bin/fuse-opt          the tools

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FUSE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Fuse)

# FuseTrain, FuseJIT and everything they link (see lib/*/CMakeLists.txt).
set(FUSE_EXPORTED_LIBRARIES
  FuseTrain
  FuseData
  FuseJIT
  FusePipeline
  FuseCodegen
  FuseTransforms
  FuseToLinalg
  FuseOptimizersToLinalg
  FuseCollectives
  FuseDialect
  FuseSupport)

if(FUSE_ENABLE_MPI)
  list(APPEND FUSE_EXPORTED_LIBRARIES FuseMPI)
endif()

foreach(lib ${FUSE_EXPORTED_LIBRARIES})
  # The public headers need C++17 (and so do LLVM 22's).
  target_compile_features(${lib} INTERFACE cxx_std_17)
  if(FUSE_ENABLE_SANITIZERS)
    # Instrumented static archives need the sanitizer runtimes at the
    # embedder's link. (The build tree already links with them globally.)
    target_link_options(${lib} INTERFACE
      $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  endif()
endforeach()

install(TARGETS ${FUSE_EXPORTED_LIBRARIES}
  EXPORT FuseTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The tools, defined before this file is included (tools/). Installed, they
# keep the run path of the LLVM/MLIR shared libraries they link (CMake
# strips the build tree's).
set_target_properties(fusec fuse-opt PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS fusec fuse-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fuse/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuse
  FILES_MATCHING PATTERN "*.h")
# Generated headers: the version, and the pass declarations Passes.h includes.
install(FILES
    ${PROJECT_BINARY_DIR}/include/fuse/Version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuse)
foreach(layer Transforms Conversion Codegen)
  install(FILES ${PROJECT_BINARY_DIR}/include/fuse/${layer}/Passes.h.inc
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fuse/${layer})
endforeach()

install(EXPORT FuseTargets
  NAMESPACE Fuse::
  FILE FuseTargets.cmake
  DESTINATION ${FUSE_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/FuseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/FuseConfig.cmake
  INSTALL_DESTINATION ${FUSE_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/FuseConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/cmake/FuseConfig.cmake
    ${PROJECT_BINARY_DIR}/cmake/FuseConfigVersion.cmake
  DESTINATION ${FUSE_INSTALL_CMAKEDIR})
