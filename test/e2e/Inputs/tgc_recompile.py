"""tgc.compile(..., on_guard_failure="recompile") (test/e2e/tgc-recompile.test; needs
torch): a program that reads a global config compiles once for the example call, again
when a guard fails (a changed flag, a changed float), again for inputs of another static
size or dtype, reuses a variant whose guards hold again, and calls the program eagerly
(one warning) once the limit of variants is reached. A program that asks for the grad
mode, captured under torch.no_grad(), fails its `grad_enabled` guard with grad enabled
(on_guard_failure="raise") and compiles a variant per mode. Every result matches eager.

    python tgc_recompile.py TGC WORKDIR
"""
import os
import shutil
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tgc-capture"))

import tgc  # noqa: E402

TGC, WORK = sys.argv[1:3]
TGC = shutil.which(TGC) or TGC
MODE = {"scale": 2.0, "relu": True}


def f(x):
    y = x * MODE["scale"]
    return y.relu() if MODE["relu"] else y.tanh()


def check(what, x):
    torch.testing.assert_close(compiled(x), f(x), rtol=1e-5, atol=1e-6)
    print(f"{what}: ok, {len(compiled.variants)} variants")


x = torch.linspace(-2, 2, 20).reshape(4, 5)
compiled = tgc.compile(f, (x,), compiler=TGC, cache_dir=os.path.join(WORK, "cache"),
                       on_guard_failure="recompile")
check("first", x)
MODE["relu"] = False
check("flag changed", x)
MODE["scale"] = 3.0
check("float changed", x)
check("other size", torch.linspace(-1, 1, 14).reshape(2, 7))
MODE.update(scale=2.0, relu=True)
check("first state again", x)
check("float64", x.double())
compiled.limit = len(compiled.variants)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    check("past the limit", torch.ones(3, 3))
    check("past the limit again", torch.ones(3, 3))
print("warnings:", [str(w.message) for w in caught])


def g(x):
    # The caller's grad mode, read outside any block of the program's own.
    return x * 2 if torch.is_grad_enabled() else x - 1


def check_mode(what, compiled_g, x):
    torch.testing.assert_close(compiled_g(x), g(x), rtol=1e-5, atol=1e-6)
    print(f"{what}: ok, {len(compiled_g.variants)} variants")


with torch.no_grad():
    strict = tgc.compile(g, (x,), compiler=TGC, cache_dir=os.path.join(WORK, "cache-g"))
    torch.testing.assert_close(strict(x), g(x), rtol=1e-5, atol=1e-6)
    print("no_grad: ok")
try:
    strict(x)
    print("grad enabled: no guard failure")
except tgc.GuardError as e:
    print("grad enabled:", e)
with torch.no_grad():
    modes = tgc.compile(g, (x,), compiler=TGC, cache_dir=os.path.join(WORK, "cache-g"),
                        on_guard_failure="recompile")
    check_mode("mode no_grad", modes, x)
check_mode("mode enabled", modes, x)
with torch.no_grad():
    check_mode("mode no_grad again", modes, x)
