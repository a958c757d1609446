// Building tgc ops from ATen calls: what the .pt2 reader and the bytecode interpreter share.
#ifndef TGC_LIB_FRONTEND_COMMON_ATENCALL_H
#define TGC_LIB_FRONTEND_COMMON_ATENCALL_H

#include "tgc/Dialect/TensorMeta.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tgc::frontend {

/// One argument of an ATen call, as a frontend resolved it (from a .pt2 node's JSON, or
/// from the interpreter's variable trackers). Whether it becomes an operand or an
/// attribute is the op's choice (AtenOpInterface), so a value can be read both ways.
struct AtenValue {
  enum class Kind {
    None,    ///< an absent optional
    Tensor,  ///< one SSA tensor
    Tensors, ///< Tensor[]; for Tensor?[] the tensors present, and `bools` says which
             ///< positions of the list hold one (empty: all)
    Int,     ///< an int or SymInt: `size` (a constant expression for a plain int);
             ///< `values` may hold an i64 SSA value computing a symbolic size, for ops
             ///< that take the int as an operand
    Float,   ///< `floatValue`, or for a float the program computes (item()) its f64
             ///< SSA value in `values`
    Bool,
    String,
    Ints, ///< int[] / SymInt[]: `sizes`
    Floats,
    Bools,
    DType,        ///< `type` is the element type
    Device,       ///< `attribute` is the #tgc.device, null for the CPU
    MemoryFormat, ///< `string` is the torch.memory_format's name (`channels_last`)
  };
  Kind kind = Kind::None;
  llvm::SmallVector<mlir::Value> values;
  mlir::AffineExpr size;
  llvm::SmallVector<mlir::AffineExpr> sizes;
  double floatValue = 0;
  bool boolValue = false;
  std::string string;
  llvm::SmallVector<double> floats;
  llvm::SmallVector<bool> bools;
  mlir::Type type;
  mlir::Attribute attribute;

  static AtenValue none() { return {}; }
  static AtenValue tensor(mlir::Value v);
  static AtenValue tensors(llvm::ArrayRef<mlir::Value> vs);
  static AtenValue integer(mlir::AffineExpr size);
  static AtenValue floating(double f);
  static AtenValue boolean(bool b);
  static AtenValue str(llvm::StringRef s);
  static AtenValue ints(llvm::ArrayRef<mlir::AffineExpr> sizes);
  static AtenValue floatList(llvm::ArrayRef<double> fs);
  static AtenValue boolList(llvm::ArrayRef<bool> bs);
  static AtenValue dtype(mlir::Type t);
  static AtenValue device(mlir::Attribute d);
  static AtenValue memoryFormat(MemoryFormat format);
};

/// A named argument of a call.
struct AtenArgument {
  std::string name;
  AtenValue value;
};

/// A result as the capture recorded it (a .pt2 node's output): its name ("" for an
/// absent one) and metadata. Some adapters take what the generic mapping cannot
/// compute alone from it (the chunk sizes of a split); without records they compute it
/// from the operands.
struct RecordedResult {
  std::string name;
  std::optional<TensorMeta> meta;
};

/// Builds the tgc op a call of an ATen target stands for, the one way both frontends
/// do: the op registered for the target through AtenOpInterface (or a NodeAdapter's),
/// operands and attributes named after the schema's arguments, result types from the
/// op's own inference (capture level: references with a layout). Errors go through
/// `emitError` and leave no op behind.
class AtenCallBuilder {
public:
  using ErrorFn = std::function<mlir::InFlightDiagnostic()>;

  explicit AtenCallBuilder(mlir::OpBuilder &builder) : builder(builder) {}

  /// Whether tgc has an op (or adapter) for `target` (`aten.add.Tensor`).
  bool supports(llvm::StringRef target);

  /// Builds `target(arguments)` at `loc`; `minResults` is how many results the caller
  /// will use (an error if the op has fewer). `recorded` are the results the capture
  /// recorded, when it did (the .pt2 reader); the interpreter passes none.
  mlir::FailureOr<mlir::Operation *> build(mlir::Location loc, llvm::StringRef target,
                                           std::vector<AtenArgument> arguments, size_t minResults,
                                           const ErrorFn &emitError,
                                           llvm::ArrayRef<RecordedResult> recorded = {});

  /// Builds `target(arguments)` like `build` and returns its results: the op's, or the
  /// values of a composite that computes several (std_mean, aminmax, median.dim), which
  /// no single op returns. What the frontends call.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  buildResults(mlir::Location loc, llvm::StringRef target, std::vector<AtenArgument> arguments,
               size_t minResults, const ErrorFn &emitError,
               llvm::ArrayRef<RecordedResult> recorded = {});

  /// The first result of `build(...)`, for calls composed of other calls.
  mlir::FailureOr<mlir::Value> buildValue(mlir::Location loc, llvm::StringRef target,
                                          std::vector<AtenArgument> arguments,
                                          const ErrorFn &emitError);

private:
  /// How tgc builds a composite target from other calls (the last op built is the
  /// result): softplus, im2col (F.unfold), take, max_pool1d, the in-place random fills,
  /// narrow, Tensor.unfold, std, outer, logsumexp, nan_to_num, mish,
  /// log_sigmoid, fmax/fmin, isfinite, nansum, adaptive_max_pool2d, rms_norm, glu, prelu,
  /// one_hot, cosine_similarity, pixel_(un)shuffle, channel_shuffle, instance_norm,
  /// threshold, feature/alpha dropout, hard/softshrink, pairwise_distance, the losses of
  /// buildLoss, eye, rrelu (evaluation), buildPointwise's, buildMatrixOp's and
  /// buildMathOp's. In-place forms of them are the functional op copied into `self`.
  using CompositeBuilder = mlir::FailureOr<mlir::Operation *> (AtenCallBuilder::*)(
      mlir::Location loc, llvm::StringRef target, std::vector<AtenArgument> arguments,
      const ErrorFn &emitError);
  static CompositeBuilder findComposite(llvm::StringRef target);
  mlir::FailureOr<mlir::Operation *> buildSoftplus(mlir::Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildIm2col(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildTake(mlir::Location loc, llvm::StringRef target,
                                               std::vector<AtenArgument> arguments,
                                               const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildMaxPool1d(mlir::Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildRandomFill(mlir::Location loc, llvm::StringRef target,
                                                     std::vector<AtenArgument> arguments,
                                                     const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildUnfold(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildNarrow(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildStd(mlir::Location loc, llvm::StringRef target,
                                              std::vector<AtenArgument> arguments,
                                              const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildOuter(mlir::Location loc, llvm::StringRef target,
                                                std::vector<AtenArgument> arguments,
                                                const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildLogsumexp(mlir::Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildNanToNum(mlir::Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildMish(mlir::Location loc, llvm::StringRef target,
                                               std::vector<AtenArgument> arguments,
                                               const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildLogSigmoid(mlir::Location loc, llvm::StringRef target,
                                                     std::vector<AtenArgument> arguments,
                                                     const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildNanExtremum(mlir::Location loc, llvm::StringRef target,
                                                      std::vector<AtenArgument> arguments,
                                                      const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildIsfinite(mlir::Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildNansum(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildRmsNorm(mlir::Location loc, llvm::StringRef target,
                                                  std::vector<AtenArgument> arguments,
                                                  const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildGlu(mlir::Location loc, llvm::StringRef target,
                                              std::vector<AtenArgument> arguments,
                                              const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildPrelu(mlir::Location loc, llvm::StringRef target,
                                                std::vector<AtenArgument> arguments,
                                                const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildOneHot(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildCosineSimilarity(mlir::Location loc,
                                                           llvm::StringRef target,
                                                           std::vector<AtenArgument> arguments,
                                                           const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildPixelShuffle(mlir::Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildInstanceNorm(mlir::Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildThreshold(mlir::Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildFeatureDropout(mlir::Location loc, llvm::StringRef target,
                                                         std::vector<AtenArgument> arguments,
                                                         const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildAdaptiveMaxPool2d(mlir::Location loc,
                                                            llvm::StringRef target,
                                                            std::vector<AtenArgument> arguments,
                                                            const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildShrink(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildPairwiseDistance(mlir::Location loc,
                                                           llvm::StringRef target,
                                                           std::vector<AtenArgument> arguments,
                                                           const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildEye(mlir::Location loc, llvm::StringRef target,
                                              std::vector<AtenArgument> arguments,
                                              const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildRrelu(mlir::Location loc, llvm::StringRef target,
                                                std::vector<AtenArgument> arguments,
                                                const ErrorFn &emitError);
  /// Pointwise composites (lerp, addcmul, addcdiv, xlogy, copysign, frac, deg2rad,
  /// rad2deg, signbit, sinc, logaddexp(2), logit, hypot, heaviside, float_power, isclose).
  mlir::FailureOr<mlir::Operation *> buildPointwise(mlir::Location loc, llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const ErrorFn &emitError);
  /// Matrix and layout composites (trace, diag, rot90, tile, count_nonzero, dist, addmv).
  mlir::FailureOr<mlir::Operation *> buildMatrixOp(mlir::Location loc, llvm::StringRef target,
                                                   std::vector<AtenArgument> arguments,
                                                   const ErrorFn &emitError);
  /// The composite losses (soft_margin, kl_div, hinge_embedding, margin_ranking,
  /// poisson_nll, cosine_embedding, triplet_margin).
  mlir::FailureOr<mlir::Operation *> buildLoss(mlir::Location loc, llvm::StringRef target,
                                               std::vector<AtenArgument> arguments,
                                               const ErrorFn &emitError);
  /// Math and layout composites: sgn (real), erfinv, kron, cdist, linalg_cross / cross,
  /// renorm, bucketize / searchsorted, round(decimals), linalg_matrix_norm (fro, 1, inf).
  mlir::FailureOr<mlir::Operation *> buildMathOp(mlir::Location loc, llvm::StringRef target,
                                                 std::vector<AtenArgument> arguments,
                                                 const ErrorFn &emitError);
  /// How tgc builds a composite of several results (buildResults).
  using MultiCompositeBuilder = mlir::FailureOr<llvm::SmallVector<mlir::Value>> (
      AtenCallBuilder::*)(mlir::Location loc, llvm::StringRef target,
                          std::vector<AtenArgument> arguments, const ErrorFn &emitError);
  static MultiCompositeBuilder findMultiComposite(llvm::StringRef target);
  /// std_mean and var_mean: (std or var, mean).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> buildMoments(mlir::Location loc,
                                                               llvm::StringRef target,
                                                               std::vector<AtenArgument> arguments,
                                                               const ErrorFn &emitError);
  /// aminmax: (min, max).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> buildAminmax(mlir::Location loc,
                                                               llvm::StringRef target,
                                                               std::vector<AtenArgument> arguments,
                                                               const ErrorFn &emitError);
  /// median.dim, nanmedian.dim and kthvalue: (values, indices) from a stable sort.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  buildOrderStatistic(mlir::Location loc, llvm::StringRef target,
                      std::vector<AtenArgument> arguments, const ErrorFn &emitError);
  /// The builders of ops whose int arguments tgc's op takes as attributes, for calls
  /// where one is computed at run time (from an `item()`): `select.int` and `slice.Tensor`
  /// as advanced indexing by positions computed at run time. Null when `target` has none
  /// or no such argument is computed at run time.
  CompositeBuilder findRuntimeIntBuilder(llvm::StringRef target,
                                         llvm::ArrayRef<AtenArgument> arguments);
  mlir::FailureOr<mlir::Operation *> buildRuntimeSelect(mlir::Location loc, llvm::StringRef target,
                                                        std::vector<AtenArgument> arguments,
                                                        const ErrorFn &emitError);
  mlir::FailureOr<mlir::Operation *> buildRuntimeSlice(mlir::Location loc, llvm::StringRef target,
                                                       std::vector<AtenArgument> arguments,
                                                       const ErrorFn &emitError);
  /// `self` gathered along `dim` at the run of positions start + step * arange(count)
  /// (`start` an int, possibly computed at run time): narrow's and slice's at run time.
  mlir::FailureOr<mlir::Operation *> buildGatherRun(mlir::Location loc, mlir::Value self,
                                                    int64_t dim, const AtenValue &start,
                                                    int64_t count, int64_t step,
                                                    const ErrorFn &emitError);
  /// `self` indexed along `dim` by the 0-d or 1-d int64 tensor `positions`.
  mlir::FailureOr<mlir::Operation *> buildIndexAlong(mlir::Location loc, mlir::Value self,
                                                     int64_t dim, mlir::Value positions,
                                                     const ErrorFn &emitError);
  std::optional<mlir::OperationName> lookupAtenOp(llvm::StringRef target);
  /// Whether a tgc op (or an adapter's) stands for `target` itself.
  bool hasOp(llvm::StringRef target);
  /// For an out= overload (`aten.atan2.out`), the functional one tgc supports
  /// (`aten.atan2.default`, else .Tensor or .Scalar).
  std::optional<std::string> functionalOverload(llvm::StringRef target);
  mlir::OpBuilder &builder;
  llvm::StringMap<mlir::OperationName> atenOps;
};

} // namespace tgc::frontend

#endif // TGC_LIB_FRONTEND_COMMON_ATENCALL_H
