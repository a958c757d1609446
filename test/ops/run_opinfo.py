#!/usr/bin/env python3
"""Op coverage driven by PyTorch's OpInfo database (issue 13): for every OpInfo entry
(`op_db`) and dtype (float32, and bfloat16 where PyTorch supports it on CPU), the first
sample inputs are exported with `torch.export`, compiled with tgc from the core ATen IR
(`run_decompositions()`), run with `tgc.load` and compared with eager on the same inputs.

The results are then counted per core ATen op (`torch.Tag.core`): an op passes in a
dtype when the samples of the OpInfo entries named after it pass, or, for an op no
entry is named after, when some sample whose graph contains it passes and none fails on
it. Ops that appear in no sample (backward ops, random ops, symbolic-size queries) are
covered by the script's own samples (EXTRA below). The table goes to docs/ops.md.

    python3 test/ops/run_opinfo.py [--tgc build/bin/tgc] [--workdir DIR] [--only OP...]
        [--jobs N] [--json results.json] [--update results.json] [--table results.json]
        [--no-docs]

Each OpInfo entry runs in a worker process; a crash in the compiled code is a result,
the worker is restarted. python3 needs torch and expecttest (PyPI)."""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
import traceback
import zlib
from collections import OrderedDict, defaultdict

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

SAMPLES = 4  # per entry and dtype
# |tgc - eager| <= ATOL + RTOL * |eager|, elementwise.
TOL = {"float32": (1e-4, 1e-5), "bfloat16": (1.6e-2, 1e-2)}
# The table's columns: float32 holds the ops that have no floating form too (bitwise
# ops), run in their first integer dtype.


# ------------------------------------------------------------------ worker side
def _flatten(obj, leaves):
    """Replace every tensor in obj (nested lists/tuples/dicts) by a placeholder index."""
    import torch
    if isinstance(obj, torch.Tensor):
        leaves.append(obj)
        return ("__leaf__", len(leaves) - 1)
    if isinstance(obj, (list, tuple)):
        items = [_flatten(x, leaves) for x in obj]
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, dict):
        return {k: _flatten(v, leaves) for k, v in obj.items()}
    return obj


def _unflatten(obj, leaves):
    if isinstance(obj, tuple) and len(obj) == 2 and obj[0] == "__leaf__":
        return leaves[obj[1]]
    if isinstance(obj, list):
        return [_unflatten(x, leaves) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_unflatten(x, leaves) for x in obj)
    if isinstance(obj, dict):
        return {k: _unflatten(v, leaves) for k, v in obj.items()}
    return obj


def _outputs(out):
    """The tensors of an op's result, or None when it holds something else."""
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and out and all(isinstance(t, torch.Tensor) for t in out):
        return list(out)
    return None


class Sample:
    def __init__(self, fn, sample):
        leaves = []
        self.tree = _flatten((sample.input, tuple(sample.args), dict(sample.kwargs)), leaves)
        self.inputs = [t.detach().clone() for t in leaves]
        self.fn = fn

    def call(self, *tensors):
        inp, args, kwargs = _unflatten(self.tree, list(tensors))
        return self.fn(inp, *args, **kwargs)


def _module(samples):
    """One module whose forward runs every sample (submodule s<i>), flat inputs and
    outputs."""
    import torch

    class One(torch.nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = s

        def forward(self, *tensors):
            return tuple(_outputs(self.s.call(*tensors)))

    class All(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.n = [len(s.inputs) for s in samples]
            for i, s in enumerate(samples):
                self.add_module(f"s{i}", One(s))

        def forward(self, *tensors):
            outs, k = [], 0
            for i, n in enumerate(self.n):
                outs.extend(getattr(self, f"s{i}")(*tensors[k:k + n]))
                k += n
            return tuple(outs)

    return All()


def _core_ops(ep, nsamples):
    """Per sample (by the s<i> submodule in nn_module_stack), the core ATen ops of the
    exported program."""
    import torch
    ops = [set() for _ in range(nsamples)]
    for node in ep.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        stack = node.meta.get("nn_module_stack") or {}
        owners = {int(path.split(".")[0][1:]) for path, _ in stack.values()
                  if path.startswith("s") and path.split(".")[0][1:].isdigit()}
        for i in (owners or range(nsamples)):
            ops[i].add(str(node.target))
    return [sorted(s) for s in ops]


def _as_accurate(s, actual, expected):
    """Whether a bf16 result that differs from eager's is at least as close to the op
    computed in float64 (on the same, exactly widened, inputs) as eager's: within twice
    eager's largest error, or the bf16 tolerance of the float64 result."""
    import torch
    try:
        with torch.no_grad():
            wide = _outputs(s.call(*[t.double() if t.is_floating_point() else t
                                     for t in s.inputs]))
    except Exception:  # noqa: BLE001 -- no float64 kernel: no verdict
        return False
    if wide is None or len(wide) != len(s.expected):
        return False
    ref = wide[[i for i, e in enumerate(s.expected) if e is expected][0]]
    if ref.shape != actual.shape or not actual.is_floating_point():
        return False
    finite = torch.isfinite(ref)
    if not torch.equal(finite, torch.isfinite(actual.double())):
        return False
    if not finite.any():
        return True
    ours = (actual.double() - ref)[finite].abs().max()
    eager = (expected.double() - ref)[finite].abs().max()
    rtol, atol = TOL["bfloat16"]
    bound = (atol + rtol * ref[finite].abs()).max()
    return bool(ours <= max(2 * eager, bound))


def _is_seeded(name):
    """Whether the ATen op `name` ('aten.randn.default') draws from a generator."""
    import torch
    _, packet, overload = name.split(".")
    op = getattr(getattr(torch.ops.aten, packet), overload)
    return torch.Tag.nondeterministic_seeded in op.tags


def _is_uninitialized(name):
    """Whether the ATen op `name` returns uninitialized memory (empty, empty_strided,
    new_empty, ...): its values are whatever the allocator gives, in eager and in tgc."""
    return name.split(".")[1].lstrip("_").startswith(("empty", "new_empty"))


def _close(actual, expected, dtype):
    import torch
    if actual.shape != expected.shape:
        return f"shape {list(actual.shape)} vs eager {list(expected.shape)}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} vs eager {expected.dtype}"
    if expected.numel() == 0:
        return None
    if not expected.is_floating_point() and not expected.is_complex():
        if torch.equal(actual, expected):
            return None
        bad = (actual != expected).sum().item()
        return f"{bad} of {expected.numel()} elements differ"
    rtol, atol = TOL.get(dtype, TOL["float32"])
    a, e = actual.double(), expected.double()
    nan_ok = torch.isnan(a) == torch.isnan(e)
    finite = torch.isfinite(e)
    inf_ok = torch.where(torch.isinf(e), a == e, torch.ones_like(finite))
    err = torch.where(finite & torch.isfinite(a), (a - e).abs() - rtol * e.abs(),
                      torch.zeros_like(a))
    if bool(nan_ok.all()) and bool(inf_ok.all()) and err.max().item() <= atol:
        return None
    worst = ((a - e).abs() / e.abs().clamp_min(1e-30)).nan_to_num(0)[finite].max().item() \
        if finite.any() else 0.0
    return (f"max |tgc - eager| {(a - e).abs()[finite].max().item():.2e} (rel {worst:.1e})"
            if bool(nan_ok.all()) and bool(inf_ok.all()) else "NaN/Inf differ from eager")


def _same_picks(s, actual, expected):
    """Whether integer results that differ from eager's are positions (along some
    dimension of the sample's input) of equal values: sort, argsort and topk leave the
    order of ties open unless asked to be stable, and eager's order depends on its
    kernel."""
    import torch
    x = s.inputs[0] if s.inputs else None
    if x is None or not x.is_floating_point() or actual.dtype != torch.int64 or \
            actual.shape != expected.shape or actual.dim() != x.dim():
        return False
    for d in range(x.dim()):
        n = x.shape[d]
        if actual.min() < 0 or actual.max() >= n or expected.max() >= n:
            continue
        try:
            if torch.equal(x.gather(d, actual), x.gather(d, expected)):
                return True
        except RuntimeError:
            continue
    return False


def _compile(tgc, ep, path):
    import torch
    torch.export.save(ep, path)
    so = os.path.splitext(path)[0] + ".so"
    r = subprocess.run([tgc, "compile", path, "-o", so], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    if r.returncode != 0:
        lines = [ln for ln in r.stdout.splitlines() if "error:" in ln] or \
            r.stdout.splitlines() or [f"exit {r.returncode}"]
        msg = lines[0]
        msg = msg[msg.index("error:"):] if "error:" in msg else msg
        return None, msg[:300]
    return so, None


def _export(samples, dynamic=False, training_ir=False):
    import torch
    mod = _module(samples)
    args = tuple(t for s in samples for t in s.inputs)
    dyn = None
    if dynamic:  # every size symbolic (the symbolic-size queries need them)
        dyn = {"tensors": tuple({d: torch.export.Dim.AUTO for d in range(t.dim())}
                                for t in args)}
    ep = torch.export.export(mod, args, dynamic_shapes=dyn, strict=False)
    # Out= overloads only survive in the training IR (functionalization rewrites them).
    return ep if training_ir else ep.run_decompositions(_core_table())


def _core_table():
    """torch.export's default decompositions, less those of ops tagged core: the core
    ATen IR, in which every core op stays as it is (torch's default table decomposes a
    few core ops, such as the reflection pads, which other releases keep)."""
    import torch
    table = torch.export.default_decompositions()
    for op in list(table):
        if torch.Tag.core in getattr(op, "tags", ()):
            del table[op]
    return table


def _is_random(s, outs):
    """An op whose eager result changes from call to call (dropout, bernoulli, ...)."""
    import torch
    torch.manual_seed(4321)  # the expected results were drawn after seed 1234
    again = _outputs(s.call(*s.inputs))
    return any(not torch.equal(a.nan_to_num(0), b.nan_to_num(0)) for a, b in zip(outs, again))


def run_entry(op, dtype_name, tgc, workdir):
    """All samples of one OpInfo entry in one dtype: a list of per-sample results."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
    import tgc as tgc_py
    dtype = getattr(torch, dtype_name)
    key = f"{op.name}.{op.variant_test_name}".strip(".") + "." + dtype_name
    torch.manual_seed(zlib.crc32(key.encode()))
    samples, results = [], []
    try:
        gen = op.sample_inputs("cpu", dtype, requires_grad=False)
        raw = []
        for s in gen:
            raw.append(s)
            if len(raw) >= SAMPLES:
                break
    except Exception as e:  # noqa: BLE001
        return [dict(status="no-samples", detail=_short(e))]
    for s in raw:
        sm = Sample(op.op, s)
        try:
            torch.manual_seed(1234)
            outs = _outputs(sm.call(*sm.inputs))
        except Exception as e:  # noqa: BLE001
            continue
        if outs is None or any(t.is_complex() or t.is_sparse for t in outs) or \
                any(t.is_complex() for t in sm.inputs) or any(t.is_sparse for t in sm.inputs):
            continue
        sm.expected = [t.detach().clone() for t in outs]
        sm.random = _is_random(sm, outs)
        samples.append(sm)
    if not samples:
        return [dict(status="no-samples", detail="no sample with tensor inputs and outputs")]
    os.makedirs(workdir, exist_ok=True)
    base = os.path.join(workdir, key.replace("/", "_"))

    def attempt(group, tag):
        """Export, compile and run `group` as one program: per-sample results."""
        try:
            ep = _export(group, getattr(op, "dynamic", False), getattr(op, "training_ir", False))
        except Exception as e:  # noqa: BLE001
            return [dict(status="export-fails", detail=_short(e))] * len(group), None
        ops = _core_ops(ep, len(group))
        for s, o in zip(group, ops):
            # A random op whose OpInfo fixes the seed (wrapper_set_seed) gives eager the
            # same numbers twice; tgc's generator is its own: compared as random.
            s.random = s.random or any(_is_seeded(name) or _is_uninitialized(name)
                                       for name in o)
        so, err = _compile(tgc, ep, f"{base}.{tag}.pt2")
        if err:
            status = "unsupported" if "unsupported operator" in err else "compile-fails"
            return [dict(status=status, detail=err, ops=o) for o in ops], err
        try:
            model = tgc_py.load(so)
            args = [t.clone() for s in group for t in s.inputs]
            torch.manual_seed(1234)
            got = model(*args)
        except Exception as e:  # noqa: BLE001
            return [dict(status="run-fails", detail=_short(e), ops=o) for o in ops], _short(e)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        res, k = [], 0
        for s, o in zip(group, ops):
            n = len(s.expected)
            mism = None
            for a, e in zip(got[k:k + n], s.expected):
                if s.random:
                    if a.shape != e.shape or a.dtype != e.dtype:
                        mism = f"shape/dtype {list(a.shape)} {a.dtype} vs {list(e.shape)} {e.dtype}"
                else:
                    bad = _close(a, e, dtype_name)
                    if bad and _same_picks(s, a, e):
                        bad = None  # positions of equal values, in another order
                    if bad and dtype_name == "bfloat16" and _as_accurate(s, a, e):
                        bad = None  # eager's bf16 kernel rounds more than tgc does
                    mism = mism or bad
            k += n
            r = dict(status="mismatch" if mism else "pass", ops=o)
            if mism:
                r["detail"] = mism
            if s.random:
                r["random"] = True
            res.append(r)
        return res, None

    results, err = attempt(samples, "all")
    if err is not None and len(samples) > 1:
        # One sample's failure must not hide the others': one program per sample.
        results = [attempt([s], f"s{i}")[0][0] for i, s in enumerate(samples)]
    for r, s in zip(results, samples):
        r["shapes"] = [list(t.shape) for t in s.inputs]
    return results


def _short(exc):
    text = str(exc).strip().splitlines()
    text = text[0] if text else type(exc).__name__
    return text[:300]


def worker(tgc, workdir):
    """Reads 'name<TAB>variant<TAB>dtype' lines, writes one JSON result line each."""
    import warnings
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_methods_invocations import op_db
    entries = {(o.name, o.variant_test_name): o for o in op_db}
    entries.update({(o.name, o.variant_test_name): o for o in EXTRA_OPS()})
    for line in sys.stdin:
        name, variant, dtype = line.rstrip("\n").split("\t")
        try:
            res = run_entry(entries[(name, variant)], dtype, tgc, workdir)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            res = [dict(status="script-fails", detail=_short(e))]
        sys.stdout.write("RESULT " + json.dumps(res) + "\n")
        sys.stdout.flush()


# ------------------------------------------------------------------ extra samples
def EXTRA_OPS():
    """OpInfo-like entries for core ATen ops that no OpInfo sample reaches: backward ops,
    random ops and the like, called through torch.ops.aten directly."""
    from extra_ops import extra_ops
    return extra_ops()


# ------------------------------------------------------------------ driver side
class Worker:
    def __init__(self, args):
        self.args = args
        self.start()

    def start(self):
        env = dict(os.environ, OMP_WAIT_POLICY="passive", PYTHONWARNINGS="ignore")
        self.p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--tgc", self.args.tgc,
             "--workdir", self.args.workdir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=env)
        self.err = []
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()

    def run(self, name, variant, dtype):
        self.p.stdin.write(f"{name}\t{variant}\t{dtype}\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                tail = [ln.strip() for ln in self.err if ln.strip()][-1:] or \
                    [f"exit {self.p.wait()}"]
                self.start()
                return [dict(status="crashes", detail=tail[0][:300])]
            if line.startswith("RESULT "):
                return json.loads(line[len("RESULT "):])


def core_ops():
    """Every ATen operator overload tagged core. From the registered schemas: the
    torch.ops.aten namespace lists only the packets loaded so far."""
    import torch
    core = set()
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        packet, overload = schema.name[len("aten::"):], schema.overload_name or "default"
        try:
            op = getattr(getattr(torch.ops.aten, packet), overload)
        except (AttributeError, RuntimeError):
            continue
        if torch.Tag.core in op.tags:
            core.add(str(op))
    return sorted(core)


def jobs(only):
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    out = []
    for o in list(op_db) + list(EXTRA_OPS()):
        if only and o.name not in only and o.aten_name not in only:
            continue
        try:
            supported = o.supported_dtypes("cpu")
        except Exception:  # noqa: BLE001
            supported = {torch.float32}
        dts = [str(d).split(".")[1] for d in (torch.float32, torch.bfloat16) if d in supported]
        if not dts:  # integer- or bool-only ops (bitwise ops): their first integer dtype
            dts = [str(d).split(".")[1] for d in (torch.int64, torch.int32, torch.bool)
                   if d in supported][:1]
        for dt in dts:
            out.append((o.name, o.variant_test_name, dt, o.aten_name))
    return out


def summarize(results, core):
    """Per core op and dtype: pass / fail / unsupported / untested, and why."""
    by_op = defaultdict(lambda: defaultdict(list))  # op -> dtype -> [(direct, result)]
    for (name, variant, dtype, aten_name), res in results:
        if dtype != "bfloat16":  # integer-only ops count in the first column
            dtype = "float32"
        for r in res:
            for op in r.get("ops", []):
                packet = op.split(".")[1] if op.startswith("aten.") else op
                by_op[op][dtype].append((packet == aten_name or packet == name, name, r))
            if r["status"] == "unsupported" and "unsupported operator" in r.get("detail", ""):
                pass
    table = OrderedDict()
    for op in core:
        row = OrderedDict()
        for dtype in ("float32", "bfloat16"):
            rs = by_op.get(op, {}).get(dtype, [])
            direct = [(n, r) for d, n, r in rs if d] or [(n, r) for d, n, r in rs]
            if not direct:
                row[dtype] = dict(status="untested")
                continue
            bad = [(n, r) for n, r in direct if r["status"] != "pass"]
            good = [(n, r) for n, r in direct if r["status"] == "pass"]
            # A failure charged to this op: a direct sample, or one whose error names it
            # (the ATen target, or the tgc op it became).
            packet = op.split(".")[1]
            charged = [(n, r) for n, r in bad if any(d for d, n2, r2 in rs if r2 is r) or
                       f"{op} " in r.get("detail", "") + " " or
                       f"'tgc.{packet}'" in r.get("detail", "")]
            if good and not charged:
                row[dtype] = dict(status="pass", samples=len(good),
                                  via=sorted({n for n, _ in good})[:3])
            else:
                n, r = (charged or bad)[0]
                row[dtype] = dict(status="unsupported" if r["status"] == "unsupported"
                                  else "fail", detail=f"{n}: {r['status']}" +
                                  (f": {r['detail']}" if r.get("detail") else ""),
                                  passed=len(good), failed=len(bad))
        table[op] = row
    return table


BEGIN = "<!-- op table: generated by test/ops/run_opinfo.py, do not edit -->\n"
END = "<!-- end of op table -->\n"


def write_docs(table, entries, path):
    import torch
    n = len(table)
    passed = {dt: sum(1 for r in table.values() if r[dt]["status"] == "pass")
              for dt in ("float32", "bfloat16")}
    lines = [f"torch {torch.__version__.split('+')[0]}. {n} core ATen ops "
             f"(`torch.Tag.core`). Passing: float32 {passed['float32']} of {n} "
             f"({100 * passed['float32'] / n:.1f} %), bfloat16 {passed['bfloat16']} of {n} "
             f"({100 * passed['bfloat16'] / n:.1f} %). Tolerances: |tgc - eager| <= atol + "
             f"rtol |eager| with float32 (rtol {TOL['float32'][0]:g}, atol "
             f"{TOL['float32'][1]:g}), bfloat16 (rtol {TOL['bfloat16'][0]:g}, atol "
             f"{TOL['bfloat16'][1]:g}); random ops and uninitialized (empty) results are "
             "compared in shape and dtype.\n",
             "| op | float32 | bfloat16 |", "|---|---|---|"]

    def cell(c):
        s = c["status"]
        if s == "pass":
            return f"pass ({c['samples']}: {', '.join(c['via'])})"
        if "detail" in c:
            s += ": " + c["detail"][:160].replace("|", "\\|").replace("`", "'")
        return s

    for op, row in table.items():
        lines.append(f"| `{op}` | {cell(row['float32'])} | {cell(row['bfloat16'])} |")
    lines.append("")
    lines.append(f"Every OpInfo entry ({len(entries)} entries and dtypes): "
                 f"{sum(1 for _, r in entries if r and all(x['status'] == 'pass' for x in r))}"
                 " pass on every sample.\n")
    block = BEGIN + "\n".join(lines) + END
    text = open(path).read() if os.path.exists(path) else "# Op coverage\n\n"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text += "\n" + block
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tgc", default=os.path.join(ROOT, "build", "bin", "tgc"))
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the per-sample results here")
    ap.add_argument("--update", metavar="JSON",
                    help="start from these results, rerun the --only entries, write back")
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--table", metavar="JSON",
                    help="only write the table (docs/ops.md) from earlier --json results")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.tgc = os.path.abspath(args.tgc)
    args.workdir = os.path.abspath(args.workdir or os.path.join(ROOT, "build", "opinfo"))
    sys.path.insert(0, HERE)
    if args.worker:
        worker(args.tgc, args.workdir)
        return
    import warnings
    warnings.filterwarnings("ignore")
    if args.table:
        with open(args.table) as f:
            pairs = [((e["name"], e["variant"], e["dtype"], e["aten_name"]), e["results"])
                     for e in json.load(f)]
        table = summarize(pairs, core_ops())
        write_docs(table, pairs, os.path.join(ROOT, "docs", "ops.md"))
        return
    todo = jobs(args.only)
    results = [None] * len(todo)
    lock = threading.Lock()
    nxt = [0]
    t0 = time.perf_counter()

    def loop():
        w = Worker(args)
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(todo):
                break
            name, variant, dtype, _ = todo[i]
            res = w.run(name, variant, dtype)
            results[i] = res
            summary = ", ".join(sorted({r["status"] for r in res}))
            bad = [r for r in res if r["status"] != "pass"]
            print(f"[{i + 1}/{len(todo)} {time.perf_counter() - t0:.0f}s] "
                  f"{name}{'.' + variant if variant else ''} {dtype}: {summary}"
                  + (f" ({bad[0].get('detail', '')[:150]})" if bad else ""), flush=True)
        w.p.stdin.close()

    threads = [threading.Thread(target=loop) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pairs = list(zip(todo, results))
    if args.update:
        redone = {tuple(j[:3]) for j in todo}
        with open(args.update) as f:
            old = [((e["name"], e["variant"], e["dtype"], e["aten_name"]), e["results"])
                   for e in json.load(f)]
        pairs = [p for p in old if tuple(p[0][:3]) not in redone] + pairs
        args.json = args.json or args.update
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dict(name=n, variant=v, dtype=d, aten_name=a, results=r)
                       for (n, v, d, a), r in pairs], f, indent=1)
    table = summarize(pairs, core_ops())
    n = len(table)
    for dt in ("float32", "bfloat16"):
        p = sum(1 for r in table.values() if r[dt]["status"] == "pass")
        print(f"core ATen ops passing in {dt}: {p} of {n} ({100 * p / n:.1f} %)")
    if not args.no_docs and (args.update or not args.only):
        write_docs(table, pairs, os.path.join(ROOT, "docs", "ops.md"))


if __name__ == "__main__":
    main()
