// The tgc dialect: types, attributes, interfaces and operations.
#ifndef TGC_DIALECT_TGCDIALECT_H
#define TGC_DIALECT_TGCDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tgc/Dialect/TensorMeta.h"

#include "tgc/Dialect/TgcDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tgc/Dialect/TgcAttrs.h.inc"

namespace tgc::OpTrait {
/// Marks ops the training partitioner never recomputes (`Tgc_NoRecompute` in ODS).
template <typename ConcreteType>
class NoRecompute : public mlir::OpTrait::TraitBase<ConcreteType, NoRecompute> {};
} // namespace tgc::OpTrait

#define GET_TYPEDEF_CLASSES
#include "tgc/Dialect/TgcTypes.h.inc"

namespace tgc {

/// Either tensor type of the dialect; what op operands are declared as.
class BaseTensorType : public mlir::Type {
public:
  using mlir::Type::Type;
  static bool classof(mlir::Type type) { return llvm::isa<RefTensorType, ValueTensorType>(type); }
  TensorMeta getMeta() const;
  llvm::ArrayRef<mlir::AffineExpr> getSizes() const;
  mlir::Type getDtype() const;
  int64_t getRank() const { return getSizes().size(); }
  bool isRef() const { return llvm::isa<RefTensorType>(*this); }
  /// A type of the same form (reference or value) with other metadata.
  BaseTensorType withMeta(const TensorMeta &meta) const;
  /// The value-level type with the same sizes and dtype (no layout).
  ValueTensorType toValue() const;
  /// The static sizes, with ShapedType::kDynamic for symbolic ones.
  llvm::SmallVector<int64_t> getStaticSizes() const;
  static BaseTensorType get(mlir::MLIRContext *ctx, bool isRef, const TensorMeta &meta);
};

/// Whether two result type lists agree on what inference checks: sizes, dtype, and
/// strides where both state them. Form, device and requires_grad are not compared.
bool areMetaCompatible(mlir::TypeRange l, mlir::TypeRange r);

/// The number of size symbols a module declares (0 without a `tgc.symbols` attribute).
unsigned getNumSymbols(mlir::Operation *anyOpInModule);

/// Adds to `symbols` the position of every size symbol `type` mentions (sizes, strides
/// and storage offset of a tgc tensor type; nothing for other types).
void collectSymbols(mlir::Type type, llvm::SmallVectorImpl<unsigned> &symbols);

/// Parses one size: an integer or an affine expression of `sN` symbols with
/// `+ - *`, `floordiv`, `ceildiv`, `mod` and parentheses.
mlir::ParseResult parseSizeExpr(mlir::AsmParser &parser, mlir::AffineExpr &expr);
/// Parses `[e, e, ...]`.
mlir::ParseResult parseSizeList(mlir::AsmParser &parser,
                                llvm::SmallVectorImpl<mlir::AffineExpr> &exprs);
void printSizeList(mlir::AsmPrinter &printer, llvm::ArrayRef<mlir::AffineExpr> exprs);

} // namespace tgc

#include "tgc/Dialect/Inference.h"
#include "tgc/Dialect/TgcEnums.h.inc"
#include "tgc/Dialect/TgcInterfaces.h.inc"

#define GET_OP_CLASSES
#include "tgc/Dialect/TgcOps.h.inc"

namespace tgc {

/// Re-infers the result types of `op` (an InferTypeOpInterface op whose operands were
/// replaced) and sets them; fails with a diagnostic on `op` when inference fails.
mlir::LogicalResult refreshResultTypes(mlir::Operation *op);

/// Instantiates `fn`, a function over tgc tensors used as a template (hooks), on `args`
/// at `builder`'s insertion point: its body is cloned with the arguments replaced and
/// every op's result types re-inferred, so one function applies to tensors of any
/// sizes. Returns the values `fn` returns. `fn` must have a single block of ops that
/// infer their types (or have no tensor results).
mlir::FailureOr<llvm::SmallVector<mlir::Value>> instantiateFunction(mlir::OpBuilder &builder,
                                                                    mlir::Location loc,
                                                                    mlir::func::FuncOp fn,
                                                                    mlir::ValueRange args);

/// What capture-level tensor `ref` aliases one step up: the source of the view that
/// made it (with `throughViews`), or the operand an in-place op wrote and returned. Null
/// when `ref` is storage of its own (an argument, a fresh result).
mlir::Value aliasedSource(mlir::Value ref, bool throughViews);

/// Erases the `tgc.saved_tensors_hooks` ops of `module` that `shouldErase` selects, and
/// then the private hook templates nothing refers to any more.
void eraseSavedTensorsHooks(mlir::ModuleOp module,
                            llvm::function_ref<bool(SavedTensorsHooksOp)> shouldErase);

} // namespace tgc

#endif // TGC_DIALECT_TGCDIALECT_H
