"""Applies model.json's `"replay"` list (the captured program's Python side effects) to
the live objects after a call.

PROVISIONAL FORMAT (the compiler side is being written; adapt here only). Each action:

    {"kind": "set_attribute" | "delete_attribute" | "set_global" | "set_cell"
             | "set_contents",
     "source": <path>, "name": <str>, "value": <encoded value>}

* set_attribute / delete_attribute: `setattr(obj, name, value)` / `delattr(obj, name)`
  on the object at `source` (nn.Module's `__setattr__` files Parameters, buffers and
  submodules as eager does).
* set_global: `source` is the module's `__name__` (the trace's `globals.module`); the
  function's own globals when that is its `__name__`, else `sys.modules[source]`.
* set_cell: `source` is the path of a function, `name` one of its free variables.
* set_contents: the list / dict / set at `source` gets `value`'s contents (`lst[:] = v`,
  `d.clear(); d.update(v)`, `s.clear(); s.update(v)`).

A path is a root followed by steps: roots `fn` (the callable tgc.load was bound to: the
module, function or bound method) and `globals` (that callable's `__globals__`); steps
`.name` (attribute; a global name after `globals`), `[N]` (index) and `['key']` /
`["key"]` (key).

Also accepted (the format wt-replay was converging on when this was written:
include/tgc/Transforms/Passes.h `tgc::replay`): kinds `setattr`, `delattr`, `del_global`,
`del_cell`; path roots `args[i]`, `kwargs['k']` (the call's arguments), `globals['mod']`
(module `mod`'s namespace), `modules['name']`; `set_global`/`del_global` whose source is
a `globals[...]` path; `set_cell` whose source is the cell itself; values
`{"type": "tuple"|"list"|"set"|"dict", "items": [...], "id"?: n}`,
`{"type": "ref", "source": path}`, `{"type": "same", "id": n}` (an object built earlier
in this replay), `{"type": "tensor", "output": N}`, `{"type": "external", "name": dotted}`,
`{"type": "device", "name": "cpu"}`, `{"type": "object", "id": n, "class": v,
"attributes": [[name, v]...]}`.

Values are the trace format's (docs/trace-format.md: `null`, booleans, integers,
floats, strings, `{"float": "inf"|"-inf"|"nan"}`, `{"int": "<digits>"}`), plus
`{"output": N}` (user output N of this call, a tensor), `{"tuple": [v...]}`,
`{"list": [v...]}`, `{"dict": [[k, v]...]}` (new containers) and `{"object": <path>}`
(an existing live object).
"""

import importlib
import re
import sys
import types

from .runtime import TgcError

_STEP = re.compile(r"""\.([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]|\['([^']*)'\]|\["([^"]*)"\]""")
_ROOT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def callable_globals(fn):
    """The globals dict the captured bytecode ran with."""
    import torch

    if isinstance(fn, torch.nn.Module):
        fn = type(fn).forward
    fn = getattr(fn, "__func__", fn)
    return getattr(fn, "__globals__", {})


def _module_namespace(name, fn):
    ns = callable_globals(fn)
    if ns.get("__name__") == name:
        return ns
    mod = sys.modules.get(name)
    if mod is None:
        raise TgcError(f"tgc replay: module {name!r} is not loaded")
    return mod.__dict__


def resolve(path, fn, call=((), {})):
    """The live object at `path` (grammar above); `call` is the call's (args, kwargs)."""
    m = _ROOT.match(path)
    if not m:
        raise TgcError(f"tgc replay: bad path {path!r}")
    root = m.group(0)
    pos = m.end()
    first = _STEP.match(path, pos) if root in ("args", "kwargs", "globals", "modules") \
        else None
    if first is not None and first.group(1) is None:
        index, key = first.group(2), first.group(3) if first.group(3) is not None \
            else first.group(4)
        try:
            if root == "args":
                obj = call[0][int(index)]
            elif root == "kwargs":
                obj = call[1][key]
            elif root == "globals":
                obj = _module_namespace(key, fn)
            else:
                obj = sys.modules[key]
        except (IndexError, KeyError, TypeError) as e:
            raise TgcError(f"tgc replay: cannot resolve {path!r}: {e}") from None
        in_globals, pos = root == "globals", first.end()
    elif root == "fn":
        obj, in_globals = fn, False
    elif root == "globals":
        obj, in_globals = callable_globals(fn), True
    else:
        raise TgcError(f"tgc replay: path {path!r} starts with unknown root {root!r}")
    while pos < len(path):
        s = _STEP.match(path, pos)
        if not s:
            raise TgcError(f"tgc replay: bad path {path!r} at offset {pos}")
        attr, index, key1, key2 = s.groups()
        try:
            if attr is not None:
                obj = obj[attr] if in_globals else getattr(obj, attr)
            elif index is not None:
                obj = obj[int(index)]
            else:
                obj = obj[key1 if key1 is not None else key2]
        except (AttributeError, KeyError, IndexError, TypeError) as e:
            raise TgcError(f"tgc replay: cannot resolve {path!r}: {e}") from None
        in_globals = False
        pos = s.end()
    return obj


def _external(name):
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
    import builtins
    if len(parts) == 1 and hasattr(builtins, name):
        return getattr(builtins, name)
    raise TgcError(f"tgc replay: cannot find {name!r}")


def _decode_typed(value, outputs, fn, call, memo):
    kind = value["type"]

    def sub(v):
        return decode(v, outputs, fn, call, memo)

    if kind == "ref":
        return resolve(value["source"], fn, call)
    if kind == "same":
        return memo[value["id"]]
    if kind == "tensor":
        return decode({"output": value["output"]}, outputs, fn, call, memo)
    if kind == "external":
        return _external(value["name"])
    if kind == "device":
        import torch
        return torch.device(value["name"])
    if kind in ("list", "set", "dict"):
        obj = {"list": list, "set": set, "dict": dict}[kind]()
        if "id" in value:
            memo[value["id"]] = obj
        if kind == "list":
            obj.extend(sub(v) for v in value["items"])
        elif kind == "set":
            obj.update(sub(v) for v in value["items"])
        else:
            obj.update((sub(k), sub(v)) for k, v in value["items"])
        return obj
    if kind == "tuple":
        return tuple(sub(v) for v in value["items"])
    if kind == "object":
        cls = sub(value["class"])
        obj = cls.__new__(cls)
        memo[value["id"]] = obj
        for name, v in value["attributes"]:
            obj.__dict__[name] = sub(v)
        return obj
    raise TgcError(f"tgc replay: unknown value type {kind!r}")


def decode(value, outputs, fn, call=((), {}), memo=None):
    """The Python value of an encoded replay value."""
    if memo is None:
        memo = {}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return _decode_typed(value, outputs, fn, call, memo)
    if isinstance(value, dict) and len(value) == 1:
        (tag, payload), = value.items()
        if tag == "float":
            return float(payload)
        if tag == "int":
            return int(payload)
        if tag == "output":
            if not 0 <= payload < len(outputs):
                raise TgcError(f"tgc replay: output {payload} out of range "
                               f"({len(outputs)} outputs)")
            return outputs[payload]
        if tag == "tuple":
            return tuple(decode(v, outputs, fn, call, memo) for v in payload)
        if tag == "list":
            return [decode(v, outputs, fn, call, memo) for v in payload]
        if tag == "dict":
            return {decode(k, outputs, fn, call, memo): decode(v, outputs, fn, call, memo)
                    for k, v in payload}
        if tag == "object":
            return resolve(payload, fn, call)
    raise TgcError(f"tgc replay: cannot decode value {value!r}")


def output_indices(value, into):
    """Adds the output indices an encoded value refers to."""
    if isinstance(value, dict):
        if set(value) == {"output"} or (value.get("type") == "tensor" and "output" in value):
            into.add(value["output"])
        else:
            for v in value.values():
                output_indices(v, into)
    elif isinstance(value, list):
        for v in value:
            output_indices(v, into)
    return into


def replay_outputs(actions):
    """The user outputs the replay list consumes."""
    used = set()
    for action in actions:
        output_indices(action.get("value"), used)
    return used


_KINDS = {"setattr": "set_attribute", "delattr": "delete_attribute"}


def apply(actions, fn, outputs, call=((), {})):
    """Performs the actions in order on the live objects reachable from `fn` and the
    call's arguments `call = (args, kwargs)`."""
    for action in actions:
        kind = _KINDS.get(action.get("kind"), action.get("kind"))
        source, name = action.get("source"), action.get("name")

        def value():
            return decode(action.get("value"), outputs, fn, call)

        if kind in ("set_global", "del_global"):
            ns = (resolve(source, fn, call) if source.startswith("globals")
                  else _module_namespace(source, fn))
            if kind == "set_global":
                ns[name] = value()
            else:
                ns.pop(name, None)
            continue
        target = resolve(source, fn, call)
        if kind == "set_attribute":
            setattr(target, name, value())
        elif kind == "delete_attribute":
            delattr(target, name)
        elif kind in ("set_cell", "del_cell"):
            if not isinstance(target, types.CellType):
                func = getattr(target, "__func__", target)
                code = getattr(func, "__code__", None)
                if code is None or name not in code.co_freevars:
                    raise TgcError(f"tgc replay: {source!r} has no free variable {name!r}")
                target = func.__closure__[code.co_freevars.index(name)]
            if kind == "set_cell":
                target.cell_contents = value()
            else:
                del target.cell_contents
        elif kind == "set_contents":
            v = value()
            if isinstance(target, list):
                target[:] = list(v)
            elif isinstance(target, (dict, set)):
                target.clear()
                target.update(v)
            else:
                raise TgcError(f"tgc replay: set_contents on a {type(target).__name__}")
        else:
            raise TgcError(f"tgc replay: unknown action kind {kind!r}")
