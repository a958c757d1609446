// Python numbers computed from tensor values (`t.item()`, and arithmetic on the result):
// what Dynamo calls unbacked SymFloat/SymInt with capture_scalar_outputs. They stay in the
// graph as 0-d tensors (f64 for float, i64 for int, i1 for bool, so that arithmetic on
// them rounds like Python's) whose Var is marked with the number it stands for
// (`Variable::number`). Arithmetic with tensors broadcasts like a Python scalar would; a
// branch on one is a graph break (docs/graph-breaks.md); used as a size (a slice bound, a
// factory's size) it becomes an unbacked size symbol (numberAsSize).
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using N = Variable::Number;

/// The Python number kind of `value`: Float/Int/Bool constants and number tensors.
static N numberOf(const Var &value) {
  switch (value->kind) {
  case K::Float:
    return N::Float;
  case K::Int:
    return N::Int;
  case K::Bool:
    return N::Bool;
  case K::Tensor:
    return value->number;
  default:
    return N::None;
  }
}

FailureOr<Var> Interpreter::asNumber(Var tensor, Variable::Number kind, Location loc) {
  auto type = cast<BaseTensorType>(heap.get(tensor->object).tensor.getType());
  Type dtype = kind == N::Float ? Type(Float64Type::get(ctx))
               : kind == N::Int ? Type(IntegerType::get(ctx, 64))
                                : Type(IntegerType::get(ctx, 1));
  Var result = tensor;
  if (type.getDtype() != dtype) {
    CallArguments arguments{{tensor, makeDType(dtype)}, {}};
    FailureOr<Var> cast = callTorchFunction("torch.Tensor.to", arguments, loc);
    if (failed(cast))
      return failure();
    result = *cast;
  }
  Variable marked = *result;
  marked.number = kind;
  return makeVar(std::move(marked));
}

FailureOr<Var> Interpreter::tensorItem(Var tensor, Location loc) {
  auto type = cast<BaseTensorType>(heap.get(tensor->object).tensor.getType());
  for (AffineExpr size : type.getSizes()) {
    auto constant = dyn_cast<AffineConstantExpr>(size);
    if (!constant || constant.getValue() != 1)
      return error(loc) << "Tensor.item() of a tensor of sizes " << type
                        << ": only one-element tensors can be converted to Python scalars";
  }
  CallArguments detach{{tensor}, {}};
  FailureOr<Var> value = callTorchFunction("torch.Tensor.detach", detach, loc);
  if (failed(value))
    return failure();
  if (!type.getSizes().empty()) { // sizes all 1: squeeze them away
    CallArguments squeeze{{*value}, {}};
    value = callTorchFunction("torch.Tensor.squeeze", squeeze, loc);
    if (failed(value))
      return failure();
  }
  Type dtype = type.getDtype();
  N kind = isa<FloatType>(dtype) ? N::Float : dtype.isInteger(1) ? N::Bool : N::Int;
  return asNumber(*value, kind, loc);
}

FailureOr<Var> Interpreter::numberResult(Var result, Var lhs, Var rhs, llvm::StringRef op,
                                         Location loc) {
  N a = numberOf(lhs), b = rhs ? numberOf(rhs) : a;
  if (!result->is(K::Tensor) || a == N::None || b == N::None ||
      (lhs->number == N::None && (!rhs || rhs->number == N::None)))
    return result; // not arithmetic on Python numbers
  N kind;
  if (op == "compare")
    kind = N::Bool;
  else if (op == "truediv" || a == N::Float || b == N::Float)
    kind = N::Float;
  else if (a == N::Bool && b == N::Bool && (op == "and_" || op == "or_" || op == "xor"))
    kind = N::Bool;
  else
    kind = N::Int;
  return asNumber(result, kind, loc);
}

//===----------------------------------------------------------------------===//
// Numbers as sizes (unbacked symbols)
//===----------------------------------------------------------------------===//

FailureOr<Var> Interpreter::clampNumber(Var a, Var lo, Var hi, Location loc) {
  auto op = [&](llvm::StringRef fn, Var x, Var y) {
    CallArguments arguments{{std::move(x), std::move(y)}, {}};
    return callTorchFunction(fn, arguments, loc);
  };
  // max(a, lo) = a - (a < lo) * (a - lo); min(a, hi) = a - (a > hi) * (a - hi).
  for (auto [bound, compare] : {std::pair(lo, "operator.lt"), std::pair(hi, "operator.gt")}) {
    if (!bound)
      continue;
    FailureOr<Var> outside = op(compare, a, bound);
    FailureOr<Var> excess =
        failed(outside) ? FailureOr<Var>(failure()) : op("operator.sub", a, bound);
    FailureOr<Var> fix =
        failed(excess) ? FailureOr<Var>(failure()) : op("operator.mul", *outside, *excess);
    FailureOr<Var> next = failed(fix) ? FailureOr<Var>(failure()) : op("operator.sub", a, *fix);
    if (failed(next))
      return failure();
    a = *next;
  }
  return a;
}

FailureOr<Var> Interpreter::numberAsSize(Var number, Var lower, Var upper, Var wrapBase,
                                         Location loc) {
  if (number->number != N::Int)
    return error(loc) << "a " << numberName(number->number)
                      << " from Tensor.item() cannot be used as a size; sizes are ints";
  // The symbol is bound in the program's function, before the torch.cond being traced
  // if the use is in a branch: the branch then lifts it like any other symbol.
  Operation *anchor = nullptr;
  Block *block = builder.getInsertionBlock();
  while (block && !isa<func::FuncOp>(block->getParentOp())) {
    anchor = block->getParentOp();
    block = anchor->getBlock();
  }
  auto func = block ? cast<func::FuncOp>(block->getParentOp()) : func::FuncOp();
  if (!func || func.getSymName() != "forward")
    return error(loc) << "a number from Tensor.item() used as a size inside a hook or an "
                         "autograd.Function is not supported";
  Value numberTensor = heap.get(number->object).tensor;
  if (anchor && numberTensor.getParentRegion() != &func.getBody())
    return error(loc) << "a number from Tensor.item() computed inside a torch.cond branch "
                         "cannot be used as a size";
  OpBuilder::InsertionGuard guard(builder);
  if (anchor)
    builder.setInsertionPoint(anchor);
  Var value = number;
  auto op = [&](llvm::StringRef fn, Var x, Var y) {
    CallArguments arguments{{std::move(x), std::move(y)}, {}};
    return callTorchFunction(fn, arguments, loc);
  };
  if (wrapBase) {
    // Python's slice bounds: a negative one counts from the end.
    FailureOr<Var> negative = op("operator.lt", value, makeInt(0, ctx));
    FailureOr<Var> shift =
        failed(negative) ? FailureOr<Var>(failure()) : op("operator.mul", *negative, wrapBase);
    FailureOr<Var> wrapped =
        failed(shift) ? FailureOr<Var>(failure()) : op("operator.add", value, *shift);
    if (failed(wrapped))
      return failure();
    value = *wrapped;
  }
  FailureOr<Var> clamped = clampNumber(value, lower ? lower : makeInt(0, ctx), upper, loc);
  if (failed(clamped))
    return failure();
  unsigned symbol = symbolRanges.size();
  SymbolRange range;
  if (upper && upper->is(K::Int))
    range.max = upper->getConstantInt();
  symbolRanges.push_back(range);
  unbackedNames.push_back("u" + std::to_string(unbackedNames.size()));
  auto bind = BindSymbolOp::create(builder, loc, heap.get((*clamped)->object).tensor,
                                   builder.getI64IntegerAttr(symbol));
  unbackedValues[symbol] = bind.getResult();
  return makeInt(getAffineSymbolExpr(symbol, ctx));
}

//===----------------------------------------------------------------------===//
// Reductions with indices: max/min over a dim, argmax/argmin
//===----------------------------------------------------------------------===//

FailureOr<Var> Interpreter::reduceWithIndices(Var x, int64_t dim, bool keepdim, bool isMax,
                                              bool wantValues, llvm::StringRef className,
                                              Location loc) {
  auto torchCall = [&](llvm::StringRef fn, std::vector<Var> positional,
                       std::vector<std::pair<std::string, Var>> keywords = {}) {
    CallArguments arguments{std::move(positional), std::move(keywords)};
    return callTorchFunction(fn, arguments, loc);
  };
  auto type = cast<BaseTensorType>(heap.get(x->object).tensor.getType());
  int64_t rank = type.getRank();
  std::optional<int64_t> normalized = normalizeDim(dim, std::max<int64_t>(rank, 1));
  if (!normalized)
    return error(loc) << "dim " << dim << " is out of range for a tensor of rank " << rank;
  dim = *normalized;
  if (rank == 0)
    return error(loc) << "max/min/argmax over a dim of a 0-d tensor is not supported";
  AffineExpr size = type.getSizes()[dim];
  Var dims = makeTuple({makeInt(dim, ctx)});
  // The first index of the extremum along dim (NaN counts as the extremum, as in torch):
  // min over dim of where(x == extremum or both NaN, index, size).
  FailureOr<Var> detached = torchCall("torch.Tensor.detach", {x});
  if (failed(detached))
    return failure();
  FailureOr<Var> extremum =
      torchCall(isMax ? "torch.amax" : "torch.amin", {*detached, dims, makeBool(true)});
  if (failed(extremum))
    return failure();
  FailureOr<Var> equal = torchCall("operator.eq", {*detached, *extremum});
  FailureOr<Var> nanX = torchCall("operator.ne", {*detached, *detached});
  FailureOr<Var> nanE = torchCall("operator.ne", {*extremum, *extremum});
  if (failed(equal) || failed(nanX) || failed(nanE))
    return failure();
  FailureOr<Var> bothNan = torchCall("torch.logical_and", {*nanX, *nanE});
  if (failed(bothNan))
    return failure();
  FailureOr<Var> hit = torchCall("torch.logical_or", {*equal, *bothNan});
  Var int64Var = makeDType(IntegerType::get(ctx, 64));
  FailureOr<Var> positions = torchCall("torch.arange", {makeInt(size)}, {{"dtype", int64Var}});
  if (failed(hit) || failed(positions))
    return failure();
  std::vector<Var> shape(rank, makeInt(1, ctx));
  shape[dim] = makeInt(size);
  FailureOr<Var> index = torchCall("torch.Tensor.view", {*positions, makeTuple(shape)});
  if (failed(index))
    return failure();
  FailureOr<Var> candidates = torchCall("torch.where", {*hit, *index, makeInt(size)});
  if (failed(candidates))
    return failure();
  FailureOr<Var> indices = torchCall("torch.amin", {*candidates, dims, makeBool(true)});
  if (failed(indices))
    return failure();
  // The values are gathered at the indices, so the gradient reaches that element only.
  Var values;
  if (wantValues) {
    FailureOr<Var> gathered = torchCall("torch.gather", {x, makeInt(dim, ctx), *indices});
    if (failed(gathered))
      return failure();
    values = *gathered;
  }
  if (!keepdim) {
    indices = torchCall("torch.Tensor.squeeze", {*indices, makeInt(dim, ctx)});
    if (failed(indices))
      return failure();
    if (values) {
      FailureOr<Var> squeezed = torchCall("torch.Tensor.squeeze", {values, makeInt(dim, ctx)});
      if (failed(squeezed))
        return failure();
      values = *squeezed;
    }
  }
  if (!wantValues)
    return *indices;
  // torch.return_types.max: a named tuple (values, indices).
  Variable result;
  result.kind = K::Tuple;
  result.items = {values, *indices};
  result.tupleClass = makeExternal(className);
  return makeVar(std::move(result));
}
