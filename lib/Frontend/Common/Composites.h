// What the ATen-call builder's composites share (AtenCall.cpp and the composite
// libraries beside it): named arguments, a chain of ATen calls, small argument helpers,
// and the tables of the composites that live in files of their own.
#ifndef TGC_LIB_FRONTEND_COMMON_COMPOSITES_H
#define TGC_LIB_FRONTEND_COMMON_COMPOSITES_H

#include "AtenCall.h"

#include "tgc/Dialect/TgcDialect.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace tgc::frontend {

using llvm::cast;
using llvm::failure;
using mlir::AffineExpr;
using mlir::FailureOr;
using mlir::Location;
using mlir::MLIRContext;
using mlir::Operation;
using mlir::OpResult;
using mlir::SmallVector;
using mlir::Value;

/// The arguments of a composite by name, with typed accessors that report a wrong kind.
class NamedArguments {
public:
  NamedArguments(llvm::StringRef op, llvm::ArrayRef<AtenArgument> arguments,
                 const AtenCallBuilder::ErrorFn &emitError)
      : op(op), arguments(arguments), emitError(emitError) {}

  const AtenValue *find(llvm::StringRef name) const {
    for (const AtenArgument &argument : arguments)
      if (argument.name == name && argument.value.kind != AtenValue::Kind::None)
        return &argument.value;
    return nullptr;
  }
  /// The tensor `name`; null (with an error when `required`) where it is absent.
  FailureOr<Value> tensor(llvm::StringRef name, bool required = true) const {
    const AtenValue *value = find(name);
    if (value && value->kind == AtenValue::Kind::Tensor)
      return value->values.front();
    if (!value && !required)
      return Value();
    return emitError() << op << " needs a tensor '" << name << "'";
  }
  /// The constant int `name`, or `fallback` where it is absent.
  FailureOr<int64_t> integer(llvm::StringRef name, std::optional<int64_t> fallback) const {
    const AtenValue *value = find(name);
    if (!value && fallback)
      return *fallback;
    if (value && value->kind == AtenValue::Kind::Int)
      if (std::optional<int64_t> constant = getConstantSize(value->size))
        return *constant;
    return emitError() << op << ": argument '" << name << "' must be a constant int";
  }
  /// The constant number `name`, or `fallback` where it is absent.
  FailureOr<double> number(llvm::StringRef name, std::optional<double> fallback) const {
    const AtenValue *value = find(name);
    if (!value && fallback)
      return *fallback;
    if (value && value->kind == AtenValue::Kind::Float && value->values.empty())
      return value->floatValue;
    if (value && value->kind == AtenValue::Kind::Int)
      if (std::optional<int64_t> constant = getConstantSize(value->size))
        return double(*constant);
    return emitError() << op << ": argument '" << name << "' must be a constant number";
  }
  bool flag(llvm::StringRef name, bool fallback) const {
    const AtenValue *value = find(name);
    return value && value->kind == AtenValue::Kind::Bool ? value->boolValue : fallback;
  }

private:
  llvm::StringRef op;
  llvm::ArrayRef<AtenArgument> arguments;
  const AtenCallBuilder::ErrorFn &emitError;
};

inline AtenValue tensorValue(mlir::Value v) { return AtenValue::tensor(v); }

/// An int[] argument of the constants `values` (dims, shifts).
inline AtenValue constantInts(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> values) {
  SmallVector<AffineExpr> exprs;
  for (int64_t v : values)
    exprs.push_back(getAffineConstantExpr(v, ctx));
  return AtenValue::ints(exprs);
}

inline int64_t rankOf(mlir::Value v) { return cast<BaseTensorType>(v.getType()).getRank(); }

/// `dim` counted from the front (a negative one from the back) in [0, rank), or nullopt.
inline std::optional<int64_t> wrappedDim(int64_t dim, int64_t rank) {
  int64_t wrapped = dim < 0 ? dim + rank : dim;
  if (wrapped < 0 || wrapped >= std::max<int64_t>(rank, 1))
    return std::nullopt;
  return wrapped;
}

/// Builds a composite's ops one after another by their ATen targets: `operator()`
/// returns the first result, or null once a call has failed (its error reported), after
/// which nothing more is built; `finish` builds the last op, the composite's result.
class OpChain {
public:
  OpChain(AtenCallBuilder &builder, Location loc, const AtenCallBuilder::ErrorFn &emitError)
      : builder(builder), loc(loc), emitError(emitError) {}

  Value operator()(llvm::StringRef target, std::vector<AtenArgument> arguments) {
    if (broken)
      return Value();
    FailureOr<Value> value = builder.buildValue(loc, target, std::move(arguments), emitError);
    broken = failed(value);
    return broken ? Value() : *value;
  }
  FailureOr<Operation *> finish(llvm::StringRef target, std::vector<AtenArgument> arguments) {
    if (broken)
      return failure();
    return builder.build(loc, target, std::move(arguments), 1, emitError);
  }

  // Shorthands for the ops composites are made of.
  Value unary(llvm::StringRef target, Value x) {
    return (*this)(target, {{"self", tensorValue(x)}});
  }
  Value binary(llvm::StringRef target, Value x, Value y) {
    return (*this)(target, {{"self", tensorValue(x)}, {"other", tensorValue(y)}});
  }
  Value scalar(llvm::StringRef target, Value x, double y) {
    return (*this)(target, {{"self", tensorValue(x)}, {"other", AtenValue::floating(y)}});
  }
  Value clampMin(Value x, double min) {
    return (*this)("aten.clamp_min.default",
                   {{"self", tensorValue(x)}, {"min", AtenValue::floating(min)}});
  }
  /// `x` where `mask` is false, else `value`.
  Value fill(Value x, Value mask, double value) {
    return (*this)("aten.masked_fill.Scalar", {{"self", tensorValue(x)},
                                               {"mask", tensorValue(mask)},
                                               {"value", AtenValue::floating(value)}});
  }
  /// The op of a value built already, as the composite's result (a copy of a value
  /// that is not an op's first result).
  FailureOr<Operation *> result(Value value) {
    if (broken)
      return failure();
    if (auto opResult = llvm::dyn_cast<OpResult>(value);
        opResult && opResult.getResultNumber() == 0)
      return opResult.getOwner();
    return finish("aten.clone.default", {{"self", tensorValue(value)}});
  }
  /// ATen's loss reduction: 0 none, 1 mean, 2 sum; its op is the composite's result.
  FailureOr<Operation *> reduce(Value loss, int64_t reduction) {
    if (reduction == 0)
      return result(loss);
    return finish(reduction == 1 ? "aten.mean.default" : "aten.sum.default",
                  {{"self", tensorValue(loss)}});
  }

private:
  AtenCallBuilder &builder;
  Location loc;
  const AtenCallBuilder::ErrorFn &emitError;
  bool broken = false;
};

/// A composite of one or more results that lives in a composite library: the results of
/// `target` called with `arguments`.
using LibraryComposite = FailureOr<SmallVector<Value>> (*)(
    AtenCallBuilder &builder, Location loc, llvm::StringRef target,
    std::vector<AtenArgument> arguments, const AtenCallBuilder::ErrorFn &emitError);

/// The composite of `target` in SequenceComposites.cpp (recurrent layers, prefix scans),
/// or null.
LibraryComposite findSequenceComposite(llvm::StringRef target);
/// The composite of `target` in ShapeComposites.cpp (stacking, splitting, flipping and
/// embedding along dims; shifts), or null.
LibraryComposite findShapeComposite(llvm::StringRef target);

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_COMPOSITES_H
