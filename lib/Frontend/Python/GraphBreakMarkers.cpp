// Graph breaks in captured programs (`tgc compile --allow-graph-breaks`,
// docs/graph-breaks.md): a branch on a tensor's value and a `print` become markers in
// the graph, which tgc::splitGraphBreaks cuts into several graphs.
#include "Interpreter.h"

#include "tgc/Dialect/TgcDialect.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;

FailureOr<bool> Interpreter::breakOnTensorTruth(Var tensor, Location loc) {
  Value value = heap.get(tensor->object).tensor;
  auto type = cast<BaseTensorType>(value.getType());
  for (AffineExpr size : type.getSizes()) {
    auto constant = dyn_cast<AffineConstantExpr>(size);
    if (!constant)
      return error(loc) << "graph break: the truth of a tensor of sizes " << type
                        << " (one element only if its dynamic sizes are 1) is not supported";
    if (constant.getValue() != 1)
      return error(loc) << "Boolean value of Tensor with more than one value is ambiguous";
  }
  if (breakPath->next == breakPath->maxBranches)
    return error(loc) << "graph break: more than " << breakPath->maxBranches
                      << " branches on tensor values on one path (a loop on a tensor's "
                         "value?)";
  if (breakPath->next == breakPath->decisions.size())
    breakPath->decisions.push_back(true);
  bool taken = breakPath->decisions[breakPath->next++];
  BreakBranchOp::create(builder, loc, value, builder.getBoolAttr(taken));
  return taken;
}

FailureOr<Attribute> Interpreter::breakCallArgument(Var value, SmallVectorImpl<Value> &tensors,
                                                    Location loc) {
  switch (value->kind) {
  case K::None:
    return Attribute(builder.getUnitAttr());
  case K::Bool:
    return Attribute(builder.getBoolAttr(value->boolValue));
  case K::Int:
    if (std::optional<int64_t> i = value->getConstantInt())
      return Attribute(builder.getI64IntegerAttr(*i));
    return error(loc) << "graph break: passing a symbolic size to a call between graphs "
                         "is not supported";
  case K::Float:
    return Attribute(builder.getF64FloatAttr(value->floatValue));
  case K::Str:
    return Attribute(builder.getStringAttr(value->name));
  case K::Tuple: {
    // Plain tuples, and tuples of a library class (torch.Size) by the class's name.
    if (value->tupleClass && !value->tupleClass->is(K::External))
      break;
    SmallVector<Attribute> items;
    for (const Var &item : value->items) {
      FailureOr<Attribute> attr = breakCallArgument(item, tensors, loc);
      if (failed(attr))
        return failure();
      items.push_back(*attr);
    }
    if (!value->tupleClass)
      return Attribute(builder.getArrayAttr(items));
    return Attribute(builder.getDictionaryAttr(
        {builder.getNamedAttr("class", builder.getStringAttr(value->tupleClass->name)),
         builder.getNamedAttr("items", builder.getArrayAttr(items))}));
  }
  case K::Tensor: {
    Value tensor = heap.get(value->object).tensor;
    auto *it = llvm::find(tensors, tensor);
    int64_t index = it - tensors.begin();
    if (it == tensors.end())
      tensors.push_back(tensor);
    SmallVector<NamedAttribute> entries = {
        builder.getNamedAttr("tensor", builder.getI64IntegerAttr(index))};
    if (value->number != Variable::Number::None) // a Python number: the caller calls item()
      entries.push_back(
          builder.getNamedAttr("number", builder.getStringAttr(numberName(value->number))));
    return Attribute(builder.getDictionaryAttr(entries));
  }
  default:
    break;
  }
  return error(loc) << "graph break: passing this kind of Python value to a call between "
                       "graphs is not supported (None, bool, int, float, str, tuples and "
                       "tensors are)";
}

LogicalResult Interpreter::breakOnCall(llvm::StringRef callee, ArrayRef<Var> args,
                                       ArrayRef<std::pair<std::string, Var>> kwargs, Location loc) {
  SmallVector<Value> tensors;
  SmallVector<Attribute> positional;
  for (const Var &arg : args) {
    FailureOr<Attribute> attr = breakCallArgument(arg, tensors, loc);
    if (failed(attr))
      return failure();
    positional.push_back(*attr);
  }
  SmallVector<NamedAttribute> keywords;
  for (const auto &[name, arg] : kwargs) {
    FailureOr<Attribute> attr = breakCallArgument(arg, tensors, loc);
    if (failed(attr))
      return failure();
    keywords.push_back(builder.getNamedAttr(name, *attr));
  }
  BreakCallOp::create(builder, loc, builder.getStringAttr(callee), tensors,
                      builder.getArrayAttr(positional), builder.getDictionaryAttr(keywords));
  return success();
}
