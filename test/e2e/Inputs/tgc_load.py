"""tgc.load end to end (test/e2e/tgc-load.test; needs torch): compiles fixtures with
`tgc compile`, binds each .so to the live module re-created from the fixture's Python
source and checks it behaves like eager PyTorch on it: outputs, the live module's
parameters/buffers followed after they change, mutated buffers and inputs written back,
gradients accumulated into p.grad by loss.backward(), Python side effects replayed.

    python tgc_load.py TGC FIXTURES WORKDIR
"""
import copy
import importlib.util
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))

import tgc  # noqa: E402
from tgc import replay  # noqa: E402

TGC, FIXTURES, WORK = sys.argv[1:4]
RTOL, ATOL = 1e-4, 1e-5


def compile_(src, name, *flags):
    out = os.path.join(WORK, name + ".so")
    subprocess.run([TGC, "compile", os.path.join(FIXTURES, src), *flags, "-o", out],
                   check=True)
    return out


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(FIXTURES, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def close(a, b, what):
    torch.testing.assert_close(a, b, rtol=RTOL, atol=ATOL, msg=lambda m: f"{what}: {m}")


def check_raises(fn, text):
    try:
        fn()
    except tgc.TgcError as e:
        assert text in str(e), f"expected {text!r} in {e}"
        print(f"error ok: {e}")
        return
    raise AssertionError(f"expected TgcError with {text!r}")


def test_mlp_trace():
    so = compile_("capture/mlp.trace", "mlp")
    model = import_file("capture/mlp.py", "capture_mlp").make_model()
    compiled = tgc.load(so, model)
    x = torch.randn(4, 16)
    y = compiled(x)
    assert isinstance(y, torch.Tensor), type(y)  # one output: a tensor, as eager
    close(y, model(x), "mlp")
    # The live module's parameters are pushed into the instance when they change.
    with torch.no_grad():
        model[0].weight.mul_(-2.0)
        model[2].bias.add_(1.0)
    close(compiled(x), model(x), "mlp after an in-place parameter update")
    model[2].weight = torch.nn.Parameter(torch.randn(8, 32))
    close(compiled(x), model(x), "mlp after replacing a parameter")
    # Strided (non-contiguous) inputs are passed as they are.
    xt = torch.randn(16, 4).t()
    close(compiled(xt), model(xt), "mlp on a transposed input")
    check_raises(lambda: compiled(torch.randn(5, 16)), "input 'x' (#0): dimension 0 is 5")
    check_raises(lambda: tgc.load(so, model, train=True), "is not trainable")
    # Bound to a module without the model's parameters: refused at load.
    fixtures_models = import_file("models.py", "fixture_models")
    check_raises(lambda: tgc.load(so, fixtures_models.MLP()), "parameter '0.weight'")
    print("mlp.trace ok")


def test_methods_trace():
    so = compile_("capture/methods.trace", "methods")
    model = import_file("capture/methods.py", "capture_methods").make_model()
    compiled = tgc.load(so, model)
    x = torch.randn(3, 8)
    out = compiled(x)
    assert isinstance(out, tuple) and len(out) == 2, type(out)  # fn returns a 2-tuple
    for a, b in zip(out, model(x)):
        close(a, b, "methods")
    model.scale.fill_(-0.5)  # a buffer changed by the caller is followed too
    for a, b in zip(compiled(x), model(x)):
        close(a, b, "methods after a buffer update")
    print("methods.trace ok")


def test_training():
    models = import_file("models.py", "fixture_models")
    so = compile_("mlp/train_grad.pt2", "mlp_train", "--train")
    torch.manual_seed(0)
    model, inputs, _ = models.make_mlp()
    ref = copy.deepcopy(model)
    compiled = tgc.load(so, model, train=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    x = inputs["x"].clone().requires_grad_(True)
    xr = x.detach().clone().requires_grad_(True)
    for step in range(3):
        # Two backwards per step: gradients accumulate into p.grad as in eager.
        for _ in range(2):
            y, yr = compiled(x), ref(xr)
            close(y, yr, f"train step {step} output")
            assert y.requires_grad
            ((y * y).sum() + y.mean()).backward()
            ((yr * yr).sum() + yr.mean()).backward()
        for (name, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
            close(p.grad, q.grad, f"step {step} grad of {name}")
        close(x.grad, xr.grad, f"step {step} grad of x")
        opt.step(), ref_opt.step()  # the instance follows the updated parameters
        opt.zero_grad(), ref_opt.zero_grad()
        x.grad = xr.grad = None
    # Two forwards pending at once (one instance each), backwards in reverse order.
    y1, y2 = compiled(x), compiled(x * 2)
    g1 = torch.autograd.grad(y1.sum(), list(model.parameters()))
    g2 = torch.autograd.grad(y2.sum(), list(model.parameters()))
    r1 = torch.autograd.grad(ref(xr).sum(), list(ref.parameters()))
    r2 = torch.autograd.grad(ref(xr * 2).sum(), list(ref.parameters()))
    for a, b in zip(g1 + g2, r1 + r2):
        close(a, b, "interleaved forwards")
    with torch.no_grad():
        assert not compiled(x).requires_grad
    print("training ok")


def test_mutation():
    models = import_file("models.py", "fixture_models")
    so = compile_("mutate/train.pt2", "mutate")
    torch.manual_seed(0)
    model, inputs, _ = models.make_mutate()
    ref = copy.deepcopy(model)
    compiled = tgc.load(so, model)
    x = inputs["x"].clone()
    xr = x.clone()
    for step in range(2):
        version = x._version
        out, ref_out = compiled(x), ref(xr)
        for a, b in zip(out, ref_out):
            close(a, b, f"mutate step {step} output")
        close(x, xr, f"mutate step {step}: the user input written back in place")
        assert x._version > version, "the input's version counter moves, as in eager"
        close(model.count, ref.count, f"mutate step {step}: buffer count")
        close(model.running, ref.running, f"mutate step {step}: buffer running")
    assert model.count.item() == 5, model.count
    print("mutation ok")


class Record:
    """A user class the replay instantiates without __init__."""

    def __init__(self):
        raise AssertionError("replay must not call __init__")


def test_replay():
    """The replay list (docs/replay.md) applied to live objects by tgc/replay.py."""

    def make():
        total = 0
        gone = 1

        def f(x):
            nonlocal total, gone
            total += 1
            del gone
            return x
        return f

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.calls = 0
            self.history = [0]
            self.tags = {"a"}
            self.old = 1

    net = Net()
    old_history = net.history
    out, state = torch.ones(2), torch.zeros(3)
    arg, kwarg = {"seen": 0}, []
    me = "globals[%r]" % __name__
    actions = [
        {"kind": "setattr", "source": "fn", "name": "calls", "path": "fn.calls",
         "value": 1},
        # A new list replaces fn.history; the old list (sources and refs name objects as they
        # were before the call) gets its own contents: itself.
        {"kind": "setattr", "source": "fn", "name": "history", "path": "fn.history",
         "value": {"type": "list", "id": 0, "items": [
             {"type": "float", "value": "inf"},
             {"type": "tuple", "items": [1, "a", None, True]},
             {"type": "same", "id": 0}]}},
        {"kind": "set_contents", "source": "fn.history", "path": "fn.history",
         "value": {"type": "list", "items": [{"type": "ref", "source": "fn.history"}]}},
        {"kind": "setattr", "source": "fn._modules['lin']", "name": "cache",
         "path": "fn.lin.cache", "value": {"type": "tensor", "output": 1}},
        {"kind": "setattr", "source": "fn", "name": "floats", "path": "fn.floats",
         "value": {"type": "tuple", "items": [{"type": "float", "value": "2.0"},
                                              {"type": "float", "value": "-0.0"},
                                              {"type": "float", "value": "nan"}, 0.5]}},
        {"kind": "delattr", "source": "fn", "name": "old", "path": "fn.old"},
        {"kind": "delattr", "source": "fn", "name": "never_had", "path": "fn.never_had"},
        {"kind": "set_contents", "source": "fn.tags", "path": "fn.tags",
         "value": {"type": "set", "items": ["b", 2]}},
        {"kind": "set_contents", "source": "args[0]", "path": "args[0]",
         "value": {"type": "dict", "items": [["seen", 1], [3, "x"]]}},
        {"kind": "set_contents", "source": "kwargs['log']", "path": "kwargs['log']",
         "value": {"type": "list", "items": [{"type": "device", "name": "cpu"},
                                              {"type": "external", "name": "torch.relu"},
                                              {"type": "external", "name": "builtins.len"}]}},
        {"kind": "set_global", "source": me, "name": "REPLAYED", "path": "REPLAYED",
         "value": {"type": "object", "id": 1,
                   "class": {"type": "ref", "source": me + "['Record']"},
                   "attributes": [["owner", {"type": "ref", "source": "fn.lin"}],
                                  ["me", {"type": "same", "id": 1}],
                                  ["d", {"type": "dict", "id": 2,
                                         "items": [["k\'q", {"type": "same", "id": 2}]]}]]}},
        {"kind": "del_global", "source": me, "name": "DOOMED", "path": "DOOMED"},
        {"kind": "del_global", "source": me, "name": "NEVER", "path": "NEVER"},
        {"kind": "set_contents", "source": "modules[%r].STATE['k']" % __name__,
         "path": "STATE['k']",
         "value": {"type": "dict", "items": [["n", 123456789012345678901234567890]]}},
    ]
    replay.apply(actions, net, [out, state], ((arg,), {"log": kwarg}))
    assert net.calls == 1 and not hasattr(net, "old")
    assert net.history[0] == float("inf") and net.history[1] == (1, "a", None, True)
    assert net.history[2] is net.history and net.history is not old_history
    assert len(old_history) == 1 and old_history[0] is old_history  # a ref: before the call
    two, zero, nan, half = net.floats
    assert type(two) is float and two == 2.0 and str(zero) == "-0.0" and nan != nan
    assert half == 0.5
    assert net.lin.cache is state and net.tags == {"b", 2}
    assert arg == {"seen": 1, 3: "x"}
    assert kwarg == [torch.device("cpu"), torch.relu, len]
    rec = REPLAYED  # noqa: F821
    assert type(rec) is Record and rec.owner is net.lin and rec.me is rec
    assert rec.d["k'q"] is rec.d
    assert "DOOMED" not in globals()
    assert STATE == {"k": {"n": 123456789012345678901234567890}}
    assert replay.replay_outputs(actions) == {1}

    # `out=` resized an input: the caller's tensor keeps its identity and gets the sizes
    # and values (row-major) of the output.
    y = torch.zeros(0)
    new = torch.arange(6.0).reshape(2, 3)
    replay.apply([{"kind": "resize", "source": "args[1]", "path": "args[1]", "input": "y",
                   "value": {"type": "tensor", "output": 0}}], net, [new], ((arg, y), {}))
    assert y.shape == (2, 3) and y.stride() == (3, 1) and torch.equal(y, new)

    # A source's item step reads the dict's own entry, as the capture walked it, not what
    # a subclass's __getitem__ makes of it (transformers' ACT2FN instantiates classes).
    class Instantiating(dict):
        def __getitem__(self, key):
            return dict.__getitem__(self, key)()
    net.registry = Instantiating(gelu=Record)
    ctx = replay._Context(net, [], ((), {}))
    assert ctx.resolve("fn.registry['gelu']") is Record

    f = make()
    cells = dict(zip(f.__code__.co_freevars, f.__closure__))
    replay.apply([
        {"kind": "set_cell", "source": "fn.__closure__[1]", "path": "total", "value": 7},
        {"kind": "del_cell", "source": "fn.__closure__[0]", "path": "gone"}], f, [])
    assert cells["total"].cell_contents == 7
    assert _empty(cells["gone"]), "del_cell empties the cell"

    bad = [({"kind": "setattr", "source": "fn.nope", "name": "a", "value": 1},
            "cannot resolve 'fn.nope'"),
           ({"kind": "set_attribute", "source": "fn", "name": "a", "value": 1},
            "unknown action kind 'set_attribute'"),
           ({"kind": "setattr", "source": "self.x", "name": "a", "value": 1},
            "does not start with one of"),
           ({"kind": "setattr", "source": "fn", "name": "a",
             "value": {"type": "tensor", "output": 5}}, "out of range"),
           ({"kind": "set_contents", "source": "fn.calls", "value":
             {"type": "list", "items": []}}, "set_contents with list items on a int"),
           ({"kind": "set_cell", "source": "fn", "value": 1}, "not a cell"),
           ({"kind": "resize", "source": "fn.calls", "input": "x",
             "value": {"type": "tensor", "output": 0}},
            "resize of a int to a Tensor, not of a tensor to a tensor")]
    for action, text in bad:
        check_raises(lambda: replay.apply([action], net, [out]), text)
    # A failing action applies nothing: sources are resolved before any action runs.
    net.calls = 5
    check_raises(lambda: replay.apply([
        {"kind": "setattr", "source": "fn", "name": "calls", "value": 9},
        {"kind": "setattr", "source": "fn.missing", "name": "a", "value": 1}], net, []),
        "cannot resolve 'fn.missing'")
    assert net.calls == 5
    print("replay ok")


def _empty(cell):
    try:
        cell.cell_contents
    except ValueError:
        return True
    return False


DOOMED = 1
STATE = {"k": {}}

def test_python_state():
    """Tensors of Python state (an attribute the call rebinds, a global scaled in place)
    are read live on every call; the returned dict keeps its structure; hasattr of a
    missing attribute takes the default (and setting it later fails a guard)."""
    so = compile_("capture/stateful.trace", "stateful")
    eager_mod = import_file("capture/stateful.py", "stateful_eager")
    live_mod = import_file("capture/stateful.py", "stateful_live")
    torch.manual_seed(0)
    eager = eager_mod.make_model()
    torch.manual_seed(0)
    live = live_mod.make_model()
    compiled = tgc.load(so, live)
    for step in range(3):
        x = torch.randn(4, 8)
        with torch.no_grad():
            e = eager(x.clone())
            c = compiled(x.clone())
        assert isinstance(c, dict) and list(c) == ["h", "parts", "n"], c
        assert isinstance(c["parts"], list) and c["parts"][1] == "tag" and c["n"] == 2, c
        close(c["h"], e["h"], f"h #{step}")
        close(c["parts"][0], e["parts"][0], f"sum #{step}")
        close(live.prev, eager.prev, f"prev #{step}")
        close(live_mod.SCALE, eager_mod.SCALE, f"SCALE #{step}")
    live.gain = 3.0
    try:
        compiled(torch.randn(4, 8))
    except tgc.GuardError as e:
        print(f"guard ok: {e}")
    else:
        raise AssertionError("hasattr(self, 'gain') changed but no guard failed")
    print("python state ok")


def test_restride():
    """`x.t_()` / `x.unsqueeze_(0)` on an input: the caller's tensor sees the new metadata."""
    so = compile_("capture/restride.trace", "restride")
    mod = import_file("capture/restride.py", "restride_live")
    x = torch.randn(3, 5)
    a, b = x.clone(), x.clone()
    e = mod.f(a)
    c = tgc.load(so, mod.f)(b)
    close(c, e, "restride output")
    assert b.shape == a.shape and b.stride() == a.stride(), (b.shape, b.stride(), a.shape,
                                                           a.stride())
    close(b, a, "restride input")
    print("restride ok")


class Nested(torch.nn.Module):
    """Returns eager's nesting: a dict of a tensor, a tuple and a list, None, a tensor."""

    def forward(self, x):
        return {"a": x + 1, "b": (x * 2, [x - 1, x.sum()]), 7: None}, x.relu()


def test_export_structure():
    """A .pt2's outputs come back in the structure its out_spec records (torch's pytree):
    dicts (string and int keys), tuples, lists and None, as eager returns them."""
    x = torch.randn(3)
    path = os.path.join(WORK, "nested.pt2")
    torch.export.save(torch.export.export(Nested(), (x,)), path)
    so = os.path.join(WORK, "nested.so")
    subprocess.run([TGC, "compile", path, "-o", so], check=True)
    out, ref = tgc.load(so, Nested())(x), Nested()(x)
    assert type(out) is tuple and type(out[0]) is dict and list(out[0]) == ["a", "b", 7], out
    assert type(out[0]["b"]) is tuple and type(out[0]["b"][1]) is list, out
    assert out[0][7] is None, out
    close(out, ref, "nested outputs")
    print("export structure ok")


def test_json_hash():
    """model.so embeds the SHA-256 of its model.json: tgc.load refuses an edited one and
    one from another compile, with or without the same model name."""
    so = compile_("capture/mlp.trace", "hashed")
    model = import_file("capture/mlp.py", "capture_mlp").make_model()
    x = torch.randn(4, 16)
    close(tgc.load(so, model)(x), model(x), "mlp with its own model.json")
    path = so[:-3] + ".json"
    with open(path, "rb") as f:
        original = f.read()

    def swap(text):
        with open(path, "wb") as f:
            f.write(text)

    swap(original.replace(b'"x"', b'"z"', 1))
    check_raises(lambda: tgc.load(so, model), "does not match")
    swap(original + b"\n")
    check_raises(lambda: tgc.load(so, model), "does not match")
    for other, name in (("hashed_same_name", "hashed"), ("hashed_other", "hashed_other")):
        compile_("capture/methods.trace", other, "--name", name)
        with open(os.path.join(WORK, other + ".json"), "rb") as f:
            swap(f.read())
        check_raises(lambda: tgc.load(so, model),
                     "does not match" if name == "hashed" else "has no hashed_other_json_sha256")
    swap(original)
    close(tgc.load(so, model)(x), model(x), "mlp with its model.json back")
    print("json hash ok")


if __name__ == "__main__":
    test_mlp_trace()
    test_methods_trace()
    test_training()
    test_mutation()
    test_replay()
    test_python_state()
    test_restride()
    test_export_structure()
    test_json_hash()
    print("all ok")
