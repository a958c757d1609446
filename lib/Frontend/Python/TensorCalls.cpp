// Tensors in the bytecode interpreter: torch calls become tgc ops through the shared
// ATen call builder; attributes (shape, dtype, device) read the fake-tensor types; indexing
// becomes views.
#include "Interpreter.h"

#include "Frontend/Common/DTypes.h"
#include "Frontend/Common/SymbolicSizes.h"
#include "TorchFunctions.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

static BaseTensorType tensorType(const Heap &heap, const Var &tensor) {
  return llvm::cast<BaseTensorType>(heap.get(tensor->object).tensor.getType());
}

FailureOr<AtenValue> Interpreter::toAtenValue(Var value, Location loc) {
  switch (value->kind) {
  case K::None:
    return AtenValue::none();
  case K::Tensor:
    return AtenValue::tensor(heap.get(value->object).tensor);
  case K::Bool:
    return AtenValue::boolean(value->boolValue);
  case K::Int: {
    AtenValue integer = AtenValue::integer(value->size);
    if (!value->getConstantInt()) {
      FailureOr<Value> computed = materializeSize(value->size, loc);
      if (failed(computed))
        return failure();
      integer.values.push_back(*computed);
    }
    return integer;
  }
  case K::Float:
    return AtenValue::floating(value->floatValue);
  case K::Str:
    return AtenValue::str(value->name);
  case K::DType:
    if (!value->type)
      return error(loc) << "dtype torch." << value->name << " is not supported";
    return AtenValue::dtype(value->type);
  case K::Device: {
    llvm::StringRef device = value->name;
    if (device == "cpu")
      return AtenValue::device(Attribute());
    auto [type, index] = device.split(':');
    int64_t ordinal = 0;
    if (!index.empty() && index.getAsInteger(10, ordinal))
      return error(loc) << "malformed device '" << device << "'";
    return AtenValue::device(DeviceAttr::get(ctx, type, ordinal));
  }
  case K::External:
    // torch.channels_last, torch.preserve_format, ...
    if (llvm::StringRef name = value->name; name.consume_front("torch."))
      if (std::optional<MemoryFormat> format = parseMemoryFormat(name))
        return AtenValue::memoryFormat(*format);
    break;
  default:
    break;
  }
  std::optional<H> kind =
      value->is(K::Object) ? std::optional(heap.get(value->object).kind) : std::nullopt;
  if (value->is(K::Tuple) || kind == H::List) {
    FailureOr<std::vector<Var>> items = unpack(value, loc);
    if (failed(items))
      return failure();
    auto all = [&](K k) {
      return llvm::all_of(*items, [&](const Var &item) { return item->is(k); });
    };
    if (all(K::Tensor)) {
      SmallVector<Value> tensors;
      for (const Var &item : *items)
        tensors.push_back(heap.get(item->object).tensor);
      return AtenValue::tensors(tensors);
    }
    // Ints, and int numbers from Tensor.item() (as unbacked sizes, at least 0).
    auto isIntNumber = [](const Var &item) {
      return item->is(K::Tensor) && item->number == Variable::Number::Int;
    };
    if (llvm::all_of(*items,
                     [&](const Var &item) { return item->is(K::Int) || isIntNumber(item); })) {
      SmallVector<AffineExpr> sizes;
      for (const Var &item : *items) {
        Var size = item;
        if (isIntNumber(item)) {
          FailureOr<Var> unbacked = numberAsSize(item, Var(), Var(), Var(), loc);
          if (failed(unbacked))
            return failure();
          size = *unbacked;
        }
        sizes.push_back(size->size);
      }
      return AtenValue::ints(sizes);
    }
    if (all(K::Bool)) {
      SmallVector<bool> bools;
      for (const Var &item : *items)
        bools.push_back(item->boolValue);
      return AtenValue::boolList(bools);
    }
    if (llvm::all_of(*items, [](const Var &item) { return item->getNumber().has_value(); })) {
      SmallVector<double> floats;
      for (const Var &item : *items)
        floats.push_back(*item->getNumber());
      return AtenValue::floatList(floats);
    }
  }
  return error(loc) << "cannot pass this value to a torch function";
}

/// Computes a symbolic size as an i64 SSA value (frontend::materializeSize), with the
/// unbacked symbols the program bound so far.
FailureOr<Value> Interpreter::materializeSize(AffineExpr size, Location loc) {
  return frontend::materializeSize(
      builder, loc, size, [&](unsigned symbol) { return unbackedValues.lookup(symbol); },
      [&] { return error(loc); });
}

Var Interpreter::newTensorObject(Value value) {
  HeapObject tensor;
  tensor.kind = H::Tensor;
  tensor.tensor = value;
  return makeTensorObject(newObject(std::move(tensor)));
}

Var Interpreter::resultsToVar(ValueRange values) {
  std::vector<Var> results;
  for (Value result : values)
    results.push_back(newTensorObject(result));
  if (results.empty())
    return makeNone();
  if (results.size() == 1)
    return results[0];
  return makeTuple(std::move(results));
}

FailureOr<Var> Interpreter::buildAten(llvm::StringRef target, std::vector<AtenArgument> arguments,
                                      Location loc) {
  auto errorFn = [&]() { return error(loc) << target << ": "; };
  if (failed(applyAutocast(atenBuilder, loc, autocastRegions, target, arguments, errorFn)))
    return failure();
  FailureOr<SmallVector<Value>> results =
      atenBuilder.buildResults(loc, target, std::move(arguments), 0, errorFn);
  if (failed(results))
    return failure();
  return resultsToVar(*results);
}

/// `fn(..., out=t)`: the functional result is written into `t` (converted to its
/// dtype) when the sizes agree. Otherwise PyTorch resizes `t`: the tensor object gets
/// the result as a new value with new metadata, which every alias of the object sees.
/// For a tensor from outside the program (an input) that is a side effect: the replay
/// resizes the caller's tensor and writes the value into it (docs/replay.md).
FailureOr<Var> Interpreter::callWithOut(llvm::StringRef qualifiedName, CallArguments arguments,
                                        Var out, Location loc) {
  FailureOr<Var> result = callTorchFunction(qualifiedName, arguments, loc);
  if (failed(result))
    return failure();
  if (!(*result)->is(K::Tensor) || !out->is(K::Tensor))
    return error(loc) << qualifiedName << "(out=...) needs a tensor result and a tensor out";
  auto outType = tensorType(heap, out), resultType = tensorType(heap, *result);
  if (outType.getSizes() == resultType.getSizes()) {
    CallArguments copy{{out, *result}, {}};
    FailureOr<Var> written = callTorchFunction("torch.Tensor.copy_", copy, loc);
    if (failed(written))
      return failure();
    return out;
  }
  if (outType.getDtype() != resultType.getDtype()) {
    CallArguments cast{{*result}, {{"dtype", makeDType(outType.getDtype())}}};
    result = callTorchFunction("torch.Tensor.to", cast, loc);
    if (failed(result))
      return failure();
  }
  Value resized = heap.get((*result)->object).tensor;
  mutateObject(out->object, SideEffect::Kind::Resize, "", nullptr, loc).tensor = resized;
  return out;
}

/// The memory format a bound call names (its `memory_format` argument), if any.
static std::optional<MemoryFormat> memoryFormatArgument(const BoundCall &call) {
  for (const AtenArgument &argument : call.arguments)
    if (argument.name == "memory_format" && argument.value.kind == AtenValue::Kind::MemoryFormat)
      return parseMemoryFormat(argument.value.string);
  return std::nullopt;
}

/// Whether `call` (a to / contiguous / type_as conversion) of a tensor of `type` keeps
/// the tensor as it is, so that ATen returns `self`: the same dtype and device, no
/// `copy=True`, and a memory format the tensor has (to: the one suggest_memory_format
/// reads from its strides, or preserve_format; contiguous: is_contiguous in it).
static bool convertsNothing(BaseTensorType type, const BoundCall &call) {
  bool contiguous = call.target == "aten.contiguous.default";
  if (!contiguous &&
      !llvm::is_contained({"aten.to.dtype", "aten._to_copy.default", "aten.type_as.default"},
                          call.target))
    return false;
  const TensorMeta &meta = type.getMeta();
  // contiguous() asks for contiguous_format unless it names another.
  std::optional<MemoryFormat> format = memoryFormatArgument(call);
  if (contiguous && !format)
    format = MemoryFormat::Contiguous;
  for (const AtenArgument &argument : call.arguments) {
    const AtenValue &value = argument.value;
    if (value.kind == AtenValue::Kind::None || argument.name == "self" ||
        argument.name == "non_blocking" || argument.name == "memory_format")
      continue;
    if (argument.name == "dtype" && value.kind == AtenValue::Kind::DType) {
      if (value.type != meta.dtype)
        return false;
    } else if (argument.name == "device" && value.kind == AtenValue::Kind::Device) {
      if (value.attribute != meta.device)
        return false;
    } else if (argument.name == "copy" && value.kind == AtenValue::Kind::Bool) {
      if (value.boolValue)
        return false;
    } else if (argument.name == "other" && value.kind == AtenValue::Kind::Tensor) {
      auto other = cast<BaseTensorType>(value.values.front().getType());
      if (other.getDtype() != meta.dtype || other.getMeta().device != meta.device)
        return false;
    } else {
      return false; // an argument this rule does not know
    }
  }
  if (!format || *format == MemoryFormat::Preserve)
    return true;
  return contiguous ? isContiguousAs(meta.sizes, meta.strides, *format)
                    : suggestMemoryFormat(meta.sizes, meta.strides) == *format;
}

FailureOr<Var> Interpreter::callTorchFunction(llvm::StringRef qualifiedName,
                                              CallArguments &arguments, Location loc) {
  auto outKeyword = llvm::find_if(arguments.keywords, [](auto &k) { return k.first == "out"; });
  if (outKeyword != arguments.keywords.end() && !outKeyword->second->is(K::None)) {
    Var out = outKeyword->second;
    CallArguments functional = arguments;
    functional.keywords.erase(functional.keywords.begin() +
                              (outKeyword - arguments.keywords.begin()));
    return callWithOut(qualifiedName, std::move(functional), out, loc);
  }
  std::vector<AtenValue> positional;
  for (const Var &arg : arguments.positional) {
    FailureOr<AtenValue> value = toAtenValue(arg, loc);
    if (failed(value))
      return failure();
    positional.push_back(std::move(*value));
  }
  std::vector<AtenArgument> keywords;
  for (auto &[name, arg] : arguments.keywords) {
    FailureOr<AtenValue> value = toAtenValue(arg, loc);
    if (failed(value))
      return failure();
    keywords.push_back({name, std::move(*value)});
  }
  // tgc's table first; then the overloads the trace recorded (torch.ops operators, and
  // the ATen operator of a torch builtin's name) that tgc lowers: for a callable the
  // table lacks, or arguments its entry does not take (`x.round(decimals=1)`).
  auto recorded = operatorOverloads.find(qualifiedName);
  bool known = isKnownTorchFunction(qualifiedName);
  std::vector<OperatorOverload> lowered;
  if (recorded != operatorOverloads.end()) {
    for (const OperatorOverload &overload : recorded->second)
      if (atenBuilder.supports(overload.target))
        lowered.push_back(overload);
    if (lowered.empty() && !known) {
      llvm::StringRef op = llvm::StringRef(recorded->second.front().target).rsplit('.').first;
      auto [ns, opName] = op.split('.');
      if (qualifiedName.starts_with("torch.ops."))
        return error(loc) << qualifiedName << ": tgc has no lowering of the operator " << ns
                          << "::" << opName
                          << " (a custom operator's Python code cannot run in a compiled "
                             "program)";
      return error(loc) << "graph break: " << qualifiedName
                        << " is not supported (tgc has no lowering of " << ns << "::" << opName
                        << ")";
    }
  }
  // The table's entry binds first, then the lowered overloads; when neither takes the
  // arguments, the table's reason is the one reported.
  auto bind = [&]() -> std::optional<llvm::Expected<BoundCall>> {
    std::optional<llvm::Expected<BoundCall>> byTable;
    if (known)
      byTable = bindTorchCall(qualifiedName, positional, keywords);
    if (lowered.empty() || (byTable && *byTable))
      return byTable;
    llvm::Expected<BoundCall> bySchema =
        bindOperatorCall(qualifiedName, lowered, positional, keywords);
    if (!byTable)
      return std::move(bySchema);
    if (!bySchema) {
      llvm::consumeError(bySchema.takeError());
      return byTable;
    }
    llvm::consumeError(byTable->takeError());
    return std::move(bySchema);
  };
  std::optional<llvm::Expected<BoundCall>> bound = bind();
  if (!bound)
    return error(loc) << "graph break: " << qualifiedName << " is not supported";
  if (!*bound) {
    // Int numbers from Tensor.item() where no overload takes a tensor: sizes (`SymInt`),
    // bound as unbacked symbols (`torch.zeros(n, 4)`).
    std::string why = llvm::toString(bound->takeError());
    auto isIntNumber = [](const Var &v) {
      return v->is(K::Tensor) && v->number == Variable::Number::Int;
    };
    bool retry = llvm::any_of(arguments.positional, isIntNumber) ||
                 llvm::any_of(arguments.keywords, [&](auto &k) { return isIntNumber(k.second); });
    if (!retry)
      return error(loc) << qualifiedName << ": " << why;
    auto asSize = [&](const Var &arg, AtenValue &value) -> LogicalResult {
      if (!isIntNumber(arg))
        return success();
      FailureOr<Var> size = numberAsSize(arg, Var(), Var(), Var(), loc);
      FailureOr<AtenValue> converted =
          failed(size) ? FailureOr<AtenValue>(failure()) : toAtenValue(*size, loc);
      if (failed(converted))
        return failure();
      value = std::move(*converted);
      return success();
    };
    for (auto [arg, value] : llvm::zip(arguments.positional, positional))
      if (failed(asSize(arg, value)))
        return failure();
    for (auto [arg, value] : llvm::zip(arguments.keywords, keywords))
      if (failed(asSize(arg.second, value.value)))
        return failure();
    bound = bind();
    if (!*bound) {
      llvm::consumeError(bound->takeError());
      return error(loc) << qualifiedName << ": " << why;
    }
  }
  llvm::StringRef target = (*bound)->target;
  if (target == "aten.contiguous.default" &&
      memoryFormatArgument(**bound) == MemoryFormat::Preserve)
    return error(loc) << "preserve memory format is unsupported by the contiguous operator "
                         "(RuntimeError)";
  // A Tensor method's conversion that changes nothing returns the tensor itself, as
  // ATen's to() and contiguous() do: a write through the result is a write to it.
  if (qualifiedName.starts_with("torch.Tensor.") && !arguments.positional.empty() &&
      arguments.positional[0]->is(K::Tensor) &&
      convertsNothing(tensorType(heap, arguments.positional[0]), **bound))
    return arguments.positional[0];
  FailureOr<Var> result = buildAten(target, std::move((*bound)->arguments), loc);
  if (failed(result))
    return failure();
  // The Python callable returns fewer values than some ops compute (batch_norm's
  // statistics). Where the schema says Tensor[], torch's Python bindings return a tuple
  // (torch.split, Tensor.unbind) and torch.ops operators a list.
  bool pythonList = qualifiedName.starts_with("torch.ops.");
  auto sequence = [&](std::vector<Var> items) {
    return pythonList ? makeList(std::move(items)) : makeTuple(std::move(items));
  };
  if ((*result)->is(K::Tuple)) {
    std::vector<Var> items = (*result)->items;
    if ((*bound)->returnsList) {
      result = sequence(std::move(items));
    } else if ((*bound)->numReturns == 1) {
      result = items.front();
    } else if (items.size() > (*bound)->numReturns) {
      items.resize((*bound)->numReturns);
      result = makeTuple(std::move(items));
    }
  } else if ((*bound)->returnsList && (*result)->is(K::Tensor)) {
    result = sequence({*result});
  }
  // (values, indices) pairs are torch.return_types named tuples (`x.topk(3).values`).
  llvm::StringRef pythonName = qualifiedName.rsplit('.').second;
  if ((*result)->is(K::Tuple) && (*result)->items.size() == 2 && !(*result)->tupleClass &&
      llvm::is_contained({"topk", "sort", "kthvalue", "mode", "median", "nanmedian", "cummax",
                          "cummin", "aminmax"},
                         pythonName)) {
    Variable named = **result;
    named.tupleClass = makeExternal(("torch.return_types." + pythonName).str());
    result = makeVar(std::move(named));
  }
  // In-place ops (`add_`, `t_`) return their input: the same tensor object, now seen
  // through the op's result (which carries the new metadata when it changed).
  llvm::StringRef opName = target.drop_front(target.find('.') + 1).split('.').first;
  bool inPlace = opName.ends_with("_") && !opName.ends_with("__");
  if (inPlace && !arguments.positional.empty() && arguments.positional[0]->is(K::Tensor) &&
      (*result)->is(K::Tensor)) {
    Var self = arguments.positional[0];
    heap.mutate(self->object).tensor = heap.get((*result)->object).tensor;
    return self;
  }
  // With grad disabled a new tensor does not require grad (in-place results keep
  // their tensor's).
  if (!isGradEnabled() && (*result)->is(K::Tensor) &&
      cast<BaseTensorType>(heap.get((*result)->object).tensor.getType()).getMeta().requiresGrad &&
      qualifiedName != "torch.Tensor.detach") {
    CallArguments detach{{*result}, {}};
    return callTorchFunction("torch.Tensor.detach", detach, loc);
  }
  return result;
}

FailureOr<Var> Interpreter::tensorAttribute(Var tensor, llvm::StringRef name, Location loc) {
  BaseTensorType type = tensorType(heap, tensor);
  auto sizesTuple = [&]() {
    std::vector<Var> sizes;
    for (AffineExpr size : type.getSizes())
      sizes.push_back(makeInt(size));
    return makeSize(std::move(sizes));
  };
  if (name == "shape")
    return sizesTuple();
  if (name == "ndim")
    return makeInt(type.getSizes().size(), ctx);
  if (name == "dtype")
    return makeDType(type.getDtype());
  if (name == "device") {
    Variable device;
    device.kind = K::Device;
    device.name = "cpu";
    if (auto attr = llvm::dyn_cast_or_null<DeviceAttr>(type.getMeta().device))
      device.name = (attr.getKind() + ":" + std::to_string(attr.getIndex())).str();
    return makeVar(std::move(device));
  }
  if (name == "requires_grad")
    return makeBool(type.getMeta().requiresGrad);
  if (name == "is_cuda")
    return makeBool(type.getMeta().device != nullptr);
  if (name == "is_cpu")
    return makeBool(type.getMeta().device == nullptr);
  // The layout and backend flags of a dense strided tensor, which every tensor tgc
  // compiles is (torch.Tensor's properties, not methods).
  if (llvm::is_contained({"is_nested", "is_sparse", "is_sparse_csr", "is_quantized", "is_meta",
                          "is_mkldnn", "is_mps", "is_xpu", "is_ipu", "is_hpu", "is_mtia", "is_maia",
                          "is_vulkan"},
                         name))
    return makeBool(false);
  // The transposes (H and mH are T and mT: tgc's tensors are real): T reverses the
  // dimensions, mT swaps the last two.
  if (name == "T" || name == "mT" || name == "H" || name == "mH") {
    if (name == "T" || name == "H") {
      std::vector<Var> reversed;
      for (int64_t d = type.getSizes().size() - 1; d >= 0; --d)
        reversed.push_back(makeInt(d, ctx));
      CallArguments arguments{{tensor, makeTuple(std::move(reversed))}, {}};
      return callTorchFunction("torch.Tensor.permute", arguments, loc);
    }
    if (type.getSizes().size() < 2)
      return error(loc) << "tensor." << name << " is only supported on matrices or batches of "
                        << "matrices. Got " << type.getSizes().size() << "-D tensor.";
    CallArguments arguments{{tensor, makeInt(-2, ctx), makeInt(-1, ctx)}, {}};
    return callTorchFunction("torch.Tensor.transpose", arguments, loc);
  }
  if (Var attribute = heap.get(tensor->object).getAttribute(name))
    return attribute;
  return makeMethod(makeExternal(("torch.Tensor." + name).str()), tensor);
}

/// A `Tensor?[]` argument: the tensors, with a null entry where a dimension has none.
static AtenValue optionalTensorList(ArrayRef<Value> tensors) {
  AtenValue list = AtenValue::tensors({});
  for (Value t : tensors) {
    list.bools.push_back(static_cast<bool>(t));
    if (t)
      list.values.push_back(t);
  }
  return list;
}

FailureOr<Var> Interpreter::tensorIndex(Var tensor, Var key, Location loc,
                                        SmallVectorImpl<Value> *advancedOut) {
  std::vector<Var> indices = key->is(K::Tuple) ? key->items : std::vector<Var>{key};
  int64_t rank = tensorType(heap, tensor).getSizes().size();
  // Ellipsis expands to the dimensions the other indices do not consume.
  int64_t consumed =
      llvm::count_if(indices, [](const Var &i) { return !i->is(K::None) && !i->is(K::Ellipsis); });
  Var current = tensor;
  int64_t dim = 0;
  // The tensor indices by dimension of `current` (null where none).
  SmallVector<Value> advanced;
  auto atenInt = [&](int64_t i) { return AtenValue::integer(getAffineConstantExpr(i, ctx)); };
  for (Var index : indices) {
    // A list of ints is an index tensor (`x[[0, 2]]`, `x[:, cols]`), as torch converts it.
    if (heap.kindOf(index) == H::List) {
      FailureOr<Var> converted =
          call(makeExternal("torch.tensor"), CallArguments{{index}, {}}, loc);
      if (failed(converted))
        return failure();
      index = *converted;
    }
    Value self = heap.get(current->object).tensor;
    FailureOr<Var> next = failure();
    if (index->is(K::Ellipsis)) {
      dim += rank - consumed;
      continue;
    }
    if (index->is(K::None)) {
      next = buildAten("aten.unsqueeze.default",
                       {{"self", AtenValue::tensor(self)}, {"dim", atenInt(dim)}}, loc);
      ++dim;
    } else if (index->is(K::Int)) {
      next = buildAten("aten.select.int",
                       {{"self", AtenValue::tensor(self)},
                        {"dim", atenInt(dim)},
                        {"index", AtenValue::integer(index->size)}},
                       loc);
    } else if (index->is(K::Slice)) {
      std::vector<AtenArgument> sliceArguments = {{"self", AtenValue::tensor(self)},
                                                  {"dim", atenInt(dim)}};
      const char *names[] = {"start", "end", "step"};
      std::vector<Var> parts = index->items;
      // Numbers from Tensor.item() become unbacked sizes, clamped as Python clamps
      // slice bounds (and the end to at least the start, so the length is not negative).
      auto isNumber = [](const Var &v) {
        return v->is(K::Tensor) && v->number != Variable::Number::None;
      };
      if (isNumber(parts[0]) || isNumber(parts[1])) {
        Var length = makeInt(tensorType(heap, current).getSizes()[dim]);
        Var end = parts[1]->is(K::None) ? length : parts[1];
        if (isNumber(parts[0])) {
          FailureOr<Var> start =
              numberAsSize(parts[0], Var(), isNumber(end) ? length : end, length, loc);
          if (failed(start))
            return failure();
          parts[0] = *start;
        }
        if (isNumber(parts[1])) {
          FailureOr<Var> bound =
              numberAsSize(parts[1], parts[0]->is(K::None) ? Var() : parts[0], length, length, loc);
          if (failed(bound))
            return failure();
          parts[1] = *bound;
        }
      }
      for (auto [part, partName] : llvm::zip(parts, names)) {
        if (part->is(K::None))
          continue;
        if (!part->is(K::Int))
          return error(loc) << "a slice bound of a tensor index must be an int";
        sliceArguments.push_back({partName, AtenValue::integer(part->size)});
      }
      next = buildAten("aten.slice.Tensor", std::move(sliceArguments), loc);
      ++dim;
    } else if (index->is(K::Tensor)) {
      // Advanced indexing: the tensor indices are applied together, after the basic ones,
      // by one index.Tensor at the dimensions they stand at (as torch's indexing does).
      // An int computed from tensor values (item()) is a 0-d int64 index, which drops
      // its dimension like an int.
      Value t = heap.get(index->object).tensor;
      Type dtype = cast<BaseTensorType>(t.getType()).getDtype();
      if (index->number == Variable::Number::Float || index->number == Variable::Number::Bool ||
          !dtype.isInteger() || dtype.isInteger(1) || dtype.isUnsignedInteger(8))
        return error(loc) << "tensor indexing with a boolean or float index is not supported "
                             "(a mask gives a data-dependent shape; index with integers, or "
                             "use torch.where)";
      advanced.resize(dim + 1);
      advanced[dim] = t;
      ++dim;
      continue;
    } else {
      return error(loc) << "tensor indexing with this index is not supported yet";
    }
    if (failed(next))
      return failure();
    current = *next;
  }
  if (advancedOut) {
    advancedOut->assign(advanced.begin(), advanced.end());
    return current;
  }
  if (advanced.empty())
    return current;
  return buildAten("aten.index.Tensor",
                   {{"self", AtenValue::tensor(heap.get(current->object).tensor)},
                    {"indices", optionalTensorList(advanced)}},
                   loc);
}

/// Whether `index` is a boolean tensor (a mask), not a Python bool.
static bool isMask(const Heap &heap, const Var &index) {
  return index->is(K::Tensor) && index->number == Variable::Number::None &&
         tensorType(heap, index).getDtype().isInteger(1);
}

FailureOr<Var> Interpreter::indexPutValue(Var value, Type dtype, Location loc) {
  if (!value->is(K::Tensor)) {
    CallArguments full{{makeTuple({}), value}, {{"dtype", makeDType(dtype)}}};
    return callTorchFunction("torch.full", full, loc);
  }
  if (Type source = tensorType(heap, value).getDtype(); source != dtype)
    return error(loc) << "index put requires the source and destination dtypes match, got " << dtype
                      << " for the destination and " << source << " for the source";
  return value;
}

LogicalResult Interpreter::storeMasked(Var tensor, Var key, Var value, Location loc) {
  std::vector<Var> indices = key->is(K::Tuple) ? key->items : std::vector<Var>{key};
  auto maskAt = llvm::find_if(indices, [&](const Var &i) { return isMask(heap, i); });
  if (llvm::any_of(indices, [&](const Var &i) {
        return i->is(K::Ellipsis) || (i->is(K::Tensor) && i != *maskAt);
      }))
    return error(loc) << "assigning through a boolean mask together with '...' or other "
                         "tensor indices is not supported (a mask with ints, slices and "
                         "None is)";
  // The view of the other indices, with the mask's dimensions as full slices, where the
  // mask's dimensions start at `first`.
  Var mask = *maskAt;
  auto maskType = cast<BaseTensorType>(heap.get(mask->object).tensor.getType());
  int64_t maskRank = maskType.getSizes().size();
  int64_t first = llvm::count_if(llvm::make_range(indices.begin(), maskAt),
                                 [](const Var &i) { return i->is(K::Slice) || i->is(K::None); });
  std::vector<Var> basic(indices.begin(), maskAt);
  for (int64_t d = 0; d < maskRank; ++d) {
    Variable all;
    all.kind = K::Slice;
    all.items = {makeNone(), makeNone(), makeNone()};
    basic.push_back(makeVar(std::move(all)));
  }
  basic.insert(basic.end(), std::next(maskAt), indices.end());
  FailureOr<Var> view = tensorIndex(tensor, makeTuple(basic), loc);
  if (failed(view))
    return failure();
  ArrayRef<AffineExpr> sizes = tensorType(heap, *view).getSizes();
  int64_t rank = sizes.size(), trailing = rank - first - maskRank;
  if (trailing < 0 || ArrayRef(sizes).slice(first, maskRank) != maskType.getSizes())
    return error(loc) << "IndexError: the shape of the mask " << maskType
                      << " does not match the shape of the indexed tensor "
                      << tensorType(heap, *view);
  Type dtype = tensorType(heap, *view).getDtype();
  auto torchCall = [&](llvm::StringRef name, std::vector<Var> args) {
    CallArguments arguments{std::move(args), {}};
    return callTorchFunction(name, arguments, loc);
  };
  FailureOr<Var> converted = indexPutValue(value, dtype, loc);
  if (failed(converted))
    return failure();
  value = *converted;
  // The value broadcasts to the selected elements, [sizes before, count, sizes after]:
  // the count's dimension (when the value reaches it) must be 1, and becomes the mask's
  // dimensions, so that where() broadcasts it over them.
  ArrayRef<AffineExpr> valueSizes = tensorType(heap, value).getSizes();
  int64_t valueRank = valueSizes.size();
  if (valueRank > trailing) {
    auto count = dyn_cast<AffineConstantExpr>(valueSizes[valueRank - trailing - 1]);
    if (!count || count.getValue() != 1)
      return error(loc) << "assigning a value of sizes " << tensorType(heap, value)
                        << " through a boolean mask is not supported (its size at the "
                           "mask's dimension depends on how many elements the mask "
                           "selects; a value that broadcasts over them is supported)";
    std::vector<Var> shape;
    for (int64_t d = 0; d < valueRank; ++d) {
      if (d != valueRank - trailing - 1) {
        shape.push_back(makeInt(valueSizes[d]));
        continue;
      }
      for (int64_t m = 0; m < maskRank; ++m)
        shape.push_back(makeInt(1, ctx));
    }
    FailureOr<Var> reshaped = torchCall("torch.Tensor.reshape", {value, makeTuple(shape)});
    if (failed(reshaped))
      return failure();
    value = *reshaped;
  }
  // The mask over the view's dimensions: size 1 before and after its own.
  std::vector<Var> maskShape;
  for (int64_t d = 0; d < rank; ++d)
    maskShape.push_back(d >= first && d < first + maskRank ? makeInt(sizes[d]) : makeInt(1, ctx));
  FailureOr<Var> broadcastMask = torchCall("torch.Tensor.reshape", {mask, makeTuple(maskShape)});
  if (failed(broadcastMask))
    return failure();
  FailureOr<Var> merged = torchCall("torch.where", {*broadcastMask, value, *view});
  if (failed(merged))
    return failure();
  return success(succeeded(torchCall("torch.Tensor.copy_", {*view, *merged})));
}

LogicalResult Interpreter::storeTensorIndex(Var tensor, Var key, Var value, Location loc) {
  // A boolean mask: a where() over the view of the other indices.
  if (isMask(heap, key) || (key->is(K::Tuple) && llvm::any_of(key->items, [&](const Var &i) {
                              return isMask(heap, i);
                            })))
    return storeMasked(tensor, key, value, loc);
  SmallVector<Value> advanced;
  FailureOr<Var> view = tensorIndex(tensor, key, loc, &advanced);
  if (failed(view))
    return failure();
  if (advanced.empty()) {
    CallArguments arguments{{*view, value}, {}};
    return success(succeeded(callTorchFunction(
        value->is(K::Tensor) ? "torch.Tensor.copy_" : "torch.Tensor.fill_", arguments, loc)));
  }
  // Tensor indices: torch's setitem writes with index_put_.
  Type dtype = tensorType(heap, *view).getDtype();
  FailureOr<Var> converted = indexPutValue(value, dtype, loc);
  if (failed(converted))
    return failure();
  value = *converted;
  FailureOr<Var> written =
      buildAten("aten.index_put_.default",
                {{"self", AtenValue::tensor(heap.get((*view)->object).tensor)},
                 {"indices", optionalTensorList(advanced)},
                 {"values", AtenValue::tensor(heap.get(value->object).tensor)}},
                loc);
  if (failed(written))
    return failure();
  // The view now holds the written values (its base sees them through the alias).
  heap.mutate((*view)->object).tensor = heap.get((*written)->object).tensor;
  return success();
}
