// A strict reader for the pickle that torch.save writes for a dict of tensors.
//
// What torch.save pickles for `{"fc.weight": Parameter, "bn.running_mean": Tensor}`
// (protocol 2, the default; `pickle_protocol=4/5` adds FRAME, MEMOIZE, STACK_GLOBAL and
// SHORT_BINUNICODE):
//
//   EMPTY_DICT  MARK
//     "fc.weight"  GLOBAL torch._utils._rebuild_parameter
//       GLOBAL torch._utils._rebuild_tensor_v2
//       MARK (("storage", GLOBAL torch.FloatStorage, "0", "cpu", 512) BINPERSID,
//             0, (32, 16), (16, 1), False, OrderedDict()) TUPLE  REDUCE
//       True  OrderedDict()  TUPLE3  REDUCE
//     ...
//   SETITEMS  STOP
//
// Dtypes without a legacy `<X>Storage` class (uint16, float8, ...) are rebuilt by
// `_rebuild_tensor_v3` from a `torch.storage.UntypedStorage` plus a `torch.<dtype>`
// argument. Values live in an arena and are referenced by pointer, so the memo and
// the stack share them as Python's objects are shared; nothing here recurses.
#include "TorchPickle.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <memory>
#include <optional>

using namespace tgc;
using namespace tgc::pt2;

namespace {

//===----------------------------------------------------------------------===//
// Opcodes and the globals torch.save uses
//===----------------------------------------------------------------------===//

/// Every pickle opcode (Python's Lib/pickletools.py), so that errors can name them.
struct OpcodeName {
  uint8_t code;
  llvm::StringLiteral name;
};
// clang-format off
constexpr OpcodeName kOpcodeNames[] = {
    {'(', "MARK"},           {'.', "STOP"},         {'0', "POP"},
    {'1', "POP_MARK"},       {'2', "DUP"},          {'F', "FLOAT"},
    {'I', "INT"},            {'J', "BININT"},       {'K', "BININT1"},
    {'L', "LONG"},           {'M', "BININT2"},      {'N', "NONE"},
    {'P', "PERSID"},         {'Q', "BINPERSID"},    {'R', "REDUCE"},
    {'S', "STRING"},         {'T', "BINSTRING"},    {'U', "SHORT_BINSTRING"},
    {'V', "UNICODE"},        {'X', "BINUNICODE"},   {'a', "APPEND"},
    {'b', "BUILD"},          {'c', "GLOBAL"},       {'d', "DICT"},
    {'}', "EMPTY_DICT"},     {'e', "APPENDS"},      {'g', "GET"},
    {'h', "BINGET"},         {'i', "INST"},         {'j', "LONG_BINGET"},
    {'l', "LIST"},           {']', "EMPTY_LIST"},   {'o', "OBJ"},
    {'p', "PUT"},            {'q', "BINPUT"},       {'r', "LONG_BINPUT"},
    {'s', "SETITEM"},        {'t', "TUPLE"},        {')', "EMPTY_TUPLE"},
    {'u', "SETITEMS"},       {'G', "BINFLOAT"},     {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"}, {0x80, "PROTO"},       {0x81, "NEWOBJ"},
    {0x82, "EXT1"},          {0x83, "EXT2"},        {0x84, "EXT4"},
    {0x85, "TUPLE1"},        {0x86, "TUPLE2"},      {0x87, "TUPLE3"},
    {0x88, "NEWTRUE"},       {0x89, "NEWFALSE"},    {0x8a, "LONG1"},
    {0x8b, "LONG4"},         {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"},
    {0x8e, "BINBYTES8"},     {0x8f, "EMPTY_SET"},   {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},     {0x92, "NEWOBJ_EX"},   {0x93, "STACK_GLOBAL"},
    {0x94, "MEMOIZE"},       {0x95, "FRAME"},       {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},   {0x98, "READONLY_BUFFER"},
};
// clang-format on

std::string opcodeName(uint8_t code) {
  const auto *it = llvm::find_if(kOpcodeNames, [&](const OpcodeName &o) { return o.code == code; });
  if (it != std::end(kOpcodeNames))
    return it->name.str();
  return llvm::formatv("0x{0:x-2}", code).str();
}

/// A torch dtype as storages and `_rebuild_tensor_v3` name it.
struct DTypeInfo {
  llvm::StringLiteral name;
  unsigned bytes;
};

/// The legacy typed storage classes torch.save still writes (torch/storage.py,
/// `_dtype_to_storage_type_map`; the quantized ones are not read).
// clang-format off
constexpr std::pair<llvm::StringLiteral, DTypeInfo> kStorageClasses[] = {
    {"DoubleStorage", {"float64", 8}},      {"FloatStorage", {"float32", 4}},
    {"HalfStorage", {"float16", 2}},        {"LongStorage", {"int64", 8}},
    {"IntStorage", {"int32", 4}},           {"ShortStorage", {"int16", 2}},
    {"CharStorage", {"int8", 1}},           {"ByteStorage", {"uint8", 1}},
    {"BoolStorage", {"bool", 1}},           {"BFloat16Storage", {"bfloat16", 2}},
    {"ComplexDoubleStorage", {"complex128", 16}}, {"ComplexFloatStorage", {"complex64", 8}},
};
// clang-format on

/// The dtypes a `torch.<name>` global may name (an argument of `_rebuild_tensor_v3`).
// clang-format off
constexpr DTypeInfo kDTypes[] = {
    {"float64", 8},        {"float32", 4},        {"float16", 2},         {"bfloat16", 2},
    {"int64", 8},          {"int32", 4},          {"int16", 2},           {"int8", 1},
    {"uint8", 1},          {"uint16", 2},         {"uint32", 4},          {"uint64", 8},
    {"bool", 1},           {"complex32", 4},      {"complex64", 8},       {"complex128", 16},
    {"float8_e4m3fn", 1},  {"float8_e5m2", 1},    {"float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", 1},
    {"float8_e8m0fnu", 1},
};
// clang-format on

/// The functions a REDUCE may call.
enum class Callable {
  OrderedDict,
  RebuildTensorV2,
  RebuildTensorV3,
  RebuildParameter,
  RebuildParameterWithState,
};
constexpr std::pair<llvm::StringLiteral, Callable> kCallables[] = {
    {"collections.OrderedDict", Callable::OrderedDict},
    {"torch._utils._rebuild_tensor_v2", Callable::RebuildTensorV2},
    {"torch._utils._rebuild_tensor_v3", Callable::RebuildTensorV3},
    {"torch._utils._rebuild_parameter", Callable::RebuildParameter},
    {"torch._utils._rebuild_parameter_with_state", Callable::RebuildParameterWithState},
};

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

enum class Kind {
  None,
  Bool,
  Int,
  Float,
  String,
  Tuple,
  List,
  Dict,
  Callable,
  StorageClass,
  DType,
  Storage,
  Tensor
};

llvm::StringLiteral kindName(Kind kind) {
  static constexpr llvm::StringLiteral kNames[] = {
      "None", "bool",     "int",           "float", "str",     "tuple", "list",
      "dict", "function", "storage class", "dtype", "storage", "tensor"};
  return kNames[static_cast<unsigned>(kind)];
}

/// A storage named by a persistent id: ('storage', <class>, key, location, numel).
struct StorageRef {
  std::string key;
  std::string location;
  /// Null for an untyped storage (whose numel counts bytes).
  const DTypeInfo *dtype = nullptr;
  uint64_t bytes = 0;
};

struct Value {
  explicit Value(Kind kind) : kind(kind) {}
  Kind kind;
  int64_t integer = 0;              ///< Bool, Int
  double real = 0;                  ///< Float
  std::string text;                 ///< String; the qualified name of a Callable/DType
  std::vector<Value *> items;       ///< Tuple, List; Dict: key, value, key, value, ...
  Callable callable{};              ///< Callable
  const DTypeInfo *dtype = nullptr; ///< DType; StorageClass (null: untyped)
  StorageRef storage;               ///< Storage
  PickledTensor tensor;             ///< Tensor
};

//===----------------------------------------------------------------------===//
// Unpickler
//===----------------------------------------------------------------------===//

class Unpickler {
public:
  explicit Unpickler(llvm::StringRef data) : data(data) {}
  llvm::Expected<PickledTensorDict> run();

private:
  llvm::Error step(uint8_t code, bool &stop);
  /// An error about the opcode being executed.
  llvm::Error fail(const llvm::Twine &message) const {
    return llvm::createStringError(
        llvm::formatv("at byte {0}, {1}: {2}", opcodeAt, opcodeName(opcode), message.str()).str());
  }

  // Reading the opcode's argument, bounds-checked.
  llvm::Expected<llvm::StringRef> readBytes(uint64_t count);
  template <typename T> llvm::Expected<T> readLittle();
  llvm::Expected<llvm::StringRef> readLine();
  llvm::Error pushString(uint64_t length);
  llvm::Error pushLong(llvm::StringRef bytes);
  llvm::Error pushGlobal(llvm::StringRef module, llvm::StringRef name);

  // The stack, the marks and the memo.
  Value *make(Kind kind) {
    arena.push_back(std::make_unique<Value>(kind));
    return arena.back().get();
  }
  void push(Value *value) { stack.push_back(value); }
  size_t fence() const { return marks.empty() ? 0 : marks.back(); }
  llvm::Expected<Value *> pop();
  llvm::Expected<Value *> top();
  llvm::Expected<std::vector<Value *>> popMark();
  llvm::Error pushTuple(size_t count);
  llvm::Error memoize(uint64_t index);
  llvm::Error recall(uint64_t index);
  llvm::Error setItems(Value *dict, llvm::ArrayRef<Value *> items);

  // Calls.
  llvm::Error reduce();
  llvm::Expected<Value *> persistentStorage(Value *pid);
  llvm::Expected<Value *> rebuildTensor(llvm::ArrayRef<Value *> args, bool v3);
  llvm::Expected<Value *> rebuildParameter(llvm::ArrayRef<Value *> args);
  llvm::Expected<PickledTensorDict> result(Value *value);

  llvm::StringRef data;
  size_t pos = 0;
  size_t opcodeAt = 0;
  uint8_t opcode = 0;
  std::vector<std::unique_ptr<Value>> arena;
  std::vector<Value *> stack;
  std::vector<size_t> marks;
  llvm::DenseMap<uint64_t, Value *> memo;
};

} // namespace

llvm::Expected<llvm::StringRef> Unpickler::readBytes(uint64_t count) {
  if (count > data.size() - pos)
    return fail(llvm::formatv("needs {0} more bytes, but the pickle ends after {1}", count,
                              data.size() - pos));
  llvm::StringRef bytes = data.substr(pos, count);
  pos += count;
  return bytes;
}

template <typename T> llvm::Expected<T> Unpickler::readLittle() {
  llvm::Expected<llvm::StringRef> bytes = readBytes(sizeof(T));
  if (!bytes)
    return bytes.takeError();
  return llvm::support::endian::read<T, llvm::endianness::little>(bytes->data());
}

llvm::Expected<llvm::StringRef> Unpickler::readLine() {
  size_t end = data.find('\n', pos);
  if (end == llvm::StringRef::npos)
    return fail("the line it reads has no end");
  llvm::StringRef line = data.slice(pos, end);
  pos = end + 1;
  return line;
}

llvm::Error Unpickler::pushString(uint64_t length) {
  llvm::Expected<llvm::StringRef> bytes = readBytes(length);
  if (!bytes)
    return bytes.takeError();
  Value *value = make(Kind::String);
  value->text = bytes->str();
  push(value);
  return llvm::Error::success();
}

/// LONG1: a little-endian two's-complement integer of up to 8 bytes.
llvm::Error Unpickler::pushLong(llvm::StringRef bytes) {
  if (bytes.size() > 8)
    return fail(llvm::formatv("a {0}-byte integer does not fit in 64 bits", bytes.size()));
  uint64_t bits = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    bits |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  if (!bytes.empty() && bytes.size() < 8 && (uint8_t(bytes.back()) & 0x80))
    bits |= ~uint64_t(0) << (8 * bytes.size());
  Value *value = make(Kind::Int);
  value->integer = static_cast<int64_t>(bits);
  push(value);
  return llvm::Error::success();
}

/// GLOBAL / STACK_GLOBAL: only the callables, storage classes and dtypes torch.save
/// writes for tensors resolve.
llvm::Error Unpickler::pushGlobal(llvm::StringRef module, llvm::StringRef name) {
  std::string qualified = (module + "." + name).str();
  for (const auto &[callableName, callable] : kCallables)
    if (qualified == callableName) {
      Value *value = make(Kind::Callable);
      value->text = qualified;
      value->callable = callable;
      push(value);
      return llvm::Error::success();
    }
  auto pushDType = [&](Kind kind, const DTypeInfo *dtype) {
    Value *value = make(kind);
    value->text = qualified;
    value->dtype = dtype;
    push(value);
    return llvm::Error::success();
  };
  if (qualified == "torch.storage.UntypedStorage" || qualified == "torch.UntypedStorage")
    return pushDType(Kind::StorageClass, nullptr);
  if (module == "torch") {
    for (const auto &[storageName, info] : kStorageClasses)
      if (name == storageName)
        return pushDType(Kind::StorageClass, &info);
    for (const DTypeInfo &info : kDTypes)
      if (name == info.name)
        return pushDType(Kind::DType, &info);
  }
  return fail("global '" + qualified + "' is not one torch.save writes for dense tensors");
}

llvm::Expected<Value *> Unpickler::pop() {
  if (stack.size() <= fence())
    return fail("the stack is empty");
  Value *value = stack.back();
  stack.pop_back();
  return value;
}

llvm::Expected<Value *> Unpickler::top() {
  if (stack.size() <= fence())
    return fail("the stack is empty");
  return stack.back();
}

llvm::Expected<std::vector<Value *>> Unpickler::popMark() {
  if (marks.empty())
    return fail("there is no MARK");
  size_t mark = marks.back();
  marks.pop_back();
  std::vector<Value *> items(stack.begin() + mark, stack.end());
  stack.resize(mark);
  return items;
}

llvm::Error Unpickler::pushTuple(size_t count) {
  if (stack.size() - fence() < count)
    return fail(llvm::formatv("needs {0} value{1} on the stack", count, count == 1 ? "" : "s"));
  Value *tuple = make(Kind::Tuple);
  tuple->items.assign(stack.end() - count, stack.end());
  stack.resize(stack.size() - count);
  push(tuple);
  return llvm::Error::success();
}

llvm::Error Unpickler::memoize(uint64_t index) {
  llvm::Expected<Value *> value = top();
  if (!value)
    return value.takeError();
  memo[index] = *value;
  return llvm::Error::success();
}

llvm::Error Unpickler::recall(uint64_t index) {
  auto it = memo.find(index);
  if (it == memo.end())
    return fail(llvm::formatv("memo entry {0} was never stored", index));
  push(it->second);
  return llvm::Error::success();
}

llvm::Error Unpickler::setItems(Value *dict, llvm::ArrayRef<Value *> items) {
  if (dict->kind != Kind::Dict)
    return fail(llvm::Twine("cannot set items of a ") + kindName(dict->kind));
  if (items.size() % 2 != 0)
    return fail("a key has no value");
  llvm::append_range(dict->items, items);
  return llvm::Error::success();
}

/// BINPERSID: torch.save's ('storage', storage_type, key, location, numel).
llvm::Expected<Value *> Unpickler::persistentStorage(Value *pid) {
  const std::vector<Value *> &f = pid->items;
  bool wellFormed = pid->kind == Kind::Tuple && f.size() == 5 && f[0]->kind == Kind::String &&
                    f[0]->text == "storage" && f[1]->kind == Kind::StorageClass &&
                    f[2]->kind == Kind::String && f[3]->kind == Kind::String &&
                    f[4]->kind == Kind::Int;
  if (!wellFormed)
    return fail("the persistent id is not ('storage', <storage class>, key, location, numel)");
  const std::string &key = f[2]->text;
  if (key.empty() || llvm::StringRef(key).contains('/') || llvm::StringRef(key).contains('\0'))
    return fail("storage key '" + key + "' is not a file name");
  if (f[4]->integer < 0)
    return fail("storage '" + key + "' has a negative size");
  const DTypeInfo *dtype = f[1]->dtype;
  uint64_t numel = f[4]->integer, bytesPer = dtype ? dtype->bytes : 1;
  if (numel > UINT64_MAX / 16)
    return fail("storage '" + key + "' claims an impossible size");
  Value *storage = make(Kind::Storage);
  storage->storage = {key, f[3]->text, dtype, numel * bytesPer};
  return storage;
}

/// An int tuple (a size or stride), or nullopt.
static std::optional<llvm::SmallVector<int64_t>> intTuple(const Value *value) {
  if (value->kind != Kind::Tuple)
    return std::nullopt;
  llvm::SmallVector<int64_t> ints;
  for (const Value *item : value->items) {
    if (item->kind != Kind::Int)
      return std::nullopt;
    ints.push_back(item->integer);
  }
  return ints;
}

/// An empty dict (or OrderedDict), as backward hooks and tensor metadata are.
static bool isEmptyDict(const Value *value) {
  return value->kind == Kind::Dict && value->items.empty();
}

/// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
///                    backward_hooks[, metadata])
/// _rebuild_tensor_v3(untyped_storage, storage_offset, size, stride, requires_grad,
///                    backward_hooks, dtype[, metadata])
llvm::Expected<Value *> Unpickler::rebuildTensor(llvm::ArrayRef<Value *> args, bool v3) {
  size_t required = v3 ? 7 : 6;
  llvm::StringRef function = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
  if (args.size() != required && args.size() != required + 1)
    return fail(llvm::formatv("{0} takes {1} or {2} arguments, got {3}", function, required,
                              required + 1, args.size()));
  std::optional<llvm::SmallVector<int64_t>> sizes = intTuple(args[2]), strides = intTuple(args[3]);
  if (args[0]->kind != Kind::Storage || args[1]->kind != Kind::Int || !sizes || !strides ||
      args[4]->kind != Kind::Bool || args[5]->kind != Kind::Dict)
    return fail(llvm::formatv("the arguments of {0} are not (storage, int, sizes, strides, "
                              "bool, dict, ...)",
                              function));
  if (!isEmptyDict(args[5]))
    return fail("tensors with backward hooks are not supported");
  if (args.size() == required + 1 && !isEmptyDict(args.back()))
    return fail("tensors with extra metadata (conjugate or negative bits, ...) are not "
                "supported");
  if (sizes->size() != strides->size())
    return fail(
        llvm::formatv("the tensor has {0} sizes but {1} strides", sizes->size(), strides->size()));
  if (llvm::any_of(*sizes, [](int64_t s) { return s < 0; }))
    return fail("the tensor has a negative size");
  const StorageRef &storage = args[0]->storage;
  const DTypeInfo *dtype = storage.dtype;
  if (v3) {
    if (dtype || args[6]->kind != Kind::DType)
      return fail("_rebuild_tensor_v3 needs an untyped storage and a dtype");
    dtype = args[6]->dtype;
  } else if (!dtype) {
    return fail("_rebuild_tensor_v2 needs a typed storage");
  }
  Value *tensor = make(Kind::Tensor);
  PickledTensor &t = tensor->tensor;
  t.storageKey = storage.key;
  t.dtype = dtype->name.str();
  t.elementBytes = dtype->bytes;
  t.storageBytes = storage.bytes;
  t.location = storage.location;
  t.storageOffset = args[1]->integer;
  t.sizes = std::move(*sizes);
  t.strides = std::move(*strides);
  t.requiresGrad = args[4]->integer != 0;
  return tensor;
}

/// _rebuild_parameter(data, requires_grad, backward_hooks[, state]): the parameter's
/// Python attributes (`state`) do not change its data and are ignored.
llvm::Expected<Value *> Unpickler::rebuildParameter(llvm::ArrayRef<Value *> args) {
  if (args.size() < 3 || args[0]->kind != Kind::Tensor || args[1]->kind != Kind::Bool ||
      args[2]->kind != Kind::Dict)
    return fail("the arguments of _rebuild_parameter are not (tensor, bool, dict, ...)");
  if (!isEmptyDict(args[2]))
    return fail("parameters with backward hooks are not supported");
  Value *parameter = make(Kind::Tensor);
  parameter->tensor = args[0]->tensor;
  parameter->tensor.requiresGrad = args[1]->integer != 0;
  parameter->tensor.isParameter = true;
  return parameter;
}

llvm::Error Unpickler::reduce() {
  llvm::Expected<Value *> args = pop();
  if (!args)
    return args.takeError();
  llvm::Expected<Value *> function = pop();
  if (!function)
    return function.takeError();
  if ((*function)->kind != Kind::Callable)
    return fail(llvm::Twine("cannot call a ") + kindName((*function)->kind) + " ('" +
                (*function)->text + "')");
  if ((*args)->kind != Kind::Tuple)
    return fail(llvm::Twine("the arguments are a ") + kindName((*args)->kind) + ", not a tuple");
  llvm::ArrayRef<Value *> arguments = (*args)->items;
  llvm::Expected<Value *> result = nullptr;
  switch ((*function)->callable) {
  case Callable::OrderedDict:
    if (!arguments.empty())
      return fail("OrderedDict is called with arguments");
    result = make(Kind::Dict);
    break;
  case Callable::RebuildTensorV2:
  case Callable::RebuildTensorV3:
    result = rebuildTensor(arguments, (*function)->callable == Callable::RebuildTensorV3);
    break;
  case Callable::RebuildParameter:
  case Callable::RebuildParameterWithState:
    if (arguments.size() != ((*function)->callable == Callable::RebuildParameter ? 3u : 4u))
      return fail((*function)->text + " is called with " + llvm::Twine(arguments.size()) +
                  " arguments");
    result = rebuildParameter(arguments);
    break;
  }
  if (!result)
    return result.takeError();
  push(*result);
  return llvm::Error::success();
}

/// Runs one pickle opcode. One flat switch arm per opcode of the protocol (each a few
/// lines), so it is long by nature; splitting it would only scatter the instruction set.
llvm::Error Unpickler::step(uint8_t code, bool &stop) {
  using llvm::Error;
  auto pushNew = [&](Kind kind, int64_t integer = 0) -> Error {
    Value *value = make(kind);
    value->integer = integer;
    push(value);
    return Error::success();
  };
  // Runs `fn` on a little-endian argument of type T.
  auto withArg = [&](auto tag, auto fn) -> Error {
    auto arg = readLittle<decltype(tag)>();
    if (!arg)
      return arg.takeError();
    return fn(*arg);
  };
  switch (code) {
  case 0x80: // PROTO
    return withArg(uint8_t(), [&](uint8_t version) -> Error {
      if (version < 2 || version > 5)
        return fail(llvm::formatv("protocol {0} is not one torch.save writes (2 - 5)", version));
      return Error::success();
    });
  case 0x95: // FRAME: only a hint for buffering
    return withArg(uint64_t(), [](uint64_t) { return Error::success(); });
  case '.': // STOP
    stop = true;
    return Error::success();
  case '(': // MARK
    marks.push_back(stack.size());
    return Error::success();
  case 'N': // NONE
    return pushNew(Kind::None);
  case 0x88: // NEWTRUE
    return pushNew(Kind::Bool, 1);
  case 0x89: // NEWFALSE
    return pushNew(Kind::Bool, 0);
  case 'K': // BININT1
    return withArg(uint8_t(), [&](uint8_t v) { return pushNew(Kind::Int, v); });
  case 'M': // BININT2
    return withArg(uint16_t(), [&](uint16_t v) { return pushNew(Kind::Int, v); });
  case 'J': // BININT
    return withArg(int32_t(), [&](int32_t v) { return pushNew(Kind::Int, v); });
  case 0x8a: // LONG1
    return withArg(uint8_t(), [&](uint8_t n) -> Error {
      llvm::Expected<llvm::StringRef> bytes = readBytes(n);
      return bytes ? pushLong(*bytes) : bytes.takeError();
    });
  case 'G': { // BINFLOAT: big-endian
    llvm::Expected<llvm::StringRef> bytes = readBytes(8);
    if (!bytes)
      return bytes.takeError();
    Value *value = make(Kind::Float);
    uint64_t bits = llvm::support::endian::read<uint64_t, llvm::endianness::big>(bytes->data());
    std::memcpy(&value->real, &bits, sizeof(double));
    push(value);
    return Error::success();
  }
  case 'X': // BINUNICODE
    return withArg(uint32_t(), [&](uint32_t n) { return pushString(n); });
  case 0x8c: // SHORT_BINUNICODE
    return withArg(uint8_t(), [&](uint8_t n) { return pushString(n); });
  case 0x8d: // BINUNICODE8
    return withArg(uint64_t(), [&](uint64_t n) { return pushString(n); });
  case ')': // EMPTY_TUPLE
    return pushTuple(0);
  case 0x85: // TUPLE1
    return pushTuple(1);
  case 0x86: // TUPLE2
    return pushTuple(2);
  case 0x87: // TUPLE3
    return pushTuple(3);
  case 't': { // TUPLE
    llvm::Expected<std::vector<Value *>> items = popMark();
    if (!items)
      return items.takeError();
    Value *tuple = make(Kind::Tuple);
    tuple->items = std::move(*items);
    push(tuple);
    return Error::success();
  }
  case ']': // EMPTY_LIST
    return pushNew(Kind::List);
  case '}': // EMPTY_DICT
    return pushNew(Kind::Dict);
  case 'a':   // APPEND
  case 'e': { // APPENDS
    std::vector<Value *> items;
    if (code == 'a') {
      llvm::Expected<Value *> item = pop();
      if (!item)
        return item.takeError();
      items.push_back(*item);
    } else {
      llvm::Expected<std::vector<Value *>> marked = popMark();
      if (!marked)
        return marked.takeError();
      items = std::move(*marked);
    }
    llvm::Expected<Value *> list = top();
    if (!list)
      return list.takeError();
    if ((*list)->kind != Kind::List)
      return fail(llvm::Twine("cannot append to a ") + kindName((*list)->kind));
    llvm::append_range((*list)->items, items);
    return Error::success();
  }
  case 's': { // SETITEM
    llvm::Expected<Value *> value = pop();
    if (!value)
      return value.takeError();
    llvm::Expected<Value *> key = pop();
    if (!key)
      return key.takeError();
    llvm::Expected<Value *> dict = top();
    if (!dict)
      return dict.takeError();
    return setItems(*dict, {*key, *value});
  }
  case 'u': { // SETITEMS
    llvm::Expected<std::vector<Value *>> items = popMark();
    if (!items)
      return items.takeError();
    llvm::Expected<Value *> dict = top();
    if (!dict)
      return dict.takeError();
    return setItems(*dict, *items);
  }
  case 'c': { // GLOBAL
    llvm::Expected<llvm::StringRef> module = readLine();
    if (!module)
      return module.takeError();
    llvm::Expected<llvm::StringRef> name = readLine();
    if (!name)
      return name.takeError();
    return pushGlobal(*module, *name);
  }
  case 0x93: { // STACK_GLOBAL
    llvm::Expected<Value *> name = pop();
    if (!name)
      return name.takeError();
    llvm::Expected<Value *> module = pop();
    if (!module)
      return module.takeError();
    if ((*module)->kind != Kind::String || (*name)->kind != Kind::String)
      return fail("the module and name are not strings");
    return pushGlobal((*module)->text, (*name)->text);
  }
  case 'R': // REDUCE
    return reduce();
  case 'b': { // BUILD: an OrderedDict's attributes (state_dict()'s `_metadata`)
    llvm::Expected<Value *> state = pop();
    if (!state)
      return state.takeError();
    llvm::Expected<Value *> object = top();
    if (!object)
      return object.takeError();
    if ((*object)->kind != Kind::Dict)
      return fail(llvm::Twine("cannot set the state of a ") + kindName((*object)->kind));
    return Error::success();
  }
  case 'Q': { // BINPERSID
    llvm::Expected<Value *> pid = pop();
    if (!pid)
      return pid.takeError();
    llvm::Expected<Value *> storage = persistentStorage(*pid);
    if (!storage)
      return storage.takeError();
    push(*storage);
    return Error::success();
  }
  case 'q': // BINPUT
    return withArg(uint8_t(), [&](uint8_t i) { return memoize(i); });
  case 'r': // LONG_BINPUT
    return withArg(uint32_t(), [&](uint32_t i) { return memoize(i); });
  case 0x94: // MEMOIZE
    return memoize(memo.size());
  case 'h': // BINGET
    return withArg(uint8_t(), [&](uint8_t i) { return recall(i); });
  case 'j': // LONG_BINGET
    return withArg(uint32_t(), [&](uint32_t i) { return recall(i); });
  default:
    return fail("this opcode is not one torch.save writes for a dict of tensors");
  }
}

llvm::Expected<PickledTensorDict> Unpickler::result(Value *value) {
  if (value->kind != Kind::Dict)
    return llvm::createStringError(llvm::Twine("the pickle holds a value of type ") +
                                   kindName(value->kind) + ", not a dict of tensors");
  PickledTensorDict entries;
  llvm::StringMap<size_t> index;
  for (size_t i = 0; i + 1 < value->items.size(); i += 2) {
    const Value *key = value->items[i], *tensor = value->items[i + 1];
    if (key->kind != Kind::String)
      return llvm::createStringError(llvm::Twine("the dict has a key of type ") +
                                     kindName(key->kind));
    if (tensor->kind != Kind::Tensor)
      return llvm::createStringError("entry '" + key->text + "' is of type " +
                                     kindName(tensor->kind) + ", not a tensor");
    // A repeated key replaces the earlier value in place, as in Python.
    auto [it, inserted] = index.try_emplace(key->text, entries.size());
    if (inserted)
      entries.emplace_back(key->text, tensor->tensor);
    else
      entries[it->second].second = tensor->tensor;
  }
  return entries;
}

llvm::Expected<PickledTensorDict> Unpickler::run() {
  bool stop = false;
  while (!stop) {
    if (pos >= data.size())
      return llvm::createStringError(
          llvm::formatv("the pickle ends at byte {0} without STOP", data.size()).str());
    opcodeAt = pos;
    opcode = static_cast<uint8_t>(data[pos++]);
    if (llvm::Error error = step(opcode, stop))
      return std::move(error);
  }
  llvm::Expected<Value *> value = pop();
  if (!value)
    return value.takeError();
  return result(*value);
}

llvm::Expected<PickledTensorDict> tgc::pt2::readTorchSavePickle(llvm::StringRef pickle) {
  return Unpickler(pickle).run();
}
