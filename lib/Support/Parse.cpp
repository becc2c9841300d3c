//===- Parse.cpp - Parsing user text, the stack bounded -------------------===//

#include "fuse/Parse.h"

#include "Fuse/IR/FuseOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/thread.h"

using namespace llvm;

namespace {
bool isIdentifierChar(char c) {
  return isAlnum(c) || c == '_' || c == '$' || c == '.';
}
} // namespace

std::optional<size_t> fuse::findExcessiveNesting(StringRef text) {
  // Per open bracket (the outermost level first), the operators seen in the
  // expression open at that level: `a + b + c` recurses once per operator
  // in MLIR's affine parser, as `(((a)))` does once per bracket. A separator
  // (`,` `:` `=`) ends an expression.
  SmallVector<unsigned, 64> operators = {0};
  unsigned depth = 0;
  size_t n = text.size();
  auto next = [&](size_t i) { return i + 1 < n ? text[i + 1] : '\0'; };
  auto countOperator = [&] {
    ++operators.back();
    return ++depth > kMaxNesting;
  };
  for (size_t i = 0; i < n;) {
    char c = text[i];
    switch (c) {
    case '"':
      // A string literal, with backslash escapes.
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
      continue;
    case '/':
      if (next(i) == '/') {
        while (i < n && text[i] != '\n')
          ++i;
        continue;
      }
      break;
    case '<':
    case '>':
      // `<=`, `>=` compare (integer sets); `->` is handled with '-'.
      if (next(i) == '=') {
        i += 2;
        continue;
      }
      [[fallthrough]];
    case '(':
    case '[':
    case '{':
    case ')':
    case ']':
    case '}':
      if (c == '(' || c == '[' || c == '{' || c == '<') {
        operators.push_back(0);
        if (++depth > kMaxNesting)
          return i;
      } else if (operators.size() > 1) {
        depth -= operators.pop_back_val() + 1;
      }
      break;
    case '-':
      if (next(i) == '>') {
        i += 2;
        continue;
      }
      [[fallthrough]];
    case '+':
    case '*':
      if (countOperator())
        return i;
      break;
    case ',':
    case ':':
    case '=':
      depth -= operators.back();
      operators.back() = 0;
      break;
    case '%':
    case '^':
    case '@':
    case '#':
    case '!':
      // A sigil's identifier may contain '-': not an operator.
      for (++i; i < n && (isIdentifierChar(text[i]) || text[i] == '-'); ++i)
        ;
      continue;
    default:
      if (isDigit(c)) {
        // A number, its exponent sign included ("1.0e-05", "4x3xf32").
        for (++i; i < n; ++i) {
          char d = text[i];
          bool exponentSign = (d == '-' || d == '+') &&
                              (text[i - 1] == 'e' || text[i - 1] == 'E');
          if (!isIdentifierChar(d) && !exponentSign)
            break;
        }
        continue;
      }
      if (isAlpha(c) || c == '_') {
        size_t begin = i;
        while (i < n && isIdentifierChar(text[i]))
          ++i;
        StringRef word = text.slice(begin, i);
        if ((word == "floordiv" || word == "ceildiv" || word == "mod") &&
            countOperator())
          return begin;
        continue;
      }
      break;
    }
    ++i;
  }
  return std::nullopt;
}

std::string fuse::excessiveNestingMessage() {
  return "input nests more than " + std::to_string(kMaxNesting) +
         " levels deep (brackets, or the operators of one expression)";
}

mlir::OwningOpRef<mlir::ModuleOp>
fuse::parseModule(SourceMgr &sourceMgr, mlir::MLIRContext *context) {
  unsigned id = sourceMgr.getMainFileID();
  const MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
  if (std::optional<size_t> at = findExcessiveNesting(buffer->getBuffer())) {
    auto [line, column] = sourceMgr.getLineAndColumn(
        SMLoc::getFromPointer(buffer->getBufferStart() + *at), id);
    mlir::emitError(mlir::FileLineColLoc::get(
        context, buffer->getBufferIdentifier(), line, column))
        << excessiveNestingMessage();
    return nullptr;
  }
  // On a thread of its own: the caller's stack may be small (a library
  // user's thread), and the parse needs a known amount.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  llvm::thread parser(std::optional<unsigned>(kParseStackBytes), [&] {
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, context);
    // Parsed and verified: no type too large to address may go further.
    if (module && failed(verifyTensorSizes(*module)))
      module = nullptr;
  });
  parser.join();
  return module;
}
