"""Checks model.json's `"guards"` list (docs/guards.md) against the live objects before
a call: the Python values the captured program read, which the compiled model assumes.

Each guard is `{"kind", "source", "value"}`; `source` uses the replay source grammar and
`value` the replay value encoding (docs/replay.md, tgc/replay.py):

| kind         | holds when                                                        |
|--------------|-------------------------------------------------------------------|
| `equals`     | `x == value` and of the same type (None, bool, int, float, str,   |
|              | tuples of those; NaN equals NaN)                                  |
| `type_is`    | `type(x) is value` (a class: `ref` or `external`)                 |
| `is`         | `x is value` (an `external`)                                      |
| `len_equals` | `len(x) == value`                                                 |
| `keys_equal` | `tuple(x.keys()) == value` (a tuple, in order)                    |
| `hasattr`    | `hasattr(x, value["name"]) is value["present"]`                   |
| `grad_enabled` | `torch.is_grad_enabled() is value` (source `torch.is_grad_enabled()`) |
"""

import math

from . import replay as _replay
from .runtime import TgcError

KINDS = ("equals", "type_is", "is", "len_equals", "keys_equal", "hasattr", "grad_enabled")


class GuardError(TgcError):
    """A guard of a compiled model failed: the live Python state differs from the state
    the model was captured in. `source`, `expected` and `actual` say which value."""

    def __init__(self, message, source=None, expected=None, actual=None):
        super().__init__(message)
        self.source, self.expected, self.actual = source, expected, actual


_MISSING = object()


def _same(actual, expected):
    """`actual == expected` with the same types (True is not 1, 1.0 is not 1)."""
    if type(actual) is not type(expected):
        return False
    if isinstance(expected, tuple):
        return len(actual) == len(expected) and all(
            _same(a, e) for a, e in zip(actual, expected))
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(actual)
    return actual == expected


def _show(value):
    if value is _MISSING:
        return "<missing>"
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def check(guards, fn, call):
    """Raises GuardError for the first guard that fails against the live roots: `fn`
    the bound callable, `call` the call's `(args, kwargs)`."""
    ctx = _replay._Context(fn, [], call)
    for guard in guards:
        kind, source = guard.get("kind"), guard.get("source")
        if kind not in KINDS:
            raise TgcError(f"tgc guards: unknown guard kind {kind!r}")
        if kind == "grad_enabled":
            import torch

            mode = torch.is_grad_enabled()
            if mode is not guard["value"]:
                raise GuardError(
                    f"tgc: guard failed: {source} == {guard['value']} (got {mode}): the "
                    f"program was captured in the other grad mode", source, guard["value"],
                    mode)
            continue
        if kind == "hasattr":
            name, present = guard["value"]["name"], guard["value"]["present"]
            try:
                shown = hasattr(ctx.resolve(source), name)
            except TgcError:
                shown = _MISSING
            if shown is not present:
                raise GuardError(
                    f"tgc: guard failed: hasattr({source}, {name!r}) == {present} (got "
                    f"{_show(shown)}): the Python state differs from the one the model was "
                    f"captured in", source, present, None if shown is _MISSING else shown)
            continue
        try:
            expected = ctx.value(guard.get("value"))
        except TgcError as e:  # e.g. a class or library callable that no longer exists
            raise GuardError(f"tgc: guard failed: {source}: the expected value cannot be "
                             f"resolved ({e})", source) from None
        try:
            actual = ctx.resolve(source)
        except TgcError:
            actual = _MISSING
        if actual is _MISSING:
            ok, shown = False, _MISSING
        elif kind == "equals":
            ok, shown = _same(actual, expected), actual
        elif kind == "type_is":
            ok, shown = type(actual) is expected, type(actual)
        elif kind == "is":
            ok, shown = actual is expected, actual
        elif kind == "len_equals":
            try:
                shown = len(actual)
            except TypeError:
                shown = _MISSING
            ok = shown == expected
        else:
            try:
                shown = tuple(actual.keys())
            except (AttributeError, TypeError):
                shown = _MISSING
            ok = shown is not _MISSING and _same(shown, expected)
        if not ok:
            what = {"equals": source, "type_is": f"type({source})", "is": source,
                    "len_equals": f"len({source})",
                    "keys_equal": f"tuple({source}.keys())"}[kind]
            op = "is" if kind in ("type_is", "is") else "=="
            raise GuardError(
                f"tgc: guard failed: {what} {op} {_show(expected)} (got {_show(shown)}): "
                f"the Python state differs from the one the model was captured in",
                source, expected, None if shown is _MISSING else shown)
