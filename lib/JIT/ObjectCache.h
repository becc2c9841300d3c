//===- ObjectCache.h - Compiled objects on disk -----------------*- C++ -*-===//

#ifndef FUSE_LIB_JIT_OBJECTCACHE_H
#define FUSE_LIB_JIT_OBJECTCACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuse {

struct EngineOptions;

/// A compiled specialization as stored: its object files (one per part of a
/// function cut for parallel code generation, the entry's first) and what
/// only compilation can tell. Everything derivable from the call (result
/// dtypes, shapes, in-place ties) is recomputed by the engine, never stored.
struct CachedObject {
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  std::vector<uint64_t> buffers;     ///< intermediate buffer sizes
  std::vector<int64_t> dynamicSizes; ///< (operand, dim) per size argument
};

/// Objects on disk, one file per key. An entry holds the format version, its
/// full key text (compared with the lookup's, so an entry copied under
/// another name is a miss), the metadata and the objects, followed by a
/// SHA-256 of all of it; every length is bounded by the file. Anything that
/// does not decode exactly is a miss. Writes are atomic (temporary file, then
/// rename), so a crash never leaves a partial entry.
class ObjectCache {
public:
  /// The directory `options` and the environment select, or none when the
  /// cache is disabled.
  static std::optional<std::string> directoryFor(const EngineOptions &options);

  explicit ObjectCache(std::string directory);

  /// The file name for a key text (its SHA-256).
  std::string pathFor(llvm::StringRef keyText) const;
  /// The entry for `keyText`, or none if absent, invalid or stored for
  /// another key.
  std::optional<CachedObject> load(llvm::StringRef keyText) const;
  /// Stores an entry; failures only cost a later recompilation, so they are
  /// reported as a message, not an error.
  std::optional<std::string> store(llvm::StringRef keyText,
                                   const CachedObject &entry) const;

  /// The bytes of an entry file.
  static std::string encode(llvm::StringRef keyText, const CachedObject &entry);
  /// An entry file's key text and contents, or none unless `bytes` is
  /// exactly one well-formed entry with a matching checksum.
  static std::optional<std::pair<std::string, CachedObject>>
  decode(llvm::StringRef bytes);

private:
  std::string directory_;
};

} // namespace fuse

#endif // FUSE_LIB_JIT_OBJECTCACHE_H
