// Composites over sequences: recurrent layers (LSTM, GRU) unrolled over the static
// sequence, and prefix scans (cummax, cummin, logcumsumexp).
#include "Composites.h"

#include <limits>

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;

/// lstm.input / gru.input(input, hx, params, has_biases, num_layers, dropout, train,
/// bidirectional, batch_first): the recurrence unrolled over the (static) sequence, as
/// ATen's cells compute it. Per layer and direction the input projection of every step is
/// one linear, then step by step: LSTM gates i, f, g, o of linear(x_t, w_ih, b_ih) +
/// linear(h, w_hh, b_hh), c = f c + i g, h = o tanh(c); GRU gates r, z of the sums, n =
/// tanh(x_n + r h_n), h = n + z (h - n). The reverse direction walks the steps backwards;
/// the directions' outputs are concatenated per step. Results: (output, h_n[, c_n]).
static FailureOr<SmallVector<Value>> buildRecurrent(AtenCallBuilder &builder, Location loc,
                                                    llvm::StringRef target,
                                                    std::vector<AtenArgument> arguments,
                                                    const AtenCallBuilder::ErrorFn &emitError) {
  bool lstm = target.starts_with("aten.lstm");
  llvm::StringRef op = lstm ? "lstm" : "gru";
  NamedArguments args(op, arguments, emitError);
  OpChain c(builder, loc, emitError);
  MLIRContext *ctx = loc->getContext();
  auto constant = [&](int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, ctx)); };
  FailureOr<Value> input = args.tensor("input");
  FailureOr<int64_t> numLayers = args.integer("num_layers", std::nullopt);
  FailureOr<double> dropout = args.number("dropout", 0.0);
  if (failed(input) || failed(numLayers) || failed(dropout))
    return failure();
  const AtenValue *hx = args.find("hx");
  const AtenValue *params = args.find("params");
  size_t states = lstm ? 2 : 1;
  if (!hx || hx->values.size() != states || !params || params->kind != AtenValue::Kind::Tensors)
    return emitError() << op << " needs its initial state and its parameters";
  bool biases = args.flag("has_biases", true), bidirectional = args.flag("bidirectional", false);
  bool batchFirst = args.flag("batch_first", false);
  if (args.flag("train", false) && *dropout > 0 && *numLayers > 1)
    return emitError() << op << ": dropout between layers in training is not supported";
  int64_t directions = bidirectional ? 2 : 1, perCell = biases ? 4 : 2;
  if (int64_t(params->values.size()) != *numLayers * directions * perCell)
    return emitError() << op << ": " << params->values.size() << " parameters for " << *numLayers
                       << " layers (projections, proj_size > 0, are not supported)";
  if (rankOf(*input) != 3)
    return emitError() << op << " needs a batched 3-d input here";
  auto transposed = [&](Value v) {
    return c("aten.transpose.int",
             {{"self", tensorValue(v)}, {"dim0", constant(0)}, {"dim1", constant(1)}});
  };
  Value sequence = batchFirst ? transposed(*input) : *input;
  std::optional<int64_t> steps =
      sequence ? getConstantSize(cast<BaseTensorType>(sequence.getType()).getSizes()[0])
               : std::nullopt;
  if (!steps)
    return emitError() << op << " needs a sequence length known at capture time";
  auto linear = [&](Value x, Value weight, Value bias) {
    std::vector<AtenArgument> operands{{"input", tensorValue(x)}, {"weight", tensorValue(weight)}};
    if (bias)
      operands.push_back({"bias", tensorValue(bias)});
    return c("aten.linear.default", std::move(operands));
  };
  auto select = [&](Value v, int64_t dim, int64_t index) {
    return c("aten.select.int",
             {{"self", tensorValue(v)}, {"dim", constant(dim)}, {"index", constant(index)}});
  };
  auto gate = [&](Value v, int64_t k, int64_t width) {
    return c("aten.slice.Tensor", {{"self", tensorValue(v)},
                                   {"dim", constant(-1)},
                                   {"start", constant(k * width)},
                                   {"end", constant((k + 1) * width)}});
  };
  SmallVector<Value> finalHidden, finalCell;
  for (int64_t layer = 0; layer < *numLayers; ++layer) {
    SmallVector<Value> directionOutputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      int64_t cell = layer * directions + direction;
      ArrayRef<Value> weights = ArrayRef<Value>(params->values).slice(cell * perCell, perCell);
      Value inputBias = biases ? weights[2] : Value(), hiddenBias = biases ? weights[3] : Value();
      int64_t width =
          cast<BaseTensorType>(weights[1].getType()).getSizes().size() == 2
              ? getConstantSize(cast<BaseTensorType>(weights[1].getType()).getSizes()[1])
                    .value_or(0)
              : 0;
      if (width <= 0)
        return emitError() << op << " needs weights of a static hidden size";
      Value projected = linear(sequence, weights[0], inputBias);
      Value h = select(hx->values[0], 0, cell);
      Value state = lstm ? select(hx->values[1], 0, cell) : Value();
      SmallVector<Value> outputs(*steps);
      for (int64_t i = 0; i < *steps; ++i) {
        int64_t t = direction == 0 ? i : *steps - 1 - i;
        Value fromInput = select(projected, 0, t);
        Value fromHidden = linear(h, weights[1], hiddenBias);
        if (lstm) {
          Value gates = c.binary("aten.add.Tensor", fromInput, fromHidden);
          Value in = c.unary("aten.sigmoid.default", gate(gates, 0, width));
          Value forget = c.unary("aten.sigmoid.default", gate(gates, 1, width));
          Value candidate = c.unary("aten.tanh.default", gate(gates, 2, width));
          Value out = c.unary("aten.sigmoid.default", gate(gates, 3, width));
          state = c.binary("aten.add.Tensor", c.binary("aten.mul.Tensor", forget, state),
                           c.binary("aten.mul.Tensor", in, candidate));
          h = c.binary("aten.mul.Tensor", out, c.unary("aten.tanh.default", state));
        } else {
          Value reset =
              c.unary("aten.sigmoid.default", c.binary("aten.add.Tensor", gate(fromInput, 0, width),
                                                       gate(fromHidden, 0, width)));
          Value update =
              c.unary("aten.sigmoid.default", c.binary("aten.add.Tensor", gate(fromInput, 1, width),
                                                       gate(fromHidden, 1, width)));
          Value candidate =
              c.unary("aten.tanh.default",
                      c.binary("aten.add.Tensor", gate(fromInput, 2, width),
                               c.binary("aten.mul.Tensor", reset, gate(fromHidden, 2, width))));
          h = c.binary(
              "aten.add.Tensor", candidate,
              c.binary("aten.mul.Tensor", update, c.binary("aten.sub.Tensor", h, candidate)));
        }
        outputs[t] = h;
      }
      finalHidden.push_back(h);
      if (lstm)
        finalCell.push_back(state);
      directionOutputs.push_back(c(
          "aten.stack.default", {{"tensors", AtenValue::tensors(outputs)}, {"dim", constant(0)}}));
    }
    sequence = directions == 1
                   ? directionOutputs.front()
                   : c("aten.cat.default",
                       {{"tensors", AtenValue::tensors(directionOutputs)}, {"dim", constant(-1)}});
  }
  SmallVector<Value> results{batchFirst ? transposed(sequence) : sequence,
                             c("aten.stack.default", {{"tensors", AtenValue::tensors(finalHidden)},
                                                      {"dim", constant(0)}})};
  if (lstm)
    results.push_back(c("aten.stack.default",
                        {{"tensors", AtenValue::tensors(finalCell)}, {"dim", constant(0)}}));
  if (llvm::any_of(results, [](Value v) { return !v; }))
    return failure();
  return results;
}

/// cummax / cummin(self, dim): (values, indices) and logcumsumexp(self, dim): values, over
/// every prefix along dim as one reduction of the pairs (i, j) that a new dim next to dim
/// holds: self[j] for j <= i, else the reduction's identity. O(n^2), as tgc's sort is. The
/// extremum propagates NaN as eager's scan does; its index is the last position (j <= i)
/// holding it, NaN matching NaN (eager updates on ties and on each NaN). logcumsumexp is
/// logsumexp over j, stable as ATen's running form.
static FailureOr<SmallVector<Value>> buildPrefixScan(AtenCallBuilder &builder, Location loc,
                                                     llvm::StringRef target,
                                                     std::vector<AtenArgument> arguments,
                                                     const AtenCallBuilder::ErrorFn &emitError) {
  llvm::StringRef op = target.drop_front(5).split('.').first;
  NamedArguments args(op, arguments, emitError);
  OpChain c(builder, loc, emitError);
  MLIRContext *ctx = loc->getContext();
  auto constant = [&](int64_t v) { return AtenValue::integer(getAffineConstantExpr(v, ctx)); };
  FailureOr<Value> x = args.tensor("self");
  FailureOr<int64_t> dim = args.integer("dim", std::nullopt);
  if (failed(x) || failed(dim))
    return failure();
  auto type = cast<BaseTensorType>(x->getType());
  if (!isa<FloatType>(type.getDtype()))
    return emitError() << op << " of a " << type.getDtype() << " tensor is not supported (a "
                       << "floating-point one is)";
  int64_t rank = type.getSizes().size();
  std::optional<int64_t> wrapped = wrappedDim(*dim, rank);
  if (!wrapped)
    return emitError() << op << ": dim " << *dim << " is out of range for a " << rank
                       << "-d tensor";
  // A 0-d tensor is one entry along a dim of its own.
  int64_t d = rank == 0 ? 0 : *wrapped;
  Value input = rank == 0
                    ? c("aten.unsqueeze.default", {{"self", tensorValue(*x)}, {"dim", constant(0)}})
                    : *x;
  if (!input)
    return failure();
  ArrayRef<AffineExpr> sizes = cast<BaseTensorType>(input.getType()).getSizes();
  AffineExpr n = sizes[d];
  int64_t trailing = sizes.size() - 1 - d;
  // [n, n, 1...] (i, j, then the dims after dim) and positions j as [n, 1...].
  SmallVector<AffineExpr> square{n, n}, column{n};
  square.append(trailing, getAffineConstantExpr(1, ctx));
  column.append(trailing, getAffineConstantExpr(1, ctx));
  Value ones = c("aten.ones.default", {{"size", AtenValue::ints({n, n})},
                                       {"dtype", AtenValue::dtype(IntegerType::get(ctx, 1))}});
  Value prefix = c("aten.reshape.default",
                   {{"self", tensorValue(c("aten.tril.default", {{"self", tensorValue(ones)}}))},
                    {"shape", AtenValue::ints(square)}});
  Value row = c("aten.unsqueeze.default", {{"self", tensorValue(input)}, {"dim", constant(d)}});
  bool max = op != "cummin";
  double identity =
      max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  Value pairs = c("aten.where.self",
                  {{"condition", tensorValue(prefix)},
                   {"self", tensorValue(row)},
                   {"other", tensorValue(c("aten.full_like.default",
                                           {{"self", tensorValue(row)},
                                            {"fill_value", AtenValue::floating(identity)}}))}});
  AtenValue overJ = constantInts(ctx, {d + 1});
  auto finish = [&](Value v) {
    return rank == 0 || !v ? c("aten.squeeze.dim", {{"self", tensorValue(v)}, {"dim", constant(0)}})
                           : v;
  };
  if (op == "logcumsumexp") {
    Value result =
        finish(c("aten.logsumexp.default", {{"self", tensorValue(pairs)}, {"dim", overJ}}));
    if (!result)
      return failure();
    return SmallVector<Value>{result};
  }
  Value values =
      c(max ? "aten.amax.default" : "aten.amin.default",
        {{"self", tensorValue(pairs)}, {"dim", overJ}, {"keepdim", AtenValue::boolean(true)}});
  // The last j <= i where self[j] is the prefix's extremum (or both are NaN).
  Value same = c.binary("aten.eq.Tensor", row, values);
  Value bothNan = c("aten.logical_and.default",
                    {{"self", tensorValue(c.unary("aten.isnan.default", row))},
                     {"other", tensorValue(c.unary("aten.isnan.default", values))}});
  Value hit =
      c("aten.logical_and.default",
        {{"self", tensorValue(prefix)},
         {"other", tensorValue(c("aten.logical_or.default", {{"self", tensorValue(same)},
                                                             {"other", tensorValue(bothNan)}}))}});
  Value positions =
      c("aten.reshape.default",
        {{"self", tensorValue(c("aten.arange.default",
                                {{"end", AtenValue::integer(n)},
                                 {"dtype", AtenValue::dtype(IntegerType::get(ctx, 64))}}))},
         {"shape", AtenValue::ints(column)}});
  Value none = c("aten.full_like.default",
                 {{"self", tensorValue(positions)}, {"fill_value", AtenValue::floating(-1)}});
  Value candidates = c("aten.where.self", {{"condition", tensorValue(hit)},
                                           {"self", tensorValue(positions)},
                                           {"other", tensorValue(none)}});
  Value indices =
      finish(c("aten.amax.default", {{"self", tensorValue(candidates)}, {"dim", overJ}}));
  Value squeezed =
      finish(c("aten.squeeze.dim", {{"self", tensorValue(values)}, {"dim", constant(d + 1)}}));
  if (!squeezed || !indices)
    return failure();
  return SmallVector<Value>{squeezed, indices};
}

/// Whether `target` is a prefix scan buildPrefixScan composes.
static bool isPrefixScan(llvm::StringRef target) {
  return target == "aten.cummax.default" || target == "aten.cummin.default" ||
         target == "aten.logcumsumexp.default";
}

/// Whether `target` is a recurrent layer buildRecurrent composes.
static bool isRecurrent(llvm::StringRef target) {
  return target == "aten.lstm.input" || target == "aten.gru.input";
}

LibraryComposite tgc::frontend::findSequenceComposite(llvm::StringRef target) {
  if (isRecurrent(target))
    return buildRecurrent;
  if (isPrefixScan(target))
    return buildPrefixScan;
  return nullptr;
}
