// The interpreter's reads and writes of Python state that existed before the call: the
// guard list (docs/guards.md, Frontend/Trace/Guards.cpp) and the replay list
// (docs/replay.md, Frontend/Trace/Replay.cpp) are made of them.
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;
using ReadStep = GuardRead::Step;

/// Whether a read value can make a guard: constants, instances (their type), externals.
static bool isGuardable(const Heap &heap, const Var &value) {
  switch (value->kind) {
  case K::None:
  case K::Bool:
  case K::Float:
  case K::Str:
  case K::Tuple:
  case K::External:
    return true;
  case K::Int:
    return value->getConstantInt().has_value();
  case K::Object:
    return heap.get(value->object).kind == H::Instance;
  default:
    return false;
  }
}

void Interpreter::noteRead(ReadStep step, ObjectId object, llvm::StringRef name, Var key, Var value,
                           Location loc) {
  if (!value || heap.get(object).traceId < 0)
    return;
  bool contents = step == ReadStep::Item || step == ReadStep::Length || step == ReadStep::Keys;
  if (writtenTargets.count(
          {object, contents ? 1 : 0, step == ReadStep::Cell || contents ? "" : name.str()}))
    return;
  if (step != ReadStep::Length && step != ReadStep::Keys && !isGuardable(heap, value))
    return;
  if (step == ReadStep::Item && !key->is(K::Str) && !key->getConstantInt())
    return;
  guardReads.push_back({step, object, name.str(), key, value, loc});
}

HeapObject &Interpreter::mutateObject(ObjectId id, SideEffect::Kind kind, llvm::StringRef name,
                                      Var value, Location loc) {
  if (heap.get(id).traceId >= 0)
    sideEffects.push_back({kind, id, name.str(), value, loc});
  bool contents = kind == SideEffect::Kind::SetContents;
  writtenTargets.insert(
      {id, contents ? 1 : 0, contents || kind == SideEffect::Kind::SetCell ? "" : name.str()});
  return heap.mutate(id);
}
