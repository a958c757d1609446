// Composites that stack, split, flip, fill or embed along dims, and the ATen functions
// that are other ops under another name (ravel, positive, exp2, msort, inner, addbmm,
// conv with a padding mode), each as ATen's CompositeImplicitAutograd kernel computes it.
// The export reader sees these decomposed already; the bytecode interpreter calls them.
#include "Composites.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;

namespace {
using Results = FailureOr<SmallVector<Value>>;
using ErrorFn = AtenCallBuilder::ErrorFn;

/// The sizes of tensor `v`.
ArrayRef<AffineExpr> sizesOf(Value v) { return cast<BaseTensorType>(v.getType()).getSizes(); }

/// One result, or failure where the chain broke.
Results single(Value v) {
  if (!v)
    return failure();
  return SmallVector<Value>{v};
}

/// `x` unsqueezed at each of `dims` in turn.
Value unsqueezed(OpChain &c, Value x, ArrayRef<int64_t> dims) {
  MLIRContext *ctx = x.getContext();
  for (int64_t dim : dims)
    x = c("aten.unsqueeze.default",
          {{"self", tensorValue(x)}, {"dim", AtenValue::integer(getAffineConstantExpr(dim, ctx))}});
  return x;
}

/// atleast_{1,2,3}d(x) as ATen reshapes it: a 0-d tensor becomes [1]*, a 1-d [n] becomes
/// [1, n] (2-d) or [1, n, 1] (3-d), a 2-d [m, n] becomes [m, n, 1] (3-d).
Value atLeast(OpChain &c, Value x, int64_t rank) {
  int64_t r = rankOf(x);
  if (r >= rank)
    return x;
  if (r == 0) {
    SmallVector<int64_t> zeros(rank, 0);
    return unsqueezed(c, x, zeros);
  }
  if (r == 1)
    return unsqueezed(c, x, rank == 2 ? ArrayRef<int64_t>{0} : ArrayRef<int64_t>{0, 2});
  return unsqueezed(c, x, {2});
}

/// hstack / vstack / row_stack / dstack / column_stack(tensors): the tensors made at
/// least 1-, 2- or 3-d (column_stack: scalars and vectors as columns) and concatenated
/// along dim 0 (hstack of vectors, vstack), 1 (hstack, column_stack) or 2 (dstack).
Results buildStack(AtenCallBuilder &builder, Location loc, llvm::StringRef target,
                   std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  const AtenValue *tensors = args.find("tensors");
  if (!tensors || tensors->kind != AtenValue::Kind::Tensors || tensors->values.empty())
    return emitError() << op << " expects a non-empty TensorList";
  OpChain c(builder, loc, emitError);
  SmallVector<Value> parts;
  for (Value t : tensors->values) {
    if (op == "hstack")
      parts.push_back(atLeast(c, t, 1));
    else if (op == "dstack")
      parts.push_back(atLeast(c, t, 3));
    else if (op == "column_stack")
      parts.push_back(rankOf(t) == 0   ? unsqueezed(c, t, {0, 1})
                      : rankOf(t) == 1 ? unsqueezed(c, t, {1})
                                       : t);
    else
      parts.push_back(atLeast(c, t, 2));
  }
  if (llvm::is_contained(parts, Value()))
    return failure();
  int64_t dim = op == "dstack"                                                     ? 2
                : op == "column_stack" || (op == "hstack" && rankOf(parts[0]) > 1) ? 1
                                                                                   : 0;
  return single(c("aten.cat.default",
                  {{"tensors", AtenValue::tensors(parts)},
                   {"dim", AtenValue::integer(getAffineConstantExpr(dim, loc->getContext()))}}));
}

/// tensor_split.sections(self, sections, dim) / .indices(self, indices, dim): slices
/// along dim; `sections` pieces of n / sections elements with the first n % sections one
/// longer, or the pieces between the indices (as Python slices clamp them).
Results buildTensorSplit(AtenCallBuilder &builder, Location loc, llvm::StringRef target,
                         std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  NamedArguments args("tensor_split", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> dimArg = args.integer("dim", 0);
  if (failed(x) || failed(dimArg))
    return failure();
  std::optional<int64_t> dim = wrappedDim(*dimArg, rankOf(*x));
  if (!dim || rankOf(*x) == 0)
    return emitError() << "tensor_split expected at least a 1-dimensional tensor, and dim "
                       << *dimArg << " in range";
  std::optional<int64_t> n = getConstantSize(sizesOf(*x)[*dim]);
  if (!n)
    return emitError() << "tensor_split: the size of dim " << *dim << " must be static";
  SmallVector<int64_t> bounds{0};
  if (target.ends_with(".sections")) {
    FailureOr<int64_t> sections = args.integer("sections", std::nullopt);
    if (failed(sections))
      return failure();
    if (*sections <= 0)
      return emitError() << "number of sections must be larger than 0, got " << *sections;
    for (int64_t i = 0; i < *sections; ++i)
      bounds.push_back(bounds.back() + *n / *sections + (i < *n % *sections ? 1 : 0));
  } else {
    const AtenValue *indices = args.find("indices");
    if (!indices || indices->kind != AtenValue::Kind::Ints)
      return emitError() << "tensor_split needs the int[] 'indices'";
    for (AffineExpr index : indices->sizes) {
      std::optional<int64_t> i = getConstantSize(index);
      if (!i)
        return emitError() << "tensor_split: the indices must be constants";
      bounds.push_back(std::clamp<int64_t>(*i < 0 ? *i + *n : *i, 0, *n));
    }
    bounds.push_back(*n);
  }
  OpChain c(builder, loc, emitError);
  MLIRContext *ctx = loc->getContext();
  auto constant = [&](int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, ctx)); };
  SmallVector<Value> pieces;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    int64_t start = bounds[i], end = std::max(bounds[i], bounds[i + 1]);
    Value piece = c("aten.slice.Tensor", {{"self", tensorValue(*x)},
                                          {"dim", constant(*dim)},
                                          {"start", constant(start)},
                                          {"end", constant(end)},
                                          {"step", constant(1)}});
    if (!piece)
      return failure();
    pieces.push_back(piece);
  }
  return pieces;
}

/// fliplr(self): flip along dim 1 (at least 2-d); flipud(self): along dim 0; ravel:
/// reshape to one dim; positive: self (not of a bool tensor); exp2: pow(2, self), in a
/// floating dtype; msort: sort's values along dim 0.
Results buildRenamed(AtenCallBuilder &builder, Location loc, llvm::StringRef target,
                     std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  if (failed(x))
    return failure();
  MLIRContext *ctx = loc->getContext();
  OpChain c(builder, loc, emitError);
  if (op == "fliplr" || op == "flipud") {
    int64_t dim = op == "fliplr" ? 1 : 0;
    if (rankOf(*x) <= dim)
      return emitError() << "Input must be >= " << dim + 1 << "-d.";
    return single(
        c("aten.flip.default", {{"self", tensorValue(*x)}, {"dims", constantInts(ctx, {dim})}}));
  }
  if (op == "ravel")
    return single(
        c("aten.reshape.default", {{"self", tensorValue(*x)}, {"shape", constantInts(ctx, {-1})}}));
  if (op == "positive") {
    if (cast<BaseTensorType>(x->getType()).getDtype().isInteger(1))
      return emitError() << "The `+` operator, on a bool tensor is not supported.";
    return SmallVector<Value>{*x};
  }
  if (op == "exp2") {
    Value base = *x;
    if (!isa<FloatType>(cast<BaseTensorType>(x->getType()).getDtype()))
      base = c("aten._to_copy.default",
               {{"self", tensorValue(*x)}, {"dtype", AtenValue::dtype(Float32Type::get(ctx))}});
    return single(c("aten.pow.Scalar",
                    {{"self", AtenValue::floating(2.0)}, {"exponent", tensorValue(base)}}));
  }
  // msort
  FailureOr<SmallVector<Value>> sorted = builder.buildResults(
      loc, "aten.sort.default",
      {{"self", tensorValue(*x)}, {"dim", AtenValue::integer(getAffineConstantExpr(0, ctx))}}, 1,
      emitError);
  if (failed(sorted))
    return failure();
  return SmallVector<Value>{sorted->front()};
}

/// beta self + alpha product, as ATen's addmm family computes it: self ignored at beta 0
/// (its NaN does not propagate), no multiply by a factor of 1.
Value betaSelfPlusAlphaProduct(OpChain &c, Value self, Value product, double beta, double alpha) {
  if (alpha != 1)
    product = c.scalar("aten.mul.Scalar", product, alpha);
  if (beta == 0)
    self = c.unary("aten.zeros_like.default", self);
  else if (beta != 1)
    self = c.scalar("aten.mul.Scalar", self, beta);
  return c.binary("aten.add.Tensor", self, product);
}

/// inner(self, other): the sum over the last dims of both, of shape self[:-1] +
/// other[:-1] (a product with a 0-d operand); dot / vdot(self, tensor) of vectors: the sum
/// of their products; mv(self, vec): the matrix-vector product; addr(self, vec1, vec2,
/// beta, alpha): beta self + alpha outer(vec1, vec2) (self ignored at beta 0); addbmm(self, batch1,
/// batch2, beta, alpha): beta self + alpha sum_b batch1[b] @ batch2[b] (self ignored at beta 0).
Results buildProduct(AtenCallBuilder &builder, Location loc, llvm::StringRef target,
                     std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  OpChain c(builder, loc, emitError);
  MLIRContext *ctx = loc->getContext();
  FailureOr<Value> x = args.tensor("self");
  if (failed(x))
    return failure();
  if (op == "addbmm") {
    FailureOr<Value> b1 = args.tensor("batch1"), b2 = args.tensor("batch2");
    FailureOr<double> beta = args.number("beta", 1.0), alpha = args.number("alpha", 1.0);
    if (failed(b1) || failed(b2) || failed(beta) || failed(alpha))
      return failure();
    if (rankOf(*b1) != 3 || rankOf(*b2) != 3)
      return emitError() << "batch1 and batch2 must be 3D tensors";
    Value product = c("aten.sum.dim_IntList",
                      {{"self", tensorValue(c("aten.bmm.default", {{"self", tensorValue(*b1)},
                                                                   {"mat2", tensorValue(*b2)}}))},
                       {"dim", constantInts(ctx, {0})}});
    return single(betaSelfPlusAlphaProduct(c, *x, product, *beta, *alpha));
  }
  if (op == "mv") {
    FailureOr<Value> v = args.tensor("vec");
    if (failed(v))
      return failure();
    if (rankOf(*x) != 2 || rankOf(*v) != 1)
      return emitError() << "vector + matrix @ vector expected, got " << rankOf(*x) << ", "
                         << rankOf(*v);
    return single(c("aten.squeeze.dim",
                    {{"self", tensorValue(c("aten.mm.default",
                                            {{"self", tensorValue(*x)},
                                             {"mat2", tensorValue(unsqueezed(c, *v, {1}))}}))},
                     {"dim", AtenValue::integer(getAffineConstantExpr(1, ctx))}}));
  }
  if (op == "addr") {
    FailureOr<Value> v1 = args.tensor("vec1"), v2 = args.tensor("vec2");
    FailureOr<double> beta = args.number("beta", 1.0), alpha = args.number("alpha", 1.0);
    if (failed(v1) || failed(v2) || failed(beta) || failed(alpha))
      return failure();
    if (rankOf(*v1) != 1 || rankOf(*v2) != 1)
      return emitError() << "addr: expected 1-D vectors";
    Value outer = c.binary("aten.mul.Tensor", unsqueezed(c, *v1, {1}), unsqueezed(c, *v2, {0}));
    return single(betaSelfPlusAlphaProduct(c, *x, outer, *beta, *alpha));
  }
  FailureOr<Value> y = args.tensor(op == "inner" ? "other" : "tensor");
  if (failed(y))
    return failure();
  if (op != "inner") {
    if (rankOf(*x) != 1 || rankOf(*y) != 1)
      return emitError() << "1D tensors expected, but got " << rankOf(*x) << "D and " << rankOf(*y)
                         << "D tensors";
    return single(c.unary("aten.sum.default", c.binary("aten.mul.Tensor", *x, *y)));
  }
  if (rankOf(*x) == 0 || rankOf(*y) == 0)
    return single(c.binary("aten.mul.Tensor", *x, *y));
  ArrayRef<AffineExpr> a = sizesOf(*x), b = sizesOf(*y);
  auto product = [&](ArrayRef<AffineExpr> sizes) {
    AffineExpr p = getAffineConstantExpr(1, ctx);
    for (AffineExpr s : sizes)
      p = p * s;
    return p;
  };
  auto reshape = [&](Value v, ArrayRef<AffineExpr> sizes) {
    return c("aten.reshape.default", {{"self", tensorValue(v)}, {"shape", AtenValue::ints(sizes)}});
  };
  Value lhs = reshape(*x, {product(a.drop_back()), a.back()});
  Value rhs = reshape(*y, {product(b.drop_back()), b.back()});
  Value mm = c("aten.mm.default",
               {{"self", tensorValue(lhs)}, {"mat2", tensorValue(c.unary("aten.t.default", rhs))}});
  SmallVector<AffineExpr> shape(a.drop_back());
  llvm::append_range(shape, b.drop_back());
  return single(reshape(mm, shape));
}

/// index_fill.int_Scalar / int_Tensor(self, dim, index, value): self with value (in
/// self's dtype) at the positions along dim that index names (negative ones from the end).
Results buildIndexFill(AtenCallBuilder &builder, Location loc, llvm::StringRef,
                       std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  NamedArguments args("index_fill", arguments, emitError);
  FailureOr<Value> x = args.tensor("self"), index = args.tensor("index");
  FailureOr<int64_t> dimArg = args.integer("dim", std::nullopt);
  const AtenValue *value = args.find("value");
  if (failed(x) || failed(index) || failed(dimArg))
    return failure();
  if (!value)
    return emitError() << "index_fill needs a 'value'";
  int64_t rank = rankOf(*x);
  std::optional<int64_t> dim = wrappedDim(*dimArg, rank);
  if (!dim)
    return emitError() << "index_fill: dim " << *dimArg << " out of range";
  if (rankOf(*index) > 1)
    return emitError() << "Index has to be a vector/scalar";
  MLIRContext *ctx = loc->getContext();
  OpChain c(builder, loc, emitError);
  AffineExpr n = rank == 0 ? getAffineConstantExpr(1, ctx) : sizesOf(*x)[*dim];
  Value flat = rankOf(*index) == 0 ? unsqueezed(c, *index, {0}) : *index;
  // Negative indices count from the end.
  Value wrapped =
      c("aten.where.self",
        {{"condition", tensorValue(c.scalar("aten.lt.Scalar", flat, 0))},
         {"self", tensorValue(c("aten.add.Tensor",
                                {{"self", tensorValue(flat)}, {"other", AtenValue::integer(n)}}))},
         {"other", tensorValue(flat)}});
  Value positions =
      c("aten.arange.default",
        {{"end", AtenValue::integer(n)},
         {"dtype", AtenValue::dtype(cast<BaseTensorType>(wrapped.getType()).getDtype())}});
  Value hit = c("aten.any.dim",
                {{"self", tensorValue(c.binary("aten.eq.Tensor", unsqueezed(c, positions, {1}),
                                               unsqueezed(c, wrapped, {0})))},
                 {"dim", AtenValue::integer(getAffineConstantExpr(1, ctx))}});
  // The mask along dim, broadcast over the others.
  SmallVector<AffineExpr> shape(rank, getAffineConstantExpr(1, ctx));
  if (rank > 0)
    shape[*dim] = n;
  Value mask =
      c("aten.reshape.default", {{"self", tensorValue(hit)}, {"shape", AtenValue::ints(shape)}});
  Value fill;
  if (value->kind == AtenValue::Kind::Tensor)
    fill = c("aten._to_copy.default",
             {{"self", *value},
              {"dtype", AtenValue::dtype(cast<BaseTensorType>(x->getType()).getDtype())}});
  else
    fill = c("aten.full_like.default", {{"self", tensorValue(*x)}, {"fill_value", *value}});
  return single(c(
      "aten.where.self",
      {{"condition", tensorValue(mask)}, {"self", tensorValue(fill)}, {"other", tensorValue(*x)}}));
}

/// index_add(self, dim, index, source, alpha=1): self plus alpha source added at the
/// positions along dim that index names; index_copy(self, dim, index, source): source
/// written there. Each is a scatter (scatter_add) of source with the index broadcast
/// along dim to source's shape.
Results buildIndexScatter(AtenCallBuilder &builder, Location loc, llvm::StringRef target,
                          std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  FailureOr<Value> x = args.tensor("self"), index = args.tensor("index"),
                   source = args.tensor("source");
  FailureOr<int64_t> dimArg = args.integer("dim", std::nullopt);
  FailureOr<double> alpha = args.number("alpha", 1.0);
  if (failed(x) || failed(index) || failed(source) || failed(dimArg) || failed(alpha))
    return failure();
  int64_t rank = rankOf(*x);
  std::optional<int64_t> dim = wrappedDim(*dimArg, rank);
  if (!dim || rankOf(*index) > 1 || (rank > 0 && rankOf(*source) != rank))
    return emitError() << op << ": index must be a vector or scalar, source must have self's "
                       << "rank and dim must be one of its dims";
  MLIRContext *ctx = loc->getContext();
  OpChain c(builder, loc, emitError);
  if (rank == 0)
    return single(op == "index_add" ? c.binary("aten.add.Tensor", *x,
                                               c.scalar("aten.mul.Scalar", *source, *alpha))
                                    : c("aten._to_copy.default", {{"self", tensorValue(*source)}}));
  Value flat = rankOf(*index) == 0 ? unsqueezed(c, *index, {0}) : *index;
  SmallVector<AffineExpr> shape(rank, getAffineConstantExpr(1, ctx));
  shape[*dim] = sizesOf(flat).front();
  Value positions =
      c("aten.expand.default",
        {{"self", tensorValue(c("aten.reshape.default",
                                {{"self", tensorValue(flat)}, {"shape", AtenValue::ints(shape)}}))},
         {"size", AtenValue::ints(sizesOf(*source))}});
  Value values = *source;
  if (op == "index_add" && *alpha != 1)
    values = c.scalar("aten.mul.Scalar", values, *alpha);
  return single(c(op == "index_add" ? "aten.scatter_add.default" : "aten.scatter.src",
                  {{"self", tensorValue(*x)},
                   {"dim", AtenValue::integer(getAffineConstantExpr(*dim, ctx))},
                   {"index", tensorValue(positions)},
                   {"src", tensorValue(values)}}));
}

/// diag_embed(self, offset=0, dim1=-2, dim2=-1): a result of one more dim whose 2-d
/// slices over (dim1, dim2) hold the last dim of self on their offset diagonal, zeros
/// elsewhere.
Results buildDiagEmbed(AtenCallBuilder &builder, Location loc, llvm::StringRef,
                       std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  NamedArguments args("diag_embed", arguments, emitError);
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> offset = args.integer("offset", 0), dim1Arg = args.integer("dim1", -2),
                     dim2Arg = args.integer("dim2", -1);
  if (failed(x) || failed(offset) || failed(dim1Arg) || failed(dim2Arg))
    return failure();
  int64_t rank = rankOf(*x) + 1;
  std::optional<int64_t> dim1 = wrappedDim(*dim1Arg, rank), dim2 = wrappedDim(*dim2Arg, rank);
  if (rank < 2 || !dim1 || !dim2 || *dim1 == *dim2)
    return emitError() << "diag_embed: dim1 and dim2 must be different dims of the result";
  MLIRContext *ctx = loc->getContext();
  OpChain c(builder, loc, emitError);
  int64_t pad = std::abs(*offset);
  Value padded = *x;
  if (pad > 0)
    padded = c("aten.constant_pad_nd.default",
               {{"self", tensorValue(*x)}, {"pad", constantInts(ctx, {0, pad})}});
  AffineExpr m = sizesOf(*x).back() + pad;
  Value positions = c("aten.arange.default", {{"end", AtenValue::integer(m)}});
  // mask[i, j]: j - i == offset; the value of row i (offset >= 0) or column j.
  Value diagonal = c.scalar(
      "aten.eq.Scalar",
      c.binary("aten.sub.Tensor", unsqueezed(c, positions, {0}), unsqueezed(c, positions, {1})),
      double(*offset));
  Value values = unsqueezed(c, padded, {*offset >= 0 ? rank - 1 : rank - 2});
  Value embedded = c("aten.where.ScalarOther", {{"condition", tensorValue(diagonal)},
                                                {"self", tensorValue(values)},
                                                {"other", AtenValue::floating(0)}});
  if (*dim1 == rank - 2 && *dim2 == rank - 1)
    return single(embedded);
  // The rows to dim1 and the columns to dim2, the other dims in order.
  SmallVector<int64_t> order;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    order.push_back(d == *dim1 ? rank - 2 : d == *dim2 ? rank - 1 : next++);
  // (ATen fills a new contiguous tensor.)
  return single(c.unary("aten.contiguous.default",
                        c("aten.permute.default",
                          {{"self", tensorValue(embedded)}, {"dims", constantInts(ctx, order)}})));
}

/// conv1d / conv2d / conv3d.padding(input, weight, bias, stride, padding, dilation,
/// groups): padding 'valid' is none; 'same' pads each spatial dim by dilation (k - 1),
/// half before and the rest (one more when odd) after, as ATen's _convolution_mode.
Results buildConvPaddingMode(AtenCallBuilder &builder, Location loc, llvm::StringRef target,
                             std::vector<AtenArgument> arguments, const ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  FailureOr<Value> input = args.tensor("input"), weight = args.tensor("weight");
  const AtenValue *mode = args.find("padding");
  if (failed(input) || failed(weight))
    return failure();
  if (!mode || mode->kind != AtenValue::Kind::String ||
      (mode->string != "same" && mode->string != "valid"))
    return emitError() << "Invalid padding string: '" << (mode ? mode->string : "") << "'";
  int64_t spatial = rankOf(*weight) - 2;
  MLIRContext *ctx = loc->getContext();
  auto intsOr = [&](llvm::StringRef name, int64_t fallback) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> values(spatial, fallback);
    const AtenValue *value = args.find(name);
    if (!value)
      return values;
    if (value->kind == AtenValue::Kind::Int && getConstantSize(value->size))
      return SmallVector<int64_t>(spatial, *getConstantSize(value->size));
    if (value->kind != AtenValue::Kind::Ints)
      return emitError() << op << ": '" << name << "' must be constant ints";
    for (auto [i, size] : llvm::enumerate(value->sizes)) {
      std::optional<int64_t> v = getConstantSize(size);
      if (!v || i >= values.size())
        return emitError() << op << ": '" << name << "' must be " << spatial << " constant ints";
      values[i] = *v;
    }
    if (value->sizes.size() == 1)
      values.assign(spatial, values.front());
    return values;
  };
  FailureOr<SmallVector<int64_t>> stride = intsOr("stride", 1), dilation = intsOr("dilation", 1);
  FailureOr<int64_t> groups = args.integer("groups", 1);
  if (failed(stride) || failed(dilation) || failed(groups))
    return failure();
  SmallVector<int64_t> before(spatial, 0), after(spatial, 0);
  if (mode->string == "same") {
    if (llvm::any_of(*stride, [](int64_t s) { return s != 1; }))
      return emitError() << "padding='same' is not supported for strided convolutions";
    for (int64_t d = 0; d < spatial; ++d) {
      std::optional<int64_t> k = getConstantSize(sizesOf(*weight)[2 + d]);
      if (!k)
        return emitError() << op << ": padding='same' needs a static kernel size";
      int64_t total = (*dilation)[d] * (*k - 1);
      before[d] = total / 2;
      after[d] = total - total / 2;
    }
  }
  OpChain c(builder, loc, emitError);
  Value x = *input;
  // An odd total: the extra element after, by an explicit pad; the rest symmetric.
  if (before != after) {
    SmallVector<int64_t> pad;
    for (int64_t d = spatial - 1; d >= 0; --d)
      pad.append({0, after[d] - before[d]});
    x = c("aten.constant_pad_nd.default",
          {{"self", tensorValue(x)}, {"pad", constantInts(ctx, pad)}});
  }
  std::vector<AtenArgument> forwarded = {
      {"input", tensorValue(x)},
      {"weight", tensorValue(*weight)},
      {"stride", constantInts(ctx, *stride)},
      {"padding", constantInts(ctx, before)},
      {"dilation", constantInts(ctx, *dilation)},
      {"groups", AtenValue::integer(getAffineConstantExpr(*groups, ctx))}};
  if (const AtenValue *bias = args.find("bias"))
    forwarded.push_back({"bias", *bias});
  return single(c(("aten." + op + ".default").str(), std::move(forwarded)));
}
} // namespace

LibraryComposite tgc::frontend::findShapeComposite(llvm::StringRef target) {
  return llvm::StringSwitch<LibraryComposite>(target)
      .Cases({"aten.hstack.default", "aten.vstack.default", "aten.row_stack.default",
              "aten.dstack.default", "aten.column_stack.default"},
             buildStack)
      .Cases({"aten.tensor_split.sections", "aten.tensor_split.indices"}, buildTensorSplit)
      .Cases({"aten.fliplr.default", "aten.flipud.default", "aten.ravel.default",
              "aten.positive.default", "aten.exp2.default", "aten.msort.default"},
             buildRenamed)
      .Cases({"aten.inner.default", "aten.dot.default", "aten.vdot.default", "aten.mv.default",
              "aten.addr.default", "aten.addbmm.default"},
             buildProduct)
      .Cases({"aten.index_add.default", "aten.index_copy.default"}, buildIndexScatter)
      .Cases({"aten.index_fill.int_Scalar", "aten.index_fill.int_Tensor"}, buildIndexFill)
      .Case("aten.diag_embed.default", buildDiagEmbed)
      .Cases({"aten.conv1d.padding", "aten.conv2d.padding", "aten.conv3d.padding"},
             buildConvPaddingMode)
      .Default(nullptr);
}
