"""tgc from Python: load a model.so compiled by `tgc compile` and call it like the
module or function it came from.

    import tgc
    compiled = tgc.load("mlp.so", model)            # model: the live nn.Module
    y = compiled(x)                                 # == model(x)
    step = tgc.load("mlp_train.so", model, train=True)
    step(x).sum().backward()                        # p.grad as eager leaves it

    compiled = tgc.compile(model, (x,))             # capture + compile + load, cached

See README.md ("From Python"), docs/python.md and docs/abi.md. `tgc.runtime.Model` is
the lower-level ctypes binding (numpy or torch in, copies out) that benchmarks use.

Importing the package needs neither torch nor numpy; `load` and `compile` import torch
when first used.
"""

from .guards import GuardError
from .runtime import Model, TgcError

__all__ = ["load", "compile", "CompiledModule", "Model", "TgcError", "GuardError"]

_LAZY = {"load": "loader", "CompiledModule": "loader", "compile": "compiler"}


def __getattr__(name):
    """`load`, `CompiledModule` and `compile`, imported when first used (they need torch)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module("." + _LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError("module 'tgc' has no attribute %r" % name)
