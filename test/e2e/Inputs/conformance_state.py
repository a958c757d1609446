"""The capture conformance suite through `tgc.load` (test/e2e/capture-conformance-state.test;
needs torch): `tgc.load(so, fn)(*args)` must behave like `fn(*args)`, Python side effects
included (issue 4: "the Python state after replay" is compared with eager's).

For every conformance program that compiles (the `tgc compile` lines of
test/e2e/capture-conformance.test) and every replay fixture (test/fixtures/capture/replay):
compile its .trace with tgc, import the program fresh (its module-level state as at import,
seed 0, as the fixture generator does) to get the live callable in its pre-call state, bind
`tgc.load(so, fn)` to it, call it once on the saved inputs, and compare with what eager
left (fp32, rtol 1e-4, atol 1e-5):

* the outputs (`output.N` of NAME.expected.safetensors; the result flattened as the
  generator flattens it), the mutated inputs (`mutated.<input>`) and the module's buffers
  (`state.<fqn>`);
* training programs: after backward with NAME.grad_outputs.safetensors, `grad.<fqn>` of
  every parameter and `grad.input.N`;
* conformance programs with `CAPTURE["observe"]`: observe() on the live program against
  NAME.state.json (+ NAME.state.safetensors); replay fixtures: their state (`state_of` in
  replay/make_fixtures.py) against NAME.expected.json and the state's tensors against
  `replay.N` of NAME.expected.safetensors.

Prints `NAME ok` or `NAME FAIL: <key>: <mismatch>` per program, then `all ok` or exits 1.

With --recapture, every conformance program is first captured again by the Python running
this script (3.11, 3.12 or 3.13), and eager's reference is recomputed there, as
make_fixtures.py does into WORKDIR/recaptured; the committed fixtures are not read. That
is the suite on another Python version (capture-conformance-py3NN.test). The replay
fixtures, captured by their own generator, are checked on 3.12 only.

    python conformance_state.py [--recapture] TGC FIXTURES WORKDIR CONFORMANCE_TEST [NAME...]
"""
import importlib.util
import itertools
import json
import math
import os
import re
import subprocess
import sys
import traceback

import torch
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tgc-capture"))

import tgc  # noqa: E402
from tgc_capture import cli  # noqa: E402

RECAPTURE = "--recapture" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--recapture"]
TGC, FIXTURES, WORK, CONFORMANCE_TEST = ARGS[:4]
ONLY = set(ARGS[4:])
RTOL, ATOL = 1e-4, 1e-5
CAPTURE_DIR = os.path.join(FIXTURES, "capture")
CONFORMANCE = os.path.join(CAPTURE_DIR, "conformance")
REPLAY = os.path.join(CAPTURE_DIR, "replay")


class Mismatch(Exception):
    """A difference from eager: `key` names what differs."""

    def __init__(self, key, message):
        super().__init__(f"{key}: {message}")


def import_as(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_(trace, name, train, flags=()):
    out = os.path.join(WORK, name + ".so")
    result = subprocess.run([TGC, "compile", trace, *(["--train"] if train else []),
                             *flags, "-o", out], capture_output=True, text=True)
    if result.returncode != 0:
        raise Mismatch("compile", result.stderr.strip().splitlines()[0]
                       if result.stderr.strip() else f"exit {result.returncode}")
    return out


def close(actual, expected, key):
    if not isinstance(actual, torch.Tensor):
        raise Mismatch(key, f"expected a tensor, got {type(actual).__name__} {actual!r}")
    try:
        # NaN where eager has NaN is right (as safetensors-compare counts it).
        torch.testing.assert_close(actual.detach(), expected, rtol=RTOL, atol=ATOL, equal_nan=True)
    except AssertionError as e:
        raise Mismatch(key, " ".join(str(e).split())) from None


def same_json(actual, expected, key, tensors=None):
    """Compares observed state (JSON-like) with eager's: types exactly (a float is not
    an int), floats within rtol, tensors (`{"tensor": key}` into `tensors`, or nested
    float lists) within rtol/atol."""
    if isinstance(expected, dict) and set(expected) == {"tensor"} and \
            isinstance(expected["tensor"], str) and tensors is not None:
        if not (isinstance(actual, dict) and set(actual) == {"tensor"}):
            raise Mismatch(key, f"expected a tensor, got {actual!r}")
        close(tensors[1][actual["tensor"]], tensors[0][expected["tensor"]], key)
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise Mismatch(key, f"expected a dict, got {actual!r}")
        if list(actual) != list(expected) and set(actual) != set(expected):
            raise Mismatch(key, f"keys {sorted(actual)}, expected {sorted(expected)}")
        for k in expected:
            same_json(actual[k], expected[k], f"{key}.{k}", tensors)
        return
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise Mismatch(key, f"{actual!r}, expected {expected!r}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            same_json(a, e, f"{key}[{i}]", tensors)
        return
    if isinstance(expected, float) and isinstance(actual, float):
        if not math.isclose(actual, expected, rel_tol=RTOL, abs_tol=ATOL):
            raise Mismatch(key, f"{actual!r}, expected {expected!r}")
        return
    if type(actual) is not type(expected) or actual != expected:
        raise Mismatch(key, f"{actual!r}, expected {expected!r}")


def conformance_programs():
    """{fixture name: (stem, CAPTURE with the variant applied)} from the programs and
    the fixture names the conformance lit test compiles (not the `not tgc compile`s)."""
    gen = import_as(os.path.join(CAPTURE_DIR, "make_fixtures.py"), "_conformance_gen")
    configs = {name: (stem, config) for name, stem, config in gen.conformance_programs()}
    compiled = []
    with open(CONFORMANCE_TEST) as f:
        for line in f:
            m = re.match(r"#\s*RUN:\s*tgc compile %fixtures/capture/conformance/(\w+)\.trace",
                         line)
            if m and m.group(1) not in compiled:
                compiled.append(m.group(1))
    # Error programs that --allow-graph-breaks compiles have no eager reference.
    return gen, [(name, *configs[name]) for name in compiled
                 if not configs[name][1].get("expect_error")]


def structure(value):
    """A result's shape without its tensors' values: `Tensor`, tuples, lists, dicts,
    objects (their class and attributes), functions (their qualified name)."""
    if isinstance(value, torch.Tensor):
        return "Tensor"
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [structure(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, structure(v)) for k, v in value.items()])
    if callable(value) and hasattr(value, "__qualname__"):
        return ("function", value.__qualname__)
    if hasattr(value, "__dict__"):
        return (type(value).__qualname__, [(k, structure(v)) for k, v in vars(value).items()])
    return repr(value)


def same_result(actual, expected, key="result"):
    """The tensors in objects the program returned (which flatten does not reach) match
    eager's, and a returned function gives eager's result on a probe of ones."""
    if isinstance(expected, torch.Tensor):
        close(actual, expected, key)
        # A layout that gives each element its own place (row-major, permuted as
        # TensorIterator lays out elementwise results, a view with gaps), but for
        # broadcast dimensions (stride 0), comes back as eager's.
        dims = sorted((s, n) for s, n in zip(expected.stride(), expected.shape)
                      if n != 1 and s != 0)
        separate, extent = True, 1
        for s, n in dims:
            separate &= s >= extent
            extent = s * n
        if not separate and expected.numel() <= 1 << 16:  # x[:, ::2] interleaves rows
            places = {sum(i * s for i, (s, _) in zip(index, dims))
                      for index in itertools.product(*(range(n) for _, n in dims))}
            separate = len(places) == math.prod(n for _, n in dims)
        if separate and expected.numel() and any(n != 1 for n in expected.shape) and \
                [s for s, n in zip(actual.stride(), actual.shape) if n != 1] != \
                [s for s, n in zip(expected.stride(), expected.shape) if n != 1]:
            raise Mismatch(key, f"strides {actual.stride()}, eager's {expected.stride()}")
    elif isinstance(expected, (tuple, list)):
        for i, (a, e) in enumerate(zip(actual, expected)):
            same_result(a, e, "%s[%d]" % (key, i))
    elif isinstance(expected, dict):
        for k, e in expected.items():
            same_result(actual[k], e, "%s[%r]" % (key, k))
    elif isinstance(expected, float):
        if abs(actual - expected) > ATOL + RTOL * abs(expected):
            raise Mismatch(key, f"{actual!r}, eager's {expected!r}")
    elif callable(expected) and hasattr(expected, "__code__"):
        nargs = expected.__code__.co_argcount
        probe = [torch.ones(())] * nargs
        same_result(actual(*probe), expected(*probe), key + "(ones)")
    elif hasattr(expected, "__dict__"):
        for k, e in vars(expected).items():
            same_result(getattr(actual, k), e, "%s.%s" % (key, k))


def fresh(stem, config, train, inputs):
    """The program imported fresh (its module-level state as at import), seed 0, as the
    generator does: the pre-call state the trace was captured from. (live callable,
    module, input names, number of positional inputs, {name: a copy of the saved input
    in `inputs`})."""
    sys.modules.pop(stem, None)
    torch.manual_seed(0)
    fn, args, _, names, _, made = cli.prepare(
        "%s.py:%s" % (stem, config.get("factory", "make_model")), config["inputs"],
        config.get("dynamic", []), train=train, seed=0,
        requires_grad=config.get("requires_grad", []))
    saved = load_file(inputs)
    call = {n: saved[n].clone().requires_grad_(made[n].requires_grad) for n in names}
    return fn, sys.modules[stem], names, len(args), call


def check_conformance(gen, name, stem, config):
    data = CONFORMANCE
    if RECAPTURE:
        # The trace and eager's reference from this Python, as the generator makes them.
        data = os.path.join(WORK, "recaptured")
        os.makedirs(data, exist_ok=True)
        sys.modules.pop(stem, None)
        torch.manual_seed(0)
        gen.make_conformance(name, stem, config, data)
    train = config.get("train", False)
    flags = ["--allow-graph-breaks"] if config.get("allow_graph_breaks") else []
    so = compile_(os.path.join(data, name + ".trace"), name, train, flags)
    inputs = os.path.join(data, name + ".inputs.safetensors")
    # Other inputs for the same program (another branch of a graph break): outputs and
    # mutated inputs against eager's, on a fresh import.
    for key in sorted(config.get("more_inputs", {})):
        other = os.path.join(data, "%s.%s.inputs.safetensors" % (name, key))
        expected = load_file(os.path.join(data, "%s.%s.expected.safetensors" %
                                          (name, key)))
        fn, _, names, npos, call = fresh(stem, config, train, other)
        arrived = {n: t.detach() for n, t in call.items()}
        with torch.set_grad_enabled(train):
            result = tgc.load(so, fn, train=train)(*[call[n] for n in names[:npos]],
                                                   **{n: call[n] for n in names[npos:]})
        outputs = gen.flatten(result, [])
        for i, o in enumerate(outputs):
            close(o, expected["output.%d" % i], "%s: output.%d" % (key, i))
        if train:
            grads = load_file(os.path.join(data, name + ".grad_outputs.safetensors"))
            torch.autograd.backward([outputs[int(k.split(".")[1])] for k in grads],
                                    list(grads.values()))
            for fqn, p in fn.named_parameters():
                if "grad." + fqn in expected:
                    close(p.grad, expected["grad." + fqn], "%s: grad.%s" % (key, fqn))
            for i, n in enumerate(names):
                if "grad.input.%d" % i in expected:
                    close(call[n].grad, expected["grad.input.%d" % i],
                          "%s: grad.input.%d" % (key, i))
        for k, value in expected.items():
            if k.startswith("mutated."):
                n = k[len("mutated."):]
                close(call[n] if gen.resized(call[n], arrived[n]) else arrived[n], value,
                      "%s: %s" % (key, k))
            if k.startswith("state.") and isinstance(fn, torch.nn.Module):
                close(dict(fn.named_buffers())[k[len("state."):]], value, "%s: %s" % (key, k))
    # Eager's result structure, from a copy of the program of its own.
    fn, _, names, npos, call = fresh(stem, config, train, inputs)
    with torch.set_grad_enabled(train):
        eager_result = fn(*[call[n] for n in names[:npos]],
                          **{n: call[n] for n in names[npos:]})
        eager_structure = structure(eager_result)
    # The live program tgc.load binds to, in its pre-call state.
    fn, module, names, npos, call = fresh(stem, config, train, inputs)
    arrived = {n: t.detach() for n, t in call.items()}
    expected = load_file(os.path.join(data, name + ".expected.safetensors"))

    compiled = tgc.load(so, fn, train=train)
    with torch.set_grad_enabled(train):
        result = compiled(*[call[n] for n in names[:npos]],
                          **{n: call[n] for n in names[npos:]})
    if structure(result) != eager_structure:
        raise Mismatch("result", f"structure {structure(result)}, eager's {eager_structure}")
    with torch.no_grad():
        same_result(result, eager_result)
    outputs = gen.flatten(result, [])
    num_expected = len([k for k in expected if k.startswith("output.")])
    if len(outputs) != num_expected:
        raise Mismatch("outputs", f"{len(outputs)} outputs, eager returns {num_expected}")
    for i, o in enumerate(outputs):
        close(o, expected["output.%d" % i], "output.%d" % i)
    if train:
        grads = load_file(os.path.join(data, name + ".grad_outputs.safetensors"))
        roots = [outputs[int(k.split(".")[1])] for k in grads]
        for k, r in zip(grads, roots):
            if not r.requires_grad:
                raise Mismatch(k, "does not require grad (eager's does)")
        if roots:
            torch.autograd.backward(roots, list(grads.values()))
        if isinstance(fn, torch.nn.Module):
            for fqn, p in fn.named_parameters():
                if p.requires_grad:
                    close(p.grad if p.grad is not None else torch.zeros_like(p),
                          expected["grad." + fqn], "grad." + fqn)
        for i, n in enumerate(names):
            if call[n].requires_grad:
                g = call[n].grad
                close(g if g is not None else torch.zeros_like(call[n]),
                      expected["grad.input.%d" % i], "grad.input.%d" % i)
    for key, value in expected.items():
        if key.startswith("mutated."):
            n = key[len("mutated."):]
            close(call[n] if gen.resized(call[n], arrived[n]) else arrived[n], value, key)
    if isinstance(fn, torch.nn.Module):
        buffers = dict(fn.named_buffers())
        for key, value in expected.items():
            if key.startswith("state."):
                if key[len("state."):] not in buffers:
                    raise Mismatch(key, "the live module has no such buffer")
                close(buffers[key[len("state."):]], value, key)
    observe = module.CAPTURE.get("observe")
    state_json = os.path.join(data, name + ".state.json")
    if observe is not None:
        with open(state_json) as f:
            eager = json.load(f)
        eager_tensors = {}
        if os.path.exists(os.path.join(data, name + ".state.safetensors")):
            eager_tensors = load_file(os.path.join(data, name + ".state.safetensors"))
        live_tensors = {}
        try:
            live = gen.to_json(observe(), [], live_tensors)
        except Exception as e:  # noqa: BLE001 - the replay left the state incomplete
            raise Mismatch("observe", f"observe() raised {type(e).__name__}: {e}") from None
        same_json(live, eager, "observe", (eager_tensors, live_tensors))


def check_replay_fixture(gen, flatten, name):
    so = compile_(os.path.join(REPLAY, name + ".trace"), "replay_" + name, False)
    sys.modules.pop(name, None)
    torch.manual_seed(0)
    fn, args, kwargs, names, _, _ = cli.prepare("%s.py:make_model" % name, ["x=f32[2,3]"],
                                                [], train=False, seed=0)
    saved = load_file(os.path.join(REPLAY, name + ".inputs.safetensors"))
    call = {n: saved[n].clone() for n in names}
    expected = load_file(os.path.join(REPLAY, name + ".expected.safetensors"))
    compiled = tgc.load(so, fn)
    with torch.no_grad():
        outputs = flatten(compiled(*[call[n] for n in names[:len(args)]],
                                   **{n: call[n] for n in names[len(args):]}), [])
    if len(outputs) != 1:
        raise Mismatch("outputs", f"{len(outputs)} outputs, eager returns 1")
    close(outputs[0], expected["output.0"], "output.0")
    with open(os.path.join(REPLAY, name + ".expected.json")) as f:
        eager = json.load(f)
    try:
        live = json.loads(json.dumps(gen.state_of(name, fn)))
    except Exception as e:  # noqa: BLE001 - the replay left the state incomplete
        raise Mismatch("state", f"reading it raised {type(e).__name__}: {e}") from None
    same_json(live, eager, "state")
    state = gen.state_tensors(name, fn)
    keys = sorted((k for k in expected if k.startswith("replay.")),
                  key=lambda k: int(k.split(".")[1]))
    if len(state) != len(keys):
        raise Mismatch("state tensors", f"{len(state)}, eager's {len(keys)}")
    for t, key in zip(state, keys):
        close(t, expected[key], key)


def run(name, check, *args):
    # Eager torch.cond compiles its branches with Dynamo; programs reuse function names,
    # so each starts from a clean Dynamo cache.
    torch._dynamo.reset()
    try:
        check(*args)
    except Mismatch as e:
        print(f"{name} FAIL: {e}")
        return False
    except Exception as e:  # noqa: BLE001 - reported with the program's name
        print(f"{name} FAIL: {type(e).__name__}: {e}")
        traceback.print_exc(file=sys.stderr)
        return False
    print(f"{name} ok")
    return True


def main():
    os.makedirs(WORK, exist_ok=True)
    ok = True
    cwd = os.getcwd()
    gen, programs = conformance_programs()
    # Code filenames in the traces are relative: programs load from their directory.
    os.chdir(CONFORMANCE)
    for name, stem, config in programs:
        if not ONLY or name in ONLY:
            ok &= run(name, check_conformance, gen, name, stem, config)
    if RECAPTURE:
        os.chdir(cwd)
        if not ok:
            sys.exit(1)
        print("all ok")
        return
    replay_gen = import_as(os.path.join(REPLAY, "make_fixtures.py"), "_replay_gen")
    os.chdir(REPLAY)
    for name in replay_gen.FIXTURES:
        if not ONLY or "replay/" + name in ONLY:
            ok &= run("replay/" + name, check_replay_fixture, replay_gen, gen.flatten, name)
    os.chdir(cwd)
    if not ok:
        sys.exit(1)
    print("all ok")


if __name__ == "__main__":
    main()
