# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Fuse"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "unittests"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fuse_obj_root, "test")

config.substitutions.append(("%examples", os.path.join(config.fuse_src_root, "examples")))
# LLVM's libraries (libomp, which exported objects call), for C programs.
config.substitutions.append(
    ("%llvm_libdir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.fuse_tools_dir, config.llvm_tools_dir]
tools = ["fuse-opt", "fusec"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Data-parallel tests (REQUIRES: mpi) run `%mpirun N fusec train ...`: with
# the flags OpenMPI needs as root and with more ranks than cores.
if config.fuse_enable_mpi.upper() in ("ON", "1", "TRUE", "YES") and \
        os.path.exists(config.mpiexec):
    config.available_features.add("mpi")
    # One machine: OpenMPI's ob1 over shared memory, without probing UCX
    # (0.2 s of every start-up).
    mpirun = config.mpiexec + " --allow-run-as-root --oversubscribe" \
        " --mca pml ob1 --mca btl self,vader -np"
    # Under AddressSanitizer (scripts/test --asan), MPI_Init's own
    # allocations outlive the ranks: no leak report for them.
    if "ASAN_OPTIONS" in os.environ:
        mpirun = "env ASAN_OPTIONS=" + os.environ["ASAN_OPTIONS"] + \
            ":detect_leaks=0 " + mpirun
    config.substitutions.append(("%mpirun", mpirun))
