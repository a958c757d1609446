// The attribute vocabulary of tgc modules: the discardable attributes readers write and
// passes and the artifact read (graph signature, replay list, guards). Plain constants,
// so that every layer can name them without pulling in passes or lowering.
#ifndef TGC_DIALECT_ATTRIBUTES_H
#define TGC_DIALECT_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace tgc {

/// Function argument / result attribute names describing the graph signature.
namespace attr {
/// "parameter" | "buffer" | "constant" | "user_input" on arguments;
/// "user_output" | "buffer_mutation" | "user_input_mutation" on results; training adds
/// "tangent" / "saved" arguments and "gradient" / "saved" results (docs/training.md).
inline constexpr llvm::StringLiteral kKind = "tgc.kind";
/// The argument's name: the fqn of a parameter/buffer/constant or the input's name.
inline constexpr llvm::StringLiteral kName = "tgc.name";
/// On mutation results: the name of the argument they overwrite.
inline constexpr llvm::StringLiteral kTarget = "tgc.target";
/// On parameter/buffer/constant arguments: the `tgc.global` holding the initial value.
inline constexpr llvm::StringLiteral kGlobal = "tgc.global";
/// On tangent arguments (training): the index of the user output they are the gradient of.
inline constexpr llvm::StringLiteral kOutput = "tgc.output";
/// On mutation results of `@joint`: "forward" | "backward", the pass that writes.
inline constexpr llvm::StringLiteral kPass = "tgc.pass";
/// On mutation results of `@joint`: the version of the target the write produces.
inline constexpr llvm::StringLiteral kVersion = "tgc.version";
/// Unit attribute on the functions tgc-form-kernels outlines: one fusion group each,
/// the unit of code generation (docs/kernels.md).
inline constexpr llvm::StringLiteral kKernel = "tgc.kernel";
/// Module attributes tgc-partition sets (i64): how many values @forward saves for
/// @backward, and the bytes they add at the size symbols' hints (docs/training.md).
inline constexpr llvm::StringLiteral kSavedCount = "tgc.saved_count";
inline constexpr llvm::StringLiteral kSavedBytes = "tgc.saved_bytes";
/// Module attribute the .trace reader sets: the Python state replay list, an ArrayAttr
/// of action DictionaryAttrs (keys in `replay`, docs/replay.md).
inline constexpr llvm::StringLiteral kReplay = "tgc.replay";
/// Module attribute of a captured program: how the returned value is built from the
/// user outputs (model.json's `output_structure`, Interpreter::outputStructure).
inline constexpr llvm::StringLiteral kOutputStructure = "tgc.output_structure";
/// Module attribute of a captured program: {state name = source} for the state a
/// program reads from Python objects outside the module tree (a global tensor,
/// `self.prev`): `tgc.load` refreshes it from the live object before each call
/// (model.json state entries' `source`).
inline constexpr llvm::StringLiteral kStateSources = "tgc.state_sources";
/// Module attribute of a captured program: the user inputs whose metadata it changes in
/// place (`x.t_()`), each `{input, sizes, strides, offset}` after the call, in
/// elements of the input as it arrived (model.json's `input_metadata`).
inline constexpr llvm::StringLiteral kInputMetadata = "tgc.input_metadata";
/// Module attribute the .trace reader sets: user outputs whose eager layout is not
/// row-major (an elementwise result of transposed or permuted inputs), each `{output,
/// strides}` in elements (model.json's `output_layouts`): tgc.load returns them so.
inline constexpr llvm::StringLiteral kOutputLayouts = "tgc.output_layouts";
/// Module attribute the .trace reader sets: the guard list, an ArrayAttr of guard
/// DictionaryAttrs (keys in `guard`, docs/guards.md).
inline constexpr llvm::StringLiteral kGuards = "tgc.guards";
/// `tgc.kind` of @forward results that hold a tensor of the Python state the program
/// leaves (`tgc.name` is its slot, `tgc.output` the index replay values refer to).
inline constexpr llvm::StringLiteral kPythonState = "python_state";
} // namespace attr

/// The vocabulary of `tgc.replay` (docs/replay.md): action keys and kinds, value types.
namespace replay {
/// Keys of an action: `kind`, `source` (the target object's path), `name` (attribute
/// or global name, where the kind has one), `path` (what is written, for messages and
/// slot names), `value` (absent for deletions).
inline constexpr llvm::StringLiteral kKindKey = "kind";
inline constexpr llvm::StringLiteral kSourceKey = "source";
inline constexpr llvm::StringLiteral kNameKey = "name";
inline constexpr llvm::StringLiteral kPathKey = "path";
inline constexpr llvm::StringLiteral kValueKey = "value";
/// Action kinds.
inline constexpr llvm::StringLiteral kSetAttr = "setattr";
inline constexpr llvm::StringLiteral kDelAttr = "delattr";
inline constexpr llvm::StringLiteral kSetGlobal = "set_global";
inline constexpr llvm::StringLiteral kDelGlobal = "del_global";
inline constexpr llvm::StringLiteral kSetCell = "set_cell";
inline constexpr llvm::StringLiteral kDelCell = "del_cell";
inline constexpr llvm::StringLiteral kSetContents = "set_contents";
/// The user input at `source` (named `input`) was resized by `out=`: it gets the sizes
/// and values of `value` (a tensor), `t.resize_(v.shape); t.copy_(v)`.
inline constexpr llvm::StringLiteral kResize = "resize";
inline constexpr llvm::StringLiteral kInputKey = "input";
/// `resolve(source).register_hook(value)`: a gradient hook that changes Python state,
/// registered by the program on a tensor that existed before the call (an input, a
/// parameter); autograd runs it in backward, as in eager.
inline constexpr llvm::StringLiteral kRegisterHook = "register_hook";
/// The i-th hook of the program's `grad_hook` steps (a gradient hook that changes Python
/// state, registered on a tensor the program computes): `value` is the hook, which the
/// caller keeps for the backward instead of applying anything; only `kind`, `path` and
/// `value`.
inline constexpr llvm::StringLiteral kGradHook = "grad_hook";
/// A part of the returned value (`{"replayed": i}` in `output_structure` is the value of
/// the i-th `return` action): only `kind` and `value`.
inline constexpr llvm::StringLiteral kReturn = "return";
/// Keys of a structured value (a DictionaryAttr): `type` and, by type, `items`, `id`,
/// `class`, `attributes`, `source`, `output`, `name`.
inline constexpr llvm::StringLiteral kTypeKey = "type";
inline constexpr llvm::StringLiteral kItemsKey = "items";
inline constexpr llvm::StringLiteral kIdKey = "id";
inline constexpr llvm::StringLiteral kClassKey = "class";
inline constexpr llvm::StringLiteral kAttributesKey = "attributes";
inline constexpr llvm::StringLiteral kOutputKey = "output";
/// On a tensor value that stands for a Python number (`t.item()`): "float", "int" or
/// "bool", what the loader turns the 0-d tensor into.
inline constexpr llvm::StringLiteral kNumberKey = "number";
/// Keys of a `function` value: `code` and `globals` (sources of the code object and
/// of the module namespace), `name`, `qualname`, `defaults` ([V...] or null),
/// `kwdefaults` ([[name, V]...] or null), `closure` ([cell V...] or null),
/// `attributes`; a `cell` value's `value` (absent when empty) uses kValueKey.
inline constexpr llvm::StringLiteral kCodeKey = "code";
inline constexpr llvm::StringLiteral kGlobalsKey = "globals";
inline constexpr llvm::StringLiteral kQualnameKey = "qualname";
inline constexpr llvm::StringLiteral kDefaultsKey = "defaults";
inline constexpr llvm::StringLiteral kKwDefaultsKey = "kwdefaults";
inline constexpr llvm::StringLiteral kClosureKey = "closure";
/// Value types.
inline constexpr llvm::StringLiteral kTuple = "tuple";
inline constexpr llvm::StringLiteral kList = "list";
inline constexpr llvm::StringLiteral kDict = "dict";
inline constexpr llvm::StringLiteral kSet = "set";
inline constexpr llvm::StringLiteral kObject = "object";
inline constexpr llvm::StringLiteral kRef = "ref";
inline constexpr llvm::StringLiteral kSame = "same";
inline constexpr llvm::StringLiteral kTensor = "tensor";
inline constexpr llvm::StringLiteral kExternal = "external";
inline constexpr llvm::StringLiteral kDevice = "device";
inline constexpr llvm::StringLiteral kDType = "dtype";
inline constexpr llvm::StringLiteral kFunction = "function";
inline constexpr llvm::StringLiteral kCell = "cell";
} // namespace replay

/// The guard list (docs/guards.md): each guard has `kind`, `source` (what the program
/// read, in the replay source grammar) and `value` (in the replay value encoding).
namespace guard {
inline constexpr llvm::StringLiteral kKindKey = "kind";
inline constexpr llvm::StringLiteral kSourceKey = "source";
inline constexpr llvm::StringLiteral kValueKey = "value";
/// `type(x) == value and x == value` (None, bool, int, float, str, tuples of those).
inline constexpr llvm::StringLiteral kEquals = "equals";
/// `type(x) is value` (a class: `ref` or `external`).
inline constexpr llvm::StringLiteral kTypeIs = "type_is";
/// `x is value` (an `external`).
inline constexpr llvm::StringLiteral kIs = "is";
/// `len(x) == value`.
inline constexpr llvm::StringLiteral kLenEquals = "len_equals";
/// `tuple(x.keys()) == value` (a tuple).
inline constexpr llvm::StringLiteral kKeysEqual = "keys_equal";
/// `hasattr(source, value's name) == value's present` (hasattr, getattr with a
/// default): value `{"name": N, "present": bool}`.
inline constexpr llvm::StringLiteral kHasAttr = "hasattr";
/// `torch.is_grad_enabled() == value` (a bool): the program read the caller's grad
/// mode. Its source is always kGradModeSource.
inline constexpr llvm::StringLiteral kGradEnabled = "grad_enabled";
inline constexpr llvm::StringLiteral kGradModeSource = "torch.is_grad_enabled()";
} // namespace guard

/// A program with graph breaks (docs/graph-breaks.md): several graphs, one module each,
/// and the step the caller takes after each. The reader records on each graph's module
/// the program values of its user inputs and results and its step; Target writes them
/// into model.json's "program", whose keys are the same; the runner reads them there.
namespace program {
/// Module attributes of a graph (DenseI64ArrayAttr): the program value ("glue value")
/// of each user input of @forward, and the value each of its results defines.
inline constexpr llvm::StringLiteral kGraphInputs = "tgc.graph_inputs";
inline constexpr llvm::StringLiteral kGraphOutputs = "tgc.graph_outputs";
/// Module attribute of a graph (DictionaryAttr): what the caller does after it, with a
/// `kind` and the keys of that kind.
inline constexpr llvm::StringLiteral kStep = "tgc.step";
/// Module attribute of the first graph (ArrayAttr of StringAttr): the names of the
/// program's user inputs, program values 0..n-1 (model.json's "program" "inputs").
inline constexpr llvm::StringLiteral kProgramInputs = "tgc.program_inputs";
/// Keys of model.json's "program" and of its nodes.
inline constexpr llvm::StringLiteral kInputsKey = "inputs";
inline constexpr llvm::StringLiteral kNodesKey = "nodes";
inline constexpr llvm::StringLiteral kGraphKey = "graph";
inline constexpr llvm::StringLiteral kOutputsKey = "outputs";
inline constexpr llvm::StringLiteral kThenKey = "then";
/// Keys of a step: `kind`, then by kind `callee`, `args`, `kwargs`, `next` (call),
/// `condition`, `true`, `false` (branch), `tensor`, `hook`, `next` (grad_hook),
/// `stage`, `hook`, `tensors`, `results`, `positions`, `arity`, `next` (module_hook);
/// `where` (file:line) on any.
inline constexpr llvm::StringLiteral kKindKey = "kind";
inline constexpr llvm::StringLiteral kCalleeKey = "callee";
inline constexpr llvm::StringLiteral kArgsKey = "args";
inline constexpr llvm::StringLiteral kKwargsKey = "kwargs";
inline constexpr llvm::StringLiteral kNextKey = "next";
inline constexpr llvm::StringLiteral kConditionKey = "condition";
inline constexpr llvm::StringLiteral kTrueKey = "true";
inline constexpr llvm::StringLiteral kFalseKey = "false";
inline constexpr llvm::StringLiteral kWhereKey = "where";
inline constexpr llvm::StringLiteral kTensorKey = "tensor";
inline constexpr llvm::StringLiteral kHookKey = "hook";
inline constexpr llvm::StringLiteral kStageKey = "stage";
inline constexpr llvm::StringLiteral kResultsKey = "results";
inline constexpr llvm::StringLiteral kPositionsKey = "positions";
inline constexpr llvm::StringLiteral kArityKey = "arity";
/// In `tgc.step` only (model.json resolves it): the program value of each tensor a call
/// passes, which its arguments' `{tensor = i}` refer to by position (DenseI64ArrayAttr).
inline constexpr llvm::StringLiteral kTensorsKey = "tensors";
/// Step kinds: the program returns this graph's results; the caller calls `callee`
/// with the arguments, then runs node `next`; or it runs node `true` or `false` by
/// `bool()` of program value `condition`; or, in backward, it calls hook number `hook`
/// (the value of the path's `hook`-th `grad_hook` replay action) with the gradient of
/// program value `tensor` before the backward of the graph that defines it (nothing in
/// the forward), then runs node `next`; or it defines program values `results` as
/// program values `tensors` (a submodule call's arguments at stage `input`, its results
/// at stage `output`) and runs node `next`, and in backward calls the module's backward
/// hooks (hook number `hook`) with the gradients of `results`, then adds them to those
/// of `tensors` (docs/graph-breaks.md).
inline constexpr llvm::StringLiteral kReturn = "return";
inline constexpr llvm::StringLiteral kCall = "call";
inline constexpr llvm::StringLiteral kBranch = "branch";
inline constexpr llvm::StringLiteral kGradHook = "grad_hook";
inline constexpr llvm::StringLiteral kModuleHook = "module_hook";
/// The stages of a `module_hook` step.
inline constexpr llvm::StringLiteral kInputStage = "input";
inline constexpr llvm::StringLiteral kOutputStage = "output";
} // namespace program

/// The calling signature of a model (docs/abi.md), which tgc-prepare-entries records
/// before lowering as the module attribute `tgc.abi`, since lowering rewrites the entry
/// functions and tgc-finalize-entries drops their argument attributes; Target describes
/// model.so (signature blob, model.h, model.json) from it alone.
namespace abi {
/// The module attribute, a DictionaryAttr with the keys below.
inline constexpr llvm::StringLiteral kAbi = "tgc.abi";
/// The model's C name (StringAttr): tgc-finalize-entries names the entries
/// `<name>_forward` and `<name>_backward`; "" keeps their names.
inline constexpr llvm::StringLiteral kNameKey = "name";
/// The entry functions (DictionaryAttr of StringAttr symbol names): `forward`, and
/// `backward` for a trainable model.
inline constexpr llvm::StringLiteral kEntriesKey = "entries";
inline constexpr llvm::StringLiteral kForwardKey = "forward";
inline constexpr llvm::StringLiteral kBackwardKey = "backward";
/// The size symbols (the module's `tgc.symbols`, which the pass moves here).
inline constexpr llvm::StringLiteral kSymbolsKey = "symbols";
/// The forward entry's arguments and results (ArrayAttr of DictionaryAttr), in order;
/// the backward entry's `results` likewise.
inline constexpr llvm::StringLiteral kArgsKey = "args";
inline constexpr llvm::StringLiteral kResultsKey = "results";
/// The backward entry (DictionaryAttr, trainable models only): `saved` (ArrayAttr of
/// DictionaryAttr), `tangents` (DenseI64ArrayAttr: per tangent argument, the index among
/// the user outputs of the output it is the gradient of), `results`, and the
/// partition's `saved_count` / `saved_bytes` (i64, when it recorded them).
inline constexpr llvm::StringLiteral kSavedKey = "saved";
inline constexpr llvm::StringLiteral kTangentsKey = "tangents";
inline constexpr llvm::StringLiteral kSavedCountKey = "saved_count";
inline constexpr llvm::StringLiteral kSavedBytesKey = "saved_bytes";
/// What tgc-plan-memory planned (DictionaryAttr keyed by entry role, each with
/// `arena_bytes`: the size of the entry's last argument, the temporaries' arena;
/// `buffers` / `buffer_bytes`: the temporaries placed in it and their sizes added up;
/// `dynamic_buffers`: temporaries of dynamic size, placed at run time after the static
/// ones; `unplanned`: the allocations left to the runtime's scratch allocator).
inline constexpr llvm::StringLiteral kMemoryKey = "memory";
inline constexpr llvm::StringLiteral kArenaBytesKey = "arena_bytes";
inline constexpr llvm::StringLiteral kBuffersKey = "buffers";
inline constexpr llvm::StringLiteral kBufferBytesKey = "buffer_bytes";
inline constexpr llvm::StringLiteral kUnplannedKey = "unplanned";
inline constexpr llvm::StringLiteral kDynamicBuffersKey = "dynamic_buffers";
/// Keys of an argument, result or saved value: `kind` (below; not on saved values),
/// `name`, `type` (TypeAttr: the value tensor type, dtype and sizes), `value` (a state
/// argument's initial value, ElementsAttr), `target` (i64: the argument a mutation or
/// gradient writes), `slot` and `output` (a python_state result's slot and the index
/// `tgc.replay` refers to it by), `arg` (i64: the parameter or constant argument a
/// saved value is, read by reference).
inline constexpr llvm::StringLiteral kKindKey = "kind";
inline constexpr llvm::StringLiteral kTypeKey = "type";
inline constexpr llvm::StringLiteral kValueKey = "value";
inline constexpr llvm::StringLiteral kTargetKey = "target";
inline constexpr llvm::StringLiteral kSlotKey = "slot";
inline constexpr llvm::StringLiteral kOutputKey = "output";
inline constexpr llvm::StringLiteral kArgKey = "arg";
/// Argument kinds (the `tgc.kind` values of the entry's arguments).
inline constexpr llvm::StringLiteral kParameter = "parameter";
inline constexpr llvm::StringLiteral kBuffer = "buffer";
inline constexpr llvm::StringLiteral kConstant = "constant";
inline constexpr llvm::StringLiteral kUserInput = "user_input";
/// Result kinds: a user output, a user output holding Python state (attr::kPythonState),
/// the new value of a buffer or user input, and (backward) a gradient.
inline constexpr llvm::StringLiteral kUserOutput = "user_output";
inline constexpr llvm::StringLiteral kBufferMutation = "buffer_mutation";
inline constexpr llvm::StringLiteral kUserInputMutation = "user_input_mutation";
inline constexpr llvm::StringLiteral kGradient = "gradient";
/// The `tgc.kind` of the partition's saved results and arguments and of tangents.
inline constexpr llvm::StringLiteral kSaved = "saved";
inline constexpr llvm::StringLiteral kTangent = "tangent";
} // namespace abi

} // namespace tgc

#endif // TGC_DIALECT_ATTRIBUTES_H
