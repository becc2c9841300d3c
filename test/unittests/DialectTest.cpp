//===- DialectTest.cpp - The fuse dialect's C++ API -----------------------===//

#include "Fuse/IR/FuseOps.h"
#include "fuse/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace fuse;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

TEST(BroadcastShapes, NumPyRules) {
  EXPECT_EQ(*broadcastShapes({4, 1, 3}, {5, 1}),
            (SmallVector<int64_t>{4, 5, 3}));
  EXPECT_EQ(*broadcastShapes({}, {2, 3}), (SmallVector<int64_t>{2, 3}));
  EXPECT_EQ(*broadcastShapes({kDyn, 128}, {128}),
            (SmallVector<int64_t>{kDyn, 128}));
  // A dynamic dim against a static one > 1 takes the static size.
  EXPECT_EQ(*broadcastShapes({kDyn}, {7}), (SmallVector<int64_t>{7}));
  EXPECT_TRUE(failed(broadcastShapes({3}, {4})));
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {3, 3})));
}

TEST(BroadcastShapes, BroadcastableTo) {
  EXPECT_TRUE(isBroadcastableTo({1, 4}, {3, 4}));
  EXPECT_TRUE(isBroadcastableTo({4}, {2, 3, 4}));
  EXPECT_TRUE(isBroadcastableTo({kDyn}, {5}));
  EXPECT_FALSE(isBroadcastableTo({3, 4}, {4}));
  EXPECT_FALSE(isBroadcastableTo({2, 4}, {3, 4}));
}

class DialectTest : public ::testing::Test {
protected:
  DialectTest() : builder(&context) {
    DialectRegistry registry;
    registerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  /// A block argument of `type` to build ops on.
  Value arg(Type type) {
    if (!block) {
      fn = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                builder.getFunctionType({}, {}));
      block = fn.addEntryBlock();
      builder.setInsertionPointToStart(block);
    }
    Value value = block->addArgument(type, builder.getUnknownLoc());
    fn.setFunctionType(builder.getFunctionType(block->getArgumentTypes(), {}));
    return value;
  }

  Value constant(RankedTensorType type, float value) {
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              DenseElementsAttr::get(type, value));
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp fn;
  Block *block = nullptr;
};

TEST_F(DialectTest, BuildersInferResultTypes) {
  Location loc = builder.getUnknownLoc();
  Value x = arg(f32({kDyn, 784}));
  Value w = arg(f32({784, 128}));
  Value b = arg(f32({128}));
  auto mm = MatmulOp::create(builder, loc, x, w);
  EXPECT_EQ(mm.getType(), f32({kDyn, 128}));
  auto add = AddOp::create(builder, loc, mm, b);
  EXPECT_EQ(add.getType(), f32({kDyn, 128}));
  auto sum =
      ReduceSumOp::create(builder, loc, add, builder.getDenseI64ArrayAttr({1}),
                          /*keepdims=*/true);
  EXPECT_EQ(sum.getType(), f32({kDyn, 1}));
  auto t = TransposeOp::create(builder, loc, w,
                               builder.getDenseI64ArrayAttr({1, 0}));
  EXPECT_EQ(t.getType(), f32({128, 784}));
  auto gradW = MatmulOp::create(builder, loc, x, add, /*transpose_lhs=*/true,
                                /*transpose_rhs=*/false);
  EXPECT_EQ(gradW.getType(), f32({784, 128}));
  func::ReturnOp::create(builder, loc);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(DialectTest, InvalidBroadcastIsReportedNotBuilt) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<Type> types;
  Value a = arg(f32({3}));
  Value b = arg(f32({4}));
  EXPECT_TRUE(failed(AddOp::inferReturnTypes(&context, builder.getUnknownLoc(),
                                             ValueRange{a, b}, nullptr, nullptr,
                                             {}, types)));
  EXPECT_EQ(message, "operand shapes 3 and 4 are not broadcast-compatible");
}

TEST_F(DialectTest, CreateOrFoldFoldsConstants) {
  Location loc = builder.getUnknownLoc();
  Value two = constant(f32({2, 2}), 2.0f);
  Value three = constant(f32({2}), 3.0f);
  Value sum = builder.createOrFold<AddOp>(loc, two, three);
  auto folded = sum.getDefiningOp<ConstantOp>();
  ASSERT_TRUE(folded);
  auto value = cast<DenseElementsAttr>(folded.getValue());
  EXPECT_EQ(value.getType(), f32({2, 2}));
  EXPECT_EQ(value.getSplatValue<float>(), 5.0f);
}

TEST_F(DialectTest, IdentityFoldKeepsTypes) {
  Location loc = builder.getUnknownLoc();
  Value x = arg(f32({kDyn, 4}));
  Value zero = constant(f32({}), 0.0f);
  EXPECT_EQ(builder.createOrFold<AddOp>(loc, x, zero), x);
  // x + zeros<3x4> broadcasts x up: not an identity.
  Value zeros = constant(f32({3, 4}), 0.0f);
  Value y = arg(f32({4}));
  EXPECT_NE(builder.createOrFold<AddOp>(loc, y, zeros), y);
}

TEST_F(DialectTest, VerifierRejectsBadDropoutRate) {
  const char *source = R"mlir(
    func.func @f(%x: tensor<4xf32>, %s: tensor<i64>) -> tensor<4xf32> {
      %0 = fuse.dropout %x, %s {rate = 1.5 : f32} : tensor<4xf32>
      return %0 : tensor<4xf32>
    })mlir";
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(source, &context);
  EXPECT_FALSE(parsed);
  EXPECT_EQ(message, "'fuse.dropout' op rate must be in [0, 1), got 1.5");
}

TEST_F(DialectTest, SimplifyPipelineRemovesDuplicates) {
  const char *source = R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = fuse.exp %x : tensor<4xf32>
      %1 = fuse.exp %x : tensor<4xf32>
      %2 = fuse.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %2 : tensor<4xf32>
    })mlir";
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(parsed);
  PassManager pm(&context);
  buildSimplifyPipeline(pm);
  ASSERT_TRUE(succeeded(pm.run(*parsed)));
  int exps = 0;
  parsed->walk([&](ExpOp) { ++exps; });
  EXPECT_EQ(exps, 1);
}

} // namespace
