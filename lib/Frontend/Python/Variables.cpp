// Variable trackers and the copy-on-write heap.
#include "Variables.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/Support/raw_ostream.h"

using namespace tgc;
using namespace tgc::py;

std::optional<int64_t> Variable::getConstantInt() const {
  if (kind == Kind::Bool)
    return boolValue ? 1 : 0;
  if (kind != Kind::Int)
    return std::nullopt;
  if (auto constant = llvm::dyn_cast<mlir::AffineConstantExpr>(size))
    return constant.getValue();
  return std::nullopt;
}

std::optional<double> Variable::getNumber() const {
  if (kind == Kind::Float)
    return floatValue;
  if (std::optional<int64_t> i = getConstantInt())
    return static_cast<double>(*i);
  return std::nullopt;
}

Var tgc::py::makeVar(Variable v) { return std::make_shared<const Variable>(std::move(v)); }

static Var makeKind(Variable::Kind kind) {
  Variable v;
  v.kind = kind;
  return makeVar(std::move(v));
}

Var tgc::py::makeNull() { return makeKind(Variable::Kind::Null); }
Var tgc::py::makeNone() { return makeKind(Variable::Kind::None); }
Var tgc::py::makeEllipsis() { return makeKind(Variable::Kind::Ellipsis); }

Var tgc::py::makeBool(bool b) {
  Variable v;
  v.kind = Variable::Kind::Bool;
  v.boolValue = b;
  return makeVar(std::move(v));
}

Var tgc::py::makeInt(mlir::AffineExpr size) {
  Variable v;
  v.kind = Variable::Kind::Int;
  v.size = size;
  return makeVar(std::move(v));
}

Var tgc::py::makeInt(int64_t i, mlir::MLIRContext *ctx) {
  return makeInt(mlir::getAffineConstantExpr(i, ctx));
}

Var tgc::py::makeFloat(double f) {
  Variable v;
  v.kind = Variable::Kind::Float;
  v.floatValue = f;
  return makeVar(std::move(v));
}

std::vector<llvm::StringRef> tgc::py::strCharacters(llvm::StringRef text) {
  std::vector<llvm::StringRef> characters;
  for (size_t i = 0; i < text.size();) {
    // A character's bytes: its lead byte, then continuation bytes (10xxxxxx).
    size_t end = i + 1;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
      ++end;
    characters.push_back(text.slice(i, end));
    i = end;
  }
  return characters;
}

Var tgc::py::makeStr(llvm::StringRef s) {
  Variable v;
  v.kind = Variable::Kind::Str;
  v.name = s.str();
  return makeVar(std::move(v));
}

Var tgc::py::makeDType(mlir::Type type, llvm::StringRef name) {
  Variable v;
  v.kind = Variable::Kind::DType;
  v.type = type;
  v.name = name.str();
  return makeVar(std::move(v));
}

llvm::StringRef tgc::py::numberName(Variable::Number number) {
  switch (number) {
  case Variable::Number::Float:
    return "float";
  case Variable::Number::Int:
    return "int";
  case Variable::Number::Bool:
    return "bool";
  case Variable::Number::None:
    break;
  }
  return "";
}

Var tgc::py::makeTuple(std::vector<Var> items) {
  Variable v;
  v.kind = Variable::Kind::Tuple;
  v.items = std::move(items);
  return makeVar(std::move(v));
}

Var tgc::py::makeCode(py::CodeRef code) {
  Variable v;
  v.kind = Variable::Kind::Code;
  v.code = std::move(code);
  return makeVar(std::move(v));
}

Var tgc::py::makeSize(std::vector<Var> sizes) {
  Variable v;
  v.kind = Variable::Kind::Tuple;
  v.items = std::move(sizes);
  v.tupleClass = makeExternal("torch.Size");
  return makeVar(std::move(v));
}

Var tgc::py::makeObject(ObjectId id) {
  Variable v;
  v.kind = Variable::Kind::Object;
  v.object = id;
  return makeVar(std::move(v));
}

Var tgc::py::makeTensorObject(ObjectId id) {
  Variable v;
  v.kind = Variable::Kind::Tensor;
  v.object = id;
  return makeVar(std::move(v));
}

Var tgc::py::makeExternal(llvm::StringRef qualifiedName) {
  Variable v;
  v.kind = Variable::Kind::External;
  v.name = qualifiedName.str();
  return makeVar(std::move(v));
}

Var tgc::py::makeMethod(Var function, Var self) {
  Variable v;
  v.kind = Variable::Kind::Method;
  v.items = {std::move(function), std::move(self)};
  return makeVar(std::move(v));
}

Var HeapObject::getAttribute(llvm::StringRef name) const {
  for (const auto &[key, value] : attributes)
    if (key == name)
      return value;
  return nullptr;
}

void HeapObject::setAttribute(llvm::StringRef name, Var value) {
  for (auto &[key, existing] : attributes)
    if (key == name) {
      existing = std::move(value);
      return;
    }
  attributes.emplace_back(name.str(), std::move(value));
}

bool HeapObject::eraseAttribute(llvm::StringRef name) {
  for (auto it = attributes.begin(); it != attributes.end(); ++it)
    if (it->first == name) {
      attributes.erase(it);
      return true;
    }
  return false;
}

ObjectId Heap::allocate(HeapObject object) {
  objects.push_back(std::make_shared<HeapObject>(std::move(object)));
  return static_cast<ObjectId>(objects.size() - 1);
}

void Heap::restore(const Heap &checkpoint) {
  std::copy(checkpoint.objects.begin(), checkpoint.objects.end(), objects.begin());
}

HeapObject &Heap::mutate(ObjectId id) {
  if (objects[id].use_count() > 1)
    objects[id] = std::make_shared<HeapObject>(*objects[id]);
  return *objects[id];
}

//===----------------------------------------------------------------------===//
// Values in error messages
//===----------------------------------------------------------------------===//

std::string tgc::py::printSize(mlir::AffineExpr size) {
  std::string text;
  llvm::raw_string_ostream os(text);
  size.print(os);
  return text;
}

std::string tgc::py::describe(const Heap &heap, const Var &v) {
  using K = Variable::Kind;
  using H = HeapObject::Kind;
  switch (v->kind) {
  case K::None:
    return "None";
  case K::Bool:
    return "bool";
  case K::Int:
    return "int";
  case K::Float:
    return "float";
  case K::Str:
    return "str '" + v->name + "'";
  case K::Tuple:
    return "tuple";
  case K::External:
    return v->name;
  case K::Tensor:
    return "Tensor";
  case K::Object: {
    const HeapObject &h = heap.get(v->object);
    switch (h.kind) {
    case H::List:
      return "list";
    case H::Dict:
      return "dict";
    case H::Function:
      return "function " + h.qualname;
    case H::Class:
      return "class " + h.qualname;
    case H::Instance:
      return h.classObject && h.classObject->is(K::Object)
                 ? heap.get(h.classObject->object).qualname + " object"
                 : "object";
    case H::Opaque:
      return h.name + " (" + h.repr + ")";
    default:
      return "object";
    }
  }
  default:
    return "value";
  }
}

mlir::FailureOr<int64_t> tgc::py::constantIntArgument(const Var &value, llvm::StringRef what,
                                                      mlir::Location loc) {
  if (std::optional<int64_t> i = value->getConstantInt())
    return *i;
  return mlir::emitError(loc) << what << " must be an int known at capture time";
}
