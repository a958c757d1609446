// Mutation placement: which pass (forward or backward) writes each mutation result of @joint, and
// in which order the writes of one target happen.
#include "JointGraph.h"
#include "tgc/Dialect/Attributes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace tgc {
#define GEN_PASS_DEF_PLACEMUTATIONSPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// One mutation result of @joint.
struct Write {
  unsigned resultIndex;
  Value value;
  bool backward;
};

class PlaceMutationsPass : public tgc::impl::PlaceMutationsPassBase<PlaceMutationsPass> {
public:
  void runOnOperation() override;

private:
  LogicalResult placeMutations(func::FuncOp joint);
};

} // namespace

/// Orders the writes of one target made in one pass so that each reads the one before it; fails
/// when two of them are unrelated (which one is the final value?).
static LogicalResult orderWritesOfOnePass(func::FuncOp joint, StringRef target,
                                          SmallVectorImpl<Write> &writes) {
  // In a chain, the i-th write depends on exactly i of the others.
  auto numAncestors = [&](const Write &write) {
    return llvm::count_if(writes, [&](const Write &other) {
      return other.resultIndex != write.resultIndex && other.value != write.value &&
             joint::dependsOn(write.value, other.value);
    });
  };
  SmallVector<std::pair<int64_t, Write>> ranked;
  for (const Write &write : writes)
    ranked.push_back({numAncestors(write), write});
  llvm::sort(ranked, [](const auto &a, const auto &b) {
    return std::make_pair(a.first, a.second.resultIndex) <
           std::make_pair(b.first, b.second.resultIndex);
  });
  for (unsigned i = 0; i + 1 < ranked.size(); ++i) {
    const Write &earlier = ranked[i].second, &later = ranked[i + 1].second;
    if (earlier.value == later.value || joint::dependsOn(later.value, earlier.value))
      continue;
    return joint.emitError() << "results " << earlier.resultIndex << " and " << later.resultIndex
                             << " both write '" << target << "' in "
                             << (earlier.backward ? joint::kBackward : joint::kForward)
                             << " and neither is computed from the other: the final value "
                                "of '"
                             << target << "' is ambiguous";
  }
  for (unsigned i = 0; i < ranked.size(); ++i)
    writes[i] = ranked[i].second;
  return success();
}

LogicalResult PlaceMutationsPass::placeMutations(func::FuncOp joint) {
  llvm::StringSet<> argNames;
  for (unsigned i = 0, e = joint.getNumArguments(); i < e; ++i)
    if (auto name = joint.getArgAttrOfType<StringAttr>(i, attr::kName))
      argNames.insert(name.getValue());

  DenseSet<Value> tangentDependent = joint::getTangentDependentValues(joint);
  Operation *terminator = joint.getBody().front().getTerminator();
  llvm::MapVector<StringRef, SmallVector<Write>> writesByTarget;
  for (unsigned i = 0, e = joint.getNumResults(); i < e; ++i) {
    if (!joint::isMutationKind(joint::getResultKind(joint, i)))
      continue;
    auto target = joint.getResultAttrOfType<StringAttr>(i, attr::kTarget);
    if (!target)
      return joint.emitError() << "mutation result " << i << " has no '" << attr::kTarget
                               << "' naming the argument it writes";
    if (!argNames.contains(target.getValue()))
      return joint.emitError() << "mutation result " << i << " writes '" << target.getValue()
                               << "', which no argument of @joint is named";
    Value value = terminator->getOperand(i);
    // A write its producer placed (a custom autograd.Function's backward writing a
    // buffer it does not compute from a tangent) keeps its pass.
    auto preset = joint.getResultAttrOfType<StringAttr>(i, attr::kPass);
    if (preset && preset.getValue() != joint::kBackward && preset.getValue() != joint::kForward)
      return joint.emitError() << "mutation result " << i << " has " << attr::kPass << " = '"
                               << preset.getValue() << "', expected '" << joint::kForward
                               << "' or '" << joint::kBackward << "'";
    bool backward = tangentDependent.contains(value);
    if (preset && preset.getValue() == joint::kForward && backward)
      return joint.emitError() << "mutation result " << i << " is placed in " << joint::kForward
                               << " but depends on a tangent";
    backward |= preset && preset.getValue() == joint::kBackward;
    writesByTarget[target.getValue()].push_back({i, value, backward});
  }

  // A forward write never depends on a backward one: it would depend on a tangent and so be a
  // backward write itself. Ordering within each pass is all that is left.
  Builder builder(joint.getContext());
  for (auto &[target, writes] : writesByTarget) {
    SmallVector<Write> forward, backward;
    for (const Write &write : writes)
      (write.backward ? backward : forward).push_back(write);
    if (failed(orderWritesOfOnePass(joint, target, forward)) ||
        failed(orderWritesOfOnePass(joint, target, backward)))
      return failure();
    int64_t version = 0;
    for (ArrayRef<Write> pass : {ArrayRef<Write>(forward), ArrayRef<Write>(backward)})
      for (const Write &write : pass) {
        joint.setResultAttr(
            write.resultIndex, attr::kPass,
            builder.getStringAttr(write.backward ? joint::kBackward : joint::kForward));
        joint.setResultAttr(write.resultIndex, attr::kVersion,
                            builder.getI64IntegerAttr(++version));
      }
  }
  return success();
}

void PlaceMutationsPass::runOnOperation() {
  FailureOr<func::FuncOp> joint = joint::lookupJoint(getOperation());
  if (failed(joint) || failed(placeMutations(*joint)))
    signalPassFailure();
}
