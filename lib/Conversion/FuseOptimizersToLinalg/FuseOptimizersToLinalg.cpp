//===- FuseOptimizersToLinalg.cpp - Optimizer ops to fused updates --------===//
//
// Each optimizer's update rule is written once, against `Arith`, and emitted
// either fused (scalar arithmetic in the body of one linalg.generic per
// parameter, or per group of same-shaped parameters, which reads every input
// array once and writes every output once, in place through its `outs`,
// marked fuse.optimizer_update for the strategy) or unfused (one fuse op
// per arithmetic operation, the way eager frameworks run an optimizer). Both
// perform the same operations in the same order, so they agree bitwise.
//
//===----------------------------------------------------------------------===//

#include "fuse/Conversion/Passes.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

namespace fuse {
#define GEN_PASS_DEF_CONVERTFUSEOPTIMIZERSTOLINALG
#include "fuse/Conversion/Passes.h.inc"
} // namespace fuse

using namespace mlir;
using namespace fuse;

namespace {

//===----------------------------------------------------------------------===//
// Arithmetic on elements or on whole tensors
//===----------------------------------------------------------------------===//

/// `x` (a float scalar) as `type`.
Value convertFloat(OpBuilder &b, Location loc, Value x, Type type) {
  if (x.getType() == type)
    return x;
  if (type.getIntOrFloatBitWidth() < x.getType().getIntOrFloatBitWidth())
    return arith::TruncFOp::create(b, loc, type, x);
  return arith::ExtFOp::create(b, loc, type, x);
}

/// The operations update rules are written with. Values are elements
/// (`ScalarArith`) or whole tensors (`TensorArith`).
class Arith {
public:
  Arith(OpBuilder &b, Location loc, Type elementType)
      : b(b), loc(loc), elementType(elementType) {}
  virtual ~Arith() = default;

  virtual Value constant(double value) = 0;
  /// A per-call f64 scalar (learning rate, bias correction) as an operand.
  virtual Value scalar(Value f64) = 0;
  virtual Value add(Value x, Value y) = 0;
  virtual Value sub(Value x, Value y) = 0;
  virtual Value mul(Value x, Value y) = 0;
  virtual Value div(Value x, Value y) = 0;
  virtual Value max(Value x, Value y) = 0;
  virtual Value sqrt(Value x) = 0;
  /// `condition` is a per-call i1 scalar.
  virtual Value select(Value condition, Value x, Value y) = 0;

  OpBuilder &b;
  Location loc;
  Type elementType;
};

/// Scalar arithmetic, for the body of a fused update.
class ScalarArith : public Arith {
public:
  using Arith::Arith;
  Value constant(double value) override {
    return arith::ConstantOp::create(b, loc,
                                     b.getFloatAttr(elementType, value));
  }
  Value scalar(Value f64) override {
    // Rounded once, beside the scalar's definition (outside the loops), and
    // shared by every loop that uses it.
    for (Operation *user : f64.getUsers())
      if (isa<arith::TruncFOp>(user) &&
          user->getResult(0).getType() == elementType &&
          user->getBlock() == f64.getParentBlock())
        return user->getResult(0);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(f64);
    return convertFloat(b, loc, f64, elementType);
  }
  Value add(Value x, Value y) override {
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) override {
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) override {
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) override {
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value max(Value x, Value y) override {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value sqrt(Value x) override { return math::SqrtOp::create(b, loc, x); }
  Value select(Value condition, Value x, Value y) override {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }
};

/// Whole-tensor fuse ops: each one is its own pass over memory once lowered
/// without fusion. Scalars become 0-d tensors, broadcast by the ops.
class TensorArith final : public Arith {
public:
  using Arith::Arith;
  Value constant(double value) override {
    auto type = RankedTensorType::get({}, elementType);
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type,
                               b.getFloatAttr(elementType, value).getValue()));
  }
  Value scalar(Value f64) override {
    return tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, elementType),
        convertFloat(b, loc, f64, elementType));
  }
  Value add(Value x, Value y) override { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) override { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) override { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) override { return DivOp::create(b, loc, x, y); }
  Value max(Value x, Value y) override { return MaxOp::create(b, loc, x, y); }
  Value sqrt(Value x) override { return SqrtOp::create(b, loc, x); }
  Value select(Value condition, Value x, Value y) override {
    Value mask = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI1Type()), condition);
    return SelectOp::create(b, loc, mask, x, y);
  }
};

//===----------------------------------------------------------------------===//
// Update rules
//===----------------------------------------------------------------------===//

/// Maps (parameter index, param, grad, states...) to (new param, new
/// states...).
using UpdateFn = std::function<SmallVector<Value>(Arith &, size_t, Value, Value,
                                                  ValueRange)>;

/// Per-call arithmetic on scalars from the op's 0-d operands, in f64 as
/// PyTorch and Keras compute them (in Python floats): 1 - beta^t from betas
/// rounded to f32 is off by 1e-4 relative for beta2 = 0.9999. Each scalar is
/// rounded to the parameters' type once, where an update uses it.
struct CallScalars : ScalarArith {
  CallScalars(OpBuilder &b, Location loc, Value lr, Value step)
      : ScalarArith(b, loc, b.getF64Type()),
        lr(convertFloat(b, loc, lr, b.getF64Type())), step(step) {}
  Value lr, step;

  Value stepAsFloat(int64_t offset) {
    Value s = step;
    if (offset)
      s = arith::AddIOp::create(
          b, loc, s,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(offset)));
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), s);
  }
  /// 1 - beta^(step + 1), the bias correction of Adam-like moments.
  Value biasCorrection(double beta) {
    return sub(constant(1.0),
               math::PowFOp::create(b, loc, constant(beta), stepAsFloat(1)));
  }
};

UpdateFn sgdRule(SgdOp op, CallScalars &s) {
  double momentum = op.getMomentum().convertToDouble();
  double dampening = op.getDampening().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  bool nesterov = op.getNesterov();
  Value first = arith::CmpIOp::create(
      s.b, s.loc, arith::CmpIPredicate::eq, s.step,
      arith::ConstantOp::create(s.b, s.loc, s.b.getI64IntegerAttr(0)));
  Value lr = s.lr;
  return [=](Arith &a, size_t, Value p, Value g, ValueRange states) {
    if (decay != 0.0)
      g = a.add(g, a.mul(a.constant(decay), p));
    SmallVector<Value> results = {Value()};
    if (momentum != 0.0) {
      Value later = a.add(a.mul(a.constant(momentum), states[0]),
                          a.mul(a.constant(1.0 - dampening), g));
      Value buffer = a.select(first, g, later);
      g = nesterov ? a.add(g, a.mul(a.constant(momentum), buffer)) : buffer;
      results.push_back(buffer);
    }
    results[0] = a.sub(p, a.mul(a.scalar(lr), g));
    return results;
  };
}

UpdateFn adamRule(AdamOp op, CallScalars &s) {
  double beta1 = op.getBeta1().convertToDouble();
  double beta2 = op.getBeta2().convertToDouble();
  double eps = op.getEps().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  bool amsgrad = op.getAmsgrad(), decoupled = op.getDecoupled();
  // The step size lr / (1 - beta1^t) and 1 / sqrt(1 - beta2^t), once per
  // call: a product per element instead of a quotient (a divide costs as
  // much as ten multiplies, and Adam is bound by its divide and square root
  // where the parameters fit in cache).
  Value stepSize = s.div(s.lr, s.biasCorrection(beta1));
  Value inverseSqrtCorrection2 =
      s.div(s.constant(1.0), s.sqrt(s.biasCorrection(beta2)));
  Value shrink = s.sub(s.constant(1.0), s.mul(s.lr, s.constant(decay)));
  return [=](Arith &a, size_t, Value p, Value g, ValueRange states) {
    if (decay != 0.0) {
      if (decoupled)
        p = a.mul(p, a.scalar(shrink));
      else
        g = a.add(g, a.mul(a.constant(decay), p));
    }
    Value m = a.add(a.mul(a.constant(beta1), states[0]),
                    a.mul(a.constant(1.0 - beta1), g));
    Value v = a.add(a.mul(a.constant(beta2), states[1]),
                    a.mul(a.constant(1.0 - beta2), a.mul(g, g)));
    Value vhat = amsgrad ? a.max(states[2], v) : v;
    Value denom = a.add(a.mul(a.sqrt(vhat), a.scalar(inverseSqrtCorrection2)),
                        a.constant(eps));
    SmallVector<Value> results = {
        a.sub(p, a.mul(a.scalar(stepSize), a.div(m, denom))), m, v};
    if (amsgrad)
      results.push_back(vhat);
    return results;
  };
}

UpdateFn adagradRule(AdagradOp op, CallScalars &s) {
  double decay = op.getWeightDecay().convertToDouble();
  double eps = op.getEps().convertToDouble();
  // clr = lr / (1 + step * lr_decay), once per call.
  Value clr =
      s.div(s.lr, s.add(s.constant(1.0),
                        s.mul(s.stepAsFloat(0),
                              s.constant(op.getLrDecay().convertToDouble()))));
  return [=](Arith &a, size_t, Value p, Value g, ValueRange states) {
    if (decay != 0.0)
      g = a.add(g, a.mul(a.constant(decay), p));
    Value sum = a.add(states[0], a.mul(g, g));
    Value next = a.sub(
        p, a.mul(a.scalar(clr), a.div(g, a.add(a.sqrt(sum), a.constant(eps)))));
    return SmallVector<Value>{next, sum};
  };
}

UpdateFn rmspropRule(RmspropOp op, CallScalars &s) {
  double alpha = op.getAlpha().convertToDouble();
  double eps = op.getEps().convertToDouble();
  double momentum = op.getMomentum().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  bool centered = op.getCentered();
  Value lr = s.lr;
  return [=](Arith &a, size_t, Value p, Value g, ValueRange states) {
    if (decay != 0.0)
      g = a.add(g, a.mul(a.constant(decay), p));
    unsigned next = 0;
    Value square = a.add(a.mul(a.constant(alpha), states[next++]),
                         a.mul(a.constant(1.0 - alpha), a.mul(g, g)));
    SmallVector<Value> results = {Value(), square};
    Value avg;
    if (centered) {
      Value mean = a.add(a.mul(a.constant(alpha), states[next++]),
                         a.mul(a.constant(1.0 - alpha), g));
      results.push_back(mean);
      avg = a.add(a.sqrt(a.sub(square, a.mul(mean, mean))), a.constant(eps));
    } else {
      avg = a.add(a.sqrt(square), a.constant(eps));
    }
    Value delta = a.div(g, avg);
    if (momentum != 0.0) {
      delta = a.add(a.mul(a.constant(momentum), states[next++]), delta);
      results.push_back(delta);
    }
    results[0] = a.sub(p, a.mul(a.scalar(lr), delta));
    return results;
  };
}

/// LAMB in two phases: the moments, then (after the norms of the parameter
/// and of its update direction) the update scaled by the trust ratio.
struct LambRule {
  double beta1, beta2, eps, decay;
  Value correction1, correction2;

  SmallVector<Value> moments(Arith &a, Value g, Value m, Value v) const {
    return {
        a.add(a.mul(a.constant(beta1), m), a.mul(a.constant(1.0 - beta1), g)),
        a.add(a.mul(a.constant(beta2), v),
              a.mul(a.constant(1.0 - beta2), a.mul(g, g)))};
  }
  Value direction(Arith &a, Value p, Value m, Value v) const {
    Value u =
        a.div(a.div(m, a.scalar(correction1)),
              a.add(a.sqrt(a.div(v, a.scalar(correction2))), a.constant(eps)));
    if (decay != 0.0)
      u = a.add(u, a.mul(a.constant(decay), p));
    return u;
  }
};

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

/// The operands of one optimizer op, per parameter.
struct Operands {
  ValueRange params, grads, states;
  unsigned numStates;
  /// The current bf16 copies of the parameters at copyParams; with
  /// `split`, their top halves then their low halves (IPEX's split layout).
  ValueRange copies;
  ArrayRef<int64_t> copyParams;
  bool split = false;

  SmallVector<Value> statesOf(size_t i) const {
    SmallVector<Value> result;
    for (unsigned k = 0; k < numStates; ++k)
      result.push_back(states[k * params.size() + i]);
    return result;
  }
  /// Parameter i's current copy (its top half if split), or null.
  Value copyOf(size_t i) const {
    const int64_t *found = llvm::find(copyParams, int64_t(i));
    return found == copyParams.end() ? Value()
                                     : copies[found - copyParams.begin()];
  }
  /// Parameter i's low half, if split, or null.
  Value lowOf(size_t i) const {
    const int64_t *found = llvm::find(copyParams, int64_t(i));
    return !split || found == copyParams.end()
               ? Value()
               : copies[copyParams.size() + (found - copyParams.begin())];
  }
  /// Parameter i's current value: the join of its halves if split (its
  /// operand in `params` is not read), else its operand.
  Value paramValue(OpBuilder &b, Location loc, size_t i) const {
    if (Value low = lowOf(i))
      return JoinHalvesOp::create(b, loc, params[i].getType(), copyOf(i), low);
    return params[i];
  }
};

/// One element-wise linalg.generic over tensors of `type`: `inputs` are read
/// only, `inits` are read and overwritten (so they bufferize in place).
SmallVector<Value> buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps(inputs.size() + inits.size(),
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(inits), inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args));
      });
  return generic.getResults();
}

/// Parameters of the same type, in groups of at most `maxGroupSize`, in
/// order of first appearance.
SmallVector<SmallVector<size_t>> groupByType(ValueRange params,
                                             unsigned maxGroupSize) {
  llvm::MapVector<Type, SmallVector<SmallVector<size_t>>> byType;
  for (auto [i, param] : llvm::enumerate(params)) {
    auto &groups = byType[param.getType()];
    if (groups.empty() || groups.back().size() >= maxGroupSize)
      groups.emplace_back();
    groups.back().push_back(i);
  }
  SmallVector<SmallVector<size_t>> result;
  for (auto &entry : byType)
    llvm::append_range(result, entry.second);
  return result;
}

/// The op's results (new params, then the states in their layout, then
/// the copies: all top halves, then all low halves if split) from
/// per-parameter [param, state 0, ..., (copy or top, low)] vectors.
SmallVector<Value> regroup(ArrayRef<SmallVector<Value>> perParam,
                           unsigned numStates, ArrayRef<int64_t> copyParams) {
  SmallVector<Value> results;
  for (const SmallVector<Value> &out : perParam)
    results.push_back(out[0]);
  for (unsigned k = 0; k < numStates; ++k)
    for (const SmallVector<Value> &out : perParam)
      results.push_back(out[1 + k]);
  for (unsigned half = 0; half < 2; ++half)
    for (int64_t i : copyParams)
      if (perParam[i].size() > 1 + numStates + half)
        results.push_back(perParam[i][1 + numStates + half]);
  return results;
}

/// `p` rounded to bf16, as a copy of type `copyType` (an element, or a
/// whole tensor through fuse.cast).
Value roundToCopy(OpBuilder &b, Location loc, Value p, Type copyType) {
  if (isa<RankedTensorType>(p.getType()))
    return CastOp::create(b, loc, copyType, p);
  return arith::TruncFOp::create(b, loc, copyType, p);
}

/// The copies of the new parameter `p` (a tensor) that `ops` keeps for
/// parameter i: its bf16 rounding, or its two halves if split, or none.
SmallVector<Value> copiesOf(OpBuilder &b, Location loc, const Operands &ops,
                            size_t i, Value p) {
  Value copy = ops.copyOf(i);
  if (!copy)
    return {};
  if (!ops.lowOf(i))
    return {roundToCopy(b, loc, p, copy.getType())};
  return {HighHalfOp::create(b, loc, copy.getType(), p),
          LowHalfOp::create(b, loc, ops.lowOf(i).getType(), p)};
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// One generic per group of same-typed parameters: inputs the gradients,
/// inits each parameter, its states and its bf16 copy if it has one (the
/// new parameter rounded, written in the same loop: master weights). A
/// split parameter's inits are its states and its two halves, not the f32
/// parameter: the body joins the halves, updates, and writes the new
/// halves; its f32 result is their join (dead inside a K-step loop).
SmallVector<Value> emitFused(OpBuilder &b, Location loc, const Operands &ops,
                             const UpdateFn &update, unsigned maxGroupSize) {
  size_t n = ops.params.size();
  SmallVector<SmallVector<Value>> perParam(n);
  for (const SmallVector<size_t> &group :
       groupByType(ops.params, maxGroupSize)) {
    SmallVector<Value> inputs, inits;
    // Where each parameter's inits start, and how many it has.
    SmallVector<unsigned> offsets, widths;
    for (size_t i : group) {
      inputs.push_back(ops.grads[i]);
      offsets.push_back(inits.size());
      if (!ops.lowOf(i))
        inits.push_back(ops.params[i]);
      llvm::append_range(inits, ops.statesOf(i));
      if (Value copy = ops.copyOf(i))
        inits.push_back(copy);
      if (Value low = ops.lowOf(i))
        inits.push_back(low);
      widths.push_back(inits.size() - offsets.back());
    }
    auto type = cast<RankedTensorType>(ops.params[group[0]].getType());
    SmallVector<Value> results = buildElementwise(
        b, loc, type, inputs, inits,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          ScalarArith a(nb, nl, type.getElementType());
          SmallVector<Value> yields;
          for (auto [j, i] : llvm::enumerate(group)) {
            ValueRange own = args.drop_front(group.size() + offsets[j]);
            if (ops.lowOf(i)) {
              // IPEX's split layout: the exact f32 value from its halves.
              Value p = JoinHalvesOp::buildScalar(nb, nl, own[ops.numStates],
                                                  own[ops.numStates + 1]);
              SmallVector<Value> out =
                  update(a, i, p, args[j], own.take_front(ops.numStates));
              llvm::append_range(yields, ArrayRef(out).drop_front());
              yields.push_back(HighHalfOp::buildScalar(nb, nl, out[0]));
              yields.push_back(LowHalfOp::buildScalar(nb, nl, out[0]));
              continue;
            }
            SmallVector<Value> out =
                update(a, i, own[0], args[j], own.slice(1, ops.numStates));
            if (widths[j] > out.size())
              out.push_back(
                  roundToCopy(nb, nl, out[0], own[out.size()].getType()));
            llvm::append_range(yields, out);
          }
          return yields;
        });
    // The strategy splits it into cache-sized chunks for the threads.
    results.front().getDefiningOp()->setAttr(kOptimizerUpdateAttrName,
                                             b.getUnitAttr());
    for (auto [j, i] : llvm::enumerate(group)) {
      perParam[i] =
          llvm::to_vector(ArrayRef(results).slice(offsets[j], widths[j]));
      if (ops.lowOf(i)) {
        ArrayRef<Value> halves = ArrayRef(perParam[i]).take_back(2);
        perParam[i].insert(perParam[i].begin(),
                           JoinHalvesOp::create(b, loc, ops.params[i].getType(),
                                                halves[0], halves[1]));
      }
    }
  }
  return regroup(perParam, ops.numStates, ops.copyParams);
}

/// Unfused, a copy is a pass of its own over the new parameter.
SmallVector<Value> emitUnfused(OpBuilder &b, Location loc, const Operands &ops,
                               const UpdateFn &update) {
  SmallVector<SmallVector<Value>> perParam;
  for (size_t i = 0; i < ops.params.size(); ++i) {
    TensorArith a(b, loc, elementTypeOf(ops.params[i]));
    perParam.push_back(
        update(a, i, ops.paramValue(b, loc, i), ops.grads[i], ops.statesOf(i)));
    llvm::append_range(perParam.back(),
                       copiesOf(b, loc, ops, i, perParam.back()[0]));
  }
  return regroup(perParam, ops.numStates, ops.copyParams);
}

/// The trust ratio's factor lr * (|p| / |u| if both are positive, else 1),
/// from the squared norms in f64.
Value trustedStep(CallScalars &s, Value pSquared, Value uSquared) {
  Value pNorm = s.sqrt(pSquared), uNorm = s.sqrt(uSquared);
  Value zero = s.constant(0.0);
  Value bothPositive = arith::AndIOp::create(
      s.b, s.loc,
      arith::CmpFOp::create(s.b, s.loc, arith::CmpFPredicate::OGT, pNorm, zero),
      arith::CmpFOp::create(s.b, s.loc, arith::CmpFPredicate::OGT, uNorm,
                            zero));
  Value trust = arith::SelectOp::create(s.b, s.loc, bothPositive,
                                        s.div(pNorm, uNorm), s.constant(1.0));
  return s.mul(s.lr, trust);
}

/// Fused LAMB in two passes over memory. The norm pass reads p, g, m and v
/// and computes the new moments and the update direction in registers, to
/// sum the squares of p and of the direction (one reduction per parameter);
/// it writes nothing. The update pass (per group) recomputes the same
/// moments and direction, bitwise, and writes p, m and v in place.
SmallVector<Value> emitFusedLamb(OpBuilder &b, Location loc,
                                 const Operands &ops, const LambRule &rule,
                                 CallScalars &s, unsigned maxGroupSize) {
  size_t n = ops.params.size();
  SmallVector<Value> steps(n);
  for (size_t i = 0; i < n; ++i) {
    auto type = cast<RankedTensorType>(ops.params[i].getType());
    Type element = type.getElementType();
    unsigned rank = type.getRank();
    auto scalarType = RankedTensorType::get({}, element);
    auto zero = [&] {
      return linalg::FillOp::create(b, loc,
                                    ValueRange{arith::ConstantOp::create(
                                        b, loc, b.getFloatAttr(element, 0.0))},
                                    ValueRange{tensor::EmptyOp::create(
                                        b, loc, scalarType, ValueRange{})})
          .getResult(0);
    };
    SmallVector<Value> states = ops.statesOf(i);
    AffineMap all = b.getMultiDimIdentityMap(rank);
    AffineMap none = AffineMap::get(rank, 0, b.getContext());
    auto reduction = linalg::GenericOp::create(
        b, loc, TypeRange{scalarType, scalarType},
        ValueRange{ops.paramValue(b, loc, i), ops.grads[i], states[0],
                   states[1]},
        ValueRange{zero(), zero()},
        SmallVector<AffineMap>{all, all, all, all, none, none},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          ScalarArith a(nb, nl, element);
          SmallVector<Value> moments =
              rule.moments(a, args[1], args[2], args[3]);
          Value u = rule.direction(a, args[0], moments[0], moments[1]);
          linalg::YieldOp::create(
              nb, nl,
              ValueRange{a.add(args[4], a.mul(args[0], args[0])),
                         a.add(args[5], a.mul(u, u))});
        });
    auto extract = [&](Value t) {
      return convertFloat(b, loc,
                          tensor::ExtractOp::create(b, loc, t, ValueRange{}),
                          b.getF64Type());
    };
    steps[i] = trustedStep(s, extract(reduction.getResult(0)),
                           extract(reduction.getResult(1)));
  }

  return emitFused(
      b, loc, ops,
      [&](Arith &a, size_t i, Value p, Value g, ValueRange states) {
        SmallVector<Value> moments = rule.moments(a, g, states[0], states[1]);
        Value u = rule.direction(a, p, moments[0], moments[1]);
        return SmallVector<Value>{a.sub(p, a.mul(a.scalar(steps[i]), u)),
                                  moments[0], moments[1]};
      },
      maxGroupSize);
}

SmallVector<Value> emitUnfusedLamb(OpBuilder &b, Location loc,
                                   const Operands &ops, const LambRule &rule,
                                   CallScalars &s) {
  SmallVector<SmallVector<Value>> perParam;
  for (size_t i = 0; i < ops.params.size(); ++i) {
    Value p = ops.paramValue(b, loc, i);
    auto type = cast<RankedTensorType>(p.getType());
    TensorArith a(b, loc, type.getElementType());
    SmallVector<Value> states = ops.statesOf(i);
    SmallVector<Value> moments =
        rule.moments(a, ops.grads[i], states[0], states[1]);
    Value u = rule.direction(a, p, moments[0], moments[1]);
    auto squaredNorm = [&](Value x) {
      Value sum =
          ReduceSumOp::create(b, loc, a.mul(x, x),
                              b.getDenseI64ArrayAttr(llvm::to_vector(
                                  llvm::seq<int64_t>(0, type.getRank()))),
                              false);
      return convertFloat(b, loc,
                          tensor::ExtractOp::create(b, loc, sum, ValueRange{}),
                          b.getF64Type());
    };
    Value step = trustedStep(s, squaredNorm(p), squaredNorm(u));
    perParam.push_back(
        {a.sub(p, a.mul(a.scalar(step), u)), moments[0], moments[1]});
    llvm::append_range(perParam.back(),
                       copiesOf(b, loc, ops, i, perParam.back()[0]));
  }
  return regroup(perParam, 2, ops.copyParams);
}

//===----------------------------------------------------------------------===//
// Learning-rate schedules and gradient clipping
//===----------------------------------------------------------------------===//

/// `lr * factor(step)` in f64, rounded to f32 once (#fuse.lr_schedule).
Value lowerLrSchedule(OpBuilder &b, LrScheduleOp op) {
  Location loc = op.getLoc();
  LrScheduleAttr schedule = op.getSchedule();
  // In order: arguments' evaluation order is unspecified.
  Value rate = tensor::ExtractOp::create(b, loc, op.getLr(), ValueRange{});
  Value counter = tensor::ExtractOp::create(b, loc, op.getStep(), ValueRange{});
  CallScalars s(b, loc, rate, counter);
  auto i64 = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  auto toF64 = [&](Value v) {
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), v);
  };
  int64_t warmup = schedule.getWarmup();
  int64_t decaySteps = schedule.getDecaySteps();
  double gamma = schedule.getGamma().convertToDouble();
  double min = schedule.getMin().convertToDouble();
  // Steps since the warmup (clamped at 0: inside it the decay is unused).
  Value since = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, s.step, i64(warmup)), i64(0));
  // min(since, D) / D, the share of the decay done.
  auto progress = [&] {
    return s.div(toF64(arith::MinSIOp::create(b, loc, since, i64(decaySteps))),
                 s.constant(double(decaySteps)));
  };
  Value factor;
  switch (schedule.getKind()) {
  case ScheduleKind::constant:
    factor = s.constant(1.0);
    break;
  case ScheduleKind::step:
    factor = math::PowFOp::create(
        b, loc, s.constant(gamma),
        toF64(arith::DivSIOp::create(b, loc, since, i64(decaySteps))));
    break;
  case ScheduleKind::exponential:
    factor = math::PowFOp::create(
        b, loc, s.constant(gamma),
        s.div(toF64(since), s.constant(double(decaySteps))));
    break;
  case ScheduleKind::cosine: {
    Value cosine = math::CosOp::create(
        b, loc, s.mul(s.constant(llvm::numbers::pi), progress()));
    Value half = s.mul(s.constant(0.5), s.add(s.constant(1.0), cosine));
    factor = s.add(s.constant(min), s.mul(s.constant(1.0 - min), half));
    break;
  }
  case ScheduleKind::linear:
    factor = s.sub(s.constant(1.0), s.mul(s.constant(1.0 - min), progress()));
    break;
  }
  if (warmup > 0) {
    Value warming = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          s.step, i64(warmup));
    factor = s.select(warming, s.div(toF64(s.step), s.constant(double(warmup))),
                      factor);
  }
  Value lr = convertFloat(b, loc, s.mul(s.lr, factor), b.getF32Type());
  return tensor::FromElementsOp::create(b, loc, op.getType(), lr);
}

/// fuse.clip_gradients: the squares of each gradient summed (one reduction
/// per gradient, in f32 or wider), the sums added and the scale computed in
/// f64, then each gradient scaled and clamped in one element-wise pass.
SmallVector<Value> lowerClipGradients(OpBuilder &b, ClipGradientsOp op) {
  Location loc = op.getLoc();
  ValueRange grads = op.getGrads();
  Value scale;
  if (std::optional<APFloat> clipNorm = op.getClipNorm()) {
    ScalarArith s(b, loc, b.getF64Type());
    Value sum = s.constant(0.0);
    for (Value g : grads) {
      auto type = cast<RankedTensorType>(g.getType());
      Type element = type.getElementType();
      Type accumulator =
          element.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : element;
      auto scalarType = RankedTensorType::get({}, accumulator);
      Value init =
          linalg::FillOp::create(b, loc,
                                 ValueRange{arith::ConstantOp::create(
                                     b, loc, b.getFloatAttr(accumulator, 0.0))},
                                 ValueRange{tensor::EmptyOp::create(
                                     b, loc, scalarType, ValueRange{})})
              .getResult(0);
      unsigned rank = type.getRank();
      auto reduction = linalg::GenericOp::create(
          b, loc, TypeRange{scalarType}, ValueRange{g}, ValueRange{init},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, b.getContext())},
          SmallVector<utils::IteratorType>(rank,
                                           utils::IteratorType::reduction),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value x = convertFloat(nb, nl, args[0], accumulator);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::AddFOp::create(
                    nb, nl, args[1], arith::MulFOp::create(nb, nl, x, x))});
          });
      sum = s.add(
          sum, convertFloat(b, loc,
                            tensor::ExtractOp::create(
                                b, loc, reduction.getResult(0), ValueRange{}),
                            b.getF64Type()));
    }
    // As clip_grad_norm_: min(1, max_norm / (norm + 1e-6)), NaN kept.
    Value norm = s.sqrt(sum);
    Value ratio = s.div(s.constant(clipNorm->convertToDouble()),
                        s.add(norm, s.constant(1e-6)));
    scale = arith::MinimumFOp::create(b, loc, s.constant(1.0), ratio);
  }
  std::optional<double> bound;
  if (std::optional<APFloat> clipValue = op.getClipValue())
    bound = clipValue->convertToDouble();

  SmallVector<Value> results;
  for (Value g : grads) {
    auto type = cast<RankedTensorType>(g.getType());
    Type element = type.getElementType();
    Value elementScale;
    if (scale)
      elementScale = convertFloat(b, loc, scale, element);
    Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
    unsigned rank = type.getRank();
    auto clipped = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{g}, ValueRange{init},
        SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(rank)),
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value x = args[0];
          if (elementScale)
            x = arith::MulFOp::create(nb, nl, x, elementScale);
          if (bound) {
            auto c = [&](double v) {
              return arith::ConstantOp::create(nb, nl,
                                               nb.getFloatAttr(element, v));
            };
            x = arith::MinimumFOp::create(
                nb, nl, arith::MaximumFOp::create(nb, nl, x, c(-*bound)),
                c(*bound));
          }
          linalg::YieldOp::create(nb, nl, x);
        });
    results.push_back(clipped.getResult(0));
  }
  return results;
}

struct ConvertFuseOptimizersToLinalgPass
    : fuse::impl::ConvertFuseOptimizersToLinalgBase<
          ConvertFuseOptimizersToLinalgPass> {
  using Base::Base;

  template <typename OpTy> Operands operandsOf(OpTy op) {
    return {
        op.getParams(),     op.getGrads(),
        op.getStates(),     op.getNumStatesPerParam(),
        op.getCopies(),     op.getCopyParams().value_or(ArrayRef<int64_t>()),
        op.getSplitCopies()};
  }

  void runOnOperation() override {
    // The schedules and clipping first: the optimizers read their results.
    SmallVector<Operation *> scheduling;
    getOperation().walk([&](Operation *op) {
      if (isa<LrScheduleOp, ClipGradientsOp>(op))
        scheduling.push_back(op);
    });
    for (Operation *op : scheduling) {
      OpBuilder b(op);
      if (auto schedule = dyn_cast<LrScheduleOp>(op))
        op->replaceAllUsesWith(ValueRange{lowerLrSchedule(b, schedule)});
      else
        op->replaceAllUsesWith(
            lowerClipGradients(b, cast<ClipGradientsOp>(op)));
      op->erase();
    }
    SmallVector<Operation *> optimizers;
    getOperation().walk(
        [&](OptimizerOpInterface op) { optimizers.push_back(op); });
    unsigned groupSize = std::max(1u, unsigned(maxGroupSize));
    for (Operation *op : optimizers) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      CallScalars s(
          b, loc,
          tensor::ExtractOp::create(b, loc, op->getOperand(0), ValueRange{}),
          tensor::ExtractOp::create(b, loc, op->getOperand(1), ValueRange{}));
      SmallVector<Value> results;
      auto emit = [&](const Operands &operands, const UpdateFn &update) {
        results = fuse ? emitFused(b, loc, operands, update, groupSize)
                       : emitUnfused(b, loc, operands, update);
      };
      if (auto sgd = dyn_cast<SgdOp>(op))
        emit(operandsOf(sgd), sgdRule(sgd, s));
      else if (auto adam = dyn_cast<AdamOp>(op))
        emit(operandsOf(adam), adamRule(adam, s));
      else if (auto adagrad = dyn_cast<AdagradOp>(op))
        emit(operandsOf(adagrad), adagradRule(adagrad, s));
      else if (auto rmsprop = dyn_cast<RmspropOp>(op))
        emit(operandsOf(rmsprop), rmspropRule(rmsprop, s));
      else if (auto lamb = dyn_cast<LambOp>(op)) {
        double beta1 = lamb.getBeta1().convertToDouble();
        double beta2 = lamb.getBeta2().convertToDouble();
        LambRule rule{beta1,
                      beta2,
                      lamb.getEps().convertToDouble(),
                      lamb.getWeightDecay().convertToDouble(),
                      s.biasCorrection(beta1),
                      s.biasCorrection(beta2)};
        results =
            fuse ? emitFusedLamb(b, loc, operandsOf(lamb), rule, s, groupSize)
                 : emitUnfusedLamb(b, loc, operandsOf(lamb), rule, s);
      }
      op->replaceAllUsesWith(results);
      op->erase();
    }
  }
};

} // namespace
