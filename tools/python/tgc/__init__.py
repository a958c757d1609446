"""tgc from Python: load a model.so compiled by `tgc compile` and call it like the
module or function it came from.

    import tgc
    compiled = tgc.load("mlp.so", model)            # model: the live nn.Module
    y = compiled(x)                                 # == model(x)
    step = tgc.load("mlp_train.so", model, train=True)
    step(x).sum().backward()                        # p.grad as eager leaves it

See README.md ("From Python") and docs/abi.md. `tgc.runtime.Model` is the lower-level
ctypes binding (numpy or torch in, copies out) that benchmarks use.
"""

from .guards import GuardError
from .loader import CompiledModule, load
from .runtime import Model, TgcError

__all__ = ["load", "CompiledModule", "Model", "TgcError", "GuardError"]
