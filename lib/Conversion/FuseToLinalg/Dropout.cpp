//===- Dropout.cpp - Lower fuse.dropout -----------------------------------===//
//
// Emits the arithmetic of Fuse/IR/DropoutRNG.h: the mask is recomputed from
// (seed, step, element index), never stored.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "Fuse/IR/DropoutRNG.h"
#include "Fuse/IR/FuseOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace fuse::lowering {
namespace {

Value i64Constant(OpBuilder &b, Location loc, uint64_t value) {
  return arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
}

/// dropout::mix on an i64 value.
Value mix(OpBuilder &b, Location loc, Value z) {
  auto xorShift = [&](Value v, int64_t shift) {
    Value s = arith::ShRUIOp::create(b, loc, v, i64Constant(b, loc, shift));
    return arith::XOrIOp::create(b, loc, v, s).getResult();
  };
  z = arith::AddIOp::create(b, loc, z, i64Constant(b, loc, dropout::kGolden));
  z = arith::MulIOp::create(b, loc, xorShift(z, 30),
                            i64Constant(b, loc, dropout::kMix1));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27),
                            i64Constant(b, loc, dropout::kMix2));
  return xorShift(z, 31);
}

struct DropoutLowering : OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    float rate = op.getRate().convertToFloat();
    int64_t seed = op.getSeed();
    ArrayRef<int64_t> shape = type.getShape();
    unsigned rank = type.getRank();
    SmallVector<Value> inputs = {adaptor.getInput(), adaptor.getStep()};
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   AffineMap::get(rank, 0, {}, getContext())};
    // The offset of the rows: the elements before them, added to the index.
    int64_t rowElements = 1;
    for (int64_t d : shape.drop_front())
      rowElements *= d;
    if (adaptor.getOffset()) {
      inputs.push_back(adaptor.getOffset());
      maps.push_back(AffineMap::get(rank, 0, {}, getContext()));
    }
    Value result = buildParallel(
        rewriter, op.getLoc(), type, inputs, maps,
        [&](OpBuilder &b, Location loc, ValueRange a) {
          // The row-major index of this element.
          Value index = arith::ConstantIndexOp::create(b, loc, 0);
          for (unsigned d = 0; d < rank; ++d) {
            Value extent = arith::ConstantIndexOp::create(b, loc, shape[d]);
            index = arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, index, extent),
                linalg::IndexOp::create(b, loc, d));
          }
          Value index64 =
              arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
          if (a.size() > 2)
            index64 = arith::AddIOp::create(
                b, loc, index64,
                arith::MulIOp::create(b, loc, a[2],
                                      i64Constant(b, loc, rowElements)));
          Value stepKey =
              mix(b, loc,
                  arith::XOrIOp::create(
                      b, loc,
                      i64Constant(b, loc,
                                  dropout::mix(static_cast<uint64_t>(seed))),
                      a[1]));
          Value draw = arith::ShRUIOp::create(
              b, loc,
              mix(b, loc, arith::XOrIOp::create(b, loc, stepKey, index64)),
              i64Constant(b, loc, 64 - dropout::kBits));
          Value keep = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::uge, draw,
              i64Constant(b, loc, dropout::threshold(rate)));
          Type elementType = a[0].getType();
          Value scaled = arith::MulFOp::create(
              b, loc, a[0],
              scalarConstant(b, loc, elementType, dropout::scale(rate)));
          return arith::SelectOp::create(b, loc, keep, scaled,
                                         scalarConstant(b, loc, elementType, 0))
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDropoutLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}

} // namespace fuse::lowering
