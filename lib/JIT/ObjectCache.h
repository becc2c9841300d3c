//===- ObjectCache.h - Compiled objects on disk -----------------*- C++ -*-===//

#ifndef FUSE_LIB_JIT_OBJECTCACHE_H
#define FUSE_LIB_JIT_OBJECTCACHE_H

#include "SignatureCache.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuse {

struct EngineOptions;

/// A compiled specialization as stored: its object file and result types.
struct CachedObject {
  std::unique_ptr<llvm::MemoryBuffer> object;
  std::vector<ResultSpec> results;
  std::vector<uint64_t> buffers;     ///< intermediate buffer sizes
  std::vector<int64_t> dynamicSizes; ///< (operand, dim) per size argument
};

/// Objects on disk, one file per key, written atomically (temporary file,
/// then rename) with a checksum, so a crash or a truncated file is detected
/// and recompiled, never loaded.
class ObjectCache {
public:
  /// The directory `options` and the environment select, or none when the
  /// cache is disabled.
  static std::optional<std::string> directoryFor(const EngineOptions &options);

  explicit ObjectCache(std::string directory);

  /// The file name for a key text (its SHA-256).
  std::string pathFor(llvm::StringRef keyText) const;
  /// The entry for `keyText`, or none if absent or invalid.
  std::optional<CachedObject> load(llvm::StringRef keyText) const;
  /// Stores an entry; failures only cost a later recompilation, so they are
  /// reported as a message, not an error.
  std::optional<std::string> store(llvm::StringRef keyText,
                                   const CachedObject &entry) const;

private:
  std::string directory_;
};

} // namespace fuse

#endif // FUSE_LIB_JIT_OBJECTCACHE_H
