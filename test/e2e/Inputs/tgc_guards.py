"""tgc.load checks model.json's guards (test/e2e/tgc-guards.test; needs torch): compiles
fixtures/capture/guards/flags.trace, binds it to a fresh import of flags.py and checks
that an unchanged state runs the compiled model (matching eager), that changing a global
flag, a global float, a config attribute, a global list or dict, or adding the key or attribute whose KeyError or AttributeError
the program caught raises tgc.GuardError
naming the source, the expected and the actual value, that on_guard_failure="eager"
calls the live module instead (one warning), and that `self.calls += 1` (replayed as
calls = 1) makes the second call fail its guard `fn.calls == 0`.

    python tgc_guards.py TGC FIXTURES WORKDIR
"""
import importlib.util
import os
import subprocess
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))

import tgc  # noqa: E402

TGC, FIXTURES, WORK = sys.argv[1:4]
SO = os.path.join(WORK, "flags.so")
subprocess.run([TGC, "compile", os.path.join(FIXTURES, "capture", "guards", "flags.trace"),
                "-o", SO], check=True)


def fresh():
    spec = importlib.util.spec_from_file_location(
        "flags", os.path.join(FIXTURES, "capture", "guards", "flags.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.make_model().eval()
    return mod, model


X = torch.arange(6, dtype=torch.float32).reshape(2, 3) - 2


def expect_guard_error(mod, model, text):
    compiled = tgc.load(SO, model)
    try:
        compiled(X.clone())
    except tgc.GuardError as e:
        assert text in str(e), f"expected {text!r} in {e}"
        print(f"guard error: {e}")
        return
    raise AssertionError(f"expected GuardError with {text!r}")


# Unchanged state: compiled, same as eager, and the replay advances fn.calls.
mod, model = fresh()
compiled = tgc.load(SO, model)
y = compiled(X.clone())
_, eager_model = fresh()
torch.testing.assert_close(y, eager_model(X.clone()))
assert model.calls == 1, model.calls
print("unchanged ok")
# Second call: the replayed calls = 1 fails `fn.calls == 0`.
try:
    compiled(X.clone())
    raise AssertionError("the second call passed its guards")
except tgc.GuardError as e:
    assert "fn.calls == 0 (got 1)" in str(e), str(e)
    print(f"second call: {e}")

mod, model = fresh()
mod.USE_RELU = False
expect_guard_error(mod, model, "globals['flags']['USE_RELU'] == True (got False)")
mod, model = fresh()
mod.SCALE = 3.0
expect_guard_error(mod, model, "globals['flags']['SCALE'] == 2.0 (got 3.0)")
mod, model = fresh()
mod.CONFIG.mode = "triple"
expect_guard_error(mod, model, "globals['flags']['CONFIG'].mode == 'double' (got 'triple')")
mod, model = fresh()
mod.OFFSETS.append(3.0)
expect_guard_error(mod, model, "len(globals['flags']['OFFSETS']) == 2 (got 3)")
mod, model = fresh()
mod.TABLE["c"] = 3
expect_guard_error(mod, model, "tuple(globals['flags']['TABLE'].keys()) == ('a', 'b')")
# A key and an attribute the program found missing (and caught the error): adding them
# fails the guards of the dict's keys and of hasattr.
mod, model = fresh()
mod.OPTIONAL["shift"] = 1.0
expect_guard_error(mod, model, "tuple(globals['flags']['OPTIONAL'].keys()) == ('unused',)")
mod, model = fresh()
mod.CONFIG.gain = 3.0
expect_guard_error(mod, model, "hasattr(globals['flags']['CONFIG'], 'gain') == False (got True)")
mod, model = fresh()
model.train()
expect_guard_error(mod, model, "fn.training == False (got True)")

# on_guard_failure="eager": the live module runs (and its own code counts the call).
mod, model = fresh()
mod.SCALE = 3.0
compiled = tgc.load(SO, model, on_guard_failure="eager")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y1 = compiled(X.clone())
    y2 = compiled(X.clone())
_, eager_model = fresh()
eager_model.__class__.forward.__globals__["SCALE"] = 3.0
torch.testing.assert_close(y1, eager_model(X.clone()))
torch.testing.assert_close(y2, eager_model(X.clone()))
assert model.calls == 2, model.calls
assert len(caught) == 1 and "guard failed" in str(caught[0].message), caught
print(f"eager fallback ok: {caught[0].message}")
print("all ok")
