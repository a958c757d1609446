#!/usr/bin/env python3
"""CPU inference benchmark: tgc's model.so vs PyTorch eager vs torch.compile (Inductor),
side by side in one process, 2 threads on every side.

    python bench/bench_cpu.py                          # every model (see bench/README.md)
    python bench/bench_cpu.py --quick                  # smoke test: fixture models, few calls
    python bench/bench_cpu.py --only mlp_wide gpt --json out.json

For every model (the test/fixtures models from their checked-in archives, larger variants
of them, and models at realistic sizes: torchvision resnet18 / mobilenet_v2, a 4-layer GPT,
a wide MLP; all exported here into a temporary directory): `tgc compile` each archive
(timed), compile the eager model with torch.compile under empty Inductor caches (the first
call, timed: Inductor's cold compile), check tgc's and Inductor's first call against eager
PyTorch on a fresh deep copy (outputs, mutated user inputs, buffers; rtol 1e-4, atol 1e-5),
then time the three, interleaved in rounds, and report the medians and
tgc / min(eager, Inductor) (< 1: tgc is faster). See bench/README.md.
"""

import sys
sys.dont_write_bytecode = True  # keep test/fixtures and bench free of __pycache__

import inductor_cold  # noqa: E402  (before torch: Inductor's caches must start empty)
inductor_cold.isolate_caches()

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import OrderedDict  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "test", "fixtures")
sys.path.insert(0, HERE)
sys.path.insert(0, FIXTURES)
import bench_models  # noqa: E402
import models  # noqa: E402  (test/fixtures/models.py)
import report  # noqa: E402
from bench_models import Spec  # noqa: E402
from tgc_ctypes import Model, TgcError  # noqa: E402

SEED = 1234  # as test/fixtures/export_fixtures.py
RTOL, ATOL = 1e-4, 1e-5

FIXTURE_SPECS = OrderedDict(
    mlp=Spec(models.make_mlp, "MLP 16-32-8, x[4,16]", False),
    convbn=Spec(models.make_convbn, "ConvBN 3-8-8 (train BN), x[2,3,8,8]", False),
    gpt2=Spec(models.make_gpt2, "GPT-2 block C=32 4 heads, x[3,8,32], dyn batch", False),
    mutate=Spec(models.make_mutate, "buffer + input mutation, x[4,6]", False),
)


def build(builder, eval_mode=False):
    """Seeded like export_fixtures.py; train() mode as the fixture archives are exported,
    eval() for the realistic models' inference."""
    torch.manual_seed(SEED)
    model, inputs, dyn = builder()
    model.train(not eval_mode)
    return model, inputs, dyn


def export_archives(builder, outdir, irs, eval_mode=False):
    """train.pt2 (torch.export) and/or core.pt2 (run_decompositions()) of a fresh build."""
    model, inputs, dyn = build(builder, eval_mode)
    ep = torch.export.export(copy.deepcopy(model),
                             tuple(v.clone() for v in inputs.values()), dynamic_shapes=dyn)
    paths = {}
    for ir in irs:
        paths[ir] = os.path.join(outdir, f"{ir}.pt2")
        torch.export.save(ep if ir == "train" else ep.run_decompositions(), paths[ir])
    return paths


# ------------------------------------------------------------------ helpers
def find_tgc(opt, prog="bench_cpu"):
    """--tgc, else build/bin/tgc of this checkout."""
    path = os.path.abspath(opt) if opt else os.path.join(ROOT, "build", "bin", "tgc")
    if not os.access(path, os.X_OK):
        sys.exit(f"{prog}: no tgc binary at {path} (build it, or pass --tgc PATH)")
    return path


def compile_archive(tgc, pt2, so, train=False):
    """`tgc compile [--train] pt2 -o so` (wall time, process start and linking included);
    returns (seconds, error text or None)."""
    cmd = [tgc, "compile"] + (["--train"] if train else []) + [pt2, "-o", so]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        text = (r.stderr or r.stdout or "").strip()
        errs = [ln for ln in text.splitlines() if "error" in ln.lower()]
        msg = "\n".join(errs[:5]) or text[:2000] or "(no output)"
        return dt, f"`{' '.join(cmd)}` exited with {r.returncode}:\n{msg}"
    return dt, None


def compare(name, got, ref):
    """Returns (ok, max_abs_err, message)."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return False, float("inf"), f"{name}: shape {got.shape} != eager {ref.shape}"
    if got.dtype != ref.dtype:
        return False, float("inf"), f"{name}: dtype {got.dtype} != eager {ref.dtype}"
    if got.size == 0:
        return True, 0.0, ""
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    diff = np.where(same, 0.0, np.abs(g - r))
    bad = ~same & ~(diff <= ATOL + RTOL * np.abs(r))
    err = float(np.nanmax(diff)) if diff.size else 0.0
    if bad.any():
        return False, err, (f"{name}: {int(bad.sum())}/{bad.size} elements outside "
                            f"rtol={RTOL} atol={ATOL}, max abs err {err:.3g} "
                            f"(max |eager| {float(np.nanmax(np.abs(r))):.3g})")
    return True, err, ""


def eager_reference(model, inputs):
    """First call on a fresh deep copy: outputs, inputs after the call, buffers after."""
    m = copy.deepcopy(model)
    args = [v.clone() for v in inputs.values()]
    with torch.no_grad():
        out = m(*args)
    leaves, _ = pytree.tree_flatten(out)
    return ([t.detach().numpy().copy() for t in leaves],
            {k: a.numpy().copy() for k, a in zip(inputs, args)},
            {k: b.detach().numpy().copy() for k, b in m.named_buffers()})


def check_first_call(so, inputs, ref):
    """Fresh instance (initial state), cloned inputs: compare with eager's first call."""
    outs_ref, ins_ref, bufs_ref = ref
    problems, max_err = [], 0.0
    with Model(so) as tm:
        args = [inputs[n].clone() if n in inputs else None for n in tm.input_names]
        if any(a is None for a in args):
            return [f"tgc input names {tm.input_names} != eager {list(inputs)}"], float("inf")
        outs = tm.run(*args)
        if len(outs) != len(outs_ref):
            problems.append(f"{len(outs)} outputs, eager has {len(outs_ref)}")
        checks = [(f"output.{i}", o, r) for i, (o, r) in enumerate(zip(outs, outs_ref))]
        checks += [(f"input '{n}' after the call", a.numpy(), ins_ref[n])
                   for n, a in zip(tm.input_names, args)]
        for fqn, kind in tm.state.items():
            if kind == "buffer":
                if fqn in bufs_ref:
                    checks.append((f"buffer '{fqn}'", tm.get_state(fqn), bufs_ref[fqn]))
                else:
                    problems.append(f"buffer '{fqn}' not in the eager model")
        for name, g, r in checks:
            ok, err, msg = compare(name, g, r)
            max_err = max(max_err, err)
            if not ok:
                problems.append(msg)
    return problems, max_err


def time_sides(fns, resets, warmup, reps, budget_s, rounds=5):
    """Per-call times (s) of each fn in `fns`, interleaved in rounds (alternating the order
    of the sides) so machine-load drift hits all alike. `resets[i]` runs before every call
    of fns[i], outside the timed region."""
    n = len(fns)
    est = [0.0] * n
    for i in range(n):
        for _ in range(warmup):
            resets[i]()
            t0 = time.perf_counter()
            fns[i]()
            est[i] = time.perf_counter() - t0
    per_pair = max(sum(est), 1e-7)
    reps = max(5, min(reps, int(budget_s / per_pair)))
    rounds = max(1, min(rounds, reps))
    times = [[] for _ in range(n)]
    for r in range(rounds):
        k = reps // rounds + (1 if r < reps % rounds else 0)
        order = range(n) if r % 2 == 0 else reversed(range(n))
        for i in order:
            f, reset, ts = fns[i], resets[i], times[i]
            for _ in range(k):
                reset()
                t0 = time.perf_counter()
                f()
                ts.append(time.perf_counter() - t0)
    return times


def openblas_threads(so, set_to=None):
    """OpenBLAS threads as seen through the model.so's dependency (None if unknown);
    with set_to, first sets them (openblas_set_num_threads)."""
    try:
        import ctypes
        lib = ctypes.CDLL(so, mode=os.RTLD_LOCAL)
        if set_to:
            lib.openblas_set_num_threads.argtypes = [ctypes.c_int]
            lib.openblas_set_num_threads(set_to)
        f = lib.openblas_get_num_threads
        f.restype = ctypes.c_int
        return int(f())
    except Exception:
        return None




def set_threads(n, so=None):
    """n threads on every side: torch (eager and Inductor's OpenMP kernels), and
    TGC_NUM_THREADS for tgc's runtime (its thread pool runs kernels and GEMMs; it keeps
    OpenBLAS itself single-threaded). Returns OpenBLAS's own count (or None)."""
    torch.set_num_threads(n)
    os.environ["TGC_NUM_THREADS"] = str(n)
    return openblas_threads(so) if so else None


def record_check(ctx, row, tag, problems, max_err, label):
    """Records tgc's numerics check of a row: its error, status and problems (also kept
    as a failure of the run under `label`, and printed)."""
    row["max_abs_err"] = max_err
    row["status"] = "ok" if not problems else "mismatch"
    if problems:
        row["mismatch"] = problems
        ctx.failures.append((tag, label, "\n".join(problems)))
        print(f"[{tag}] !!! tgc MISMATCH vs eager !!!\n  " + "\n  ".join(problems), flush=True)


def time_row(ctx, row, tag, sides, model, warmup, reps, budget_s):
    """Times `sides` ((name, call, reset) each) interleaved and records each side's
    statistics in `row`; closes `model` (tgc's, or None) after. False, with the row's
    status set, when a call fails."""
    try:
        times = time_sides([s[1] for s in sides], [s[2] for s in sides], warmup, reps, budget_s)
    except TgcError as e:
        row["status"] = "run failed"
        ctx.failures.append((tag, "RUN FAILED", str(e)))
        return False
    finally:
        if model:
            model.close()
    row["reps"] = len(times[0])
    for (side, _, _), ts in zip(sides, times):
        timing_stats(row, side, ts)
    return True


def timing_stats(row, side, times):
    row[f"{side}_ms_median"] = 1e3 * statistics.median(times)
    row[f"{side}_ms_min"] = 1e3 * min(times)


def environment(tgc, opts, **extra):
    env = OrderedDict(
        torch=torch.__version__, python=platform.python_version(), executable=sys.executable,
        machine=platform.machine(), cpus=os.cpu_count(), threads=opts.threads,
        torch_num_threads=torch.get_num_threads(),
        tgc_num_threads=os.environ.get("TGC_NUM_THREADS"),
        omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"), openblas_threads=None,
        loadavg_start=list(os.getloadavg()), tgc=tgc,
        inductor_cache=("fresh per model (fresh_cache), FX graph cache and AOTAutograd "
                        "cache off"))
    env.update(extra)
    return env


def print_header(env):
    print(f"tgc {env['tgc']}\ntorch {env['torch']} ({env['executable']}), threads "
          f"{env['torch_num_threads']} (TGC_NUM_THREADS={env['tgc_num_threads']}), cpus "
          f"{env['cpus']}, loadavg {tuple(round(x, 2) for x in env['loadavg_start'])}",
          flush=True)


def print_footer(env, rows, failures, notes):
    print("\n" + report.markdown(rows))
    print(f"\nms = median per call; tgc/best = tgc ms / min(eager ms, inductor ms), < 1 means "
          f"tgc is faster; compile = `tgc compile` wall time vs Inductor's cold first call.\n"
          f"torch threads {env['torch_num_threads']}, OpenBLAS threads "
          f"{env['openblas_threads']}, TGC_NUM_THREADS {env['tgc_num_threads']}, Inductor "
          f"first use in this process {env.get('inductor_first_use_s', 0):.1f}s (not in any "
          f"row), loadavg {tuple(round(x, 2) for x in env['loadavg_start'])} -> "
          f"{tuple(round(x, 2) for x in env['loadavg_end'])}")
    for title, items in (("PROBLEM(S)", failures), ("Inductor note(s)", notes)):
        if items:
            print(f"\n{len(items)} {title}:")
            for tag, kind, text in items:
                print(f"  {tag}: {kind}\n    " + text.replace("\n", "\n    "))


def write_json(path, env, rows):
    with open(path, "w") as f:
        json.dump({"env": env, "summary": report.summary(rows), "rows": rows}, f, indent=2,
                  default=str)
    print(f"\nwrote {path}")


# ------------------------------------------------------------------ Inductor side
def compile_inductor(model, inputs, ref):
    """torch.compile of a deep copy; its first call (under no_grad) with every Inductor
    cache empty is the cold compile. Returns (compiled module, its inputs, seconds,
    problems vs eager's first call)."""
    m = copy.deepcopy(model)
    cm = inductor_cold.compile_module(m)
    args = [v.clone() for v in inputs.values()]

    def first_call():
        with torch.no_grad():
            return cm(*args)

    seconds, out = inductor_cold.cold_first_call(first_call)
    outs_ref, ins_ref, bufs_ref = ref
    leaves = [t.detach().numpy() for t in pytree.tree_leaves(out)]
    problems = [] if len(leaves) == len(outs_ref) else [
        f"{len(leaves)} outputs, eager has {len(outs_ref)}"]
    checks = [(f"output.{i}", o, r) for i, (o, r) in enumerate(zip(leaves, outs_ref))]
    checks += [(f"input '{k}' after the call", a.numpy(), ins_ref[k])
               for k, a in zip(inputs, args)]
    checks += [(f"buffer '{k}'", b.detach().numpy(), bufs_ref[k]) for k, b in m.named_buffers()]
    for name, got, want in checks:
        ok, _, msg = compare(name, got, want)
        if not ok:
            problems.append(msg)
    return cm, args, seconds, problems


# ------------------------------------------------------------------ one model
class Context:
    """What every model's run needs: options, the tgc binary, the work dir, and the
    lists the rows and problems go to."""

    def __init__(self, opts, tgc, work, env):
        self.opts, self.tgc, self.work, self.env = opts, tgc, work, env
        self.rows, self.failures, self.notes = [], [], []


def run_model(ctx, name, spec, archives, expected):
    """The rows of one model: one per IR archive."""
    opts = ctx.opts
    try:
        model, inputs, _ = build(spec.builder, spec.eval)
    except bench_models.Skip as e:
        ctx.rows.append(OrderedDict(model=name, mode="inference", desc=spec.desc,
                                    skipped=str(e)))
        print(f"[{name}] SKIPPED: {e}", flush=True)
        return
    if archives is None:
        d = os.path.join(ctx.work, name)
        os.makedirs(d, exist_ok=True)
        t0 = time.perf_counter()
        archives = export_archives(spec.builder, d, opts.irs, spec.eval)
        print(f"[{name}] exported in {time.perf_counter() - t0:.1f}s", flush=True)
    ref = eager_reference(model, inputs)
    if expected:
        check_expected(name, ref, expected)

    inductor = None
    try:
        cm, i_in, i_secs, i_problems = compile_inductor(model, inputs, ref)
        inductor = (cm, i_in)
        print(f"[{name}] inductor cold compile {i_secs:.2f}s", flush=True)
    except Exception as e:  # Inductor's own failures are reported, not fatal
        i_secs, i_problems = None, [f"torch.compile failed: {type(e).__name__}: {e}"]
    if i_problems:
        ctx.notes.append((name, "Inductor vs eager", "\n".join(i_problems)))

    for ir, pt2 in archives.items():
        row = OrderedDict(model=name, mode="inference" + ("" if ir == "train" else f" ({ir} IR)"),
                          ir=ir, desc=spec.desc, archive=pt2, eval=spec.eval,
                          inductor_compile_s=i_secs)
        if i_problems:
            row["inductor_problem"] = "; ".join(i_problems)[:300]
        ctx.rows.append(row)
        run_row(ctx, row, model, inputs, ref, pt2, inductor)
        report.finish_row(row)
        print(f"[{name}/{ir}] eager {row.get('eager_ms_median', float('nan')):.3f} ms  "
              f"inductor {row.get('inductor_ms_median') or float('nan'):.3f} ms  "
              f"tgc {row.get('tgc_ms_median') or float('nan'):.3f} ms  "
              f"tgc/best {row.get('ratio_best') or float('nan'):.2f}  "
              f"compile tgc {row.get('tgc_compile_s') or float('nan'):.2f}s "
              f"inductor {i_secs or float('nan'):.2f}s  [{row['status']}]", flush=True)


def check_expected(name, ref, expected):
    """Sanity: the rebuilt eager model is the checked-in archive's model."""
    from safetensors.numpy import load_file
    exp = load_file(expected)
    for i, o in enumerate(ref[0]):
        ok, _, msg = compare(f"output.{i}", o, exp[f"output.{i}"])
        if not ok:
            print(f"[{name}] WARNING: rebuilt eager model differs from "
                  f"expected.safetensors: {msg}", flush=True)


def run_row(ctx, row, model, inputs, ref, pt2, inductor):
    """Compile and check tgc on one archive, then time eager, Inductor and tgc."""
    opts, tag = ctx.opts, f"{row['model']}/{row['ir']}"
    mutated = [i for i, k in enumerate(inputs) if k in models.MUTATED_INPUTS.get(row["model"], [])]
    pristine = [v.clone() for v in inputs.values()]

    def restorer(ts, idx):
        def reset():
            for i in idx:
                ts[i].copy_(pristine[i])
        return reset

    e_model = copy.deepcopy(model)
    e_in = [v.clone() for v in inputs.values()]

    def eager_fn():
        with torch.no_grad():
            e_model(*e_in)

    sides = [("eager", eager_fn, restorer(e_in, mutated))]
    if inductor:
        cm, i_in = inductor

        def inductor_fn():
            with torch.no_grad():
                cm(*i_in)

        sides.append(("inductor", inductor_fn, restorer(i_in, mutated)))

    tm = prepare_tgc(ctx, row, tag, inputs, ref, pt2)
    if tm:
        model_so, t_in, call = tm
        sides.append(("tgc", lambda: call(copy_outputs=False),
                      restorer(t_in, [i for i, m in enumerate(model_so.input_mutated) if m])))
    if not time_row(ctx, row, tag, sides, tm[0] if tm else None, opts.warmup_n, opts.reps_n,
                    opts.budget_s):
        return
    if "tgc_ms_median" in row:
        row["ratio_eager"] = row["tgc_ms_median"] / row["eager_ms_median"]


def prepare_tgc(ctx, row, tag, inputs, ref, pt2):
    """tgc compile + first-call check + a prepared call; None (row status set) on failure."""
    so = os.path.join(ctx.work, f"{row['model']}_{row['ir']}.so")
    secs, err = compile_archive(ctx.tgc, pt2, so)
    row["tgc_compile_s"] = round(secs, 3)
    if err:
        row["status"] = "compile failed"
        row["error"] = err
        ctx.failures.append((tag, "COMPILE FAILED", err))
        print(f"[{tag}] tgc COMPILE FAILED ({secs:.2f}s):\n  " + err.replace("\n", "\n  "),
              flush=True)
        return None
    blas = set_threads(ctx.opts.threads, so)
    ctx.env["openblas_threads"] = ctx.env["openblas_threads"] or blas
    try:
        problems, max_err = check_first_call(so, inputs, ref)
    except TgcError as e:
        problems, max_err = [f"run failed: {e}"], float("inf")
    record_check(ctx, row, tag, problems, max_err, "MISMATCH")
    try:
        tm = Model(so)
        t_in = [inputs[n].clone() for n in tm.input_names]
        return tm, t_in, tm.prepare(*t_in)
    except (TgcError, KeyError) as e:
        row["status"] = "load failed"
        row["error"] = str(e)
        ctx.failures.append((tag, "LOAD FAILED", str(e)))
        return None


# ------------------------------------------------------------------ main
def model_specs(opts):
    """[(name, Spec, {ir: archive} or None (export here), expected.safetensors or None)]"""
    specs = [(name, spec, {ir: os.path.join(FIXTURES, name, f"{ir}.pt2") for ir in opts.irs},
              os.path.join(FIXTURES, name, "expected.safetensors"))
             for name, spec in FIXTURE_SPECS.items()]
    if not opts.quick or opts.only:
        specs += [(name, spec, None, None)
                  for name, spec in {**bench_models.LARGE, **bench_models.REALISTIC}.items()]
    specs += [(name, spec, None, None) for name in opts.only or ()
              if (spec := bench_models.torchvision_spec(name))]
    if opts.only:
        unknown = set(opts.only) - {s[0] for s in specs}
        if unknown:
            sys.exit(f"bench_cpu: unknown models {sorted(unknown)}; known: "
                     f"{[s[0] for s in specs]}")
        specs = [s for s in specs if s[0] in opts.only]
    return specs


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: few calls; the fixture models unless --only")
    ap.add_argument("--tgc", help="tgc binary (default: build/bin/tgc of this checkout)")
    ap.add_argument("--json", help="write the environment and all rows here")
    ap.add_argument("--only", nargs="*", help="only these models (e.g. mlp gpt resnet18; tv:<name>[@<size>] "
                                             "for any torchvision classifier)")
    ap.add_argument("--ir", default="train",
                    help="tgc archives per model, comma list of train (torch.export) and "
                         "core (run_decompositions()); default train")
    ap.add_argument("--threads", type=int, default=2,
                    help="threads on every side (torch, TGC_NUM_THREADS); default 2")
    ap.add_argument("--reps", type=int, help="max timed calls per side (default 200, quick 10)")
    ap.add_argument("--warmup", type=int, help="untimed calls per side (default 3, quick 1)")
    ap.add_argument("--budget", type=float,
                    help="seconds of timed calls per row, all sides (default 6, quick 0.5)")
    ap.add_argument("--workdir", help="keep archives and .so files here (default: a temp dir)")
    opts = ap.parse_args()
    opts.irs = [s for s in opts.ir.split(",") if s]
    opts.reps_n = opts.reps or (10 if opts.quick else 200)
    opts.warmup_n = opts.warmup if opts.warmup is not None else (1 if opts.quick else 3)
    opts.budget_s = opts.budget or (0.5 if opts.quick else 6.0)
    return opts


def main():
    opts = parse_args()
    warnings.filterwarnings("ignore")
    tgc = find_tgc(opts.tgc)
    set_threads(opts.threads)
    work = opts.workdir or tempfile.mkdtemp(prefix="tgc-bench-")
    os.makedirs(work, exist_ok=True)
    env = environment(tgc, opts, irs=opts.irs, reps_max=opts.reps_n, warmup=opts.warmup_n,
                      budget_s=opts.budget_s, rtol=RTOL, atol=ATOL)
    print_header(env)
    env["inductor_first_use_s"] = inductor_cold.warm_up()
    print(f"Inductor first use in this process: {env['inductor_first_use_s']:.1f}s (not "
          f"counted in any row)\nwork dir {work}; warmup {opts.warmup_n}, up to "
          f"{opts.reps_n} timed calls/side, ~{opts.budget_s}s/row\n", flush=True)

    ctx = Context(opts, tgc, work, env)
    for name, spec, archives, expected in model_specs(opts):
        run_model(ctx, name, spec, archives, expected)
    env["loadavg_end"] = list(os.getloadavg())
    print_footer(env, ctx.rows, ctx.failures, ctx.notes)
    if opts.json:
        write_json(opts.json, env, ctx.rows)
    if not opts.workdir:
        shutil.rmtree(work, ignore_errors=True)
    inductor_cold.cleanup()
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
