// The guard list (docs/guards.md): the interpreter's reads of pre-existing Python state
// -> `tgc.guards`.
#include "Guards.h"
#include "Replay.h"

#include "tgc/Dialect/Attributes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::frontend;
using namespace tgc::py;
using namespace tgc::trace;

namespace gd = tgc::guard;
namespace rp = tgc::replay;
using K = Variable::Kind;
using H = HeapObject::Kind;
using Step = GuardRead::Step;

namespace {

/// Encodes observed values in the replay value encoding (docs/replay.md).
class GuardBuilder {
public:
  GuardBuilder(const TraceFile &trace, const Interpreter &interpreter, MLIRContext *ctx)
      : heap(interpreter.getHeap()), sources(computeSources(trace)), ctx(ctx), b(ctx) {}

  /// Adds the guards of `value`, read at `source`.
  void addValue(const std::string &source, const Var &value);
  /// `distinct` tells apart guards of one kind on one source (hasattr of two names).
  void add(const std::string &source, llvm::StringRef kind, Attribute value,
           llvm::StringRef distinct = "") {
    // nn.Module's hook dicts are keyed by handle ids, which differ in every process: a
    // source through one of their items, or their key set, names nothing stable.
    if (throughHookDict(source) ||
        (kind == gd::kKeysEqual && llvm::StringRef(source).ends_with("hooks")))
      return;
    if (!seen.insert((source + "\n" + kind + "\n" + distinct).str()).second)
      return;
    guards.push_back(b.getDictionaryAttr({b.getNamedAttr(gd::kKindKey, b.getStringAttr(kind)),
                                          b.getNamedAttr(gd::kSourceKey, b.getStringAttr(source)),
                                          b.getNamedAttr(gd::kValueKey, value)}));
  }
  /// The source of heap object `id`, "" when it has none.
  std::string sourceOf(ObjectId id) const {
    int64_t trace = heap.get(id).traceId;
    return trace >= 0 && size_t(trace) < sources.size() ? sources[trace] : "";
  }
  /// A constant (None, bool, int, float, str, tuple of those), or null.
  Attribute encodeConstant(const Var &value);
  /// A class as a `ref` or `external` value, or null.
  Attribute encodeClass(const Var &cls);

  const Heap &heap;
  std::vector<std::string> sources;
  MLIRContext *ctx;
  Builder b;
  llvm::StringSet<> seen;
  SmallVector<Attribute> guards;
};

} // namespace

Attribute GuardBuilder::encodeConstant(const Var &value) {
  switch (value->kind) {
  case K::None:
    return UnitAttr::get(ctx);
  case K::Bool:
    return b.getBoolAttr(value->boolValue);
  case K::Int:
    if (std::optional<int64_t> i = value->getConstantInt())
      return b.getI64IntegerAttr(*i);
    return {};
  case K::Float:
    return b.getF64FloatAttr(value->floatValue);
  case K::Str:
    return b.getStringAttr(value->name);
  case K::Tuple: {
    if (value->tupleClass)
      return {};
    SmallVector<Attribute> items;
    for (const Var &item : value->items) {
      Attribute v = encodeConstant(item);
      if (!v)
        return {};
      items.push_back(v);
    }
    return b.getDictionaryAttr({b.getNamedAttr(rp::kTypeKey, b.getStringAttr(rp::kTuple)),
                                b.getNamedAttr(rp::kItemsKey, b.getArrayAttr(items))});
  }
  default:
    return {};
  }
}

Attribute GuardBuilder::encodeClass(const Var &cls) {
  if (!cls)
    return {};
  if (cls->is(K::External))
    return b.getDictionaryAttr({b.getNamedAttr(rp::kTypeKey, b.getStringAttr(rp::kExternal)),
                                b.getNamedAttr(rp::kNameKey, b.getStringAttr(cls->name))});
  if (!cls->is(K::Object) || heap.get(cls->object).kind != H::Class)
    return {};
  std::string source = sourceOf(cls->object);
  if (source.empty())
    return {};
  return b.getDictionaryAttr({b.getNamedAttr(rp::kTypeKey, b.getStringAttr(rp::kRef)),
                              b.getNamedAttr(rp::kSourceKey, b.getStringAttr(source))});
}

void GuardBuilder::addValue(const std::string &source, const Var &value) {
  if (Attribute constant = encodeConstant(value)) {
    add(source, gd::kEquals, constant);
    return;
  }
  if (value->is(K::External)) {
    add(source, gd::kIs, encodeClass(value));
    return;
  }
  if (value->is(K::Object) && heap.get(value->object).kind == H::Instance) {
    Attribute cls = encodeClass(heap.get(value->object).classObject);
    // A class found only through this very object (`<source>.__class__`) checks nothing.
    if (auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(cls))
      if (auto ref = dict.getAs<StringAttr>(rp::kSourceKey);
          ref && (ref.getValue() == source || ref.getValue().starts_with(source + ".") ||
                  ref.getValue().starts_with(source + "[")))
        return;
    if (cls)
      add(source, gd::kTypeIs, cls);
  }
}

ArrayAttr tgc::trace::buildGuards(const TraceFile &trace, const Interpreter &interpreter,
                                  const CallArguments &call, MLIRContext *ctx) {
  GuardBuilder g(trace, interpreter, ctx);
  // Non-tensor arguments are constants of the graph (tensors are checked by the runtime).
  for (auto [i, arg] : llvm::enumerate(call.positional))
    if (Attribute constant = g.encodeConstant(arg))
      g.add("args[" + std::to_string(i) + "]", gd::kEquals, constant);
  for (const auto &[name, arg] : call.keywords)
    if (Attribute constant = g.encodeConstant(arg))
      g.add("kwargs[" + sourceStringLiteral(name) + "]", gd::kEquals, constant);
  if (std::optional<bool> mode = interpreter.getEntryGradModeRead())
    g.add(gd::kGradModeSource.str(), gd::kGradEnabled, g.b.getBoolAttr(*mode));
  // A container the program mutates is replayed as its final contents, which include
  // what it held before the call: those must still be its contents (their values are
  // guarded where the program read them; their number here).
  for (const SideEffect &effect : interpreter.getSideEffects()) {
    if (effect.kind != SideEffect::Kind::SetContents)
      continue;
    int64_t traceId = interpreter.getHeap().get(effect.object).traceId;
    std::string owner = g.sourceOf(effect.object);
    if (traceId < 0 || owner.empty())
      continue;
    llvm::Expected<const Json *> object = trace.getObject(traceId);
    if (!object) {
      llvm::consumeError(object.takeError());
      continue;
    }
    if ((*object)->contains("items") && (*object)->at("items").is_array())
      g.add(owner, gd::kLenEquals, g.b.getI64IntegerAttr((*object)->at("items").size()));
  }
  for (const GuardRead &read : interpreter.getGuardReads()) {
    std::string owner = g.sourceOf(read.object);
    if (owner.empty())
      continue;
    switch (read.step) {
    case Step::Attribute:
      g.addValue(owner + sourceAttributeStep(read.name), read.value);
      break;
    case Step::ClassEntry:
      g.addValue(owner + ".__dict__[" + sourceStringLiteral(read.name) + "]", read.value);
      break;
    case Step::Global:
      g.addValue(owner + "[" + sourceStringLiteral(read.name) + "]", read.value);
      break;
    case Step::Cell:
      g.addValue(owner + ".cell_contents", read.value);
      break;
    case Step::Item:
      g.addValue(owner + "[" +
                     (read.key->is(K::Str) ? sourceStringLiteral(read.key->name)
                                           : std::to_string(*read.key->getConstantInt())) +
                     "]",
                 read.value);
      break;
    case Step::HasAttribute:
      g.add(owner, gd::kHasAttr,
            g.b.getDictionaryAttr(
                {g.b.getNamedAttr("name", g.b.getStringAttr(read.name)),
                 g.b.getNamedAttr("present", g.b.getBoolAttr(read.value->boolValue))}),
            read.name);
      break;
    case Step::Length:
      if (Attribute n = g.encodeConstant(read.value))
        g.add(owner, gd::kLenEquals, n);
      break;
    case Step::Keys:
      if (Attribute keys = g.encodeConstant(read.value))
        g.add(owner, gd::kKeysEqual, keys);
      else if (Attribute n = g.b.getI64IntegerAttr(read.value->items.size()))
        g.add(owner, gd::kLenEquals, n);
      break;
    }
  }
  return ArrayAttr::get(ctx, g.guards);
}
