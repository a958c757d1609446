// tgc-prepare-entries: the model's calling signature recorded as `tgc.abi`, and its
// entry functions shaped for lowering (docs/abi.md).
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "llvm/ADT/BitVector.h"

namespace tgc {
#define GEN_PASS_DEF_PREPAREENTRIESPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The entry functions of a model: `@forward` and, for a trainable model,
/// `@backward` (docs/training.md).
struct Entries {
  func::FuncOp forward;
  func::FuncOp backward;
};

/// A trainable model has public `@forward` and `@backward`; any other model has
/// exactly one public function.
FailureOr<Entries> findEntries(ModuleOp module) {
  Entries entries;
  SmallVector<func::FuncOp> publicFuncs;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate() && !func.isExternal())
      publicFuncs.push_back(func);
  for (func::FuncOp func : publicFuncs)
    if (func.getSymName() == abi::kBackwardKey)
      entries.backward = func;
  if (entries.backward) {
    for (func::FuncOp func : publicFuncs) {
      if (func == entries.backward)
        continue;
      if (func.getSymName() != abi::kForwardKey)
        return func.emitError("a trainable program has only @forward and @backward as "
                              "entry functions");
      entries.forward = func;
    }
    if (!entries.forward)
      return entries.backward.emitError("@backward without a @forward");
    return entries;
  }
  if (publicFuncs.size() > 1)
    return module.emitError("the program has more than one entry function");
  if (publicFuncs.empty())
    return module.emitError("the program has no entry function");
  entries.forward = publicFuncs.front();
  return entries;
}

StringRef kindOf(func::FuncOp func, unsigned index, bool result) {
  auto kind = result ? func.getResultAttrOfType<StringAttr>(index, attr::kKind)
                     : func.getArgAttrOfType<StringAttr>(index, attr::kKind);
  return kind ? kind.getValue() : StringRef();
}

/// Reads the entries' attributes into `tgc.abi`, checking what the runtime relies on.
class AbiRecorder {
public:
  AbiRecorder(ModuleOp module, const Entries &entries)
      : module(module), entries(entries), b(module.getContext()) {}

  FailureOr<DictionaryAttr> record(StringRef modelName);

  /// Per saved result of @forward: the argument it is by reference, or -1.
  SmallVector<int64_t> savedByReference;

private:
  LogicalResult recordArgs();
  LogicalResult recordResults();
  LogicalResult recordSavedResult(unsigned i);
  LogicalResult recordBackwardArgs();
  LogicalResult recordBackwardResults();
  LogicalResult checkTangentTypes();
  LogicalResult checkTensor(Type type, Location loc, const Twine &what);
  FailureOr<int64_t> targetOf(func::FuncOp func, unsigned i);
  NamedAttribute named(StringRef key, Attribute value) { return b.getNamedAttr(key, value); }

  ModuleOp module;
  Entries entries;
  Builder b;
  SmallVector<Attribute> args, results, saved, backwardResults;
  SmallVector<std::string> argNames;
  SmallVector<StringRef> argKinds;
  /// The @forward results that are user outputs, and the types of the saved ones.
  SmallVector<unsigned> userOutputResults;
  SmallVector<Type> savedTypes;
  SmallVector<int64_t> tangents;
};

} // namespace

LogicalResult AbiRecorder::checkTensor(Type type, Location loc, const Twine &what) {
  if (!llvm::isa<ValueTensorType>(type))
    return emitError(loc) << what << " must be a value tensor, got " << type;
  return success();
}

LogicalResult AbiRecorder::recordArgs() {
  func::FuncOp func = entries.forward;
  SymbolTable table(module);
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    Location loc = arg.getLoc();
    StringRef kind = kindOf(func, i, /*result=*/false);
    if (kind.empty())
      kind = abi::kUserInput;
    if (!llvm::is_contained({abi::kParameter, abi::kBuffer, abi::kConstant, abi::kUserInput}, kind))
      return emitError(loc) << "unknown argument kind '" << kind << "'";
    if (failed(checkTensor(arg.getType(), loc, "argument #" + Twine(i))))
      return failure();
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, attr::kName);
    std::string name = nameAttr ? nameAttr.str() : "input." + std::to_string(i);
    SmallVector<NamedAttribute> entry = {named(abi::kKindKey, b.getStringAttr(kind)),
                                         named(abi::kNameKey, b.getStringAttr(name)),
                                         named(abi::kTypeKey, TypeAttr::get(arg.getType()))};
    // State without a tgc.global has no initial value: the artifact reports it.
    if (kind != abi::kUserInput)
      if (auto ref = func.getArgAttrOfType<FlatSymbolRefAttr>(i, attr::kGlobal))
        if (auto global = table.lookup<GlobalOp>(ref.getValue()))
          entry.push_back(named(abi::kValueKey, global.getInitialValue()));
    args.push_back(b.getDictionaryAttr(entry));
    argNames.push_back(name);
    argKinds.push_back(kind);
  }
  return success();
}

/// The argument a mutation or gradient result `i` of `func` writes.
FailureOr<int64_t> AbiRecorder::targetOf(func::FuncOp func, unsigned i) {
  auto target = func.getResultAttrOfType<StringAttr>(i, attr::kTarget);
  if (!target)
    return func.emitError() << "result #" << i << " of @" << func.getSymName()
                            << " names no target";
  auto it = llvm::find(argNames, target.getValue());
  if (it == argNames.end())
    return func.emitError() << "result #" << i << " of @" << func.getSymName()
                            << " targets unknown '" << target.getValue() << "'";
  return int64_t(it - argNames.begin());
}

/// A saved result of @forward; a parameter or constant argument returned as is is
/// saved by reference.
LogicalResult AbiRecorder::recordSavedResult(unsigned i) {
  func::FuncOp func = entries.forward;
  Type type = func.getResultTypes()[i];
  if (failed(checkTensor(type, func.getLoc(), "saved result #" + Twine(i))))
    return failure();
  savedTypes.push_back(type);
  SmallVector<NamedAttribute> entry = {named(abi::kTypeKey, TypeAttr::get(type))};
  int64_t byReference = -1;
  Operation *terminator = func.getBody().front().getTerminator();
  if (auto arg = llvm::dyn_cast<BlockArgument>(terminator->getOperand(i))) {
    StringRef kind = argKinds[arg.getArgNumber()];
    if (kind == abi::kParameter || kind == abi::kConstant)
      byReference = arg.getArgNumber();
  }
  if (byReference >= 0)
    entry.push_back(named(abi::kArgKey, b.getI64IntegerAttr(byReference)));
  savedByReference.push_back(byReference);
  saved.push_back(b.getDictionaryAttr(entry));
  return success();
}

LogicalResult AbiRecorder::recordResults() {
  func::FuncOp func = entries.forward;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    Location loc = func.getLoc();
    StringRef kind = kindOf(func, i, /*result=*/true);
    if (entries.backward && kind == abi::kSaved) {
      if (failed(recordSavedResult(i)))
        return failure();
      continue;
    }
    if (kind.empty())
      kind = abi::kUserOutput;
    if (!llvm::is_contained(
            {abi::kUserOutput, attr::kPythonState, abi::kBufferMutation, abi::kUserInputMutation},
            kind))
      return emitError(loc) << "unknown result kind '" << kind << "'";
    Type type = func.getResultTypes()[i];
    if (failed(checkTensor(type, loc, "result #" + Twine(i))))
      return failure();
    SmallVector<NamedAttribute> entry = {named(abi::kKindKey, b.getStringAttr(kind)),
                                         named(abi::kTypeKey, TypeAttr::get(type))};
    std::string name = "output." + std::to_string(i);
    if (kind == abi::kUserOutput || kind == attr::kPythonState) {
      if (kind == attr::kPythonState) {
        auto slot = func.getResultAttrOfType<StringAttr>(i, attr::kName);
        auto output = func.getResultAttrOfType<IntegerAttr>(i, attr::kOutput);
        if (!slot || !output)
          return func.emitError() << "python_state result #" << i
                                  << " needs tgc.name and tgc.output";
        entry.push_back(named(abi::kSlotKey, slot));
        entry.push_back(named(abi::kOutputKey, b.getI64IntegerAttr(output.getInt())));
      }
      userOutputResults.push_back(i);
    } else {
      FailureOr<int64_t> target = targetOf(func, i);
      if (failed(target))
        return failure();
      name = argNames[*target];
      entry.push_back(named(abi::kTargetKey, b.getI64IntegerAttr(*target)));
    }
    entry.push_back(named(abi::kNameKey, b.getStringAttr(name)));
    results.push_back(b.getDictionaryAttr(entry));
  }
  return success();
}

/// @backward takes the saved values, then the tangents.
LogicalResult AbiRecorder::recordBackwardArgs() {
  func::FuncOp func = entries.backward;
  unsigned numArgs = func.getNumArguments(), numSaved = savedTypes.size();
  if (numArgs < numSaved)
    return func.emitError() << "@backward takes " << numArgs << " arguments but @forward saves "
                            << numSaved << " values";
  for (unsigned i = 0; i < numArgs; ++i) {
    Location loc = func.getArgument(i).getLoc();
    StringRef kind = kindOf(func, i, /*result=*/false);
    Type type = func.getArgument(i).getType();
    if (i < numSaved) {
      if (kind != abi::kSaved)
        return emitError(loc) << "argument #" << i << " of @backward must be saved value #" << i;
      if (!areMetaCompatible(type, savedTypes[i]))
        return emitError(loc) << "saved value #" << i << " is " << savedTypes[i]
                              << " in @forward but " << type << " in @backward";
      continue;
    }
    if (kind != abi::kTangent)
      return emitError(loc) << "argument #" << i
                            << " of @backward must be a tangent (saved values come first)";
    auto output = func.getArgAttrOfType<IntegerAttr>(i, attr::kOutput);
    if (!output || output.getInt() < 0 || uint64_t(output.getInt()) >= userOutputResults.size())
      return emitError(loc) << "tangent argument #" << i
                            << " needs tgc.output, the index of a user output";
    tangents.push_back(output.getInt());
  }
  return success();
}

/// @backward returns gradients and backward mutations.
LogicalResult AbiRecorder::recordBackwardResults() {
  func::FuncOp func = entries.backward;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    StringRef kind = kindOf(func, i, /*result=*/true);
    if (!llvm::is_contained({abi::kGradient, abi::kBufferMutation, abi::kUserInputMutation}, kind))
      return func.emitError() << "result #" << i << " of @backward has kind '" << kind
                              << "': expected gradient, buffer_mutation or user_input_mutation";
    Type type = func.getResultTypes()[i];
    if (failed(checkTensor(type, func.getLoc(), "result #" + Twine(i) + " of @backward")))
      return failure();
    FailureOr<int64_t> target = targetOf(func, i);
    if (failed(target))
      return failure();
    std::string name = argNames[*target];
    // The gradient of user input N is `input.N`.
    if (kind == abi::kGradient && argKinds[*target] == abi::kUserInput)
      name = "input." +
             std::to_string(llvm::count(ArrayRef(argKinds).take_front(*target), abi::kUserInput));
    backwardResults.push_back(b.getDictionaryAttr(
        {named(abi::kKindKey, b.getStringAttr(kind)), named(abi::kNameKey, b.getStringAttr(name)),
         named(abi::kTypeKey, TypeAttr::get(type)),
         named(abi::kTargetKey, b.getI64IntegerAttr(*target))}));
  }
  return success();
}

/// A tangent has its output's sizes and dtype (requires_grad may differ).
LogicalResult AbiRecorder::checkTangentTypes() {
  for (auto [i, output] : llvm::enumerate(tangents)) {
    Type forwardType = entries.forward.getResultTypes()[userOutputResults[output]];
    Type tangentType = entries.backward.getArgument(savedTypes.size() + i).getType();
    if (!areMetaCompatible(tangentType, forwardType))
      return entries.backward.emitError()
             << "tangent #" << i << " is " << tangentType << " but user output #" << output
             << " is " << forwardType;
  }
  return success();
}

FailureOr<DictionaryAttr> AbiRecorder::record(StringRef modelName) {
  if (failed(recordArgs()) || failed(recordResults()))
    return failure();
  SmallVector<NamedAttribute> entryNames = {
      named(abi::kForwardKey, entries.forward.getSymNameAttr())};
  SmallVector<NamedAttribute> abiEntries;
  if (entries.backward) {
    if (failed(recordBackwardArgs()) || failed(recordBackwardResults()) ||
        failed(checkTangentTypes()))
      return failure();
    entryNames.push_back(named(abi::kBackwardKey, entries.backward.getSymNameAttr()));
    SmallVector<NamedAttribute> backward = {
        named(abi::kSavedKey, b.getArrayAttr(saved)),
        named(abi::kTangentsKey, b.getDenseI64ArrayAttr(tangents)),
        named(abi::kResultsKey, b.getArrayAttr(backwardResults))};
    if (auto count = module->getAttrOfType<IntegerAttr>(attr::kSavedCount))
      backward.push_back(named(abi::kSavedCountKey, count));
    if (auto bytes = module->getAttrOfType<IntegerAttr>(attr::kSavedBytes))
      backward.push_back(named(abi::kSavedBytesKey, bytes));
    abiEntries.push_back(named(abi::kBackwardKey, b.getDictionaryAttr(backward)));
  }
  auto symbols = module->getAttrOfType<ArrayAttr>(TgcDialect::kSymbolsAttrName);
  abiEntries.append({named(abi::kNameKey, b.getStringAttr(modelName)),
                     named(abi::kEntriesKey, b.getDictionaryAttr(entryNames)),
                     named(abi::kSymbolsKey, symbols ? symbols : b.getArrayAttr({})),
                     named(abi::kArgsKey, b.getArrayAttr(args)),
                     named(abi::kResultsKey, b.getArrayAttr(results))});
  return b.getDictionaryAttr(abiEntries);
}

/// Drops the saved results of `forward` that are parameters or constants returned as
/// is: the backward reads those in place (docs/abi.md), so the forward entry does not
/// copy them.
static void dropReferenceSaved(func::FuncOp forward, ArrayRef<int64_t> savedByReference) {
  llvm::BitVector erase(forward.getNumResults());
  unsigned saved = 0;
  for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
    if (kindOf(forward, i, /*result=*/true) == abi::kSaved && savedByReference[saved++] >= 0)
      erase.set(i);
  Operation *terminator = forward.getBody().front().getTerminator();
  for (int i = int(erase.size()) - 1; i >= 0; --i)
    if (erase.test(i))
      terminator->eraseOperand(i);
  (void)forward.eraseResults(erase);
}

/// Appends to `backward` one `!tgc.vtensor<[sK], i8>` argument per size symbol, which
/// the runtime passes without data: lowering binds each symbol from the first argument
/// dimension that is exactly that symbol, and the backward's results may use a symbol
/// that no saved value or tangent has (docs/abi.md).
static LogicalResult addSymbolArguments(func::FuncOp backward, unsigned numSymbols) {
  MLIRContext *ctx = backward.getContext();
  for (unsigned s = 0; s < numSymbols; ++s) {
    TensorMeta meta;
    meta.sizes = {getAffineSymbolExpr(s, ctx)};
    meta.dtype = IntegerType::get(ctx, 8);
    Type type = BaseTensorType::get(ctx, /*isRef=*/false, meta);
    if (failed(backward.insertArgument(backward.getNumArguments(), type, DictionaryAttr(),
                                       backward.getLoc())))
      return failure();
  }
  return success();
}

namespace {
struct PrepareEntriesPass : public tgc::impl::PrepareEntriesPassBase<PrepareEntriesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Entries> entries = findEntries(module);
    if (failed(entries))
      return signalPassFailure();
    AbiRecorder recorder(module, *entries);
    FailureOr<DictionaryAttr> abiAttr = recorder.record(modelName);
    if (failed(abiAttr))
      return signalPassFailure();
    if (entries->backward) {
      dropReferenceSaved(entries->forward, recorder.savedByReference);
      if (failed(addSymbolArguments(entries->backward, getNumSymbols(entries->backward)))) {
        entries->backward.emitError("cannot add the size symbol arguments");
        return signalPassFailure();
      }
    }
    // tgc.abi holds these from here on.
    module->removeAttr(TgcDialect::kSymbolsAttrName);
    module->removeAttr(attr::kSavedCount);
    module->removeAttr(attr::kSavedBytes);
    module->setAttr(abi::kAbi, *abiAttr);
  }
};
} // namespace
