//===- Invoke.cpp - Calling a specialization ------------------------------===//
//
// Each call: its arguments checked against the declaration, packed into the
// entry point's pointer array (contiguous copies, out-parameters, workspace,
// dynamic sizes) and the compiled code run.
//
//===----------------------------------------------------------------------===//

#include "ClassLabels.h"
#include "EngineImpl.h"
#include "Threads.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

using namespace fuse;

Error Function::Impl::validate(llvm::ArrayRef<Tensor> args) const {
  if (args.size() != argTypes.size())
    return llvm::createStringError(
        "function '" + name + "' takes " + llvm::Twine(argTypes.size()) +
        " arguments, got " + llvm::Twine(args.size()));
  for (auto [i, arg] : llvm::enumerate(args)) {
    mlir::RankedTensorType declared = argTypes[i];
    std::string expected;
    llvm::raw_string_ostream(expected) << declared;
    std::optional<DType> dtype = dtypeOfType(declared.getElementType());
    if (!dtype || *dtype != arg.dtype())
      return llvm::createStringError(describe(i) + ": expected " + expected +
                                     ", got dtype " + dtypeName(arg.dtype()));
    if (arg.rank() != declared.getRank())
      return llvm::createStringError(
          describe(i) + ": expected " + expected + " of rank " +
          llvm::Twine(declared.getRank()) + ", got rank " +
          llvm::Twine(arg.rank()) + " (" + arg.typeString() + ")");
    if (arg.strides().size() != arg.shape().size())
      return llvm::createStringError(
          describe(i) + ": " + llvm::Twine(arg.strides().size()) +
          " strides for rank " + llvm::Twine(arg.rank()));
    for (auto [d, size] : llvm::enumerate(arg.shape())) {
      if (size < 0)
        return llvm::createStringError(describe(i) + ": dim " + llvm::Twine(d) +
                                       " is negative (" + llvm::Twine(size) +
                                       ")");
      int64_t want = declared.getDimSize(d);
      if (!mlir::ShapedType::isDynamic(want) && want != size)
        return llvm::createStringError(describe(i) + ": dim " + llvm::Twine(d) +
                                       " is " + llvm::Twine(size) +
                                       ", expected " + llvm::Twine(want) +
                                       " (" + expected + ")");
    }
    if (Error e = checkSize(i, arg))
      return e;
  }
  return Error::success();
}

Error Function::Impl::checkSize(size_t i, const Tensor &arg) const {
  // Compiled code indexes with 64-bit byte offsets.
  if (!tensorBytes(arg.dtype(), arg.shape()))
    return llvm::createStringError(describe(i) + ": " + arg.typeString() +
                                   " is too large: its size in bytes "
                                   "overflows 64 bits");
  return Error::success();
}

Error Function::Impl::validateSteps(llvm::ArrayRef<Tensor> args) const {
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (!stacked[i])
      continue;
    if (arg.rank() == 0)
      return llvm::createStringError(
          describe(i) + ": stacked along dim 0 (one row per step), got a 0-d "
                        "tensor");
    if (arg.shape()[0] != args[firstStacked].shape()[0])
      return llvm::createStringError(
          describe(i) + ": dim 0 counts the steps and must be " +
          llvm::Twine(args[firstStacked].shape()[0]) + " like " +
          describe(firstStacked) + ", got " + llvm::Twine(arg.shape()[0]) +
          " (" + arg.typeString() + ")");
    // The step count is not in the signature: checked on every call.
    if (Error e = checkSize(i, arg))
      return e;
  }
  return Error::success();
}

/// Flushes denormal floats to zero (and reads them as zero) while it lives,
/// as XLA and TensorFlow run compiled code: a value decaying towards zero
/// (Adam's moments of a gradient that stays 0) otherwise takes a microcode
/// assist on every operation, ten times slower. Restores the caller's mode.
class DenormalMode {
public:
  explicit DenormalMode(bool flush) {
#if defined(__x86_64__) || defined(__i386__)
    if (!flush)
      return;
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
    active_ = true;
#else
    (void)flush;
#endif
  }
  ~DenormalMode() {
#if defined(__x86_64__) || defined(__i386__)
    if (active_)
      _mm_setcsr(saved_);
#endif
  }

private:
  static constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x40;
  unsigned saved_ = 0;
  bool active_ = false;
};

/// Calls `spec` with contiguous copies of non-contiguous arguments. A result
/// computed in place is found in its argument, which must be contiguous;
/// it is also copied into `results` when that names another buffer.
static Error invoke(const Function::Impl &fn, const Specialization &spec,
                    llvm::ArrayRef<Tensor> args,
                    llvm::ArrayRef<Tensor> results) {
  // Reused across calls: a steady-state call allocates nothing.
  thread_local std::vector<void *> pointers;
  pointers.clear();
  llvm::SmallVector<Tensor, 0> copies;
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (arg.isContiguous()) {
      pointers.push_back(arg.data());
      continue;
    }
    Expected<Tensor> copy =
        arg.checkedContiguousCopy("a contiguous copy of " + fn.describe(i));
    if (!copy)
      return copy.takeError();
    copies.push_back(std::move(*copy));
    pointers.push_back(copies.back().data());
  }
  if (Error e = checkClassLabels(args, pointers, spec.classes,
                                 [&](size_t i) { return fn.describe(i); }))
    return e;
  for (auto [result, want] : llvm::zip(results, spec.results)) {
    if (want.inPlaceOf < 0) {
      pointers.push_back(result.data());
      continue;
    }
    if (!args[want.inPlaceOf].isContiguous())
      return llvm::createStringError(
          fn.describe(want.inPlaceOf) +
          " is updated in place and must be contiguous");
  }
  void *workspace = spec.acquireWorkspace();
  if (spec.workspaceBytes && !workspace)
    return llvm::createStringError("cannot allocate a workspace of " +
                                   llvm::Twine(spec.workspaceBytes) +
                                   " bytes for '" + fn.name + "'");
  char *buffer = static_cast<char *>(workspace);
  for (uint64_t bytes : spec.buffers) {
    pointers.push_back(buffer);
    buffer += bytes;
  }
  // Sizes of dynamic operands travel as integers in pointer slots.
  for (size_t at = 0; at + 1 < spec.dynamicSizes.size(); at += 2) {
    size_t operand = spec.dynamicSizes[at];
    int64_t size = 0;
    if (operand < args.size()) {
      size = args[operand].shape()[spec.dynamicSizes[at + 1]];
    } else {
      // The out-parameters: the results not computed in place, in order.
      size_t outParam = operand - args.size();
      for (auto [result, want] : llvm::zip(results, spec.results))
        if (want.inPlaceOf < 0 && outParam-- == 0) {
          size = result.shape()[spec.dynamicSizes[at + 1]];
          break;
        }
    }
    pointers.push_back(reinterpret_cast<void *>(static_cast<intptr_t>(size)));
  }
  {
    DenormalMode mode(fn.engine->options.flushDenormals);
    ThreadCountScope threads(fn.engine->threads);
    spec.entry(pointers.data());
  }
  spec.releaseWorkspace(workspace);
  for (auto [result, want] : llvm::zip(results, spec.results)) {
    if (want.inPlaceOf < 0)
      continue;
    const Tensor &arg = args[want.inPlaceOf];
    if (result.data() && result.data() != arg.data())
      std::memcpy(result.data(), arg.data(),
                  arg.numElements() * byteWidth(arg.dtype()));
  }
  return Error::success();
}

/// The shape of a result for a call of `steps` steps.
static llvm::SmallVector<int64_t, 4> resultShape(const ResultSpec &spec,
                                                 int64_t steps) {
  llvm::SmallVector<int64_t, 4> shape = spec.shape;
  if (spec.stacked)
    shape[0] = steps;
  return shape;
}

/// A result's tensor: a view of its argument when computed in place, new
/// storage otherwise.
static Expected<Tensor> resultTensor(const Function::Impl &fn, size_t index,
                                     const ResultSpec &spec,
                                     llvm::ArrayRef<Tensor> args,
                                     int64_t steps) {
  if (spec.inPlaceOf >= 0)
    return Tensor::view(args[spec.inPlaceOf].data(), spec.dtype, spec.shape);
  return Tensor::allocate(spec.dtype, resultShape(spec, steps),
                          "result #" + llvm::Twine(index) + " of '" + fn.name +
                              "'");
}

/// New tensors for the results of a call of `spec`.
static Expected<std::vector<Tensor>>
resultTensors(const Function::Impl &fn, const Specialization &spec,
              llvm::ArrayRef<Tensor> args) {
  std::vector<Tensor> results;
  results.reserve(spec.results.size());
  for (auto [j, r] : llvm::enumerate(spec.results)) {
    Expected<Tensor> result = resultTensor(fn, j, r, args, fn.steps(args));
    if (!result)
      return result.takeError();
    results.push_back(std::move(*result));
  }
  return results;
}

Expected<std::vector<Tensor>>
Function::allocateResults(llvm::ArrayRef<Tensor> args) {
  Expected<const Specialization *> spec = impl_->specialization(args);
  if (!spec)
    return spec.takeError();
  return resultTensors(*impl_, **spec, args);
}

Error Function::prepare(llvm::ArrayRef<Tensor> args,
                        const std::function<void()> &onLowered) {
  return impl_->specialization(args, onLowered).takeError();
}

Expected<std::vector<Tensor>> Function::call(llvm::ArrayRef<Tensor> args) {
  Expected<const Specialization *> spec = impl_->specialization(args);
  if (!spec)
    return spec.takeError();
  Expected<std::vector<Tensor>> results = resultTensors(*impl_, **spec, args);
  if (!results)
    return results.takeError();
  if (Error e = invoke(*impl_, **spec, args, *results))
    return std::move(e);
  return results;
}

Error Function::callInto(llvm::ArrayRef<Tensor> args,
                         llvm::ArrayRef<Tensor> results) {
  Expected<const Specialization *> spec = impl_->specialization(args);
  if (!spec)
    return spec.takeError();
  const std::vector<ResultSpec> &want = (*spec)->results;
  if (results.size() != want.size())
    return llvm::createStringError(
        "function '" + impl_->name + "' returns " + llvm::Twine(want.size()) +
        " results, got " + llvm::Twine(results.size()) + " result tensors");
  // Checked on every call, for every result: nothing here allocates unless
  // it reports an error (a training step may have hundreds of results).
  int64_t steps = impl_->steps(args);
  for (auto [i, result] : llvm::enumerate(results)) {
    // A result computed in place needs no tensor: it is in its argument.
    if (want[i].inPlaceOf >= 0 && !result.data())
      continue;
    auto dimMatches = [&](auto pair) {
      auto [d, size] = pair;
      return size == (d == 0 && want[i].stacked ? steps : want[i].shape[d]);
    };
    if (result.dtype() != want[i].dtype ||
        result.rank() != static_cast<int64_t>(want[i].shape.size()) ||
        !llvm::all_of(llvm::enumerate(result.shape()), dimMatches)) {
      Tensor expected =
          Tensor::view(nullptr, want[i].dtype, resultShape(want[i], steps));
      return llvm::createStringError(
          "result #" + llvm::Twine(i) + " of '" + impl_->name + "': expected " +
          expected.typeString() + ", got " + result.typeString());
    }
    if (!result.isContiguous())
      return llvm::createStringError("result #" + llvm::Twine(i) + " of '" +
                                     impl_->name + "' must be contiguous");
    if (!result.data() && result.numElements() != 0)
      return llvm::createStringError("result #" + llvm::Twine(i) + " of '" +
                                     impl_->name +
                                     "' has no data (null pointer)");
  }
  return invoke(*impl_, **spec, args, results);
}
