// Tensor methods the bytecode interpreter answers itself rather than as ATen calls:
// metadata queries (`size()`, `dim()`, `numel()`), `register_hook`, `item()`, the methods
// that read values (graph breaks), and max/min/argmax/argmin with indices; and
// torch.functional's helpers built of other tensor calls (meshgrid, cartesian_prod,
// block_diag, broadcast_tensors, atleast_Nd) with tril_indices / triu_indices.
#include "Frontend/Common/DTypes.h"
#include "Interpreter.h"

#include "tgc/Dialect/TensorMeta.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;

/// The type of the tensor the method is called on, when the first argument is a tensor;
/// else the call is not the handler's.
static BaseTensorType selfType(Interpreter &in, const ExternalCall &call) {
  if (call.args.empty() || !call.args[0]->is(K::Tensor))
    return BaseTensorType();
  return llvm::cast<BaseTensorType>(in.getHeap().get(call.args[0]->object).tensor.getType());
}

/// The method's name (`size` of `torch.Tensor.size`).
static llvm::StringRef methodOf(const ExternalCall &call) { return call.name.rsplit('.').second; }

//===----------------------------------------------------------------------===//
// Metadata
//===----------------------------------------------------------------------===//

/// size() (a torch.Size) and size(dim).
static CallResult size(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type)
    return CallResult::declined();
  if (call.args.size() == 1 && call.arguments.keywords.empty()) {
    std::vector<Var> sizes;
    for (AffineExpr size : type.getSizes())
      sizes.push_back(makeInt(size));
    return makeSize(std::move(sizes));
  }
  Var dim = call.args.size() > 1 ? call.args[1] : call.arguments.keywords.at(0).second;
  std::optional<int64_t> d = dim->getConstantInt();
  std::optional<int64_t> normalized = d ? normalizeDim(*d, type.getSizes().size()) : std::nullopt;
  if (!normalized)
    return call.error() << "dimension out of range";
  return makeInt(type.getSizes()[*normalized]);
}

/// dim() and ndimension().
static CallResult rank(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type)
    return CallResult::declined();
  return makeInt(type.getSizes().size(), in.getContext());
}

/// numel() and nelement().
static CallResult numel(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type)
    return CallResult::declined();
  return makeInt(type.getMeta().numel(in.getContext()));
}

static CallResult elementSize(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type)
    return CallResult::declined();
  return makeInt(getElementBytes(type.getDtype()), in.getContext());
}

/// The legacy tensor type names (`torch.FloatTensor`) of the dtypes that have one.
static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral> kLegacyTypeNames[] = {
    {"float32", "torch.FloatTensor"}, {"float64", "torch.DoubleTensor"},
    {"float16", "torch.HalfTensor"},  {"bfloat16", "torch.BFloat16Tensor"},
    {"int64", "torch.LongTensor"},    {"int32", "torch.IntTensor"},
    {"int16", "torch.ShortTensor"},   {"int8", "torch.CharTensor"},
    {"uint8", "torch.ByteTensor"},    {"bool", "torch.BoolTensor"}};

/// Tensor.type(): the legacy type name of its dtype ("torch.FloatTensor"); type(dtype),
/// type("torch.FloatTensor") or type(torch.FloatTensor): the tensor converted, as
/// Tensor.to(dtype) converts it.
static CallResult legacyType(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type || failed(call.checkArity(1, 2)) || failed(call.checkKeywords({"dtype"})))
    return CallResult::declined();
  Var target = call.args.size() == 2 ? call.args[1] : call.keyword("dtype");
  if (!target || target->is(K::None)) {
    std::optional<TorchDType> dtype = lookupDTypeByType(type.getDtype());
    for (const auto &[name, legacy] : kLegacyTypeNames)
      if (dtype && dtype->name == name)
        return makeStr(legacy);
    return call.error() << "Tensor.type() of this dtype is not supported";
  }
  if ((target->is(K::Str) || target->is(K::External)) && !target->is(K::DType)) {
    const auto *entry = llvm::find_if(
        kLegacyTypeNames, [&](const auto &pair) { return pair.second == target->name; });
    std::optional<TorchDType> dtype = entry == std::end(kLegacyTypeNames)
                                          ? std::nullopt
                                          : lookupDTypeByName(entry->first, in.getContext());
    if (!dtype)
      return call.error() << "Tensor.type(" << target->name
                          << ") is not supported (a dtype or a CPU tensor type name is)";
    target = makeDType(dtype->type);
  }
  CallArguments cast{{call.args[0]}, {{"dtype", target}}};
  return in.callTorchFunction("torch.Tensor.to", cast, call.loc);
}

/// is_floating_point() and is_complex() (methods, and torch's functions): the dtype's kind.
static CallResult dtypeKind(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type || call.args.size() != 1 || !call.arguments.keywords.empty())
    return CallResult::declined();
  Type dtype = type.getDtype();
  return makeBool(call.name.ends_with("is_complex") ? isa<ComplexType>(dtype)
                                                    : isa<FloatType>(dtype));
}

/// The tensor's strides as its fake-tensor metadata states them (row-major when the
/// layout is unspecified).
static SmallVector<AffineExpr> stridesOfTensor(Interpreter &in, BaseTensorType type) {
  const TensorMeta &meta = type.getMeta();
  if (!meta.strides.empty())
    return meta.strides;
  return TensorMeta::contiguousStrides(meta.sizes, in.getContext());
}

/// is_contiguous(memory_format=torch.contiguous_format): dense in the format's order,
/// where dimensions of size 1 may have any stride (ATen's definition, isContiguousAs).
static CallResult isContiguous(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type)
    return CallResult::declined();
  if (failed(call.checkArity(1, 2)) || failed(call.checkKeywords({"memory_format"})))
    return failure();
  Var formatArgument = call.args.size() == 2 ? call.args[1] : call.keyword("memory_format");
  MemoryFormat format = MemoryFormat::Contiguous;
  if (formatArgument) {
    std::optional<MemoryFormat> given;
    if (llvm::StringRef name = formatArgument->is(Variable::Kind::External)
                                   ? llvm::StringRef(formatArgument->name)
                                   : "";
        name.consume_front("torch."))
      given = parseMemoryFormat(name);
    if (!given || *given == MemoryFormat::Preserve)
      return call.error() << "is_contiguous(): memory_format must be a torch.memory_format "
                             "other than preserve_format";
    format = *given;
  }
  const TensorMeta &meta = type.getMeta();
  return makeBool(isContiguousAs(meta.sizes, stridesOfTensor(in, type), format));
}

/// stride() (a tuple) and stride(dim), and storage_offset().
static CallResult stride(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type || !call.arguments.keywords.empty() || call.args.size() > 2)
    return CallResult::declined();
  if (call.name.ends_with("storage_offset")) {
    AffineExpr offset = type.getMeta().storageOffset;
    return makeInt(offset ? offset : getAffineConstantExpr(0, in.getContext()));
  }
  SmallVector<AffineExpr> strides = stridesOfTensor(in, type);
  if (call.args.size() == 1) {
    std::vector<Var> items;
    for (AffineExpr s : strides)
      items.push_back(makeInt(s));
    return makeTuple(std::move(items));
  }
  std::optional<int64_t> d = call.args[1]->getConstantInt();
  std::optional<int64_t> normalized = d ? normalizeDim(*d, strides.size()) : std::nullopt;
  if (!normalized)
    return call.error() << "stride(dim): dimension out of range";
  return makeInt(strides[*normalized]);
}

static CallResult length(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  if (!type)
    return CallResult::declined();
  if (type.getSizes().empty())
    return call.error() << "len() of a 0-d tensor";
  return makeInt(type.getSizes()[0]);
}

//===----------------------------------------------------------------------===//
// Hooks and values
//===----------------------------------------------------------------------===//

static CallResult registerHook(Interpreter &in, ExternalCall &call) {
  if (!selfType(in, call))
    return CallResult::declined();
  if (call.args.size() != 2)
    return call.error() << "register_hook(hook) takes one hook";
  if (failed(in.applyGradHooks(call.args[0], {call.args[1]}, call.loc)))
    return failure();
  HeapObject handle;
  handle.kind = H::Opaque;
  handle.name = "torch.utils.hooks.RemovableHandle";
  return makeObject(in.newObject(std::move(handle)));
}

static CallResult item(Interpreter &in, ExternalCall &call) {
  if (!selfType(in, call))
    return CallResult::declined();
  if (call.args.size() != 1)
    return call.error() << "Tensor.item() takes no arguments";
  return in.tensorItem(call.args[0], call.loc);
}

/// tolist(), numpy() and __bool__ need a tensor's values.
static CallResult readsValues(Interpreter &in, ExternalCall &call) {
  if (!selfType(in, call))
    return CallResult::declined();
  return call.error() << "graph break: Tensor." << methodOf(call)
                      << "() reads a tensor's values, which are not known at capture time";
}

//===----------------------------------------------------------------------===//
// Reductions with indices
//===----------------------------------------------------------------------===//

/// `torch.max(x, dim)` / `x.min(dim, keepdim)` (values and indices) and argmax/argmin
/// (over a dim or all elements), built from ops tgc has (reduceWithIndices). Other
/// overloads (`torch.max(x)`, `torch.max(x, y)`) are torch calls.
static CallResult reduceWithIndices(Interpreter &in, ExternalCall &call) {
  std::vector<Var> &args = call.args;
  if (args.empty() || !args[0]->is(K::Tensor))
    return CallResult::declined();
  llvm::StringRef op = methodOf(call);
  bool withValues = op == "max" || op == "min";
  Var dim = args.size() > 1 ? args[1] : Var(), keepdim = args.size() > 2 ? args[2] : Var();
  for (auto &[keyword, value] : call.arguments.keywords) {
    if (keyword == "dim" && !dim)
      dim = value;
    else if (keyword == "keepdim" && !keepdim)
      keepdim = value;
    else
      dim = makeNone(), keepdim = makeStr(keyword); // not ours: an unknown keyword
  }
  bool isOurs = args.size() <= 3 && (!keepdim || keepdim->is(K::Bool)) &&
                (withValues ? dim && dim->is(K::Int) : !dim || dim->is(K::Int) || dim->is(K::None));
  if (!isOurs)
    return CallResult::declined();
  Var x = args[0];
  int64_t d = 0;
  if (dim && dim->is(K::Int)) {
    std::optional<int64_t> constant = dim->getConstantInt();
    if (!constant)
      return call.error() << call.name << "(): the dim must be a constant";
    d = *constant;
  } else { // argmax over all elements: of the flattened tensor
    CallArguments flatten{{x, makeTuple({makeInt(-1, in.getContext())})}, {}};
    FailureOr<Var> flat = in.callTorchFunction("torch.Tensor.reshape", flatten, call.loc);
    if (failed(flat))
      return failure();
    x = *flat;
  }
  return in.reduceWithIndices(x, d, keepdim && keepdim->boolValue, op == "max" || op == "argmax",
                              withValues, ("torch.return_types." + op).str(), call.loc);
}

/// `torch.argsort(x, dim=-1, descending=False, stable=False)`: the indices of
/// torch.sort with the same arguments.
static CallResult argsort(Interpreter &in, ExternalCall &call) {
  CallArguments sortArguments = call.arguments;
  FailureOr<Var> sorted = in.callTorchFunction(
      call.name.ends_with("Tensor.argsort") ? "torch.Tensor.sort" : "torch.sort", sortArguments,
      call.loc);
  if (failed(sorted))
    return failure();
  return (*sorted)->items.at(1);
}

/// `torch.einsum(equation, *operands)`: the operands as one list, as torch's
/// torch.functional.einsum passes them on; then the table's einsum binds the call.
static CallResult einsumOperands(Interpreter &in, ExternalCall &call) {
  if (call.args.size() >= 2 && call.args[1]->is(K::Tensor)) {
    std::vector<Var> operands(call.args.begin() + 1, call.args.end());
    call.args.resize(1);
    call.args.push_back(in.makeList(std::move(operands)));
  }
  return CallResult::declined();
}

/// `t.new_tensor(data, *, dtype=None, ...)`: torch.tensor(data) of t's dtype unless given.
static CallResult newTensor(Interpreter &in, ExternalCall &call) {
  if (call.args.size() != 2 || !call.args[0]->is(K::Tensor))
    return CallResult::declined();
  CallArguments arguments{{call.args[1]}, call.arguments.keywords};
  Var dtype = call.keyword("dtype");
  if (!dtype || dtype->is(K::None)) {
    FailureOr<Var> own = in.getAttribute(call.args[0], "dtype", call.loc);
    if (failed(own))
      return failure();
    llvm::erase_if(arguments.keywords, [](auto &keyword) { return keyword.first == "dtype"; });
    arguments.keywords.emplace_back("dtype", *own);
  }
  return in.call(makeExternal("torch.tensor"), std::move(arguments), call.loc);
}

/// `torch.meshgrid(*tensors, indexing="ij")` of 0-d and 1-d tensors (or one sequence of
/// them): tensor i viewed along dimension i and expanded to every tensor's size; with
/// "xy" the first two tensors take each other's dimension.
static CallResult meshgrid(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({"indexing"})))
    return failure();
  std::vector<Var> tensors = call.args;
  if (tensors.size() == 1 && !tensors.front()->is(K::Tensor)) {
    FailureOr<std::vector<Var>> items = in.unpack(tensors.front(), call.loc);
    if (failed(items))
      return failure();
    tensors = std::move(*items);
  }
  Var indexing = call.keyword("indexing");
  bool xy = indexing && indexing->is(K::Str) && indexing->name == "xy";
  if (indexing && !(indexing->is(K::Str) && (xy || indexing->name == "ij")))
    return call.error() << "torch.meshgrid: indexing must be 'ij' or 'xy'";
  MLIRContext *ctx = in.getContext();
  size_t n = tensors.size();
  std::vector<Var> sizes(n);
  std::vector<size_t> dimension(n);
  for (size_t i = 0; i < n; ++i) {
    if (!tensors[i]->is(K::Tensor))
      return call.error() << "torch.meshgrid expects tensors, got "
                          << describe(in.getHeap(), tensors[i]);
    auto type = cast<BaseTensorType>(in.getHeap().get(tensors[i]->object).tensor.getType());
    if (type.getRank() > 1)
      return call.error() << "torch.meshgrid expects 0-d or 1-d tensors, got one of rank "
                          << type.getRank();
    sizes[i] = type.getRank() == 0 ? makeInt(1, ctx) : makeInt(type.getSizes().front());
    dimension[i] = xy && n >= 2 && i < 2 ? 1 - i : i;
  }
  std::vector<Var> shape(n);
  for (size_t i = 0; i < n; ++i)
    shape[dimension[i]] = sizes[i];
  std::vector<Var> grids;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Var> view(n, makeInt(1, ctx));
    view[dimension[i]] = sizes[i];
    CallArguments reshape{{tensors[i], makeTuple(view)}, {}};
    FailureOr<Var> viewed = in.callTorchFunction("torch.Tensor.reshape", reshape, call.loc);
    if (failed(viewed))
      return failure();
    CallArguments expand{{*viewed, makeTuple(shape)}, {}};
    FailureOr<Var> grid = in.callTorchFunction("torch.Tensor.expand", expand, call.loc);
    if (failed(grid))
      return failure();
    grids.push_back(*grid);
  }
  return makeTuple(std::move(grids));
}

/// The tensors of a call of torch.functional's `f(*tensors)`, each of rank at most
/// `maxRank` (nullopt after an error).
static std::optional<std::vector<Var>> tensorArguments(Interpreter &in, ExternalCall &call,
                                                       int64_t maxRank) {
  if (failed(call.checkKeywords({})))
    return std::nullopt;
  if (call.args.empty()) {
    call.error() << call.name << "() needs at least one tensor";
    return std::nullopt;
  }
  for (auto [i, tensor] : llvm::enumerate(call.args)) {
    if (!tensor->is(K::Tensor)) {
      call.error() << call.name << "() expects tensors, got " << describe(in.getHeap(), tensor)
                   << " as argument " << i;
      return std::nullopt;
    }
    int64_t rank =
        cast<BaseTensorType>(in.getHeap().get(tensor->object).tensor.getType()).getRank();
    if (rank > maxRank) {
      call.error() << call.name << "(): tensor " << i << " has " << rank << " dimensions, at most "
                   << maxRank << " are allowed";
      return std::nullopt;
    }
  }
  return call.args;
}

/// `torch.cartesian_prod(*tensors)` of 1-d tensors: the meshgrid ("ij") of the tensors,
/// each grid flattened, stacked as the columns of the result; one tensor is returned
/// as it is.
static CallResult cartesianProduct(Interpreter &in, ExternalCall &call) {
  std::optional<std::vector<Var>> tensors = tensorArguments(in, call, 1);
  if (!tensors)
    return failure();
  for (const Var &tensor : *tensors)
    if (cast<BaseTensorType>(in.getHeap().get(tensor->object).tensor.getType()).getRank() != 1)
      return call.error() << call.name << "() expects 1-d tensors";
  if (tensors->size() == 1)
    return tensors->front();
  MLIRContext *ctx = in.getContext();
  CallArguments grid{*tensors, {{"indexing", makeStr("ij")}}};
  FailureOr<Var> grids = in.call(makeExternal("torch.meshgrid"), std::move(grid), call.loc);
  if (failed(grids))
    return failure();
  FailureOr<std::vector<Var>> items = in.unpack(*grids, call.loc);
  if (failed(items))
    return failure();
  std::vector<Var> columns;
  for (const Var &item : *items) {
    CallArguments flatten{{item, makeTuple({makeInt(-1, ctx)})}, {}};
    FailureOr<Var> column = in.callTorchFunction("torch.Tensor.reshape", flatten, call.loc);
    if (failed(column))
      return failure();
    columns.push_back(*column);
  }
  CallArguments stack{{in.makeList(std::move(columns))}, {{"dim", makeInt(1, ctx)}}};
  return in.callTorchFunction("torch.stack", stack, call.loc);
}

/// `torch.block_diag(*tensors)`: the tensors (a 0-d one as 1 x 1, a 1-d one as a row)
/// along the diagonal of a matrix of zeros: each padded with zero columns to the total
/// width, the padded rows concatenated (cat promotes the dtypes, as block_diag does).
static CallResult blockDiagonal(Interpreter &in, ExternalCall &call) {
  std::optional<std::vector<Var>> tensors = tensorArguments(in, call, 2);
  if (!tensors)
    return failure();
  MLIRContext *ctx = in.getContext();
  std::vector<Var> blocks;
  AffineExpr width = getAffineConstantExpr(0, ctx);
  for (const Var &tensor : *tensors) {
    ArrayRef<AffineExpr> sizes =
        cast<BaseTensorType>(in.getHeap().get(tensor->object).tensor.getType()).getSizes();
    Var block = tensor;
    if (sizes.size() < 2) {
      Var columns = sizes.empty() ? makeInt(1, ctx) : makeInt(sizes.front());
      CallArguments reshape{{tensor, makeTuple({makeInt(1, ctx), columns})}, {}};
      FailureOr<Var> row = in.callTorchFunction("torch.Tensor.reshape", reshape, call.loc);
      if (failed(row))
        return failure();
      block = *row;
    }
    blocks.push_back(block);
    width = width + (sizes.empty() ? getAffineConstantExpr(1, ctx) : sizes.back());
  }
  AffineExpr before = getAffineConstantExpr(0, ctx);
  std::vector<Var> rows;
  for (const Var &block : blocks) {
    AffineExpr columns =
        cast<BaseTensorType>(in.getHeap().get(block->object).tensor.getType()).getSizes().back();
    CallArguments pad{{block, makeTuple({makeInt(before), makeInt(width - before - columns)})}, {}};
    FailureOr<Var> row = in.callTorchFunction("torch.nn.functional.pad", pad, call.loc);
    if (failed(row))
      return failure();
    rows.push_back(*row);
    before = before + columns;
  }
  CallArguments cat{{in.makeList(std::move(rows))}, {}};
  return in.callTorchFunction("torch.cat", cat, call.loc);
}

/// `torch.tril_indices` / `triu_indices(row, col, offset=0, *, dtype=torch.long)`: the
/// coordinates of the lower (upper) triangle of a row x col matrix, row by row, as a
/// 2 x N tensor: a constant, since its arguments must be.
static CallResult triangleIndices(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkArity(0, 3)) ||
      failed(call.checkKeywords({"row", "col", "offset", "dtype", "device", "layout"})))
    return failure();
  bool lower = call.name.ends_with("tril_indices");
  llvm::StringRef names[] = {"row", "col", "offset"};
  int64_t values[] = {0, 0, 0};
  for (size_t k = 0; k < 3; ++k) {
    Var value = k < call.args.size() ? call.args[k] : call.keyword(names[k]);
    if (!value && k == 2)
      continue;
    std::optional<int64_t> constant = value ? value->getConstantInt() : std::nullopt;
    if (!constant)
      return call.error() << call.name << "() needs '" << names[k] << "' as a constant int";
    values[k] = *constant;
  }
  auto [rows, columns, offset] = values;
  if (rows < 0 || columns < 0)
    return call.error() << call.name << "(): row and col must be non-negative, got " << rows
                        << " and " << columns;
  // (A constant of this many coordinates at most; a larger triangle is an error.)
  constexpr int64_t kMaxCoordinates = int64_t(1) << 20;
  MLIRContext *ctx = in.getContext();
  std::vector<Var> first, second;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j) {
      if (lower ? j - i > offset : j - i < offset)
        continue;
      if (static_cast<int64_t>(first.size()) == kMaxCoordinates)
        return call.error() << call.name << "(" << rows << ", " << columns << "): more than "
                            << kMaxCoordinates << " coordinates, too many for a constant";
      first.push_back(makeInt(i, ctx));
      second.push_back(makeInt(j, ctx));
    }
  CallArguments tensor{
      {in.makeList({in.makeList(std::move(first)), in.makeList(std::move(second))})}, {}};
  if (Var dtype = call.keyword("dtype"); dtype && !dtype->is(K::None))
    tensor.keywords.emplace_back("dtype", dtype);
  return in.call(makeExternal("torch.tensor"), std::move(tensor), call.loc);
}

/// torch.broadcast_tensors(*tensors): each expanded to their common shape (sizes aligned
/// from the right; a size of 1 stretches), which is an error where two sizes differ;
/// torch.broadcast_to(tensor, shape) is Tensor.expand.
static CallResult broadcastTensors(Interpreter &in, ExternalCall &call) {
  if (call.name.ends_with("broadcast_to")) {
    if (failed(call.checkArity(2, 2)) || failed(call.checkKeywords({})))
      return failure();
    CallArguments expand{{call.args[0], call.args[1]}, {}};
    return in.callTorchFunction("torch.Tensor.expand", expand, call.loc);
  }
  if (failed(call.checkKeywords({})))
    return failure();
  SmallVector<AffineExpr> shape;
  for (const Var &tensor : call.args) {
    if (!tensor->is(K::Tensor))
      return call.error() << "torch.broadcast_tensors() takes tensors";
    ArrayRef<AffineExpr> sizes =
        cast<BaseTensorType>(in.getHeap().get(tensor->object).tensor.getType()).getSizes();
    if (sizes.size() > shape.size())
      shape.insert(shape.begin(), sizes.size() - shape.size(),
                   getAffineConstantExpr(1, in.getContext()));
    for (size_t i = 0; i < sizes.size(); ++i) {
      AffineExpr &common = shape[shape.size() - sizes.size() + i];
      AffineExpr size = sizes[i];
      if (size == common || getConstantSize(size) == 1)
        continue;
      if (getConstantSize(common) != 1) {
        std::string sizesText;
        llvm::raw_string_ostream os(sizesText);
        os << common << " and " << size;
        return call.error() << "torch.broadcast_tensors(): the sizes " << sizesText
                            << " do not broadcast";
      }
      common = size;
    }
  }
  std::vector<Var> sizes;
  for (AffineExpr size : shape)
    sizes.push_back(makeInt(size));
  std::vector<Var> expanded;
  for (const Var &tensor : call.args) {
    CallArguments expand{{tensor, makeTuple(sizes)}, {}};
    FailureOr<Var> result = in.callTorchFunction("torch.Tensor.expand", expand, call.loc);
    if (failed(result))
      return failure();
    expanded.push_back(*result);
  }
  return makeTuple(std::move(expanded));
}

/// torch.atleast_1d / 2d / 3d(tensor or tensors): views with dimensions of 1 added as
/// torch.functional adds them (a 1-d [n] becomes [1, n], then [1, n, 1]; a 2-d [m, n]
/// becomes [m, n, 1]); a sequence of tensors gives a tuple.
static CallResult atLeast(Interpreter &in, ExternalCall &call) {
  if (failed(call.checkKeywords({})))
    return failure();
  if (call.args.empty())
    return call.error() << call.name << "() needs a tensor or a sequence of tensors";
  int64_t rank = call.name.back() == 'd' ? call.name.drop_back().back() - '0' : 0;
  std::vector<Var> tensors = call.args;
  bool several = call.args.size() > 1;
  if (call.args.size() == 1 && !call.args[0]->is(K::Tensor)) {
    FailureOr<std::vector<Var>> items = in.unpack(call.args[0], call.loc);
    if (failed(items))
      return failure();
    tensors = std::move(*items);
    several = true;
  }
  std::vector<Var> results;
  for (const Var &tensor : tensors) {
    if (!tensor->is(K::Tensor))
      return call.error() << call.name << "() takes tensors";
    ArrayRef<AffineExpr> sizes =
        cast<BaseTensorType>(in.getHeap().get(tensor->object).tensor.getType()).getSizes();
    std::vector<Var> shape;
    for (AffineExpr size : sizes)
      shape.push_back(makeInt(size));
    Var one = makeInt(1, in.getContext());
    if (shape.empty() && rank >= 1)
      shape.push_back(one);
    if (shape.size() == 1 && rank >= 2)
      shape.insert(shape.begin(), one);
    if (shape.size() == 2 && rank >= 3)
      shape.push_back(one);
    if (shape.size() == sizes.size()) {
      results.push_back(tensor);
      continue;
    }
    CallArguments view{{tensor, makeTuple(shape)}, {}};
    FailureOr<Var> viewed = in.callTorchFunction("torch.Tensor.view", view, call.loc);
    if (failed(viewed))
      return failure();
    results.push_back(*viewed);
  }
  return several ? makeTuple(std::move(results)) : results.front();
}

/// Tensor.requires_grad_(flag=True) that leaves the flag as it is (a tensor that does not
/// require grad told not to): the tensor. Changing it is not modelled.
static CallResult requiresGradInPlace(Interpreter &in, ExternalCall &call) {
  BaseTensorType type = selfType(in, call);
  Var flag = call.args.size() == 2 ? call.args[1] : call.keyword("requires_grad");
  if (!type || call.args.size() > 2 || (flag && !flag->is(K::Bool)))
    return CallResult::declined();
  if (type.getMeta().requiresGrad != (!flag || flag->boolValue))
    return call.error() << "Tensor.requires_grad_() that changes whether a tensor requires "
                           "grad is not supported";
  return call.args[0];
}

void tgc::py::registerTensorMethods(CallRegistry &registry) {
  for (llvm::StringRef name : {"torch.broadcast_tensors", "torch.functional.broadcast_tensors",
                               "torch.broadcast_to", "torch.Tensor.broadcast_to"})
    registry.add(name, broadcastTensors);
  for (llvm::StringRef name :
       {"torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d", "torch.functional.atleast_1d",
        "torch.functional.atleast_2d", "torch.functional.atleast_3d"})
    registry.add(name, atLeast);
  registry.add("torch.Tensor.new_tensor", newTensor);
  for (llvm::StringRef name : {"torch.cartesian_prod", "torch.functional.cartesian_prod"})
    registry.add(name, cartesianProduct);
  for (llvm::StringRef name : {"torch.block_diag", "torch.functional.block_diag"})
    registry.add(name, blockDiagonal);
  for (llvm::StringRef name : {"torch.tril_indices", "torch.triu_indices"})
    registry.add(name, triangleIndices);
  registry.add("torch.meshgrid", meshgrid);
  registry.add("torch.functional.meshgrid", meshgrid);
  registry.add("torch.einsum", einsumOperands);
  registry.add("torch.functional.einsum", einsumOperands);
  registry.add("torch.argsort", argsort);
  registry.add("torch.Tensor.argsort", argsort);
  registry.add("torch.Tensor.size", size);
  registry.add("torch.Tensor.dim", rank);
  registry.add("torch.Tensor.ndimension", rank);
  registry.add("torch.Tensor.numel", numel);
  registry.add("torch.Tensor.nelement", numel);
  registry.add("torch.Tensor.element_size", elementSize);
  registry.add("torch.Tensor.type", legacyType);
  registry.add("torch.Tensor.requires_grad_", requiresGradInPlace);
  registry.add("torch.Tensor.is_contiguous", isContiguous);
  for (llvm::StringRef name : {"torch.Tensor.is_floating_point", "torch.is_floating_point",
                               "torch.Tensor.is_complex", "torch.is_complex"})
    registry.add(name, dtypeKind);
  registry.add("torch.Tensor.stride", stride);
  registry.add("torch.Tensor.storage_offset", stride);
  registry.add("torch.Tensor.__len__", length);
  registry.add("torch.Tensor.register_hook", registerHook);
  registry.add("torch.Tensor.item", item);
  for (llvm::StringRef method : {"tolist", "numpy", "__bool__"})
    registry.add(("torch.Tensor." + method).str(), readsValues);
  for (llvm::StringRef op : {"max", "min", "argmax", "argmin"}) {
    registry.add(("torch." + op).str(), reduceWithIndices);
    registry.add(("torch.Tensor." + op).str(), reduceWithIndices);
  }
}
