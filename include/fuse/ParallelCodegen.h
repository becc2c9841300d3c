//===- ParallelCodegen.h - One function's code on several cores -*- C++ -*-===//
//
// A specialization is one large function (the step of a training graph:
// forward, backward and optimizer loop nests in sequence), and LLVM's O3
// and machine code generation of one function run on one core. To use the
// others, the function is cut between its top-level loop nests into
// segments of about equal size, each segment is outlined into a function of
// its own (its pointer arguments keep the caller's `noalias`), and the
// module is split into parts, one segment each, that are optimized and
// compiled on separate threads, each in its own LLVMContext. The JIT links
// the parts' objects side by side.
//
// The cut depends only on the IR (never on the machine's core count), so a
// function always compiles to the same code, on any machine, and the loops
// are the same loops: results are bitwise the same as unsplit code.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PARALLELCODEGEN_H
#define FUSE_PARALLELCODEGEN_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace llvm {
class Function;
class LLVMContext;
class Module;
} // namespace llvm

namespace fuse {

/// Instructions (before O3, the OpenMP regions a function forks included)
/// per part: a function is cut into size / kCodegenPartInstructions
/// segments, at most kMaxCodegenParts. Smaller parts cost more in call
/// overhead and per-part setup than the cores give back.
constexpr unsigned kCodegenPartInstructions = 2000;
constexpr unsigned kMaxCodegenParts = 4;

/// Cuts `function` (with one `ret`) at blocks outside every loop that every
/// path from its entry to its return passes, into up to `parts` segments of
/// about equal instruction counts, and outlines every segment but the first
/// into an external function named `<function>.part<i>` which the function
/// calls in turn. Returns the outlined functions, in order (none when the
/// function has no such cut). Their pointer parameters are `noalias` when
/// the caller passes each a distinct `noalias` argument or alloca.
llvm::SmallVector<llvm::Function *> outlineSegments(llvm::Function &function,
                                                    unsigned parts);

/// The number of parts `function` is cut into: its size (with the internal
/// functions it calls) over kCodegenPartInstructions, between 1 and
/// kMaxCodegenParts.
unsigned codegenPartsFor(const llvm::Function &function);

/// Moves each function of `roots`, and the internal functions only it
/// uses, out of `module` into a module of its own, returned as bitcode (to
/// be read into another LLVMContext); `module` keeps the rest, with
/// declarations of what moved.
llvm::Expected<llvm::SmallVector<std::unique_ptr<llvm::MemoryBuffer>>>
splitOutFunctions(llvm::Module &module, llvm::ArrayRef<llvm::Function *> roots);

/// Reads a part splitOutFunctions wrote into `context`.
llvm::Expected<std::unique_ptr<llvm::Module>>
readPart(const llvm::MemoryBuffer &bitcode, llvm::LLVMContext &context);

} // namespace fuse

#endif // FUSE_PARALLELCODEGEN_H
