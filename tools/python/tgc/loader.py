"""`tgc.load`: a compiled model.so bound to the live module or function it came from."""

import ctypes
import json as _json
import os as _os
import warnings

import torch

from . import guards as _guards
from . import replay as _replay
from .dlpack import TensorArgs, managed_array, take_outputs, tensor_arg
from .runtime import Model, TgcError

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


def _build_structure(spec, outputs):
    """The returned value described by model.json's `output_structure`: an integer is
    user output N; {"tuple"|"list": [spec...]}, {"dict": [[key, spec]...]},
    {"const": value}."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        return outputs[spec]
    if isinstance(spec, dict) and len(spec) == 1:
        (tag, payload), = spec.items()
        if tag == "tuple":
            return tuple(_build_structure(s, outputs) for s in payload)
        if tag == "list":
            return [_build_structure(s, outputs) for s in payload]
        if tag == "dict":
            return {k: _build_structure(s, outputs) for k, s in payload}
        if tag == "const":
            return payload
    raise TgcError(f"tgc: bad output_structure entry {spec!r}")


class _Instance:
    """One `tgc_model` instance and what it last received from the live module."""

    def __init__(self, path, name=None, signature=None):
        self.model = Model(path, name, signature)
        self.pushed = {}  # state name -> key of the live tensor's last pushed value
        self.owner = None  # the _Pending of the forward whose saved values it holds

    @property
    def pending(self):
        return self.owner is not None


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


class CompiledModule:
    """The callable `tgc.load` returns. Calling it runs the model.so on the caller's
    tensors (zero-copy), keeps the live module's parameters and buffers and the
    instance's state in sync, writes mutations back and replays Python side effects."""

    def __init__(self, path, fn=None, train=False, on_guard_failure="raise", graph=None):
        """`graph`: (name, signature) of one graph of a program with graph breaks."""
        if on_guard_failure not in ("raise", "eager"):
            raise ValueError(f"tgc.load: on_guard_failure must be 'raise' or 'eager', "
                             f"not {on_guard_failure!r}")
        self.path = path
        self.fn = fn
        self.train = train
        self.on_guard_failure = on_guard_failure
        self._warned = False
        self._graph = graph or (None, None)
        self._free = [_Instance(path, *self._graph)]
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

        # The live nn.Module whose parameters and buffers are the model's state.
        module = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
        self.module = module if isinstance(module, torch.nn.Module) else None
        self._state = []  # (name, "parameter"|"buffer")
        # State the program read from Python objects outside the module (a global
        # tensor, `self.prev`): refreshed from its source before each call.
        self._sources = {e["name"]: e["source"] for e in self.signature.get("state", [])
                         if isinstance(e, dict) and "source" in e} if fn is not None else {}
        self._call = ((), {})
        for name, kind in first.state.items():
            if name in self._sources:
                self._state.append((name, kind))
        if self.module is not None:
            for name, kind in first.state.items():
                if kind not in ("parameter", "buffer") or name in self._sources:
                    continue
                if self._live(name, kind) is None:
                    raise TgcError(f"tgc.load: the model's {kind} '{name}' is not a "
                                   f"{kind} of the {type(self.module).__name__} it is "
                                   f"bound to")
                self._state.append((name, kind))
        json_mutations = self.signature.get("mutations")
        if json_mutations is None:  # no model.json: every buffer may have changed
            self._buffer_mutations = [n for n, k in self._state if k == "buffer"]
            self._backward_buffer_mutations = list(self._buffer_mutations)
        else:
            self._buffer_mutations = [m["target"] for m in json_mutations
                                      if m["kind"] == "buffer"]
            self._backward_buffer_mutations = [
                m["target"] for m in self.signature.get("backward_mutations", [])
                if m["kind"] == "buffer"]
        self._replay = self.signature.get("replay", [])
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
        self._structure = self.signature.get("output_structure")
        # python_state outputs (model.json marks them; docs/replay.md) are the replay's
        # tensors, not returned to the caller.
        entries = self.signature.get("outputs")
        if isinstance(entries, list) and len(entries) == self.num_outputs:
            state_outputs = {i for i, e in enumerate(entries)
                             if isinstance(e, dict) and e.get("kind") == "python_state"}
        else:
            state_outputs = _replay.replay_outputs(self._replay)
        self._returned = [i for i in range(self.num_outputs) if i not in state_outputs]
        # Gradient i -> index among the autograd.Function's tensor arguments
        # (user inputs first, then the parameters named by the gradients).
        self._grad_params = [g for g in self.gradient_names if not g.startswith("input.")]

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
            inst.model._check(inst.model._lib.tgc_model_set_state(
                inst.model._handle, name.encode(), ptr), f"set_state('{name}')")
            del keep
            inst.pushed[name] = key

    def _pull_buffers(self, inst, names):
        """Writes the instance's value of each mutated buffer into the live buffer."""
        for name in names:
            t = self._live(name, "buffer")
            if t is None:
                continue
            ptr, keep = tensor_arg(t, f"buffer '{name}'")
            inst.model._check(inst.model._lib.tgc_model_get_state(
                inst.model._handle, name.encode(), ptr), f"get_state('{name}')")
            del keep
            _increment_version(t)
            inst.pushed[name] = self._key(t)

    def _acquire(self):
        for i, inst in enumerate(self._free):
            if not inst.pending:
                return inst
        inst = _Instance(self.path, *self._graph)  # every instance awaits a backward
        self._free.append(inst)
        return inst

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
        args = TensorArgs(inputs)
        out = managed_array(self.num_outputs)
        fn = m._lib.tgc_model_run_train if train else m._lib.tgc_model_run
        rc = fn(m._handle, args.array, args.count, out, self.num_outputs)
        if rc != 0:
            raise TgcError(f"tgc: {self.name}: {m.last_error()}")
        return take_outputs(out, self.num_outputs), args

    def backward(self, inst, grad_outputs):
        m = inst.model
        args = TensorArgs([g if has else None
                           for g, has in zip(grad_outputs, self.has_gradient)],
                          "grad output")
        n = len(self.gradient_names)
        out = managed_array(n)
        rc = m._lib.tgc_model_backward(m._handle, args.array, args.count, out, n)
        if rc != 0:
            raise TgcError(f"tgc: {self.name} backward: {m.last_error()}")
        return take_outputs(out, n)

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

    def _finish(self, outputs, args, kwargs, inputs=None):
        """Applies in-place metadata changes of inputs, replays the Python state and
        builds the returned value."""
        for change in self.signature.get("input_metadata", []) if inputs else []:
            i = self.input_names.index(change["input"])
            self._restride(inputs[i], change)
        if self._replay:
            _replay.apply(self._replay, self.fn, outputs, (args, kwargs))
        if self._structure is not None:
            return _build_structure(self._structure, outputs)
        returned = [outputs[i] for i in self._returned]
        return returned[0] if len(returned) == 1 else tuple(returned)

    def __call__(self, *args, **kwargs):
        eager = self._guard(self._guards, args, kwargs)
        if eager is not None:
            return eager[0]
        inputs = self._inputs(args, kwargs)
        outputs = self._run_tensors(inputs, (args, kwargs))
        return self._finish(outputs, args, kwargs, inputs)

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


class CompiledProgram:
    """What `tgc.load` returns for a program compiled with `--allow-graph-breaks`
    (docs/graph-breaks.md): its graphs, each a CompiledModule over one model of the
    model.so, run as model.json's "program" says; the calls between graphs (print) run
    here, in Python, with the values the program passed. With `train=True` (compiled
    with `--train`) the call is differentiable: each graph is an autograd.Function."""

    def __init__(self, path, json_value, fn=None, train=False, on_guard_failure="raise"):
        self.path = path
        self.fn = fn
        self.name = json_value.get("name", "")
        self.program = json_value["program"]
        # With train=True each graph is a torch.autograd.Function of its own; autograd
        # chains their backwards through the tensors that cross the breaks.
        self.graphs = {g["name"]: CompiledModule(path, fn, train, on_guard_failure,
                                                 graph=(g["name"], g))
                       for g in json_value["graphs"]}
        self.input_names = self.program["inputs"]
        # A path's guards are about the state before the call, so all of them are
        # checked up front (conservative: a read only another path makes may refuse).
        self._guards, seen = [], set()
        for g in json_value["graphs"]:
            for guard in g.get("guards", []):
                key = _json.dumps(guard, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    self._guards.append(guard)
        self._first = self.graphs[self.program["nodes"][0]["graph"]]

    def _argument(self, value, env):
        if isinstance(value, list):
            return [self._argument(v, env) for v in value]
        if not isinstance(value, dict):
            return value
        kind = value.get("type")
        if kind == "tensor":
            number = value.get("number")  # a Python number computed from a tensor
            t = env[value["value"]]
            return {"float": float, "int": int, "bool": bool}[number](t.item()) if number else t
        if kind == "tuple":
            items = tuple(self._argument(v, env) for v in value["items"])
            cls = value.get("class")
            return _replay.external(cls["name"])(items) if cls else items
        if kind == "float":
            return float(value["value"])
        raise TgcError(f"tgc: {self.path}: unknown program value {value!r}")

    def __call__(self, *args, **kwargs):
        eager = self._first._guard(self._guards, args, kwargs)
        if eager is not None:
            return eager[0]
        env = dict(enumerate(self._first._inputs(args, kwargs)))
        nodes = self.program["nodes"]
        node = nodes[0]
        for _ in range(len(nodes)):
            graph = self.graphs[node["graph"]]
            outputs = graph._run_tensors([env[i] for i in node["inputs"]], (args, kwargs))
            then = node["then"]
            if then["kind"] == "return":
                return graph._finish(outputs, args, kwargs)  # (metadata: not across breaks)
            env.update(zip(node["outputs"], outputs))
            if then["kind"] == "call":
                callee = _replay.external(then["callee"])
                callee(*self._argument(then["args"], env),
                       **{k: self._argument(v, env) for k, v in then["kwargs"]})
                node = nodes[then["next"]]
            elif then["kind"] == "branch":
                node = nodes[then["true"] if bool(env[then["condition"]]) else then["false"]]
            else:
                raise TgcError(f"tgc: {self.path}: unknown program step {then['kind']!r}")
        raise TgcError(f"tgc: {self.path}: the program does not end")

    def __repr__(self):
        return (f"<tgc.CompiledProgram {self.name!r} from {self.path!r} "
                f"graphs={list(self.graphs)}>")


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
        with open(stem + ".json") as f:
            value = _json.load(f)
        if isinstance(value, dict) and "program" in value:
            return CompiledProgram(path, value, fn, train, on_guard_failure)
    return CompiledModule(path, fn, train, on_guard_failure)
