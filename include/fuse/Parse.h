//===- Parse.h - Parsing user text, the stack bounded -----------*- C++ -*-===//
//
// MLIR's parser recurses once per nesting level (brackets, and the operators
// of one affine expression), so a deep enough input overflows any stack.
// Every tool and the engine parse user text here: the input is scanned for
// nesting first, and the parse runs on a thread whose stack holds the
// deepest nesting the scan lets through, whatever the caller's stack.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_PARSE_H
#define FUSE_PARSE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace fuse {

/// The deepest nesting accepted: open brackets ((, [, {, <) plus the
/// operators (+, -, *, floordiv, ceildiv, mod) of the expressions open at a
/// point. Real programs stay far below it.
constexpr unsigned kMaxNesting = 1000;

/// The stack a parse runs on: kMaxNesting levels take under 2 MB in MLIR's
/// parser (measured: about 1.2 KB per level of nested dictionaries, the
/// deepest frames); the rest is margin for the passes that walk the result.
constexpr unsigned kParseStackBytes = 16u << 20;

/// The offset in `text` where nesting first exceeds kMaxNesting, if it
/// does. String literals and `//` comments are skipped.
std::optional<size_t> findExcessiveNesting(llvm::StringRef text);

/// The diagnostic for excessive nesting.
std::string excessiveNestingMessage();

/// Parses the main buffer of `sourceMgr` as a module, like
/// mlir::parseSourceFile (which verifies it), with the nesting guard above,
/// then checks that every static tensor type's byte size fits in int64
/// (fuse::verifyTensorSizes). Errors are emitted on `context` with their
/// location; null on failure.
mlir::OwningOpRef<mlir::ModuleOp> parseModule(llvm::SourceMgr &sourceMgr,
                                              mlir::MLIRContext *context);

} // namespace fuse

#endif // FUSE_PARSE_H
