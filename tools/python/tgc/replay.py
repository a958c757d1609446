"""Applies model.json's `"replay"` list (the captured program's Python side effects) to
the live objects after a call, as docs/replay.md specifies.

Each action is `{"kind", "source", "name"?, "path", "value"?}`:

| kind           | applied as                                                      |
|----------------|-----------------------------------------------------------------|
| `setattr`      | `setattr(resolve(source), name, value)`                         |
| `delattr`      | `delattr(resolve(source), name)` if it has it                   |
| `set_global`   | `resolve(source)[name] = value` (a module's `__dict__`)         |
| `del_global`   | `resolve(source).pop(name, None)`                               |
| `set_cell`     | `resolve(source).cell_contents = value`                         |
| `del_cell`     | `del resolve(source).cell_contents`                             |
| `set_contents` | the list / dict / set at `source` keeps its identity and gets   |
|                | `value`'s items (`c[:] = items`; `c.clear(); c.update(items)`)  |
| `resize`       | the input tensor at `source` (`out=` resized it) gets `value`'s |
|                | sizes and values: `t.resize_(v.shape); t.copy_(v)`              |
| `register_hook`| `resolve(source).register_hook(value)`: a gradient hook that    |
|                | changes Python state, run by autograd in backward               |
| `grad_hook`    | nothing: `value` is a gradient hook of the program's backward,  |
|                | or a submodule whose backward hooks it runs                     |
|                | (the executor calls it, docs/graph-breaks.md); `apply` returns  |
|                | these hooks in order                                            |

A source is `root step*` with roots `fn`, `args[INT]`, `kwargs[STR]`, `globals[STR]`
(a module's namespace) and `modules[STR]` (an imported module), steps `.IDENT`,
`[INT]` and `[STR]` (STR a Python string literal as repr() writes it).

Values: JSON scalars; `{"type": "float", "value": "inf"|"-inf"|"nan"}`; `tuple`
(`items`), `list` / `set` (`id`, `items`), `dict` (`id`, `items`: [[k, v]...]),
`object` (`id`, `class`, `attributes`: [[name, v]...]; made with `cls.__new__`, no
`__init__`), `ref` (`source`: an object that existed before the call), `same` (`id`:
an object made earlier in this list), `tensor` (`output`: model output N), `external`
(`name`: a library callable or class by dotted name), `device` (`name`), `dtype`
(`name`: `torch.<name>`), a `tuple` with `class` (torch.Size, a namedtuple), `cell`
(`id`, `value` absent when empty) and `function` (`id`, `code` and `globals`: sources of
the code object and the module namespace, `name`, `qualname`, `defaults`,
`kwdefaults`, `closure`, `attributes`): `types.FunctionType(code, globals, name,
defaults, closure)`. A function's new closure cells are created (empty) before the
function and filled after it, so a cell may hold the function itself.

Every source and `ref` names an object as it was before the call: they are all
resolved, and every value built, before the first action is applied.
"""

import ast
import importlib
import os
import re
import sys
import types

from .runtime import TgcError

#: Action kinds (include/tgc/Transforms/Passes.h, namespace tgc::replay).
KINDS = ("setattr", "delattr", "set_global", "del_global", "set_cell", "del_cell",
         "set_contents", "resize", "register_hook", "grad_hook", "return")
_VALUE_KINDS = ("setattr", "set_global", "set_cell", "set_contents", "resize",
                "register_hook")
_ROOTS = ("fn", "args", "kwargs", "globals", "modules")

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A bracketed step: an integer or a Python string literal (either quote, escapes).
_BRACKET = re.compile(r"""\[\s*(-?\d+|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*\]""")


def parse_source(source):
    """`source` as (root, [(op, key)...]) with op "." (getattr) or "[]" (item);
    the root's own bracket (`args[0]`, `globals['m']`) is the first step."""
    if not isinstance(source, str):
        raise TgcError(f"tgc replay: a source must be a string, got {source!r}")
    m = _IDENT.match(source)
    if not m or m.group(0) not in _ROOTS:
        raise TgcError(f"tgc replay: source {source!r} does not start with one of "
                       f"{', '.join(_ROOTS)}")
    root, pos, steps = m.group(0), m.end(), []
    while pos < len(source):
        if source[pos] == ".":
            ident = _IDENT.match(source, pos + 1)
            if not ident:
                raise TgcError(f"tgc replay: bad source {source!r} at offset {pos}")
            steps.append((".", ident.group(0)))
            pos = ident.end()
            continue
        bracket = _BRACKET.match(source, pos)
        if not bracket:
            raise TgcError(f"tgc replay: bad source {source!r} at offset {pos}")
        steps.append(("[]", ast.literal_eval(bracket.group(1))))
        pos = bracket.end()
    if root != "fn":
        expected = int if root == "args" else str
        if not steps or steps[0][0] != "[]" or type(steps[0][1]) is not expected:
            raise TgcError(f"tgc replay: source {source!r}: `{root}` takes a "
                           f"[{'INT' if expected is int else 'STR'}] index")
    return root, steps


def callable_globals(fn):
    """The globals dict the captured bytecode ran with (a module's `forward`'s)."""
    import torch

    if isinstance(fn, torch.nn.Module):
        fn = type(fn).forward
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__globals__", None)


def module_namespace(name, fn):
    """`globals[name]`: fn's own globals when they are module `name`'s, else
    `sys.modules[name].__dict__`."""
    own = callable_globals(fn)
    if own is not None and own.get("__name__") == name:
        return own
    module = sys.modules.get(name)
    if module is not None:
        return module.__dict__
    # fn's module imported under another name (importlib from a path): the same file.
    own_file = (own or {}).get("__file__") or ""
    if own_file and os.path.splitext(os.path.basename(own_file))[0] == name.rsplit(".", 1)[-1]:
        return own
    raise TgcError(f"tgc replay: module {name!r} is not loaded")


def _item(obj, key):
    """`obj[key]` as tgc-capture walked it: a dict's or list's own entry, not what a
    subclass's `__getitem__` makes of it (transformers' ACT2FN instantiates the class
    it stores)."""
    if isinstance(obj, dict):
        return dict.__getitem__(obj, key)
    if isinstance(obj, (list, tuple)):
        return (list if isinstance(obj, list) else tuple).__getitem__(obj, key)
    return obj[key]


class _Context:
    """The roots of one call: the bound callable, the call's arguments, the model's
    outputs, and the id table of the objects the program created."""

    def __init__(self, fn, outputs, call):
        self.fn = fn
        self.outputs = outputs
        self.args, self.kwargs = call
        self.made = {}

    def resolve(self, source):
        root, steps = parse_source(source)
        try:
            if root == "fn":
                obj = self.fn
            else:
                (_, key), steps = steps[0], steps[1:]
                if root == "args":
                    obj = self.args[key]
                elif root == "kwargs":
                    obj = self.kwargs[key]
                elif root == "globals":
                    obj = module_namespace(key, self.fn)
                else:
                    obj = sys.modules[key]
            for op, key in steps:
                obj = getattr(obj, key) if op == "." else _item(obj, key)
        except (AttributeError, KeyError, IndexError, TypeError) as e:
            raise TgcError(f"tgc replay: cannot resolve {source!r}: "
                           f"{type(e).__name__}: {e}") from None
        return obj

    def value(self, v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if not isinstance(v, dict) or not isinstance(v.get("type"), str):
            raise TgcError(f"tgc replay: bad value {v!r}")
        kind = v["type"]
        if kind == "float":
            return float(v["value"])
        if kind == "tuple":
            items = tuple(self.value(item) for item in v["items"])
            if v.get("class") is None:
                return items
            cls = self.value(v["class"])
            if not isinstance(cls, type) or not issubclass(cls, tuple):
                raise TgcError(f"tgc replay: a tuple's class is {cls!r}, not a tuple "
                               f"subclass")
            try:
                return tuple.__new__(cls, items)
            except TypeError:  # C subclasses (torch.Size) refuse tuple.__new__
                return cls(items)
        if kind == "dtype":
            import torch
            dtype = getattr(torch, v["name"], None)
            if not isinstance(dtype, torch.dtype):
                raise TgcError(f"tgc replay: torch.{v['name']} is not a dtype")
            return dtype
        if kind == "cell":
            cell = types.CellType()
            self._register(v, cell)
            if "value" in v:
                cell.cell_contents = self.value(v["value"])
            return cell
        if kind == "function":
            return self._function(v)
        if kind in ("list", "set", "dict"):
            obj = {"list": list, "set": set, "dict": dict}[kind]()
            self._register(v, obj)
            if kind == "list":
                obj.extend(self.value(item) for item in v["items"])
            elif kind == "set":
                obj.update(self.value(item) for item in v["items"])
            else:
                for key, item in v["items"]:
                    obj[self.value(key)] = self.value(item)
            return obj
        if kind == "object":
            cls = self.value(v["class"])
            if not isinstance(cls, type):
                raise TgcError(f"tgc replay: an object's class is a "
                               f"{type(cls).__name__}, not a class")
            obj = cls.__new__(cls)
            self._register(v, obj)
            for name, item in v["attributes"]:
                item = self.value(item)
                if hasattr(obj, "__dict__"):
                    obj.__dict__[name] = item
                else:
                    object.__setattr__(obj, name, item)
            return obj
        if kind == "ref":
            return self.resolve(v["source"])
        if kind == "same":
            if v["id"] not in self.made:
                raise TgcError(f"tgc replay: object id {v['id']} is used before it is "
                               f"described")
            return self.made[v["id"]]
        if kind == "tensor":
            n = v["output"]
            if not isinstance(n, int) or not 0 <= n < len(self.outputs):
                raise TgcError(f"tgc replay: tensor output {n!r} out of range "
                               f"({len(self.outputs)} outputs)")
            number = v.get("number")  # a Python number computed from a tensor's value
            if number is not None:
                return {"float": float, "int": int, "bool": bool}[number](
                    self.outputs[n].item())
            return self.outputs[n]
        if kind == "external":
            return external(v["name"])
        if kind == "device":
            import torch
            return torch.device(v["name"])
        raise TgcError(f"tgc replay: unknown value type {kind!r}")

    def _function(self, v):
        code = self.resolve(v["code"])
        if not isinstance(code, types.CodeType):
            raise TgcError(f"tgc replay: function {v.get('qualname')!r}: {v['code']!r} is "
                           f"a {type(code).__name__}, not a code object")
        namespace = self.resolve(v["globals"])
        if not isinstance(namespace, dict):
            raise TgcError(f"tgc replay: function {v.get('qualname')!r}: {v['globals']!r} "
                           f"is not a module namespace")
        defaults = v.get("defaults")
        defaults = None if defaults is None else tuple(self.value(d) for d in defaults)
        kwdefaults = v.get("kwdefaults")
        kwdefaults = None if kwdefaults is None else {
            name: self.value(d) for name, d in kwdefaults}
        # New cells first (empty), so that a cell's value may be the function itself or
        # another function sharing a later cell; filled once the function exists.
        items, fill = [], []
        for item in v.get("closure") or ():
            if isinstance(item, dict) and item.get("type") == "cell":
                cell = types.CellType()
                self._register(item, cell)
                items.append(cell)
                fill.append((cell, item))
            else:
                items.append(self.value(item))
        closure = tuple(items) if v.get("closure") is not None else None
        if closure is not None and any(type(c) is not types.CellType for c in closure):
            raise TgcError(f"tgc replay: function {v.get('qualname')!r}: a closure item "
                           f"is not a cell")
        if len(closure or ()) != len(code.co_freevars):
            raise TgcError(f"tgc replay: function {v.get('qualname')!r}: {len(closure or ())}"
                           f" closure cells for {len(code.co_freevars)} free variables "
                           f"of {v['code']!r}")
        fn = types.FunctionType(code, namespace, v["name"], defaults, closure)
        fn.__qualname__ = v["qualname"]
        fn.__kwdefaults__ = kwdefaults
        self._register(v, fn)
        for cell, item in fill:
            if "value" in item:
                cell.cell_contents = self.value(item["value"])
        for name, item in v.get("attributes") or ():
            setattr(fn, name, self.value(item))
        return fn

    def _register(self, v, obj):
        if "id" in v:
            if v["id"] in self.made:
                raise TgcError(f"tgc replay: object id {v['id']} is described twice")
            self.made[v["id"]] = obj

    def contents(self, v):
        """A `set_contents` value's items: a list, a [(key, value)] list or a set."""
        if not isinstance(v, dict) or v.get("type") not in ("list", "dict", "set"):
            raise TgcError(f"tgc replay: set_contents needs a list/dict/set value, got {v!r}")
        if v["type"] == "dict":
            return v["type"], [(self.value(k), self.value(x)) for k, x in v["items"]]
        return v["type"], [self.value(x) for x in v["items"]]


#: Built-in types that Python names in `builtins` (their `__module__`) but does not put
#: there: `types` holds them.
_UNNAMED_BUILTIN_TYPES = {
    "builtins.function": "FunctionType", "builtins.method": "MethodType",
    "builtins.builtin_function_or_method": "BuiltinFunctionType",
    "builtins.module": "ModuleType", "builtins.code": "CodeType", "builtins.cell": "CellType",
    "builtins.NoneType": "NoneType", "builtins.generator": "GeneratorType",
    "builtins.mappingproxy": "MappingProxyType", "builtins.getset_descriptor":
    "GetSetDescriptorType", "builtins.method_descriptor": "MethodDescriptorType",
}


def external(name):
    """A library callable, class or constant by its dotted name (`torch.relu`,
    `builtins.len`, `collections.OrderedDict`, `builtins.function`)."""
    if name in _UNNAMED_BUILTIN_TYPES:
        import types
        return getattr(types, _UNNAMED_BUILTIN_TYPES[name])
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    raise TgcError(f"tgc replay: cannot find {name!r}")


def tensor_outputs(value, into):
    """Adds the model outputs a value names (`{"type": "tensor", "output": N}`)."""
    if isinstance(value, dict):
        if value.get("type") == "tensor":
            into.add(value["output"])
        else:
            for v in value.values():
                tensor_outputs(v, into)
    elif isinstance(value, list):
        for v in value:
            tensor_outputs(v, into)
    return into


def replay_outputs(actions):
    """The model outputs the replay list consumes."""
    used = set()
    for action in actions:
        tensor_outputs(action.get("value"), used)
    return used


def apply(actions, fn, outputs, call=((), {}), grad_hooks=None):
    """Applies the actions to the live objects: `fn` is the bound callable, `outputs`
    the model's outputs (python_state tensors included), `call` the call's
    `(args, kwargs)`. Sources and refs are resolved and values built first, so every
    path names the object as it was before the call; then the actions run in order.
    Returns the values of the `return` actions, in order: the parts of the returned
    value the output structure names as `{"replayed": i}`. The values of the
    `grad_hook` actions are appended to the list `grad_hooks`, in order (when given)."""
    ctx = _Context(fn, outputs, call)
    plan = []
    returned = []
    for action in actions:
        kind = action.get("kind")
        if kind not in KINDS:
            raise TgcError(f"tgc replay: unknown action kind {kind!r}")
        if kind in ("return", "grad_hook"):
            if "value" not in action:
                raise TgcError(f"tgc replay: a {kind} action has no value")
            value = ctx.value(action["value"])
            if kind == "return":
                returned.append(value)
            elif grad_hooks is not None:
                if not callable(value):
                    raise TgcError(f"tgc replay: {action.get('path')!r} is a "
                                   f"{type(value).__name__}, not a callable")
                grad_hooks.append(value)
            continue
        where = action.get("path", action.get("source"))
        if kind in ("setattr", "delattr", "set_global", "del_global") and \
                not isinstance(action.get("name"), str):
            raise TgcError(f"tgc replay: {kind} of {where!r} has no name")
        target = ctx.resolve(action.get("source"))
        if kind == "set_contents":
            value = ctx.contents(action.get("value"))
        elif kind in _VALUE_KINDS:
            if "value" not in action:
                raise TgcError(f"tgc replay: {kind} of {where!r} has no value")
            value = ctx.value(action["value"])
        else:
            value = None
        plan.append((kind, target, action.get("name"), value, where))
    for kind, target, name, value, where in plan:
        if kind == "setattr":
            setattr(target, name, value)
        elif kind == "delattr":
            if hasattr(target, name):
                delattr(target, name)
        elif kind in ("set_global", "del_global"):
            if not isinstance(target, dict):
                raise TgcError(f"tgc replay: {where!r}: {kind} on a "
                               f"{type(target).__name__}, not a module namespace")
            if kind == "set_global":
                target[name] = value
            else:
                target.pop(name, None)
        elif kind in ("set_cell", "del_cell"):
            if type(target).__name__ != "cell":
                raise TgcError(f"tgc replay: {where!r}: {kind} on a "
                               f"{type(target).__name__}, not a cell")
            if kind == "set_cell":
                target.cell_contents = value
            else:
                try:
                    del target.cell_contents
                except ValueError:  # already empty
                    pass
        elif kind == "resize":
            import torch

            if not isinstance(target, torch.Tensor) or not isinstance(value, torch.Tensor):
                raise TgcError(f"tgc replay: {where!r}: resize of a "
                               f"{type(target).__name__} to a {type(value).__name__}, "
                               f"not of a tensor to a tensor")
            with torch.no_grad():
                target.resize_(value.shape)
                target.copy_(value)
        elif kind == "register_hook":
            if not hasattr(target, "register_hook") or not callable(value):
                raise TgcError(f"tgc replay: {where!r}: register_hook of a "
                               f"{type(value).__name__} on a {type(target).__name__}")
            target.register_hook(value)
        else:
            container, items = value
            if container == "list" and isinstance(target, list):
                target[:] = items
            elif container == "dict" and isinstance(target, dict):
                target.clear()
                target.update(items)
            elif container == "set" and isinstance(target, set):
                target.clear()
                target.update(items)
            else:
                raise TgcError(f"tgc replay: {where!r}: set_contents with {container} "
                               f"items on a {type(target).__name__}")
    return returned
