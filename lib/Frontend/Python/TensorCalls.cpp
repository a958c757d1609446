// Tensors in the bytecode interpreter: torch calls become tgc ops through the shared
// ATen call builder; metadata queries (shape, dtype, size()) read the fake-tensor types.
#include "Interpreter.h"

#include "Frontend/Common/DTypes.h"
#include "TorchFunctions.h"
#include "tgc/Dialect/TgcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

static std::optional<H> heapKind(const Heap &heap, const Var &v) { return heap.kindOf(v); }

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
  default:
    break;
  }
  std::optional<H> kind = value->is(K::Object) ? std::optional(heap.get(value->object).kind)
                                                : std::nullopt;
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
    if (llvm::all_of(*items, [&](const Var &item) {
          return item->is(K::Int) || isIntNumber(item);
        })) {
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

/// Computes a symbolic size as an i64 SSA value: symbols are read from the graph
/// inputs that define them (`tgc.sym_size`), and the expression becomes arith ops.
FailureOr<Value> Interpreter::materializeSize(AffineExpr size, Location loc) {
  if (auto constant = llvm::dyn_cast<AffineConstantExpr>(size))
    return arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(constant.getValue()))
        .getResult();
  if (auto symbol = llvm::dyn_cast<AffineSymbolExpr>(size)) {
    if (Value unbacked = unbackedValues.lookup(symbol.getPosition()))
      return unbacked;
    auto func = builder.getInsertionBlock()->getParent()->getParentOfType<func::FuncOp>();
    if (!func)
      return error(loc) << "symbolic size outside a function";
    // At the function's entry, so that inside a torch.cond branch the size is a value
    // from outside, which the branch lifts as the symbol (Cond.cpp).
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&func.getBody().front());
    for (BlockArgument arg : func.getArguments()) {
      auto type = llvm::dyn_cast<BaseTensorType>(arg.getType());
      if (!type)
        continue;
      for (auto [dim, argSize] : llvm::enumerate(type.getSizes()))
        if (argSize == size)
          return SymSizeOp::create(builder, loc, arg, static_cast<int64_t>(dim)).getResult();
    }
    return error(loc) << "no graph input has the symbolic size s" << symbol.getPosition();
  }
  auto binary = llvm::cast<AffineBinaryOpExpr>(size);
  FailureOr<Value> lhs = materializeSize(binary.getLHS(), loc);
  FailureOr<Value> rhs = failed(lhs) ? FailureOr<Value>(failure())
                                     : materializeSize(binary.getRHS(), loc);
  if (failed(rhs))
    return failure();
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::Mul:
    return arith::MulIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::FloorDiv:
    return arith::FloorDivSIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::CeilDiv:
    return arith::CeilDivSIOp::create(builder, loc, *lhs, *rhs).getResult();
  case AffineExprKind::Mod: {
    // Python's %: the result has the divisor's sign (sizes are non-negative anyway).
    Value rem = arith::RemSIOp::create(builder, loc, *lhs, *rhs);
    Value shifted = arith::AddIOp::create(builder, loc, rem, *rhs);
    return arith::RemSIOp::create(builder, loc, shifted, *rhs).getResult();
  }
  default:
    return error(loc) << "cannot compute this symbolic size";
  }
}

Var Interpreter::resultsToVar(Operation *op) {
  std::vector<Var> results;
  for (Value result : op->getResults()) {
    HeapObject tensor;
    tensor.kind = H::Tensor;
    tensor.tensor = result;
    results.push_back(makeTensorObject(newObject(std::move(tensor))));
  }
  if (results.empty())
    return makeNone();
  if (results.size() == 1)
    return results[0];
  return makeTuple(std::move(results));
}

FailureOr<Var> Interpreter::buildAten(llvm::StringRef target, std::vector<AtenArgument> arguments,
                                      Location loc) {
  FailureOr<Operation *> op = atenBuilder.build(loc, target, std::move(arguments), 0,
                                                [&]() { return error(loc) << target << ": "; });
  if (failed(op))
    return failure();
  return resultsToVar(*op);
}

/// `fn(..., out=t)`: the functional result is written into `t` (converted to its
/// dtype) when the sizes agree. Otherwise PyTorch resizes `t`: a tensor the program
/// created then simply becomes the result (a new value with new metadata, which every
/// alias of the tensor object sees); resizing a graph input is an error, since the
/// caller's tensor cannot change its sizes.
FailureOr<Var> Interpreter::callWithOut(llvm::StringRef qualifiedName, CallArguments arguments,
                                        Var out, Location loc) {
  bool handled = false;
  FailureOr<Var> result = callTorchFunction(qualifiedName, arguments, loc, handled);
  if (failed(result))
    return failure();
  if (!(*result)->is(K::Tensor) || !out->is(K::Tensor))
    return error(loc) << qualifiedName << "(out=...) needs a tensor result and a tensor out";
  auto outType = tensorType(heap, out), resultType = tensorType(heap, *result);
  if (outType.getSizes() == resultType.getSizes()) {
    CallArguments copy{{out, *result}, {}};
    FailureOr<Var> written = callTorchFunction("torch.Tensor.copy_", copy, loc, handled);
    if (failed(written))
      return failure();
    return out;
  }
  if (heap.get(out->object).traceId >= 0)
    return error(loc) << qualifiedName
                      << "(out=...) would resize a tensor that exists outside the program";
  if (outType.getDtype() != resultType.getDtype()) {
    CallArguments cast{{*result}, {{"dtype", makeVar([&] {
                                       Variable dtype;
                                       dtype.kind = K::DType;
                                       dtype.type = outType.getDtype();
                                       return dtype;
                                     }())}}};
    result = callTorchFunction("torch.Tensor.to", cast, loc, handled);
    if (failed(result))
      return failure();
  }
  heap.mutate(out->object).tensor = heap.get((*result)->object).tensor;
  return out;
}

FailureOr<Var> Interpreter::callTorchFunction(llvm::StringRef qualifiedName,
                                              CallArguments &arguments, Location loc,
                                              bool &handled) {
  handled = isKnownTorchFunction(qualifiedName);
  if (!handled)
    return failure();
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
  std::optional<llvm::Expected<BoundCall>> bound =
      bindTorchCall(qualifiedName, positional, keywords);
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
    bound = bindTorchCall(qualifiedName, positional, keywords);
    if (!*bound) {
      llvm::consumeError(bound->takeError());
      return error(loc) << qualifiedName << ": " << why;
    }
  }
  llvm::StringRef target = (*bound)->target;
  FailureOr<Var> result = buildAten(target, std::move((*bound)->arguments), loc);
  if (failed(result))
    return failure();
  // The Python callable returns fewer values than some ops compute (batch_norm's
  // statistics), and lists where the schema says Tensor[].
  if ((*result)->is(K::Tuple)) {
    std::vector<Var> items = (*result)->items;
    if ((*bound)->returnsList) {
      result = makeList(std::move(items));
    } else if ((*bound)->numReturns == 1) {
      result = items.front();
    } else if (items.size() > (*bound)->numReturns) {
      items.resize((*bound)->numReturns);
      result = makeTuple(std::move(items));
    }
  } else if ((*bound)->returnsList && (*result)->is(K::Tensor)) {
    result = makeList({*result});
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
  // Under torch.no_grad() a new tensor does not require grad (in-place results keep
  // their tensor's).
  if (!gradModes.empty() && !gradModes.back() && (*result)->is(K::Tensor) &&
      cast<BaseTensorType>(heap.get((*result)->object).tensor.getType()).getMeta().requiresGrad &&
      qualifiedName != "torch.Tensor.detach") {
    CallArguments detach{{*result}, {}};
    return callTorchFunction("torch.Tensor.detach", detach, loc, handled);
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
  if (name == "dtype") {
    Variable dtype;
    dtype.kind = K::DType;
    dtype.type = type.getDtype();
    return makeVar(std::move(dtype));
  }
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
  if (name == "T" || name == "mT") {
    CallArguments arguments{{tensor}, {}};
    bool handled = false;
    return callTorchFunction(name == "T" ? "torch.Tensor.t" : "torch.Tensor.mT", arguments, loc,
                             handled);
  }
  if (Var attribute = heap.get(tensor->object).getAttribute(name))
    return attribute;
  return makeMethod(makeExternal(("torch.Tensor." + name).str()), tensor);
}

FailureOr<Var> Interpreter::callTorch(llvm::StringRef name, CallArguments &arguments,
                                      Location loc, bool &handled) {
  if (FailureOr<Var> r = callAutogradFunction(name, arguments, loc, handled); handled)
    return r;
  handled = true;
  std::vector<Var> &args = arguments.positional;
  if (name.starts_with("torch.autograd.graph.saved_tensors_hooks"))
    return callSavedTensorsHooks(name, arguments, loc);
  // max/min over a dim (values and indices), argmax/argmin.
  {
    llvm::StringRef op = name;
    bool method = op.consume_front("torch.Tensor.") || op.consume_front("torch.");
    bool withValues = op == "max" || op == "min";
    if (method && (withValues || op == "argmax" || op == "argmin") && !args.empty() &&
        args[0]->is(K::Tensor)) {
      Var dim = args.size() > 1 ? args[1] : Var(), keepdim = args.size() > 2 ? args[2] : Var();
      for (auto &[keyword, value] : arguments.keywords) {
        if (keyword == "dim" && !dim)
          dim = value;
        else if (keyword == "keepdim" && !keepdim)
          keepdim = value;
        else
          dim = makeNone(), keepdim = makeStr(keyword); // not ours: an unknown keyword
      }
      bool isOurs = args.size() <= 3 && (!keepdim || keepdim->is(K::Bool)) &&
                    (withValues ? dim && dim->is(K::Int) : !dim || dim->is(K::Int) ||
                                                               dim->is(K::None));
      if (isOurs) {
        Var x = args[0];
        int64_t d = 0;
        if (dim && dim->is(K::Int)) {
          std::optional<int64_t> constant = dim->getConstantInt();
          if (!constant)
            return error(loc) << name << "(): the dim must be a constant";
          d = *constant;
        } else { // argmax over all elements: of the flattened tensor
          CallArguments flatten{{x, makeTuple({makeInt(-1, ctx)})}, {}};
          bool flattened = false;
          FailureOr<Var> flat = callTorchFunction("torch.Tensor.reshape", flatten, loc, flattened);
          if (failed(flat))
            return failure();
          x = *flat;
        }
        return reduceWithIndices(x, d, keepdim && keepdim->boolValue,
                                 op == "max" || op == "argmax", withValues,
                                 ("torch.return_types." + op).str(), loc);
      }
    }
  }
  // Grad-mode context managers: `with torch.no_grad():`, `torch.enable_grad()`,
  // `torch.set_grad_enabled(b)`, `torch.inference_mode()`.
  for (llvm::StringRef manager : {"torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled",
                                  "torch.inference_mode", "torch.autograd.grad_mode.no_grad",
                                  "torch.autograd.grad_mode.enable_grad",
                                  "torch.autograd.grad_mode.set_grad_enabled",
                                  "torch.autograd.grad_mode.inference_mode"}) {
    if (name == manager) {
      bool enabled = manager.ends_with("enable_grad");
      if (manager.ends_with("set_grad_enabled") || manager.ends_with("inference_mode")) {
        Var mode = args.empty() ? makeBool(manager.ends_with("inference_mode")) : args[0];
        if (!mode->is(K::Bool))
          return error(loc) << name << "() needs a constant bool";
        enabled = manager.ends_with("inference_mode") ? !mode->boolValue : mode->boolValue;
      }
      HeapObject instance;
      instance.kind = H::Instance;
      instance.classObject = makeExternal(manager);
      instance.setAttribute("enabled", makeBool(enabled));
      return makeObject(newObject(std::move(instance)));
    }
    if (name == (manager + ".__enter__").str() || name == (manager + ".__exit__").str()) {
      if (args.empty() || heapKind(heap, args[0]) != H::Instance)
        return error(loc) << name << " needs the context manager";
      if (name.ends_with("__enter__")) {
        gradModes.push_back(heap.get(args[0]->object).getAttribute("enabled")->boolValue);
        return makeNone();
      }
      if (gradModes.empty())
        return error(loc) << name << " without __enter__";
      gradModes.pop_back();
      return makeBool(false);
    }
  }
  auto dimArgument = [&](const Var &dim, int64_t rank) -> FailureOr<int64_t> {
    std::optional<int64_t> d = dim->getConstantInt();
    std::optional<int64_t> normalized = d ? normalizeDim(*d, rank) : std::nullopt;
    if (!normalized)
      return error(loc) << "dimension out of range";
    return *normalized;
  };
  if (name.consume_front("torch.Tensor.") && !args.empty() && args[0]->is(K::Tensor)) {
    BaseTensorType type = tensorType(heap, args[0]);
    int64_t rank = type.getSizes().size();
    if (name == "size") {
      if (args.size() == 1 && arguments.keywords.empty()) {
        std::vector<Var> sizes;
        for (AffineExpr size : type.getSizes())
          sizes.push_back(makeInt(size));
        return makeSize(std::move(sizes));
      }
      Var dimVar = args.size() > 1 ? args[1] : arguments.keywords.at(0).second;
      FailureOr<int64_t> dim = dimArgument(dimVar, rank);
      if (failed(dim))
        return failure();
      return makeInt(type.getSizes()[*dim]);
    }
    if (name == "dim" || name == "ndimension")
      return makeInt(rank, ctx);
    if (name == "numel" || name == "nelement")
      return makeInt(type.getMeta().numel(ctx));
    if (name == "element_size")
      return makeInt(getElementBytes(type.getDtype()), ctx);
    if (name == "is_contiguous") {
      TensorMeta meta = type.getMeta();
      return makeBool(meta.strides.empty() ||
                      llvm::equal(meta.strides, TensorMeta::contiguousStrides(meta.sizes, ctx)));
    }
    if (name == "__len__") {
      if (rank == 0)
        return error(loc) << "len() of a 0-d tensor";
      return makeInt(type.getSizes()[0]);
    }
    if (name == "register_hook") {
      if (args.size() != 2)
        return error(loc) << "register_hook(hook) takes one hook";
      if (failed(applyGradHooks(args[0], {args[1]}, loc)))
        return failure();
      HeapObject handle;
      handle.kind = H::Opaque;
      handle.name = "torch.utils.hooks.RemovableHandle";
      return makeObject(newObject(std::move(handle)));
    }
    if (name == "item") {
      if (args.size() != 1)
        return error(loc) << "Tensor.item() takes no arguments";
      return tensorItem(args[0], loc);
    }
    if (name == "tolist" || name == "numpy" || name == "__bool__")
      return error(loc) << "graph break: Tensor." << name
                        << "() reads a tensor's values, which are not known at capture time";
    handled = false;
    return failure();
  }
  if (name == "torch.cond")
    return callCond(arguments, loc);
  if (name == "torch.is_tensor" && args.size() == 1)
    return makeBool(args[0]->is(K::Tensor));
  if (name == "torch.is_grad_enabled")
    return makeBool(gradModes.empty() || gradModes.back());
  if (name == "torch.jit.is_scripting" || name == "torch.jit.is_tracing" ||
      name == "torch._C._get_tracing_state" || name == "torch.compiler.is_compiling" ||
      name == "torch._dynamo.is_compiling")
    return name == "torch.compiler.is_compiling" || name == "torch._dynamo.is_compiling"
               ? makeBool(true)
               : (name == "torch._C._get_tracing_state" ? makeNone() : makeBool(false));
  if (name == "torch._C._has_torch_function" || name == "torch._C._has_torch_function_unary" ||
      name == "torch._C._has_torch_function_variadic" || name == "torch.overrides.has_torch_function" ||
      name == "torch.overrides.has_torch_function_unary" ||
      name == "torch.overrides.has_torch_function_variadic")
    return makeBool(false);
  if (name == "torch.nn.Module.__init__") {
    if (args.empty() || !args[0]->is(K::Object))
      return error(loc) << "nn.Module.__init__ without a module";
    for (const char *store : {"_parameters", "_buffers", "_modules", "_forward_hooks",
                              "_forward_pre_hooks", "_backward_hooks"}) {
      HeapObject dict;
      dict.kind = H::Dict;
      Var value = makeObject(newObject(std::move(dict)));
      if (failed(setAttribute(args[0], store, value, loc)))
        return failure();
    }
    if (failed(setAttribute(args[0], "training", makeBool(true), loc)))
      return failure();
    return makeNone();
  }
  if (name == "torch.nn.Module.add_module" || name == "torch.nn.Module.register_module") {
    if (args.size() != 3 || !args[1]->is(K::Str))
      return error(loc) << "add_module(name, module) needs a constant name";
    FailureOr<Var> modules = getAttribute(args[0], "_modules", loc);
    if (failed(modules) || failed(storeSubscript(*modules, args[1], args[2], loc)))
      return failure();
    return makeNone();
  }
  if (name == "torch.nn.Module.named_children" || name == "torch.nn.Module.children") {
    if (args.size() != 1)
      return error(loc) << name << "() takes no arguments";
    FailureOr<Var> modules = getAttribute(args[0], "_modules", loc);
    if (failed(modules))
      return failure();
    HeapObject iterator;
    iterator.kind = H::Iterator;
    for (const auto &[key, module] : heap.get((*modules)->object).entries) {
      if (module->is(K::None))
        continue;
      iterator.items.push_back(name == "torch.nn.Module.children" ? module
                                                                   : makeTuple({key, module}));
    }
    return makeObject(newObject(std::move(iterator)));
  }
  if (name == "torch.nn.Module.parameters" || name == "torch.nn.Module.named_parameters" ||
      name == "torch.nn.Module.buffers" || name == "torch.nn.Module.named_buffers" ||
      name == "torch.nn.Module.modules" || name == "torch.nn.Module.named_modules") {
    if (args.size() != 1)
      return error(loc) << name << "() with arguments is not supported";
    llvm::StringRef what = llvm::StringRef(name).rsplit('.').second;
    bool named = what.consume_front("named_");
    const char *store = what == "parameters" ? "_parameters" : what == "buffers" ? "_buffers" : "";
    HeapObject iterator;
    iterator.kind = H::Iterator;
    std::vector<Var> seen;
    // Depth-first over the module tree, as torch's named_* iterate (duplicates once).
    std::function<LogicalResult(Var, std::string)> walk = [&](Var module,
                                                              std::string prefix) -> LogicalResult {
      auto addOnce = [&](Var value, const std::string &itemName) {
        if (llvm::any_of(seen, [&](const Var &s) { return identical(s, value); }))
          return;
        seen.push_back(value);
        iterator.items.push_back(named ? makeTuple({makeStr(itemName), value}) : value);
      };
      if (!*store)
        addOnce(module, prefix.empty() ? prefix : prefix.substr(0, prefix.size() - 1));
      if (*store) {
        FailureOr<Var> entries = getAttribute(module, store, loc);
        if (failed(entries))
          return failure();
        for (const auto &[key, value] : heap.get((*entries)->object).entries)
          if (!value->is(K::None) && key->is(K::Str))
            addOnce(value, prefix + key->name);
      }
      FailureOr<Var> children = getAttribute(module, "_modules", loc);
      if (failed(children))
        return failure();
      for (const auto &[key, child] : heap.get((*children)->object).entries)
        if (!child->is(K::None) && key->is(K::Str) &&
            failed(walk(child, prefix + key->name + ".")))
          return failure();
      return success();
    };
    if (failed(walk(args[0], "")))
      return failure();
    return makeObject(newObject(std::move(iterator)));
  }
  handled = false;
  return failure();
}

FailureOr<Var> Interpreter::tensorIndex(Var tensor, Var key, Location loc) {
  std::vector<Var> indices = key->is(K::Tuple) ? key->items : std::vector<Var>{key};
  int64_t rank = tensorType(heap, tensor).getSizes().size();
  // Ellipsis expands to the dimensions the other indices do not consume.
  int64_t consumed = llvm::count_if(indices, [](const Var &i) {
    return !i->is(K::None) && !i->is(K::Ellipsis);
  });
  Var current = tensor;
  int64_t dim = 0;
  auto atenInt = [&](int64_t i) { return AtenValue::integer(getAffineConstantExpr(i, ctx)); };
  for (const Var &index : indices) {
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
          FailureOr<Var> start = numberAsSize(parts[0], Var(), isNumber(end) ? length : end,
                                              length, loc);
          if (failed(start))
            return failure();
          parts[0] = *start;
        }
        if (isNumber(parts[1])) {
          FailureOr<Var> bound = numberAsSize(
              parts[1], parts[0]->is(K::None) ? Var() : parts[0], length, length, loc);
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
    } else {
      return error(loc) << "tensor indexing with " << (index->is(K::Tensor) ? "a tensor" : "this")
                        << " index is not supported yet";
    }
    if (failed(next))
      return failure();
    current = *next;
  }
  return current;
}

FailureOr<func::FuncOp> Interpreter::traceTemplate(Var function, llvm::StringRef baseName,
                                                   TypeRange argumentTypes, Location loc,
                                                   bool allowSideEffects) {
  auto enclosing = builder.getInsertionBlock()->getParent()->getParentOfType<func::FuncOp>();
  auto module = enclosing->getParentOfType<ModuleOp>();
  unsigned &count = templateNames[baseName];
  std::string name = (baseName + "_" + llvm::Twine(count++)).str();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(enclosing);
  auto fn = func::FuncOp::create(builder, loc, name, builder.getFunctionType(argumentTypes, {}));
  fn.setPrivate();
  (void)module;
  Block *body = fn.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  CallArguments call;
  for (BlockArgument arg : body->getArguments()) {
    HeapObject tensor;
    tensor.kind = H::Tensor;
    tensor.tensor = arg;
    call.positional.push_back(makeTensorObject(newObject(std::move(tensor))));
  }
  size_t firstEffect = sideEffects.size(), firstObject = heap.size();
  FailureOr<Var> result = this->call(function, std::move(call), loc);
  if (failed(result))
    return failure();
  // A hook runs in backward, after the call: a Python side effect there (on an object
  // that outlives the hook) is not something the forward's replay list can hold.
  if (!allowSideEffects)
    for (size_t i = firstEffect; i < sideEffects.size(); ++i)
      if (sideEffects[i].object < firstObject)
        return error(sideEffects[i].loc)
               << "a " << baseName
               << " that changes Python state (it runs in backward, whose Python side "
                  "effects tgc does not replay) is not supported";
  SmallVector<Value> results;
  if ((*result)->is(K::None) && body->getNumArguments() > 0)
    results.push_back(body->getArgument(0));
  else if (failed(flattenTensors(*result, results, loc)))
    return failure();
  func::ReturnOp::create(builder, loc, results);
  fn.setFunctionType(builder.getFunctionType(argumentTypes, ValueRange(results).getTypes()));
  return fn;
}

LogicalResult Interpreter::applyGradHooks(Var tensor, ArrayRef<Var> hooks, Location loc) {
  for (const Var &hook : hooks) {
    Value self = heap.get(tensor->object).tensor;
    FailureOr<func::FuncOp> fn =
        traceTemplate(hook, "grad_hook", self.getType(), loc, /*allowSideEffects=*/false);
    if (failed(fn))
      return failure();
    if ((*fn).getNumResults() != 1)
      return error(loc) << "a gradient hook must return one tensor or None";
    Value hooked =
        GradHookOp::create(builder, loc, self, FlatSymbolRefAttr::get(ctx, (*fn).getSymName()));
    heap.mutate(tensor->object).tensor = hooked;
  }
  return success();
}

FailureOr<Attribute> Interpreter::outputStructure(Var value, int64_t &nextTensor,
                                                  Location loc) {
  OpBuilder b(ctx);
  auto tagged = [&](llvm::StringRef tag, Attribute payload) -> Attribute {
    return b.getDictionaryAttr(b.getNamedAttr(tag, payload));
  };
  switch (value->kind) {
  case K::Tensor:
    return Attribute(b.getI64IntegerAttr(nextTensor++));
  case K::None:
    return tagged("const", b.getUnitAttr());
  case K::Bool:
    return tagged("const", b.getBoolAttr(value->boolValue));
  case K::Str:
    return tagged("const", b.getStringAttr(value->name));
  case K::Float:
    return tagged("const", b.getF64FloatAttr(value->floatValue));
  case K::Int:
    if (std::optional<int64_t> i = value->getConstantInt())
      return tagged("const", b.getI64IntegerAttr(*i));
    break;
  default:
    break;
  }
  std::optional<H> kind = value->is(K::Object) ? std::optional(heap.get(value->object).kind)
                                                : std::nullopt;
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
  // (A tuple subclass, torch.Size or a namedtuple, comes back as a plain tuple.)
  if (value->is(K::Tuple) || kind == H::List) {
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
    return tagged(kind == H::List ? "list" : "tuple", b.getArrayAttr(structures));
  }
  return error(loc) << "the program returns a value tgc cannot return (tensors, None, "
                       "numbers, strings and tuples, lists and dicts of them can be)";
}

LogicalResult Interpreter::flattenTensors(Var value, SmallVectorImpl<Value> &tensors,
                                          Location loc) {
  // Constants are not tensors; outputStructure returns them.
  if (value->is(K::None) || value->is(K::Bool) || value->is(K::Str) || value->is(K::Float) ||
      (value->is(K::Int) && value->getConstantInt()))
    return success();
  if (value->is(K::Tensor)) {
    if (value->number != Variable::Number::None)
      return error(loc) << "the program returns a Python number computed from a tensor's "
                           "value (Tensor.item()); tgc returns tensors only";
    tensors.push_back(heap.get(value->object).tensor);
    return success();
  }
  std::optional<H> kind = value->is(K::Object) ? std::optional(heap.get(value->object).kind)
                                                : std::nullopt;
  if (kind == H::Dict) {
    for (const auto &entry : heap.get(value->object).entries)
      if (failed(flattenTensors(entry.second, tensors, loc)))
        return failure();
    return success();
  }
  if (value->is(K::Tuple) || kind == H::List) {
    FailureOr<std::vector<Var>> items = unpack(value, loc);
    if (failed(items))
      return failure();
    for (const Var &item : *items)
      if (failed(flattenTensors(item, tensors, loc)))
        return failure();
    return success();
  }
  return error(loc) << "the program returns a value that is not a tensor (or a tuple, list or "
                       "dict of them); tgc returns tensors only for now";
}
