//===- Optimizers.cpp - Lower optimizer ops -------------------------------===//
//
// Each parameter's update is one linalg.generic that reads the parameter,
// its gradient and its states once and writes the new parameter and states
// once. Learning rate and bias corrections are scalars computed once per
// call, outside the loops.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace fuse::lowering {
namespace {

/// Scalar f32 arithmetic on values and constants.
struct Scalar {
  OpBuilder &b;
  Location loc;
  Type type;
  Value c(double v) { return scalarConstant(b, loc, type, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value max(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
};

/// The value of a 0-d tensor.
Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  return tensor::ExtractOp::create(b, loc, tensor, ValueRange{});
}

/// The bias corrections 1 - beta1^t and 1 - beta2^t of Adam-like
/// optimizers, with t = step + 1, as f32 scalars computed once per call.
std::pair<Value, Value> biasCorrections(OpBuilder &b, Location loc,
                                        Value stepTensor, double beta1,
                                        double beta2) {
  Scalar s{b, loc, b.getF32Type()};
  Value t = arith::SIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::AddIOp::create(
          b, loc, extractScalar(b, loc, stepTensor),
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1))));
  auto correction = [&](double beta) {
    return s.sub(s.c(1.0), math::PowFOp::create(b, loc, s.c(beta), t));
  };
  return {correction(beta1), correction(beta2)};
}

/// Builds, for parameter `i`, one generic over its elements with inputs
/// (param, grad, states...) and outputs (new param, new states...).
/// `update` maps the input elements to the output elements.
SmallVector<Value> buildUpdate(
    OpBuilder &b, Location loc, ValueRange inputs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> update,
    unsigned numOutputs) {
  auto type = cast<RankedTensorType>(inputs[0].getType());
  unsigned rank = type.getRank();
  SmallVector<Value> inits;
  for (unsigned k = 0; k < numOutputs; ++k)
    inits.push_back(emptyTensor(b, loc, type));
  SmallVector<AffineMap> maps(inputs.size() + numOutputs,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  SmallVector<Type> resultTypes(numOutputs, type);
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl,
                                update(nb, nl, args.take_front(inputs.size())));
      });
  return generic.getResults();
}

struct SgdLowering : OpConversionPattern<SgdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SgdOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lr = extractScalar(rewriter, loc, adaptor.getLr());
    Value step = extractScalar(rewriter, loc, adaptor.getStep());
    Value first = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, step,
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getI64IntegerAttr(0)));
    double momentum = op.getMomentum().convertToDouble();
    double dampening = op.getDampening().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    bool nesterov = op.getNesterov();
    size_t n = adaptor.getParams().size();
    bool withBuffer = momentum != 0.0;
    SmallVector<Value> newParams, newStates;
    for (size_t i = 0; i < n; ++i) {
      SmallVector<Value> inputs = {adaptor.getParams()[i],
                                   adaptor.getGrads()[i]};
      if (withBuffer)
        inputs.push_back(adaptor.getStates()[i]);
      SmallVector<Value> out = buildUpdate(
          rewriter, loc, inputs,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Scalar s{b, l, a[0].getType()};
            Value g = a[1];
            if (decay != 0.0)
              g = s.add(g, s.mul(s.c(decay), a[0]));
            SmallVector<Value> results;
            Value buffer;
            if (withBuffer) {
              Value later = s.add(s.mul(s.c(momentum), a[2]),
                                  s.mul(s.c(1.0 - dampening), g));
              buffer = arith::SelectOp::create(b, l, first, g, later);
              g = nesterov ? s.add(g, s.mul(s.c(momentum), buffer)) : buffer;
            }
            Value lrCast = lr;
            if (lr.getType() != a[0].getType())
              lrCast = arith::ExtFOp::create(b, l, a[0].getType(), lr);
            results.push_back(s.sub(a[0], s.mul(lrCast, g)));
            if (withBuffer)
              results.push_back(buffer);
            return results;
          },
          withBuffer ? 2 : 1);
      newParams.push_back(out[0]);
      if (withBuffer)
        newStates.push_back(out[1]);
    }
    SmallVector<Value> results(newParams);
    llvm::append_range(results, newStates);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AdamLowering : OpConversionPattern<AdamOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AdamOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Scalar outer{rewriter, loc, f32};
    double beta1 = op.getBeta1().convertToDouble();
    double beta2 = op.getBeta2().convertToDouble();
    double eps = op.getEps().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    bool amsgrad = op.getAmsgrad(), decoupled = op.getDecoupled();
    // Once per call: the step size lr / (1 - beta1^t) and sqrt(1 - beta2^t).
    Value lr = extractScalar(rewriter, loc, adaptor.getLr());
    auto [correction1, correction2] =
        biasCorrections(rewriter, loc, adaptor.getStep(), beta1, beta2);
    Value stepSize = outer.div(lr, correction1);
    Value sqrtCorrection2 = outer.sqrt(correction2);
    Value shrink = outer.sub(outer.c(1.0), outer.mul(lr, outer.c(decay)));

    size_t n = adaptor.getParams().size();
    unsigned numStates = op.getNumStatesPerParam();
    SmallVector<Value> newParams;
    SmallVector<SmallVector<Value>> newStates(numStates);
    for (size_t i = 0; i < n; ++i) {
      SmallVector<Value> inputs = {adaptor.getParams()[i],
                                   adaptor.getGrads()[i]};
      for (unsigned k = 0; k < numStates; ++k)
        inputs.push_back(adaptor.getStates()[k * n + i]);
      SmallVector<Value> out = buildUpdate(
          rewriter, loc, inputs,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Scalar s{b, l, a[0].getType()};
            Value p = a[0], g = a[1];
            if (decay != 0.0) {
              if (decoupled)
                p = s.mul(p, shrink);
              else
                g = s.add(g, s.mul(s.c(decay), p));
            }
            Value m =
                s.add(s.mul(s.c(beta1), a[2]), s.mul(s.c(1.0 - beta1), g));
            Value v = s.add(s.mul(s.c(beta2), a[3]),
                            s.mul(s.c(1.0 - beta2), s.mul(g, g)));
            Value vhat = v, vmax;
            if (amsgrad)
              vhat = vmax = s.max(a[4], v);
            Value denom = s.add(s.div(s.sqrt(vhat), sqrtCorrection2), s.c(eps));
            SmallVector<Value> results = {
                s.sub(p, s.mul(stepSize, s.div(m, denom))), m, v};
            if (amsgrad)
              results.push_back(vmax);
            return results;
          },
          1 + numStates);
      newParams.push_back(out[0]);
      for (unsigned k = 0; k < numStates; ++k)
        newStates[k].push_back(out[1 + k]);
    }
    SmallVector<Value> results(newParams);
    for (auto &state : newStates)
      llvm::append_range(results, state);
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// The new parameters then the new states, state k of every parameter
/// together, from per-parameter update results [param, state 0, ...].
SmallVector<Value> regroup(ArrayRef<SmallVector<Value>> perParam,
                           unsigned numStates) {
  SmallVector<Value> results;
  for (const SmallVector<Value> &out : perParam)
    results.push_back(out[0]);
  for (unsigned k = 0; k < numStates; ++k)
    for (const SmallVector<Value> &out : perParam)
      results.push_back(out[1 + k]);
  return results;
}

struct AdagradLowering : OpConversionPattern<AdagradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AdagradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Scalar outer{rewriter, loc, f32};
    double decay = op.getWeightDecay().convertToDouble();
    double eps = op.getEps().convertToDouble();
    // clr = lr / (1 + step * lr_decay), once per call.
    Value lr = extractScalar(rewriter, loc, adaptor.getLr());
    Value step = arith::SIToFPOp::create(
        rewriter, loc, f32, extractScalar(rewriter, loc, adaptor.getStep()));
    Value clr = outer.div(
        lr,
        outer.add(outer.c(1.0),
                  outer.mul(step, outer.c(op.getLrDecay().convertToDouble()))));
    size_t n = adaptor.getParams().size();
    SmallVector<SmallVector<Value>> perParam;
    for (size_t i = 0; i < n; ++i)
      perParam.push_back(buildUpdate(
          rewriter, loc,
          {adaptor.getParams()[i], adaptor.getGrads()[i],
           adaptor.getStates()[i]},
          [&](OpBuilder &b, Location l, ValueRange a) {
            Scalar s{b, l, a[0].getType()};
            Value g = a[1];
            if (decay != 0.0)
              g = s.add(g, s.mul(s.c(decay), a[0]));
            Value sum = s.add(a[2], s.mul(g, g));
            Value p =
                s.sub(a[0], s.mul(clr, s.div(g, s.add(s.sqrt(sum), s.c(eps)))));
            return SmallVector<Value>{p, sum};
          },
          2));
    rewriter.replaceOp(op, regroup(perParam, 1));
    return success();
  }
};

struct RmspropLowering : OpConversionPattern<RmspropOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RmspropOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    double alpha = op.getAlpha().convertToDouble();
    double eps = op.getEps().convertToDouble();
    double momentum = op.getMomentum().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    bool centered = op.getCentered();
    Value lr = extractScalar(rewriter, loc, adaptor.getLr());
    size_t n = adaptor.getParams().size();
    unsigned numStates = op.getNumStatesPerParam();
    SmallVector<SmallVector<Value>> perParam;
    for (size_t i = 0; i < n; ++i) {
      SmallVector<Value> inputs = {adaptor.getParams()[i],
                                   adaptor.getGrads()[i]};
      for (unsigned k = 0; k < numStates; ++k)
        inputs.push_back(adaptor.getStates()[k * n + i]);
      perParam.push_back(buildUpdate(
          rewriter, loc, inputs,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Scalar s{b, l, a[0].getType()};
            Value g = a[1];
            if (decay != 0.0)
              g = s.add(g, s.mul(s.c(decay), a[0]));
            unsigned next = 2;
            Value square = s.add(s.mul(s.c(alpha), a[next++]),
                                 s.mul(s.c(1.0 - alpha), s.mul(g, g)));
            SmallVector<Value> results = {Value(), square};
            Value avg;
            if (centered) {
              Value mean = s.add(s.mul(s.c(alpha), a[next++]),
                                 s.mul(s.c(1.0 - alpha), g));
              results.push_back(mean);
              avg = s.add(s.sqrt(s.sub(square, s.mul(mean, mean))), s.c(eps));
            } else {
              avg = s.add(s.sqrt(square), s.c(eps));
            }
            Value delta = s.div(g, avg);
            if (momentum != 0.0) {
              delta = s.add(s.mul(s.c(momentum), a[next++]), delta);
              results.push_back(delta);
            }
            results[0] = s.sub(a[0], s.mul(lr, delta));
            return results;
          },
          1 + numStates));
    }
    rewriter.replaceOp(op, regroup(perParam, numStates));
    return success();
  }
};

/// Two passes per parameter: moments and update direction, then the update
/// scaled by the parameter's own trust ratio.
struct LambLowering : OpConversionPattern<LambOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LambOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Scalar outer{rewriter, loc, f32};
    double beta1 = op.getBeta1().convertToDouble();
    double beta2 = op.getBeta2().convertToDouble();
    double eps = op.getEps().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    Value lr = extractScalar(rewriter, loc, adaptor.getLr());
    auto [correction1, correction2] =
        biasCorrections(rewriter, loc, adaptor.getStep(), beta1, beta2);
    size_t n = adaptor.getParams().size();
    SmallVector<SmallVector<Value>> perParam;
    for (size_t i = 0; i < n; ++i) {
      Value param = adaptor.getParams()[i];
      SmallVector<Value> moments = buildUpdate(
          rewriter, loc,
          {param, adaptor.getGrads()[i], adaptor.getStates()[i],
           adaptor.getStates()[n + i]},
          [&](OpBuilder &b, Location l, ValueRange a) {
            Scalar s{b, l, a[0].getType()};
            Value g = a[1];
            Value m =
                s.add(s.mul(s.c(beta1), a[2]), s.mul(s.c(1.0 - beta1), g));
            Value v = s.add(s.mul(s.c(beta2), a[3]),
                            s.mul(s.c(1.0 - beta2), s.mul(g, g)));
            Value u = s.div(s.div(m, correction1),
                            s.add(s.sqrt(s.div(v, correction2)), s.c(eps)));
            if (decay != 0.0)
              u = s.add(u, s.mul(s.c(decay), a[0]));
            return SmallVector<Value>{u, m, v};
          },
          3);
      Value u = moments[0];
      // The squared norms of the parameter and of its update.
      auto squaredNorm = [&](Value x) {
        auto type = cast<RankedTensorType>(x.getType());
        unsigned rank = type.getRank();
        return extractScalar(
            rewriter, loc,
            buildReduction(
                rewriter, loc, type.getShape(),
                llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                type.getElementType(), x, rewriter.getMultiDimIdentityMap(rank),
                Combiner::Sum, [](OpBuilder &b, Location l, ValueRange a) {
                  return arith::MulFOp::create(b, l, a[0], a[0]).getResult();
                }));
      };
      Value pNorm = outer.sqrt(squaredNorm(param));
      Value uNorm = outer.sqrt(squaredNorm(u));
      Value zero = outer.c(0.0);
      Value bothPositive = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, pNorm,
                                zero),
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, uNorm,
                                zero));
      Value trust = arith::SelectOp::create(
          rewriter, loc, bothPositive, outer.div(pNorm, uNorm), outer.c(1.0));
      Value scale = outer.mul(lr, trust);
      SmallVector<Value> applied = buildUpdate(
          rewriter, loc, {param, u},
          [&](OpBuilder &b, Location l, ValueRange a) {
            Scalar s{b, l, a[0].getType()};
            return SmallVector<Value>{s.sub(a[0], s.mul(scale, a[1]))};
          },
          1);
      perParam.push_back({applied[0], moments[1], moments[2]});
    }
    rewriter.replaceOp(op, regroup(perParam, 2));
    return success();
  }
};

} // namespace

void populateOptimizerLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<SgdLowering, AdamLowering, AdagradLowering, RmspropLowering,
               LambLowering>(patterns.getContext());
}

} // namespace fuse::lowering
