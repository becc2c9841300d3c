//===- TileLoops.cpp - Loops over tiles that carry one tensor -------------===//

#include "TileLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

Value fuse::buildTileLoop(OpBuilder &b, Location loc, int64_t lower,
                          int64_t upper, int64_t step, Value init,
                          TileLoopBody body) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  return scf::ForOp::create(
             b, loc, index(lower), index(upper), index(step), ValueRange{init},
             [&](OpBuilder &b, Location, Value iv, ValueRange args) {
               scf::YieldOp::create(b, loc, body(b, iv, args[0]));
             })
      .getResult(0);
}
