# Warnings for the project's own code. LLVM/MLIR headers are SYSTEM includes,
# so their warnings stay out of the way.
function(fuse_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()

# A library of Fuse's own, linked against the shared libMLIR.so and libLLVM.so
# only (never the static MLIR*.a archives: two copies of MLIR in one process).
function(fuse_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LINK" ${ARGN})
  add_library(${name} ${ARG_SOURCES})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK} MLIR LLVM)
  fuse_target_warnings(${name})
endfunction()

function(fuse_add_tool name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LINK} MLIR LLVM)
  fuse_target_warnings(${name})
endfunction()
