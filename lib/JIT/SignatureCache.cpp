//===- SignatureCache.cpp - Compiled specializations by signature ---------===//

#include "SignatureCache.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

using namespace fuse;

/// Whether dim `d` of argument `i` is left to run time.
static bool isRuntimeDim(StackedMask stacked, size_t i, int64_t d) {
  return d == 0 && i < stacked.size() && stacked[i];
}

Signature Signature::of(llvm::ArrayRef<Tensor> args, StackedMask stacked) {
  Signature s;
  for (auto [i, t] : llvm::enumerate(args)) {
    s.key_.push_back(static_cast<int64_t>(t.dtype()));
    s.key_.push_back(t.rank());
    for (auto [d, size] : llvm::enumerate(t.shape()))
      s.key_.push_back(isRuntimeDim(stacked, i, d) ? kRuntimeDim : size);
  }
  return s;
}

bool Signature::matches(llvm::ArrayRef<Tensor> args,
                        StackedMask stacked) const {
  size_t at = 0, size = key_.size();
  for (auto [i, t] : llvm::enumerate(args)) {
    if (at + 2 > size || key_[at] != static_cast<int64_t>(t.dtype()) ||
        key_[at + 1] != t.rank())
      return false;
    at += 2;
    if (at + t.rank() > size)
      return false;
    for (auto [d, size] : llvm::enumerate(t.shape()))
      if (key_[at++] != (isRuntimeDim(stacked, i, d) ? kRuntimeDim : size))
        return false;
  }
  return at == size;
}

size_t Signature::hash() const {
  return llvm::hash_combine_range(key_.begin(), key_.end());
}

std::string Signature::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  for (size_t at = 0; at < key_.size();) {
    if (at)
      os << ", ";
    auto dtype = static_cast<DType>(key_[at]);
    int64_t rank = key_[at + 1];
    at += 2;
    os << "tensor<";
    for (int64_t d = 0; d < rank; ++d, ++at) {
      if (key_[at] == kRuntimeDim)
        os << "?x";
      else
        os << key_[at] << "x";
    }
    os << dtypeName(dtype) << ">";
  }
  os << ")";
  return text;
}

const Specialization *SignatureCache::find(llvm::ArrayRef<Tensor> args,
                                           StackedMask stacked) const {
  const Specialization *last = last_.load(std::memory_order_acquire);
  if (last && last->signature.matches(args, stacked))
    return last;
  size_t hash = Signature::of(args, stacked).hash();
  std::shared_lock lock(mutex_);
  auto it = byHash_.find(hash);
  if (it == byHash_.end())
    return nullptr;
  for (const Specialization *spec : it->second)
    if (spec->signature.matches(args, stacked)) {
      last_.store(spec, std::memory_order_release);
      return spec;
    }
  return nullptr;
}

const Specialization *
SignatureCache::insert(std::unique_ptr<Specialization> spec) {
  std::unique_lock lock(mutex_);
  const Specialization *stored = spec.get();
  byHash_[spec->signature.hash()].push_back(stored);
  all_.push_back(std::move(spec));
  last_.store(stored, std::memory_order_release);
  return stored;
}

size_t SignatureCache::size() const {
  std::shared_lock lock(mutex_);
  return all_.size();
}

std::string
SignatureCache::changingDims(llvm::ArrayRef<std::string> argNames) const {
  std::shared_lock lock(mutex_);
  if (all_.empty())
    return "";
  llvm::ArrayRef<int64_t> first = all_.front()->signature.key();
  std::string text;
  llvm::raw_string_ostream os(text);
  auto note = [&](const std::string &what) {
    if (!text.empty())
      os << ", ";
    os << what;
  };
  size_t at = 0;
  for (size_t arg = 0; at < first.size(); ++arg) {
    std::string name =
        arg < argNames.size() ? argNames[arg] : "#" + std::to_string(arg);
    int64_t rank = first[at + 1];
    bool layoutChanges = false;
    for (const auto &spec : all_) {
      llvm::ArrayRef<int64_t> key = spec->signature.key();
      if (key.size() != first.size() || key[at] != first[at] ||
          key[at + 1] != rank)
        layoutChanges = true;
    }
    if (layoutChanges) {
      // Dtype or rank changes shift everything after: report and stop.
      note(name + " (dtype or rank)");
      break;
    }
    for (int64_t d = 0; d < rank; ++d) {
      size_t pos = at + 2 + d;
      for (const auto &spec : all_)
        if (spec->signature.key()[pos] != first[pos]) {
          note(name + "[" + std::to_string(d) + "]");
          break;
        }
    }
    at += 2 + rank;
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Specialization
//===----------------------------------------------------------------------===//

void *Specialization::acquireWorkspace() const {
  if (!workspaceBytes)
    return nullptr;
  if (void *spare =
          spareWorkspace_.exchange(nullptr, std::memory_order_acquire))
    return spare;
  // Buffer sizes are multiples of 64: every buffer starts 64-byte aligned.
  return std::aligned_alloc(64, workspaceBytes);
}

void Specialization::releaseWorkspace(void *workspace) const {
  void *expected = nullptr;
  if (workspace && !spareWorkspace_.compare_exchange_strong(
                       expected, workspace, std::memory_order_release))
    std::free(workspace);
}

Specialization::~Specialization() { std::free(spareWorkspace_.load()); }
