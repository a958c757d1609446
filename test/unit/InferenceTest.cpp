// Metadata inference: type promotion, broadcasting and the shape rules of ops, with
// symbolic sizes.
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/Builders.h"

#include <catch2/catch.hpp>

using namespace mlir;
using namespace tgc;

namespace {

/// A context with the tgc dialect and helpers to make values of given types.
struct Fixture {
  Fixture() {
    ctx.loadDialect<TgcDialect, func::FuncDialect, arith::ArithDialect>();
    module = ModuleOp::create(UnknownLoc::get(&ctx));
    builder.setInsertionPointToStart(module->getBody());
  }

  AffineExpr c(int64_t v) { return getAffineConstantExpr(v, &ctx); }
  AffineExpr s(unsigned i) { return getAffineSymbolExpr(i, &ctx); }

  /// A value of type `!tgc.vtensor<sizes, dtype>` (a block argument of a dummy block).
  Value tensor(ArrayRef<AffineExpr> sizes, Type dtype) {
    return block->addArgument(ValueTensorType::get(sizes, dtype), builder.getUnknownLoc());
  }
  Value scalar(Type type) { return block->addArgument(type, builder.getUnknownLoc()); }

  ArrayRef<AffineExpr> sizesOf(Type t) { return llvm::cast<BaseTensorType>(t).getSizes(); }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  OpBuilder builder{&ctx};
  std::unique_ptr<Block> holder = std::make_unique<Block>();
  Block *block = holder.get();
};

} // namespace

TEST_CASE("an integer tensor and a Python float promote to the default float", "[inference]") {
  Fixture f;
  Type i64 = f.builder.getI64Type(), f64 = f.builder.getF64Type();
  Type result =
      promoteTypes({{i64, PromotionOperand::Dimensioned}, {f64, PromotionOperand::WrappedNumber}},
                   f.builder.getF32Type());
  CHECK(result == f.builder.getF32Type());
}

TEST_CASE("a 0-d tensor promotes a dimensioned tensor only across categories", "[inference]") {
  Fixture f;
  Type f32 = f.builder.getF32Type(), f64 = f.builder.getF64Type(), i32 = f.builder.getI32Type();
  CHECK(promoteTypes({{f32, PromotionOperand::Dimensioned}, {f64, PromotionOperand::ZeroDim}},
                     f32) == f32);
  CHECK(promoteTypes({{i32, PromotionOperand::Dimensioned}, {f64, PromotionOperand::ZeroDim}},
                     f32) == f64);
}

TEST_CASE("promote_types follows torch's lattice", "[inference]") {
  Fixture f;
  auto u8 = IntegerType::get(&f.ctx, 8, IntegerType::Unsigned);
  Type i8 = f.builder.getI8Type(), f16 = f.builder.getF16Type(), bf16 = f.builder.getBF16Type();
  CHECK(promoteDTypes(u8, i8) == f.builder.getI16Type());
  CHECK(promoteDTypes(f16, bf16) == f.builder.getF32Type());
  CHECK(promoteDTypes(f.builder.getI1Type(), i8) == i8);
  CHECK(promoteDTypes(i8, f16) == f16);
}

TEST_CASE("symbolic sizes broadcast against 1 and themselves only", "[inference]") {
  Fixture f;
  auto b = broadcastSizes({f.s(0), f.c(1)}, {f.c(4)});
  REQUIRE(succeeded(b));
  CHECK(*b == SmallVector<AffineExpr>{f.s(0), f.c(4)});
  CHECK(failed(broadcastSizes({f.s(0)}, {f.s(1)})));
  CHECK(failed(broadcastSizes({f.c(3)}, {f.c(4)})));
}

TEST_CASE("view infers a -1 size from the symbolic element count", "[inference]") {
  Fixture f;
  Value x = f.tensor({f.s(0), f.c(8), f.c(32)}, f.builder.getF32Type());
  SmallVector<Type> types;
  REQUIRE(succeeded(
      inferView(&f.ctx, std::nullopt, x, ShapeAttr::get(&f.ctx, {f.c(-1), f.c(32)}), types)));
  CHECK(f.sizesOf(types[0]) == ArrayRef<AffineExpr>{f.s(0) * 8, f.c(32)});
}

TEST_CASE("views of capture-level tensors compute strides and offsets", "[inference]") {
  Fixture f;
  Value x = f.block->addArgument(RefTensorType::get(&f.ctx, {f.c(2), f.c(3), f.c(4)},
                                                    f.builder.getF32Type(), {}, AffineExpr(),
                                                    DeviceAttr(), false),
                                 f.builder.getUnknownLoc());
  SmallVector<Type> types;
  REQUIRE(succeeded(inferPermute(&f.ctx, std::nullopt, x, {2, 0, 1}, types)));
  TensorMeta permuted = llvm::cast<BaseTensorType>(types[0]).getMeta();
  CHECK(permuted.strides == SmallVector<AffineExpr>{f.c(1), f.c(12), f.c(4)});

  types.clear();
  REQUIRE(succeeded(inferSelect(&f.ctx, std::nullopt, x, 1, -1, types)));
  TensorMeta selected = llvm::cast<BaseTensorType>(types[0]).getMeta();
  CHECK(selected.sizes == SmallVector<AffineExpr>{f.c(2), f.c(4)});
  CHECK(selected.strides == SmallVector<AffineExpr>{f.c(12), f.c(1)});
  CHECK(selected.storageOffset == f.c(8));
}

TEST_CASE("slice bounds are clamped and negative ones count from the end", "[inference]") {
  Fixture f;
  Value x = f.tensor({f.c(10)}, f.builder.getF32Type());
  SmallVector<Type> types;
  REQUIRE(succeeded(inferSlice(&f.ctx, std::nullopt, x, 0, ShapeAttr::get(&f.ctx, {f.c(-4)}),
                               ShapeAttr::get(&f.ctx, {f.c(100)}), 3, types)));
  CHECK(f.sizesOf(types[0]) == ArrayRef<AffineExpr>{f.c(2)});
}

TEST_CASE("convolution output sizes keep a symbolic batch", "[inference]") {
  Fixture f;
  Value x = f.tensor({f.s(0), f.c(3), f.c(8), f.c(8)}, f.builder.getF32Type());
  Value w = f.tensor({f.c(8), f.c(3), f.c(3), f.c(3)}, f.builder.getF32Type());
  SmallVector<Type> types;
  REQUIRE(succeeded(
      inferConvolution(&f.ctx, std::nullopt, x, w, {2}, {1}, {1}, false, nullptr, 1, types)));
  CHECK(f.sizesOf(types[0]) == ArrayRef<AffineExpr>{f.s(0), f.c(8), f.c(4), f.c(4)});
}

TEST_CASE("matmul broadcasts batch dimensions and rejects mismatched contractions", "[inference]") {
  Fixture f;
  Type f32 = f.builder.getF32Type();
  SmallVector<Type> types;
  REQUIRE(
      succeeded(inferMatmul(&f.ctx, std::nullopt, f.tensor({f.s(0), f.c(1), f.c(8), f.c(16)}, f32),
                            f.tensor({f.c(4), f.c(16), f.c(2)}, f32), MatmulKind::Matmul, types)));
  CHECK(f.sizesOf(types[0]) == ArrayRef<AffineExpr>{f.s(0), f.c(4), f.c(8), f.c(2)});
  types.clear();
  CHECK(failed(inferMatmul(&f.ctx, std::nullopt, f.tensor({f.c(8), f.c(16)}, f32),
                           f.tensor({f.c(8), f.c(16)}, f32), MatmulKind::Mm, types)));
}

TEST_CASE("reductions drop or keep dimensions and sum integers into int64", "[inference]") {
  Fixture f;
  Value x = f.tensor({f.s(0), f.c(5), f.c(6)}, f.builder.getI32Type());
  SmallVector<Type> types;
  REQUIRE(succeeded(inferReduction(&f.ctx, std::nullopt, x, f.builder.getDenseI64ArrayAttr({-1, 1}),
                                   true, nullptr, ReductionKind::sum, types)));
  auto result = llvm::cast<BaseTensorType>(types[0]);
  CHECK(result.getSizes() == ArrayRef<AffineExpr>{f.s(0), f.c(1), f.c(1)});
  CHECK(result.getDtype() == f.builder.getI64Type());
}
