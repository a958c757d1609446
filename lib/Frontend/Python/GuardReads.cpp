// The interpreter's reads of Python state that existed before the call: what the guard
// list (docs/guards.md, Frontend/Trace/Guards.cpp) is made of.
#include "Interpreter.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::py;

using K = Variable::Kind;
using H = HeapObject::Kind;
using Step = GuardRead::Step;

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

void Interpreter::noteRead(Step step, ObjectId object, llvm::StringRef name, Var key, Var value,
                           Location loc) {
  if (!value || heap.get(object).traceId < 0)
    return;
  bool contents = step == Step::Item || step == Step::Length || step == Step::Keys;
  if (writtenTargets.count({object, contents ? 1 : 0, step == Step::Cell || contents ? "" : name.str()}))
    return;
  if (step != Step::Length && step != Step::Keys && !isGuardable(heap, value))
    return;
  if (step == Step::Item && !key->is(K::Str) && !key->getConstantInt())
    return;
  guardReads.push_back({step, object, name.str(), key, value, loc});
}
