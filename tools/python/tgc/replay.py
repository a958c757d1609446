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

Values are the trace format's (docs/trace-format.md: `null`, booleans, integers,
floats, strings, `{"float": "inf"|"-inf"|"nan"}`, `{"int": "<digits>"}`), plus
`{"output": N}` (user output N of this call, a tensor), `{"tuple": [v...]}`,
`{"list": [v...]}`, `{"dict": [[k, v]...]}` (new containers) and `{"object": <path>}`
(an existing live object).
"""

import re
import sys

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


def resolve(path, fn):
    """The live object at `path` (grammar above)."""
    m = _ROOT.match(path)
    if not m:
        raise TgcError(f"tgc replay: bad path {path!r}")
    root = m.group(0)
    if root == "fn":
        obj, in_globals = fn, False
    elif root == "globals":
        obj, in_globals = callable_globals(fn), True
    else:
        raise TgcError(f"tgc replay: path {path!r} starts with unknown root {root!r}")
    pos = m.end()
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


def decode(value, outputs, fn):
    """The Python value of an encoded replay value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
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
            return tuple(decode(v, outputs, fn) for v in payload)
        if tag == "list":
            return [decode(v, outputs, fn) for v in payload]
        if tag == "dict":
            return {decode(k, outputs, fn): decode(v, outputs, fn) for k, v in payload}
        if tag == "object":
            return resolve(payload, fn)
    raise TgcError(f"tgc replay: cannot decode value {value!r}")


def output_indices(value, into):
    """Adds the output indices an encoded value refers to."""
    if isinstance(value, dict):
        if set(value) == {"output"}:
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


def apply(actions, fn, outputs):
    """Performs the actions in order on the live objects reachable from `fn`."""
    for action in actions:
        kind = action.get("kind")
        source, name = action.get("source"), action.get("name")
        if kind == "set_global":
            ns = callable_globals(fn)
            if ns.get("__name__") != source:
                mod = sys.modules.get(source)
                if mod is None:
                    raise TgcError(f"tgc replay: module {source!r} is not loaded")
                ns = mod.__dict__
            ns[name] = decode(action.get("value"), outputs, fn)
            continue
        target = resolve(source, fn)
        if kind == "set_attribute":
            setattr(target, name, decode(action.get("value"), outputs, fn))
        elif kind == "delete_attribute":
            delattr(target, name)
        elif kind == "set_cell":
            func = getattr(target, "__func__", target)
            code = getattr(func, "__code__", None)
            if code is None or name not in code.co_freevars:
                raise TgcError(f"tgc replay: {source!r} has no free variable {name!r}")
            func.__closure__[code.co_freevars.index(name)].cell_contents = decode(
                action.get("value"), outputs, fn)
        elif kind == "set_contents":
            value = decode(action.get("value"), outputs, fn)
            if isinstance(target, list):
                target[:] = list(value)
            elif isinstance(target, dict):
                target.clear()
                target.update(value)
            elif isinstance(target, (set,)):
                target.clear()
                target.update(value)
            else:
                raise TgcError(f"tgc replay: set_contents on a {type(target).__name__}")
        else:
            raise TgcError(f"tgc replay: unknown action kind {kind!r}")
