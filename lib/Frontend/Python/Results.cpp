// What a captured program returns: its tensors, flattened in order, and the structure
// around them (tuples, lists, dicts, constants) for model.json's `output_structure`.
#include "Interpreter.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using H = HeapObject::Kind;
using K = Variable::Kind;

/// A tuple of a class other than torch.Size (a namedtuple, a torch.return_types
/// structseq): returned, it is built by the replay list, which names its class.
static bool isReplayedTuple(const Var &value) {
  return value->is(K::Tuple) && value->tupleClass &&
         !(value->tupleClass->is(K::External) && value->tupleClass->name == "torch.Size");
}

FailureOr<Attribute> Interpreter::outputStructure(Var value, int64_t &nextTensor, Location loc) {
  OpBuilder b(ctx);
  auto tagged = [&](llvm::StringRef tag, Attribute payload) -> Attribute {
    return b.getDictionaryAttr(b.getNamedAttr(tag, payload));
  };
  switch (value->kind) {
  case K::Tensor:
    if (value->number == Variable::Number::None)
      return Attribute(b.getI64IntegerAttr(nextTensor++));
    break; // a Python number from a tensor's value: replayed
  case K::None:
    return tagged("const", b.getUnitAttr());
  case K::Bool:
    return tagged("const", b.getBoolAttr(value->boolValue));
  case K::Str:
    return tagged("const", b.getStringAttr(value->name));
  case K::Float: {
    // JSON writes an integral float as an integer and has no infinity or NaN: those are
    // their repr (`{"float": "2.0"}`), which tgc.load reads back as a float.
    double x = value->floatValue;
    if (std::isfinite(x) && x != std::trunc(x))
      return tagged("const", b.getF64FloatAttr(x));
    FailureOr<std::string> text = formatPythonValue(value, "", 2, loc);
    if (failed(text))
      return failure();
    return tagged("float", b.getStringAttr(*text));
  }
  case K::Int:
    if (std::optional<int64_t> i = value->getConstantInt())
      return tagged("const", b.getI64IntegerAttr(*i));
    break;
  default:
    break;
  }
  std::optional<H> kind =
      value->is(K::Object) ? std::optional(heap.get(value->object).kind) : std::nullopt;
  if (kind == H::Dict) {
    SmallVector<Attribute> entries;
    for (const auto &[key, item] : heap.get(value->object).entries) {
      FailureOr<Attribute> keyAttr = outputStructure(key, nextTensor, loc);
      FailureOr<Attribute> itemAttr = outputStructure(item, nextTensor, loc);
      if (failed(keyAttr) || failed(itemAttr))
        return failure();
      auto constKey = dyn_cast<DictionaryAttr>(*keyAttr);
      if (!constKey || !constKey.get("const"))
        return error(loc) << "the program returns a dict whose keys are not constants";
      entries.push_back(b.getArrayAttr({constKey.get("const"), *itemAttr}));
    }
    return tagged("dict", b.getArrayAttr(entries));
  }
  // A torch.Size is tagged as one; a tuple of another class is replayed.
  bool replayed = isReplayedTuple(value);
  bool size = value->is(K::Tuple) && value->tupleClass && !replayed;
  if ((value->is(K::Tuple) && !replayed) || kind == H::List) {
    FailureOr<std::vector<Var>> items = unpack(value, loc);
    if (failed(items))
      return failure();
    SmallVector<Attribute> structures;
    for (const Var &item : *items) {
      FailureOr<Attribute> structure = outputStructure(item, nextTensor, loc);
      if (failed(structure))
        return failure();
      structures.push_back(*structure);
    }
    return tagged(kind == H::List ? "list" : size ? "size" : "tuple", b.getArrayAttr(structures));
  }
  // Anything else (an object or function the program made, a number from a tensor's
  // value): built by the replay list, which describes such values.
  returnedValues.push_back(value);
  return tagged("replayed", b.getI64IntegerAttr(returnedValues.size() - 1));
}

LogicalResult Interpreter::flattenTensors(Var value, SmallVectorImpl<Value> &tensors, Location loc,
                                          bool allowReplayed) {
  // Constants are not tensors; outputStructure returns them.
  if (value->is(K::None) || value->is(K::Bool) || value->is(K::Str) || value->is(K::Float) ||
      (value->is(K::Int) && value->getConstantInt()))
    return success();
  if (value->is(K::Tensor)) {
    if (value->number != Variable::Number::None) {
      if (allowReplayed)
        return success();
      return error(loc) << "the program returns a Python number computed from a tensor's "
                           "value (Tensor.item()) where tgc returns tensors only";
    }
    tensors.push_back(heap.get(value->object).tensor);
    return success();
  }
  std::optional<H> kind =
      value->is(K::Object) ? std::optional(heap.get(value->object).kind) : std::nullopt;
  if (kind == H::Dict) {
    for (const auto &entry : heap.get(value->object).entries)
      if (failed(flattenTensors(entry.second, tensors, loc, allowReplayed)))
        return failure();
    return success();
  }
  if (allowReplayed && isReplayedTuple(value))
    return success(); // its tensors are the replay's (outputStructure)
  if (value->is(K::Tuple) || kind == H::List) {
    FailureOr<std::vector<Var>> items = unpack(value, loc);
    if (failed(items))
      return failure();
    for (const Var &item : *items)
      if (failed(flattenTensors(item, tensors, loc, allowReplayed)))
        return failure();
    return success();
  }
  if (allowReplayed)
    return success();
  return error(loc) << "the program returns a value that is not a tensor (or a tuple, list or "
                       "dict of them) where tgc returns tensors only";
}
