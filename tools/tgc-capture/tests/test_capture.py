"""Tests of tgc-capture (need torch, so they are not part of the CTest/lit suite):

    python3 tools/tgc-capture/tests/test_capture.py

Each `test_*` function is plain asserts (pytest also collects them where it is installed).
"""

import importlib.util
import json
import marshal
import math
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL_DIR = os.path.dirname(HERE)
LAUNCHER = os.path.join(TOOL_DIR, "tgc-capture")
FIXTURES = os.path.join(TOOL_DIR, "..", "..", "test", "fixtures", "capture")
sys.path.insert(0, TOOL_DIR)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import tgc_capture  # noqa: E402
from tgc_capture import format as fmt  # noqa: E402
from tgc_capture import reader  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tgc-capture-test-")


def capture(fn, args, **options):
    path = os.path.join(TMP, "t%d.trace" % len(os.listdir(TMP)))
    tgc_capture.capture(fn, args, path, **options)
    return reader.load(path)


def deref(trace, value):
    assert isinstance(value, dict) and "ref" in value, value
    return trace.object(value["ref"])


def only(items):
    assert len(items) == 1, items
    return items[0]


def externals(trace):
    return {o["module"] + "." + o["qualname"] for o in trace.objects if o["kind"] == "external"}


# -- fixtures used by the tests (module level, so they have real globals) -------------------

CONFIG = [3, 4.5]
UNUSED_GLOBAL = object()
HELPER_ONLY = 7.0
BIG = 2 ** 70
SPECIAL = (math.inf, -math.inf, math.nan)


def helper(x):
    return x * HELPER_ONLY


def uses_globals(x):
    return torch.nn.functional.relu(helper(x)) + CONFIG[0] + BIG + SPECIAL[0]


def make_shared_cell():
    counter = torch.zeros(2)

    def read(x):
        return x + counter

    def write(x):
        return x * counter

    return read, write


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class WithView(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("base", torch.arange(12.0).reshape(3, 4))
        self.row = self.base[1]
        self.lin = nn.Linear(4, 2)

    def forward(self, x):
        return self.lin(x + self.row), Square.apply(x)


def pack_hook(t):
    return t.detach()


def unpack_hook(t):
    return t


def grad_hook(g):
    return g * 2


# -- tests ----------------------------------------------------------------------------------

def test_header_layout():
    path = os.path.join(TMP, "layout.trace")
    tgc_capture.capture(WithView(), (torch.randn(3, 4),), path)
    data = open(path, "rb").read()
    assert data[:8] == b"TGCTRACE"
    major, minor, header_size, data_offset = fmt.FIXED.unpack_from(data)[1:]
    assert (major, minor) == (1, 0)
    assert data_offset % 64 == 0 and data_offset >= 32 + header_size
    header = json.loads(data[32:32 + header_size])
    assert header["format"] == "tgc-trace" and header["version"] == [1, 0]
    assert header["python"]["version"] == list(sys.version_info[:3])
    assert header["python"]["magic"] == int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little")
    assert header["torch"] == torch.__version__.split("+")[0]
    assert header["train"] is False
    assert set(data[32 + header_size:data_offset]) <= {0}
    end = 0
    assert header["blobs"]
    for blob in header["blobs"]:
        assert blob["offset"] % 64 == 0 and blob["offset"] >= end
        assert set(data[data_offset + end:data_offset + blob["offset"]]) <= {0}
        end = blob["offset"] + blob["size"]
    assert data_offset + end == len(data)
    # Sorted keys, no spaces: the header is its own canonical encoding.
    assert fmt.encode_header(header) == data[32:32 + header_size]


def test_determinism():
    model = WithView()
    a = os.path.join(TMP, "a.trace")
    b = os.path.join(TMP, "b.trace")
    tgc_capture.capture(model, (torch.randn(3, 4),), a)
    tgc_capture.capture(model, (torch.randn(3, 4),), b)
    assert open(a, "rb").read() == open(b, "rb").read()


def test_determinism_across_processes():
    script = ("import sys; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
              "import torch, test_capture as t, tgc_capture\n"
              "torch.manual_seed(0)\n"
              "tgc_capture.capture(t.WithView(), (torch.ones(3, 4),), sys.argv[1])\n"
              % (TOOL_DIR, HERE))
    paths = [os.path.join(TMP, "p%d.trace" % i) for i in range(2)]
    for i, path in enumerate(paths):
        env = dict(os.environ, PYTHONHASHSEED=str(i + 1))
        subprocess.run([sys.executable, "-c", script, path], check=True, env=env)
    assert open(paths[0], "rb").read() == open(paths[1], "rb").read()


def test_cell_identity():
    read, write = make_shared_cell()
    trace = capture(read, (torch.randn(2),))
    trace2 = capture(lambda x: (read(x), write(x)), (torch.randn(2),))
    functions = {o["name"]: o for o in trace2.objects if o["kind"] == "function"}
    assert functions["read"]["closure"] == functions["write"]["closure"]
    cells = [o for o in trace2.objects if o["kind"] == "cell"]
    # The lambda's two cells (read, write) and the shared `counter` cell.
    assert len(cells) == 3, cells
    counter = deref(trace2, only(functions["read"]["closure"]))
    assert deref(trace2, counter["contents"])["kind"] == "tensor"
    # Capturing one closure alone still gives its cell.
    read_record = trace.object(only(trace.find("function", name="read")))
    assert deref(trace, only(read_record["closure"]))["kind"] == "cell"


def test_empty_cell():
    def outer():
        def inner():
            return later

        if False:
            later = 1
        return inner

    fn = outer()
    trace = capture(fn, ())
    cell = only([o for o in trace.objects if o["kind"] == "cell"])
    assert "contents" not in cell


def test_globals_and_module_tree():
    trace = capture(uses_globals, (torch.randn(3),))
    # The program's namespace; torch.nn.functional's is there too, for the code of F.relu
    # (a fallback tgc interprets when it has no binding of its own).
    namespaces = [o for o in trace.objects if o["kind"] == "globals"]
    assert sorted(o["module"] for o in namespaces if o["module"].startswith("torch")) == [
        "torch.nn.functional"], namespaces
    globals_ = only([o for o in namespaces if not o["module"].startswith("torch")])
    assert globals_["module"] == "test_capture" or globals_["module"] == "__main__"
    entries = globals_["entries"]
    # Restricted to the names the reachable bytecode mentions; helper's global is reached
    # through the fixpoint (uses_globals itself never names HELPER_ONLY).
    assert {"torch", "helper", "CONFIG", "BIG", "SPECIAL", "HELPER_ONLY"} <= set(entries), entries
    assert "UNUSED_GLOBAL" not in entries and "LAUNCHER" not in entries
    assert deref(trace, entries["CONFIG"]) == {"kind": "list", "items": [3, 4.5]}
    assert entries["HELPER_ONLY"] == 7.0
    assert entries["BIG"] == {"int": str(2 ** 70)}
    assert deref(trace, entries["SPECIAL"])["items"] == [
        {"float": "inf"}, {"float": "-inf"}, {"float": "nan"}]
    torch_module = deref(trace, entries["torch"])
    assert torch_module["kind"] == "module" and torch_module["name"] == "torch"
    nn_module = deref(trace, torch_module["attributes"]["nn"])
    functional = deref(trace, nn_module["attributes"]["functional"])
    assert functional["name"] == "torch.nn.functional"
    relu = deref(trace, functional["attributes"]["relu"])
    python = deref(trace, relu.pop("python"))
    assert relu == {"kind": "external", "module": "torch.nn.functional", "qualname": "relu"}
    assert python["kind"] == "function" and python["qualname"] == "relu"
    assert trace.code(python["code"]["ref"]) == torch.nn.functional.relu.__code__
    assert "Linear" not in nn_module["attributes"]


def lazy_import(x):
    import torch.nn.functional as functional
    from math import pi
    return functional.relu(x) * pi


def test_imported_modules():
    trace = capture(lazy_import, (torch.randn(2),))
    modules = trace.header["modules"]
    assert sorted(modules) == ["math", "torch", "torch.nn", "torch.nn.functional"], modules
    functional = deref(trace, modules["torch.nn.functional"])
    assert functional["kind"] == "module" and "relu" in functional["attributes"]
    assert deref(trace, modules["math"])["attributes"]["pi"] == math.pi


def test_linear_class_with_forward_code():
    trace = capture(nn.Linear(4, 3), (torch.randn(2, 4),))
    # Pre-order ids: the callable is object 0, an object's class its first child.
    assert trace.header["entry"]["callable"] == {"ref": 0}
    root = trace.object(0)
    assert root["kind"] == "object" and root["class"] == {"ref": 1}
    linear = deref(trace, root["class"])
    assert linear["kind"] == "class" and linear["qualname"] == "Linear"
    assert linear["module"] == "torch.nn.modules.linear"
    forward = deref(trace, linear["dict"]["forward"])
    assert forward["kind"] == "function"
    code = deref(trace, forward["code"])
    assert code["qualname"] == "Linear.forward"
    assert trace.code(forward["code"]["ref"]) == nn.Linear.forward.__code__
    mro = [deref(trace, c) for c in linear["mro"]]
    assert mro[0] is linear
    assert mro[1] == {"kind": "external", "module": "torch.nn", "qualname": "Module"}
    assert mro[2] == {"kind": "external", "module": "builtins", "qualname": "object"}
    fn_globals = deref(trace, forward["globals"])
    functional = deref(trace, fn_globals["entries"]["F"])
    # A C function: by name, with its ATen overloads (no Python fallback).
    assert deref(trace, functional["attributes"]["linear"]) == {
        "kind": "external", "module": "torch.nn.functional", "qualname": "linear",
        "overloads": [["aten.linear.default",
                       "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"]]}
    assert root["dict"]["in_features"] == 4 and root["dict"]["training"] is True
    parameters = deref(trace, root["dict"]["_parameters"])
    assert [k for k, _ in parameters["items"]] == ["weight", "bias"]


def test_view_shares_storage():
    model = WithView()
    trace = capture(model, (torch.randn(3, 4),))
    tensors = [o for o in trace.objects if o["kind"] == "tensor"]
    base = only([t for t in tensors if t["shape"] == [3, 4] and t["storage_offset"] == 0
                 and "blob" in deref(trace, t["storage"])])
    row = only([t for t in tensors if t["shape"] == [4]])
    assert row["storage"] == base["storage"] and row["storage_offset"] == 4
    assert row["stride"] == [1] and base["stride"] == [4, 1]
    storage = deref(trace, base["storage"])
    assert storage["nbytes"] == 48
    assert trace.blob(storage["blob"]) == model.base.numpy().tobytes()


def test_parameter_round_trip():
    model = nn.Linear(5, 3)
    trace = capture(model, (torch.randn(2, 5),))
    weight = only([o for o in trace.objects if o["kind"] == "tensor" and o["shape"] == [3, 5]])
    assert weight["parameter"] is True and weight["requires_grad"] is True
    assert weight["dtype"] == "float32" and weight["device"] == "cpu"
    data = trace.blob(deref(trace, weight["storage"])["blob"])
    assert data == model.weight.detach().numpy().tobytes()
    assert torch.equal(torch.frombuffer(bytearray(data), dtype=torch.float32).view(3, 5),
                       model.weight.detach())


def test_inputs_have_no_data():
    x = torch.randn(2, 5)
    trace = capture(nn.Linear(5, 3), (x,), dynamic={"input": {0: (1, 64)}})
    entry = only(trace.header["inputs"])
    assert entry["name"] == "input"  # nn.Linear.forward(self, input)
    assert entry["dynamic"] == {"0": {"symbol": "input_0", "min": 1, "max": 64}}
    tensor = trace.object(entry["tensor"])
    assert tensor["parameter"] is False and tensor["shape"] == [2, 5]
    assert "blob" not in deref(trace, tensor["storage"])
    assert trace.header["entry"]["args"] == [{"ref": entry["tensor"]}]


def test_hooks():
    model = nn.Linear(2, 2)
    handle = model.weight.register_hook(grad_hook)
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        trace = capture(model, (torch.randn(1, 2),))
    handle.remove()
    weight = only([o for o in trace.objects if o["kind"] == "tensor" and o["parameter"]
                   and o["shape"] == [2, 2]])
    assert deref(trace, only(weight["hooks"]))["name"] == "grad_hook"
    pack, unpack = only(trace.header["saved_tensors_hooks"])
    assert deref(trace, pack)["name"] == "pack_hook"
    assert deref(trace, unpack)["name"] == "unpack_hook"
    # None active: none recorded; an explicit pair overrides.
    assert capture(model, (torch.randn(1, 2),)).header["saved_tensors_hooks"] == []
    trace = capture(model, (torch.randn(1, 2),), saved_tensors_hooks=[(unpack_hook, pack_hook)])
    pack, unpack = only(trace.header["saved_tensors_hooks"])
    assert deref(trace, pack)["name"] == "unpack_hook"


def test_module_hooks_and_autograd_function():
    model = WithView()
    model.register_forward_hook(lambda m, i, o: o)
    trace = capture(model, (torch.randn(3, 4),))
    root = deref(trace, trace.header["entry"]["callable"])
    hooks = deref(trace, root["dict"]["_forward_hooks"])
    assert deref(trace, hooks["class"])["qualname"] == "OrderedDict"
    assert deref(trace, only(hooks["items"])[1])["name"] == "<lambda>"
    square = only(trace.find("class", qualname="Square"))
    record = trace.object(square)
    forward = deref(trace, record["dict"]["forward"])
    assert forward["kind"] == "staticmethod"
    assert deref(trace, forward["function"])["qualname"] == "Square.forward"
    assert deref(trace, record["bases"][0]) == {
        "kind": "external", "module": "torch.autograd", "qualname": "Function"}
    # super().__init__() gives WithView.__init__ a __class__ cell holding the class.
    init = deref(trace, deref(trace, root["class"])["dict"]["__init__"])
    assert deref(trace, deref(trace, only(init["closure"]))["contents"])["qualname"] == "WithView"


def test_externals_and_values():
    import operator

    values = (torch.Tensor.add, F.linear, torch.relu, operator.add, len, math.sqrt,
              torch.float16, torch.device("cpu"), torch.Size([2, 3]), torch.strided,
              slice(1, None, 2), range(3), 1 + 2j, b"ab", ..., {3, 1, 2}, torch.Tensor,
              object(), torch.ones(2).add)
    trace = capture(lambda x: x, (torch.randn(1),), example_kwargs={"k": values})
    names = externals(trace)
    for name in ("torch.Tensor.add", "torch.nn.functional.linear", "torch.relu",
                 "operator.add", "builtins.len", "math.sqrt", "torch.Size", "torch.strided",
                 "torch.Tensor"):
        assert name in names, (name, names)
    items = [deref(trace, v) if isinstance(v, dict) else v
             for v in deref(trace, trace.header["entry"]["kwargs"]["k"])["items"]]
    assert items[6] == {"kind": "dtype", "name": "float16"}
    assert items[7] == {"kind": "device", "type": "cpu", "index": None}
    assert items[8]["kind"] == "tuple" and items[8]["items"] == [2, 3]
    assert items[10] == {"kind": "slice", "start": 1, "stop": None, "step": 2}
    assert items[11] == {"kind": "range", "start": 0, "stop": 3, "step": 1}
    assert items[12] == {"kind": "complex", "real": 1.0, "imag": 2.0}
    assert trace.blob(items[13]["blob"]) == b"ab"
    assert items[14] == {"kind": "ellipsis"}
    assert items[15] == {"kind": "set", "items": [1, 2, 3]}
    assert items[17]["kind"] == "opaque" and items[17]["type"] == "builtins.object"
    assert " at 0x" not in items[17]["repr"]
    method = items[18]
    assert method["kind"] == "method"
    assert deref(trace, method["function"])["qualname"] == "Tensor.add"
    assert deref(trace, method["self"])["kind"] == "tensor"


def test_cli_factory_inputs_and_dump():
    out = os.path.join(TMP, "cli")
    os.makedirs(out)
    trace_path = os.path.join(out, "m.trace")
    inputs_path = os.path.join(out, "in.safetensors")
    result = subprocess.run(
        [sys.executable, LAUNCHER, os.path.join(FIXTURES, "methods.py") + ":make_model",
         "--input", "x=f32[3,8]", "--dynamic", "x:0:1:16", "--seed", "3", "--save-inputs",
         inputs_path, "-o", trace_path], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    from safetensors.torch import load_file
    torch.manual_seed(3)
    assert torch.equal(load_file(inputs_path)["x"], torch.randn(3, 8))
    trace = reader.load(trace_path)
    entry = only(trace.header["inputs"])
    assert entry["name"] == "x" and entry["dynamic"]["0"]["max"] == 16
    root = deref(trace, trace.header["entry"]["callable"])
    assert deref(trace, root["class"])["qualname"] == "Block"
    assert root["dict"]["training"] is False  # no --train: eval()
    dump = subprocess.run([sys.executable, LAUNCHER, "--dump", trace_path],
                          capture_output=True, text=True)
    assert dump.returncode == 0 and json.loads(dump.stdout) == trace.header


def test_cli_function_and_train():
    source = os.path.join(TMP, "fnmod.py")
    with open(source, "w") as f:
        f.write("import torch\n\ndef f(a, b):\n    return a + b\n\n"
                "def make():\n    return torch.nn.Dropout(0.5)\n")
    trace_path = os.path.join(TMP, "fn.trace")
    result = subprocess.run([sys.executable, LAUNCHER, source + ":f", "--input", "b=i64[2]",
                             "--input", "a=f32[2]", "-o", trace_path],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    trace = reader.load(trace_path)
    assert deref(trace, trace.header["entry"]["callable"])["name"] == "f"
    # Bound by name: a then b positionally.
    assert [i["name"] for i in trace.header["inputs"]] == ["a", "b"]
    assert [trace.object(i["tensor"])["dtype"] for i in trace.header["inputs"]] == \
        ["float32", "int64"]
    result = subprocess.run([sys.executable, LAUNCHER, source + ":make", "--input", "x=f32[2]",
                             "--train", "-o", trace_path], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    trace = reader.load(trace_path)
    assert trace.header["train"] is True
    assert deref(trace, trace.header["entry"]["callable"])["dict"]["training"] is True
    # --requires-grad marks an input tensor as requiring grad; the others do not.
    result = subprocess.run([sys.executable, LAUNCHER, source + ":f", "--input", "a=f32[2]",
                             "--input", "b=f32[2]", "--requires-grad", "b", "--train",
                             "-o", trace_path], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    trace = reader.load(trace_path)
    assert [trace.object(i["tensor"])["requires_grad"] for i in trace.header["inputs"]] == \
        [False, True]


def test_cli_errors():
    cases = [
        (["x.py"], "FILE.py:NAME"),
        ([os.path.join(FIXTURES, "mlp.py") + ":make_model", "--input", "x=f99[2]"],
         "unknown dtype `f99`"),
        ([os.path.join(FIXTURES, "mlp.py") + ":nope", "--input", "x=f32[2,16]"],
         "has no `nope`"),
        ([os.path.join(FIXTURES, "mlp.py") + ":make_model", "--input", "x=f32[2,16]",
          "--dynamic", "y:0"], "not a tensor input"),
        ([os.path.join(FIXTURES, "mlp.py") + ":make_model", "--input", "x=f32[2,16]",
          "--dynamic", "x:0:4"], "outside [4, inf]"),
        ([os.path.join(TMP, "missing.py") + ":f"], "no such file"),
        ([os.path.join(FIXTURES, "mlp.py") + ":make_model", "--input", "x=f32[2,16]",
          "--requires-grad", "y"], "--requires-grad y: no --input of that name"),
        ([os.path.join(FIXTURES, "mlp.py") + ":make_model", "--input", "x=i64[2,16]",
          "--requires-grad", "x"], "only floating inputs can require grad"),
    ]
    for argv, message in cases:
        result = subprocess.run([sys.executable, LAUNCHER] + argv + ["-o", os.path.join(
            TMP, "err.trace")], capture_output=True, text=True)
        assert result.returncode == 1, (argv, result)
        assert "tgc-capture: error:" in result.stderr and message in result.stderr, \
            (argv, result.stderr)
    bad = os.path.join(TMP, "bad.trace")
    with open(bad, "wb") as f:
        f.write(b"NOTATRACE" + bytes(40))
    result = subprocess.run([sys.executable, LAUNCHER, "--dump", bad],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "bad magic" in result.stderr


def test_python_version_rejected():
    for version in ((3, 10, 13), (3, 14, 0)):
        try:
            fmt.check_python(version)
        except fmt.UnsupportedPythonError as e:
            assert "needs CPython 3.11, 3.12, 3.13" in str(e) and "%d.%d.%d" % version in str(e)
        else:
            raise AssertionError("%s accepted" % (version,))
    for version in ((3, 11, 7), (3, 12, 1), (3, 13, 0)):
        fmt.check_python(version)
    # A real other Python, where the machine has one: the launcher refuses to capture.
    for name in ("python3.10", "python3.9", "python3.14"):
        other = shutil.which(name)
        if not other or subprocess.run([other, "-c", "pass"], capture_output=True).returncode:
            continue
        result = subprocess.run([other, LAUNCHER, os.path.join(FIXTURES, "mlp.py") + ":make_model",
                                 "--input", "x=f32[2,16]", "-o", os.path.join(TMP, "v.trace")],
                                capture_output=True, text=True)
        assert result.returncode == 1 and "needs CPython 3.11" in result.stderr, result.stderr
        # --dump needs neither a supported Python nor torch.
        result = subprocess.run([other, LAUNCHER, "--dump",
                                 os.path.join(FIXTURES, "closure.trace")],
                                capture_output=True, text=True)
        assert result.returncode == 0 and json.loads(result.stdout)["format"] == "tgc-trace"


def test_fixtures_are_current():
    """make_fixtures.py, run again (another process), writes the committed bytes."""
    committed = reader.load(os.path.join(FIXTURES, "mlp.trace"))
    if committed.header["torch"] != torch.__version__.split("+")[0]:
        return  # made with another torch: its code objects differ
    out = os.path.join(TMP, "fixtures")
    os.makedirs(out)
    subprocess.run([sys.executable, os.path.join(FIXTURES, "make_fixtures.py"), "--out", out],
                   check=True, capture_output=True)
    for name in ("mlp", "closure", "methods"):
        for suffix in (".trace", ".inputs.safetensors", ".expected.safetensors"):
            with open(os.path.join(FIXTURES, name + suffix), "rb") as f:
                expected = f.read()
            with open(os.path.join(out, name + suffix), "rb") as f:
                assert f.read() == expected, name + suffix
        trace = reader.load(os.path.join(out, name + ".trace"))
        assert only(trace.header["inputs"])["name"] == "x"
        user_code = [o["filename"] for o in trace.objects
                     if o["kind"] == "code" and "site-packages" not in o["filename"]]
        # Relative code filenames (mlp is torch's code only).
        assert set(user_code) == (set() if name == "mlp" else {name + ".py"}), user_code


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_")]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print("PASS", name)
        except Exception:
            failed += 1
            print("FAIL", name)
            traceback.print_exc()
    print("%d passed, %d failed" % (len(tests) - failed, failed))
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
