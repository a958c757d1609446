"""`tgc.load`: a compiled model.so bound to the live module or function it came from."""

import ctypes
import hashlib as _hashlib
import json as _json
import os as _os
import warnings

import torch

from . import guards as _guards
from . import replay as _replay
from . import runner as _runner
from .dlpack import (TensorArgs, borrow_tensor, managed_array, take_outputs, tensor_arg,
                     write_tensor)
from .runtime import Model, TgcError, kDLCUDA

try:
    from torch.autograd.graph import increment_version as _increment_version
except ImportError:  # pragma: no cover - older torch
    def _increment_version(t):
        pass


def _flatten_tensors(value, out):
    """Tensors of a call argument in capture order (lists, tuples, dicts nested)."""
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten_tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten_tensors(v, out)
    return out


def _build_structure(spec, outputs, replayed=()):
    """The returned value described by model.json's `output_structure`: an integer is
    user output N; {"tuple"|"list": [spec...]}, {"dict": [[key, spec]...]},
    {"size": [spec...]} a torch.Size, {"const": value}, {"float": repr} a float JSON
    cannot hold as one (integral, infinite, NaN), {"replayed": i} the value of the replay
    list's i-th `return` action (`replayed`: an object or function the program made,
    docs/replay.md)."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        return outputs[spec]
    if isinstance(spec, dict) and len(spec) == 1:
        (tag, payload), = spec.items()
        if tag == "tuple":
            return tuple(_build_structure(s, outputs, replayed) for s in payload)
        if tag == "size":
            return torch.Size(_build_structure(s, outputs, replayed) for s in payload)
        if tag == "float" and isinstance(payload, str):
            return float(payload)
        if tag == "list":
            return [_build_structure(s, outputs, replayed) for s in payload]
        if tag == "dict":
            return {k: _build_structure(s, outputs, replayed) for k, s in payload}
        if tag == "const":
            return payload
        if tag == "replayed" and isinstance(payload, int) and 0 <= payload < len(replayed):
            return replayed[payload]
    raise TgcError(f"tgc: bad output_structure entry {spec!r}")



def _on_torch_stream(model):
    """A CUDA model's next call runs on torch's current stream (docs/cuda.md), queued
    after the work that made its inputs; its outputs are ready where torch uses them."""
    if model.device_type == kDLCUDA:
        model.set_cuda_stream(torch.cuda.current_stream().cuda_stream)

class _Instance:
    """One `tgc_model` instance and what it last received from the live module."""

    def __init__(self, path, name=None, signature=None):
        self.model = Model(path, name, signature)
        self.pushed = {}  # state name -> key of the live tensor's last pushed value
        self.owner = None  # the _Pending of the forward whose saved values it holds

    @property
    def pending(self):
        return self.owner is not None

    def set_state(self, name, ptr):
        self.model._check(self.model._lib.tgc_model_set_state(
            self.model._handle, name.encode(), ptr), f"set_state('{name}')")

    def get_state(self, name, ptr):
        self.model._check(self.model._lib.tgc_model_get_state(
            self.model._handle, name.encode(), ptr), f"get_state('{name}')")


class _Results:
    """How the outputs of one graph become the call's result: which are Python state
    (model.json marks them; docs/replay.md) for the replay list, and the returned value's
    structure."""

    def __init__(self, signature, num_outputs):
        self.replay = signature.get("replay", [])
        self.structure = signature.get("output_structure")
        entries = signature.get("outputs")
        if isinstance(entries, list) and len(entries) == num_outputs:
            state_outputs = {i for i, e in enumerate(entries)
                             if isinstance(e, dict) and e.get("kind") == "python_state"}
        else:
            state_outputs = _replay.replay_outputs(self.replay)
        self.returned = [i for i in range(num_outputs) if i not in state_outputs]


class _Pending:
    """Marks an instance busy until its backward runs or the autograd graph holding
    this object is freed (a forward whose backward never comes)."""

    def __init__(self, inst):
        self.inst = inst
        inst.owner = self

    def release(self):
        if self.inst is not None and self.inst.owner is self:
            self.inst.owner = None
        self.inst = None

    def __del__(self):
        self.release()


# State the compiler adds (`tgc.rng_state`, docs/design.md) belongs to the instance, not
# to the bound module: it is neither pushed nor pulled.
_INTERNAL_STATE = "tgc."


class CompiledModule:
    """The callable `tgc.load` returns. Calling it runs the model.so on the caller's
    tensors (zero-copy), keeps the live module's parameters and buffers and the
    instance's state in sync, writes mutations back and replays Python side effects."""

    def __init__(self, path, fn=None, train=False, on_guard_failure="raise"):
        if on_guard_failure not in ("raise", "eager"):
            raise ValueError(f"tgc.load: on_guard_failure must be 'raise' or 'eager', "
                             f"not {on_guard_failure!r}")
        self.path = path
        self.fn = fn
        self.train = train
        self.on_guard_failure = on_guard_failure
        self._warned = False
        self._free = [_Instance(path)]
        first = self._free[0].model
        self.signature = first.signature or {}
        self.name = first.name
        self.input_names = first.input_names
        self.num_outputs = first.num_outputs
        if train and not first.trainable:
            raise TgcError(f"tgc.load: '{path}' is not trainable (compile it with "
                           f"`tgc compile --train`)")
        self.gradient_names = first.gradient_names if first.trainable else []
        self.mutated_inputs = [i for i, m in enumerate(first.input_mutated) if m]
        self.has_gradient = [
            first.output_has_gradient(i) != 0 if first.trainable else False
            for i in range(self.num_outputs)]

        self._bind_state(fn, first.state, [self.signature])
        self._results = _Results(self.signature, self.num_outputs)
        # Contiguous strides of each input as captured (what input_metadata is relative to).
        self._arrival_strides = {}
        for entry in self.signature.get("inputs", []):
            if isinstance(entry, dict) and all(isinstance(s, int) for s in entry.get("shape", [])):
                strides, n = [], 1
                for size in reversed(entry["shape"]):
                    strides.insert(0, n)
                    n *= max(size, 1)
                self._arrival_strides[entry["name"]] = strides
        self._guards = self.signature.get("guards", [])
        # Gradient i -> index among the autograd.Function's tensor arguments
        # (user inputs first, then the parameters named by the gradients).
        self._grad_params = [g for g in self.gradient_names if not g.startswith("input.")]

    def _bind_state(self, fn, state, signatures):
        """The live state the model's `state` ({name: kind}) follows: the nn.Module's
        parameters and buffers, and tensors read from Python objects (the `source` of
        state entries in `signatures`, each graph's model.json object); the buffers the
        forward and the backward write."""
        # The live nn.Module whose parameters and buffers are the model's state.
        module = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
        self.module = module if isinstance(module, torch.nn.Module) else None
        self._state = []  # (name, "parameter"|"buffer")
        # State the program read from Python objects outside the module (a global
        # tensor, `self.prev`): refreshed from its source before each call.
        self._sources = {e["name"]: e["source"] for sig in signatures
                         for e in sig.get("state", [])
                         if isinstance(e, dict) and "source" in e} if fn is not None else {}
        self._call = ((), {})
        for name, kind in state.items():
            if name in self._sources:
                self._state.append((name, kind))
        if self.module is not None:
            for name, kind in state.items():
                if (kind not in ("parameter", "buffer") or name in self._sources
                        or name.startswith(_INTERNAL_STATE)):
                    continue
                if self._live(name, kind) is None:
                    raise TgcError(f"tgc.load: the model's {kind} '{name}' is not a "
                                   f"{kind} of the {type(self.module).__name__} it is "
                                   f"bound to")
                self._state.append((name, kind))
        if any(sig.get("mutations") is None for sig in signatures):
            # no model.json: every buffer may have changed
            self._buffer_mutations = [n for n, k in self._state if k == "buffer"]
            self._backward_buffer_mutations = list(self._buffer_mutations)
            return
        self._buffer_mutations = list(dict.fromkeys(
            m["target"] for sig in signatures for m in sig["mutations"]
            if m["kind"] == "buffer" and not m["target"].startswith(_INTERNAL_STATE)))
        self._backward_buffer_mutations = list(dict.fromkeys(
            m["target"] for sig in signatures for m in sig.get("backward_mutations", [])
            if m["kind"] == "buffer" and not m["target"].startswith(_INTERNAL_STATE)))

    # ------------------------------------------------------------------ state sync
    def _live(self, name, kind):
        if name in self._sources:
            try:
                live = _replay._Context(self.fn, [], self._call).resolve(self._sources[name])
            except TgcError:
                return None
            return live if isinstance(live, torch.Tensor) else None
        if self.module is None:
            return None
        try:
            if kind == "parameter":
                return self.module.get_parameter(name)
            return self.module.get_buffer(name)
        except AttributeError:
            return None

    @staticmethod
    def _key(t):
        return (id(t), t.data_ptr(), t._version, tuple(t.shape), t.dtype)

    def _push_state(self, inst):
        """Copies every live parameter/buffer the instance has not seen into it."""
        for name, kind in self._state:
            t = self._live(name, kind)
            if t is None and name in self._sources:
                raise TgcError(f"tgc: {self._sources[name]} (state '{name}') is not a tensor "
                               f"any more")
            if t is None:
                raise TgcError(f"tgc: the bound module no longer has {kind} '{name}'")
            key = self._key(t)
            if inst.pushed.get(name) == key:
                continue
            ptr, keep = tensor_arg(t, f"{kind} '{name}'")
            inst.set_state(name, ptr)
            del keep
            inst.pushed[name] = key

    def _pull_buffers(self, inst, names):
        """Writes the instance's value of each mutated buffer into the live buffer."""
        for name in names:
            t = self._live(name, "buffer")
            if t is None:
                continue
            ptr, keep = tensor_arg(t, f"buffer '{name}'")
            inst.get_state(name, ptr)
            del keep
            _increment_version(t)
            inst.pushed[name] = self._key(t)

    def _acquire(self):
        for i, inst in enumerate(self._free):
            if not inst.pending:
                return inst
        inst = self._new_instance()  # every instance awaits a backward
        self._free.append(inst)
        return inst

    def _new_instance(self):
        return _Instance(self.path)

    # ------------------------------------------------------------------ calls
    def _inputs(self, args, kwargs):
        tensors = _flatten_tensors(list(args), [])
        named = {}
        for key, value in kwargs.items():
            if isinstance(value, torch.Tensor) and key in self.input_names:
                named[key] = value
            else:
                _flatten_tensors(value, tensors)
        if named:  # keyword tensors bind by input name, the rest in order
            rest = iter(tensors)
            tensors = [named[n] if n in named else next(rest, None)
                       for n in self.input_names]
            if any(t is None for t in tensors):
                raise TgcError(f"tgc: expected inputs {self.input_names}")
        return tensors

    def run(self, inst, inputs, train):
        """tgc_model_run / _run_train on `inputs`: torch outputs owning the runtime's
        buffers, and the TensorArgs (keep it while a backward may write the inputs)."""
        m = inst.model
        _on_torch_stream(m)
        args = TensorArgs(inputs)
        out = managed_array(self.num_outputs)
        fn = m._lib.tgc_model_run_train if train else m._lib.tgc_model_run
        rc = fn(m._handle, args.array, args.count, out, self.num_outputs)
        if rc != 0:
            raise TgcError(f"tgc: {self.name}: {m.last_error()}")
        return take_outputs(out, self.num_outputs), args

    def backward(self, inst, grad_outputs):
        m = inst.model
        _on_torch_stream(m)
        args = TensorArgs([g if has else None
                           for g, has in zip(grad_outputs, self.has_gradient)],
                          "grad output")
        n = len(self.gradient_names)
        out = managed_array(n)
        rc = m._lib.tgc_model_backward(m._handle, args.array, args.count, out, n)
        if rc != 0:
            raise TgcError(f"tgc: {self.name} backward: {m.last_error()}")
        return take_outputs(out, n)

    def _guards_hold(self, args, kwargs):
        if not self._guards or self.fn is None:
            return True
        try:
            _guards.check(self._guards, self.fn, (args, kwargs))
        except _guards.GuardError:
            return False
        return True

    def _guard(self, guards, args, kwargs):
        """Checks `guards`; None when they hold, else the eager result (or raises)."""
        if not guards or self.fn is None:
            return None
        try:
            _guards.check(guards, self.fn, (args, kwargs))
        except _guards.GuardError as e:
            if self.on_guard_failure != "eager":
                raise
            if not self._warned:
                warnings.warn(f"{e}; calling {self.name} eagerly", stacklevel=3)
                self._warned = True
            return (self.fn(*args, **kwargs),)
        return None

    def accepts(self, args, kwargs):
        """Whether a call with (args, kwargs) may run this model: its guards hold and the
        tensors match the captured inputs (dtype, and every static size; a symbolic
        size matches any). tgc.compile(..., on_guard_failure="recompile") compiles again
        for a call no variant accepts."""
        if not self._guards_hold(args, kwargs):
            return False
        try:
            inputs = self._inputs(args, kwargs)
        except TgcError:
            return False
        specs = [e for e in self.signature.get("inputs", []) if isinstance(e, dict)]
        if len(inputs) != len(specs):
            return False
        for t, spec in zip(inputs, specs):
            if not isinstance(t, torch.Tensor):
                return False
            if "dtype" in spec and str(t.dtype).replace("torch.", "") != spec["dtype"]:
                return False
            shape = spec.get("shape")
            if shape is not None and (len(shape) != t.dim() or any(
                    isinstance(s, int) and s != n for s, n in zip(shape, t.shape))):
                return False
        return True

    def _run_tensors(self, inputs, call=((), {})):
        """Runs the model on `inputs` with the live state: all its outputs (Python state
        ones included); mutated inputs and buffers are written back. `call`: the
        (args, kwargs) the state's sources may name."""
        self._call = call
        params = [self._live(name, "parameter") for name in self._grad_params]
        needs_grad = (self.train and torch.is_grad_enabled() and
                      any(t.requires_grad for t in inputs + params
                          if isinstance(t, torch.Tensor)))
        inst = self._acquire()
        self._push_state(inst)
        if needs_grad:
            outputs = list(_TgcFunction.apply(self, inst, len(inputs), *inputs, *params))
        else:
            outputs, _ = self.run(inst, inputs, train=False)
        for i in self.mutated_inputs:
            if i < len(inputs):
                _increment_version(inputs[i])
        self._pull_buffers(inst, self._buffer_mutations)
        return outputs

    def _finish(self, outputs, args, kwargs, inputs=None, results=None, grad_hooks=None):
        """Applies in-place metadata changes of inputs, replays the Python state and
        builds the returned value (as `results` says, by default the model's);
        `grad_hooks` gets the hooks of the replay's `grad_hook` actions."""
        results = results or self._results
        for change in self.signature.get("input_metadata", []) if inputs else []:
            i = self.input_names.index(change["input"])
            self._restride(inputs[i], change)
        replayed = []
        if results.replay:
            replayed = _replay.apply(results.replay, self.fn, outputs, (args, kwargs),
                                     grad_hooks)
        if results.structure is not None:
            return _build_structure(results.structure, outputs, replayed)
        returned = [outputs[i] for i in results.returned]
        return returned[0] if len(returned) == 1 else tuple(returned)

    def __call__(self, *args, **kwargs):
        eager = self._guard(self._guards, args, kwargs)
        if eager is not None:
            return eager[0]
        inputs = self._inputs(args, kwargs)
        hook = self._backward_hook()
        if hook is None:
            outputs = self._run_tensors(inputs, (args, kwargs))
            return self._finish(outputs, args, kwargs, inputs)
        # The module's backward hooks see its inputs' and outputs' gradients, as
        # nn.Module.__call__ sets them up around forward (docs/replay.md).
        hooked = self._inputs(hook.setup_input_hook(args), kwargs)
        outputs = self._run_tensors(hooked, (args, kwargs))
        return hook.setup_output_hook(self._finish(outputs, args, kwargs, inputs))

    def _backward_hook(self):
        """A torch.utils.hooks.BackwardHook of the live module's full backward hooks and
        backward pre-hooks (tgc does not compile the compiled module's own), or None when
        it has none or no gradient will flow."""
        module = self.fn
        if not (self.train and torch.is_grad_enabled() and isinstance(module, torch.nn.Module)
                and (module._backward_hooks or module._backward_pre_hooks)):
            return None
        full, non_full = module._get_backward_hooks()
        if non_full:
            raise TgcError("tgc: register_backward_hook (a non-full module backward hook) is "
                           "not supported; register_full_backward_hook is")
        return torch.utils.hooks.BackwardHook(module, full, module._get_backward_pre_hooks())

    def _restride(self, t, change):
        """`x.t_()` in the program: the caller's tensor gets the sizes/strides the
        program left it with (relative to the layout it was captured with)."""
        arrived = self._arrival_strides.get(change["input"])
        if arrived is not None and tuple(t.stride()) != tuple(arrived):
            raise TgcError(f"tgc: input '{change['input']}' changes its metadata in place, "
                           f"but arrived with strides {tuple(t.stride())}, not the captured "
                           f"{tuple(arrived)}")
        with torch.no_grad():
            t.as_strided_(change["sizes"], change["strides"],
                          t.storage_offset() + change["offset"])

    def __repr__(self):
        return (f"<tgc.CompiledModule {self.name!r} from {self.path!r} "
                f"inputs={self.input_names} train={self.train}>")


def _module_hooks(module, call, pointers):
    """One stage of a submodule call's backward hooks, as torch.utils.hooks.BackwardHook
    runs them (docs/graph-breaks.md, `module_hook`). `pointers` are the gradients of the
    call's tensor results (stage "output", NULL where none reached one) or of its tensor
    arguments followed by the results' (stage "input"); what the hooks return is written
    back into them."""
    if not isinstance(module, torch.nn.Module):
        raise TgcError(f"tgc: the backward hooks #{call['hook']} are on a "
                       f"{type(module).__name__}, not a module")
    where = call.get("where", "?")
    grads = [None if not p else borrow_tensor(p) for p in pointers]

    def pack(spec, values):
        packed = [None] * spec["arity"]
        for position, value in zip(spec["positions"], values):
            packed[position] = value
        return tuple(packed)

    def write(spec, packed, targets, what):
        if len(packed) != spec["arity"]:
            raise RuntimeError(f"the backward hook of the module called at {where} returned "
                               f"{len(packed)} {what}, not {spec['arity']}")
        for position, pointer in zip(spec["positions"], targets):
            value = packed[position]
            if pointer is None or not pointer:
                if value is not None:
                    raise TgcError(f"tgc: a backward hook of the module called at {where} "
                                   f"gave a gradient where none flowed (not supported)")
                continue
            grad = borrow_tensor(pointer)
            if value is None:
                value = torch.zeros_like(grad)
            if not isinstance(value, torch.Tensor) or value.shape != grad.shape:
                raise RuntimeError(f"the backward hook of the module called at {where} "
                                   f"returned {type(value).__name__} "
                                   f"{tuple(getattr(value, 'shape', ()))} for a gradient of "
                                   f"size {tuple(grad.shape)}")
            write_tensor(pointer, value)

    full, non_full = module._get_backward_hooks()
    if non_full:
        raise TgcError("tgc: register_backward_hook (a non-full module backward hook) is not "
                       "supported; register_full_backward_hook is")
    if call["stage"] == "output":
        grad_outputs = pack(call, grads)
        for pre_hook in module._get_backward_pre_hooks():
            result = pre_hook(module, grad_outputs)
            if result is not None:
                grad_outputs = tuple(result)
                write(call, grad_outputs, pointers, "grad_output")
        inputs = call.get("inputs") or {"positions": [], "arity": 0}
        if full and not inputs["positions"]:
            # No argument requires grad: the full hooks run now, with None gradients.
            grad_inputs = pack(inputs, [])
            for full_hook in full:
                result = full_hook(module, grad_inputs, grad_outputs)
                if result is not None and not all(g is None for g in result):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return
    n = len(call["positions"])
    grad_inputs = pack(call, grads[:n])
    grad_outputs = pack(call.get("outputs") or {"positions": [], "arity": 0}, grads[n:])
    for full_hook in full:
        result = full_hook(module, grad_inputs, grad_outputs)
        if result is not None:
            grad_inputs = tuple(result)
            write(call, grad_inputs, pointers[:n], "grad_input")


class _TgcFunction(torch.autograd.Function):
    """forward: tgc_model_run_train; backward: tgc_model_backward. Tensor arguments are
    the user inputs, then the live parameters the model differentiates, so autograd
    accumulates their gradients into `param.grad` as eager does."""

    @staticmethod
    def forward(ctx, compiled, inst, num_inputs, *tensors):
        outputs, args = compiled.run(inst, list(tensors[:num_inputs]), train=True)
        ctx.pending = _Pending(inst)
        ctx.compiled, ctx.inst, ctx.num_inputs = compiled, inst, num_inputs
        ctx.num_tensors = len(tensors)
        ctx.args = args  # inputs the backward mutates stay valid until then
        ctx.mark_non_differentiable(*[o for o, has in zip(outputs, compiled.has_gradient)
                                      if not has])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        compiled, inst = ctx.compiled, ctx.inst
        if ctx.pending.inst is not inst:
            raise TgcError("tgc: backward called twice for one forward (the saved values "
                           "are freed after the first; retain_graph is not supported)")
        grads = compiled.backward(inst, grad_outputs)
        ctx.pending.release()
        ctx.args = None
        compiled._pull_buffers(inst, compiled._backward_buffer_mutations)
        result = [None] * ctx.num_tensors
        for name, g in zip(compiled.gradient_names, grads):
            if name.startswith("input."):
                index = int(name[len("input."):])
            else:
                index = ctx.num_inputs + compiled._grad_params.index(name)
            if index < ctx.num_tensors:
                result[index] = g
        return (None, None, None, *result)


class CompiledProgram(CompiledModule):
    """What `tgc.load` returns for a program compiled with `--allow-graph-breaks`
    (docs/graph-breaks.md): libtgc_runner.so runs its graphs as model.json's "program"
    says (the executor `tgc run` uses too); the calls between graphs (print) run here, in
    Python, with the values the program passed. State, guards, the replay list and
    autograd work as for one model: with `train=True` (compiled with `--train`) the call
    is one autograd.Function whose backward runs the graphs' backwards."""

    def __init__(self, path, json_value, fn=None, train=False, on_guard_failure="raise"):
        if on_guard_failure not in ("raise", "eager"):
            raise ValueError(f"tgc.load: on_guard_failure must be 'raise' or 'eager', "
                             f"not {on_guard_failure!r}")
        self.path = path
        self.fn = fn
        self.train = train
        self.on_guard_failure = on_guard_failure
        self._warned = False
        self._free = [self._new_instance()]
        first = self._free[0]
        self.signature = json_value
        self.name = json_value.get("name", "")
        self._graphs = {g["name"]: g for g in json_value["graphs"]}
        self.input_names = first.input_names
        if train and not first.trainable:
            raise TgcError(f"tgc.load: '{path}' is not trainable (compile it with "
                           f"`tgc compile --train`)")
        self.gradient_names = first.gradient_names if first.trainable else []
        self._grad_params = [g for g in self.gradient_names if not g.startswith("input.")]
        self._bind_state(fn, first.state, list(self._graphs.values()))
        # A path's guards are about the state before the call, so all of them are
        # checked up front (conservative: a read only another path makes may refuse).
        self._guards, seen = [], set()
        for g in json_value["graphs"]:
            for guard in g.get("guards", []):
                key = _json.dumps(guard, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    self._guards.append(guard)
        # What the last run returned (set by run()).
        self.num_outputs = 0
        self.has_gradient = []
        self.mutated_inputs = []
        self._result = None
        self._ran = None  # the instance of the last run

    def _new_instance(self):
        return _runner.ProgramInstance(self.path)

    def _argument(self, value, tensors):
        """A call step's argument as Python passes it (`tensors`: the call's tensors)."""
        if isinstance(value, list):
            return [self._argument(v, tensors) for v in value]
        if not isinstance(value, dict):
            return value
        kind = value.get("type")
        if kind == "tensor":
            number = value.get("number")  # a Python number computed from a tensor
            t = tensors[value["index"]]
            return {"float": float, "int": int, "bool": bool}[number](t.item()) if number else t
        if kind == "tuple":
            items = tuple(self._argument(v, tensors) for v in value["items"])
            cls = value.get("class")
            return _replay.external(cls["name"])(items) if cls else items
        if kind == "float":
            return float(value["value"])
        raise TgcError(f"tgc: {self.path}: unknown program value {value!r}")

    def _perform(self, call_json, tensors, count):
        """A call step of the program (the runner's callback)."""
        call = _json.loads(call_json)
        values = [borrow_tensor(tensors[i]) for i in range(count)]
        callee = _replay.external(call["callee"])
        callee(*self._argument(call["args"], values),
               **{k: self._argument(v, values) for k, v in call["kwargs"]})

    def run(self, inst, inputs, train):
        """tgc_program_run on `inputs`: the result graph's outputs (torch tensors owning
        the runtime's buffers) and the TensorArgs (keep it while a backward may write the
        inputs)."""
        lib, handle = inst.lib, inst.handle
        args = TensorArgs(inputs)
        raised = []

        def call(user, call_json, tensors, count):
            try:
                self._perform(call_json, tensors, count)
                return 0
            except BaseException as e:  # noqa: BLE001 - re-raised after the run
                raised.append(e)
                return 1

        rc = lib.tgc_program_run(handle, args.array, args.count, int(train),
                                 _runner.CALL_FN(call), None)
        if raised:
            raise raised[0]
        if rc != 0:
            raise TgcError(f"tgc: {self.name}: {inst.last_error()}")
        n = lib.tgc_program_num_outputs(handle)
        out = managed_array(n)
        inst.check(lib.tgc_program_take_outputs(handle, out, n), f"tgc: {self.name}")
        outputs = take_outputs(out, n)
        inst.result = lib.tgc_program_result_graph(handle).decode()
        inst.has_gradient = [lib.tgc_program_output_has_gradient(handle, i) == 1
                             for i in range(n)]
        self.num_outputs, self.has_gradient = n, inst.has_gradient
        inst.grad_hooks = []  # the result graph's replay fills them (__call__)
        self._ran = inst
        self.mutated_inputs = [i for i in range(len(inputs))
                               if lib.tgc_program_input_is_mutated(handle, i) == 1]
        self._result = _Results(self._graphs[inst.result], n)
        return outputs, args

    def backward(self, inst, grad_outputs):
        args = TensorArgs([g if has else None
                           for g, has in zip(grad_outputs, inst.has_gradient)],
                          "grad output")
        n = len(self.gradient_names)
        out = managed_array(n)
        hooks = getattr(inst, "grad_hooks", [])
        raised = []

        def hook(user, call_json, tensors, count):
            """A gradient hook of the program on a tensor it computed: the hook gets
            the gradient, and what it returns (not None) replaces it, as in eager. Or
            a stage of a submodule call's backward hooks (_module_hooks)."""
            try:
                call = _json.loads(call_json)
                number = call.get("hook")
                if not isinstance(number, int) or not 0 <= number < len(hooks):
                    raise TgcError(f"tgc: {self.name}: the program has no gradient hook "
                                   f"#{number}")
                if "stage" in call:
                    _module_hooks(hooks[number], call, [tensors[i] for i in range(count)])
                    return 0
                grad = borrow_tensor(tensors[0])
                result = hooks[number](grad)
                if result is not None:
                    if not isinstance(result, torch.Tensor) or result.shape != grad.shape:
                        raise RuntimeError(
                            f"hook at {call.get('where', '?')} returned "
                            f"{type(result).__name__} "
                            f"{tuple(getattr(result, 'shape', ()))}, not a tensor of the "
                            f"gradient's size {tuple(grad.shape)}")
                    write_tensor(tensors[0], result)
                return 0
            except BaseException as e:  # noqa: BLE001 - re-raised after the backward
                raised.append(e)
                return 1

        rc = inst.lib.tgc_program_backward_with_hooks(inst.handle, args.array, args.count,
                                                      out, n, _runner.CALL_FN(hook), None)
        if raised:
            raise raised[0]
        if rc != 0:
            raise TgcError(f"tgc: {self.name} backward: {inst.last_error()}")
        return take_outputs(out, n)

    def __call__(self, *args, **kwargs):
        eager = self._guard(self._guards, args, kwargs)
        if eager is not None:
            return eager[0]
        inputs = self._inputs(args, kwargs)
        outputs = self._run_tensors(inputs, (args, kwargs))
        # (input metadata changes do not cross graph breaks)
        hooks = []
        result = self._finish(outputs, args, kwargs, results=self._result, grad_hooks=hooks)
        self._ran.grad_hooks = hooks  # for the backward of this call
        return result

    def accepts(self, args, kwargs):
        """Whether the program's guards hold for (args, kwargs) (each graph checks its own
        inputs when it runs)."""
        return self._guards_hold(args, kwargs)

    def __repr__(self):
        return (f"<tgc.CompiledProgram {self.name!r} from {self.path!r} "
                f"graphs={list(self._graphs)}>")


def _check_json_hash(path, text, value):
    """Refuses a model.json that is not the one compiled with the library at `path`
    (edited, or another model's): model.so embeds the SHA-256 of its model.json as
    `<name>_json_sha256` (docs/abi.md)."""
    name = value.get("name") if isinstance(value, dict) else None
    where = _os.path.splitext(path)[0] + ".json"
    if not isinstance(name, str):
        raise TgcError(f"tgc: {where} has no model name")
    lib = ctypes.CDLL(_os.path.abspath(path), mode=_os.RTLD_LOCAL | _os.RTLD_NOW)
    try:
        embedded = (ctypes.c_char * 65).in_dll(lib, f"{name}_json_sha256").value.decode()
    except ValueError:
        raise TgcError(f"tgc: {where} does not belong to {path}: the library has no "
                       f"{name}_json_sha256 (the JSON is another model's, or an older tgc "
                       f"compiled the library)") from None
    if embedded != _hashlib.sha256(text).hexdigest():
        raise TgcError(f"tgc: {where} does not match {path} (its SHA-256 differs from the "
                       f"one the library embeds: the JSON was edited or comes from another "
                       f"compile)")


def load(path, fn=None, train=False, on_guard_failure="raise"):
    """Loads a model.so compiled by `tgc compile` and binds it to `fn`, the live
    nn.Module (or function / bound method) it was captured or exported from:
    `tgc.load(path, fn)(*args)` behaves like `fn(*args)`. With `train=True` (a model
    compiled with `--train`) the call is differentiable through torch.autograd.

    Before each call the model's guards (model.json "guards", docs/guards.md) are checked
    against `fn`, the arguments and the modules' globals: when the Python state the
    program reads differs from the captured one, the call raises `tgc.GuardError`, or
    with `on_guard_failure="eager"` calls `fn` eagerly instead (warning once).

    A program compiled with `--allow-graph-breaks` (model.json has a "program") runs as
    several graphs with the Python steps between them (docs/graph-breaks.md)."""
    stem = _os.path.splitext(_os.path.abspath(path))[0]
    if _os.path.exists(stem + ".json"):
        with open(stem + ".json", "rb") as f:
            text = f.read()
        value = _json.loads(text)
        _check_json_hash(path, text, value)
        if isinstance(value, dict) and "program" in value:
            return CompiledProgram(path, value, fn, train, on_guard_failure)
    return CompiledModule(path, fn, train, on_guard_failure)
