#!/usr/bin/env python3
"""CPU benchmark: tgc-compiled model.so vs PyTorch eager, side by side in one process.

    /root/.cache/tgc-venv/bin/python bench/bench_cpu.py            # fixtures + larger models
    /root/.cache/tgc-venv/bin/python bench/bench_cpu.py --quick    # smoke test, small models
    ... --tgc PATH --json out.json --only gpt2 gpt2_large --ir core

For every model (the test/fixtures models, plus larger variants of the same modules exported
here the same way into a temporary directory), and for each IR (train.pt2 = torch.export,
core.pt2 = run_decompositions()): `tgc compile` it (timed), check the .so's first call against
eager PyTorch on a fresh deep copy of the model (outputs, mutated user inputs, buffers;
rtol 1e-4, atol 1e-5), then time eager forward (torch.no_grad(), the model in train() mode as
exported) and `tgc_model_run` on the same inputs, interleaved in rounds, and print
median/min per-call times and the ratio tgc/eager (< 1: tgc is faster). See bench/README.md.
"""

import sys
sys.dont_write_bytecode = True  # keep test/fixtures and bench free of __pycache__

import argparse
import copy
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
import warnings
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.utils._pytree as pytree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "test", "fixtures")
sys.path.insert(0, HERE)
sys.path.insert(0, FIXTURES)
import models  # noqa: E402  (test/fixtures/models.py)
from tgc_ctypes import Model, TgcError  # noqa: E402

SEED = 1234  # as test/fixtures/export_fixtures.py
RTOL, ATOL = 1e-4, 1e-5


# ------------------------------------------------------------------ larger model variants
class WideMLP(models.MLP):
    """models.MLP's structure (Linear-ReLU-Linear), wider."""

    def __init__(self, d_in=512, d_hidden=2048, d_out=512):
        nn.Module.__init__(self)
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_out)


class WideConvBN(models.ConvBN):
    """models.ConvBN's structure and forward (train-mode BN), more channels."""

    def __init__(self, c1=32, c2=64, n_out=10):
        nn.Module.__init__(self)
        self.conv1 = nn.Conv2d(3, c1, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c1)
        self.conv2 = nn.Conv2d(c1, c2, 3, stride=2)
        self.bn2 = nn.BatchNorm2d(c2)
        self.fc = nn.Linear(c2, n_out)


def make_mlp_large():
    return WideMLP(512, 2048, 512), OrderedDict(x=torch.randn(64, 512)), None


def make_convbn_large():
    m = WideConvBN(32, 64, 10)
    with torch.no_grad():  # as models.make_convbn
        for bn in (m.bn1, m.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    return m, OrderedDict(x=torch.randn(16, 3, 64, 64)), None


def make_gpt2_large():
    m = models.GPT2Block(n_embd=256, n_head=8, block_size=128)
    with torch.no_grad():  # as models.make_gpt2
        for ln in (m.ln_1, m.ln_2):
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.5, 0.5)
    batch = torch.export.Dim("batch", min=1, max=64)
    return m, OrderedDict(x=torch.randn(8, 128, 256)), {"x": {0: batch}}


LARGE = OrderedDict(
    mlp_large=(make_mlp_large, "MLP 512-2048-512, x[64,512]"),
    convbn_large=(make_convbn_large, "ConvBN 3-32-64 (train BN), x[16,3,64,64]"),
    gpt2_large=(make_gpt2_large, "GPT-2 block C=256 8 heads, x[8,128,256], dyn batch"),
)
FIXTURE_DESC = OrderedDict(
    mlp="MLP 16-32-8, x[4,16]",
    convbn="ConvBN 3-8-8 (train BN), x[2,3,8,8]",
    gpt2="GPT-2 block C=32 4 heads, x[3,8,32], dyn batch",
    mutate="buffer + input mutation, x[4,6]",
)


def build(builder):
    """Seeded like export_fixtures.py; train() mode, as every archive is exported."""
    torch.manual_seed(SEED)
    model, inputs, dyn = builder()
    model.train()
    return model, inputs, dyn


def export_archives(builder, outdir):
    model, inputs, dyn = build(builder)
    ep = torch.export.export(copy.deepcopy(model),
                             tuple(v.clone() for v in inputs.values()), dynamic_shapes=dyn)
    paths = {"train": os.path.join(outdir, "train.pt2"),
             "core": os.path.join(outdir, "core.pt2")}
    torch.export.save(ep, paths["train"])
    torch.export.save(ep.run_decompositions(), paths["core"])
    return paths


# ------------------------------------------------------------------ helpers
def find_tgc(opt):
    if opt:
        return os.path.abspath(opt)
    cand = os.path.join(ROOT, "build-lead", "bin", "tgc")
    if os.access(cand, os.X_OK):
        return cand
    p = shutil.which("tgc")
    if p:
        return p
    sys.exit("bench_cpu: no tgc binary (pass --tgc PATH)")


def compile_archive(tgc, pt2, so):
    t0 = time.perf_counter()
    r = subprocess.run([tgc, "compile", pt2, "-o", so], capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        text = (r.stderr or r.stdout or "").strip()
        errs = [ln for ln in text.splitlines() if "error" in ln.lower()]
        return dt, ("\n".join(errs[:5]) or text[:2000] or f"exit {r.returncode}")
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
                            f"rtol={RTOL} atol={ATOL}, max abs err {err:.3g}")
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


def time_pair(fns, resets, warmup, reps, budget_s, rounds=5):
    """Per-call times (s) of each fn in `fns`, interleaved in rounds (alternating which side
    goes first) so machine-load drift hits both alike. `resets[i]` runs before every call
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


# ------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="few reps, fixture models only (smoke test)")
    ap.add_argument("--tgc", help="tgc binary (default: ../build-lead/bin/tgc, else PATH)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", nargs="*", help="only these models (e.g. mlp gpt2_large)")
    ap.add_argument("--ir", default="train,core", help="comma list of train,core")
    ap.add_argument("--reps", type=int, help="max timed calls per side (default 200, quick 10)")
    ap.add_argument("--warmup", type=int, help="untimed calls per side (default 3, quick 1)")
    ap.add_argument("--budget", type=float,
                    help="seconds of timed calls per row, both sides (default 4, quick 0.5)")
    ap.add_argument("--threads", type=int,
                    help="torch.set_num_threads(N) and OpenBLAS threads of the .so "
                         "(default: leave both at their defaults)")
    ap.add_argument("--workdir", help="keep archives and .so files here (default: a temp dir)")
    opts = ap.parse_args()
    warnings.filterwarnings("ignore")

    reps = opts.reps or (10 if opts.quick else 200)
    warmup = opts.warmup if opts.warmup is not None else (1 if opts.quick else 3)
    budget = opts.budget or (0.5 if opts.quick else 4.0)
    irs = [s for s in opts.ir.split(",") if s]
    tgc = find_tgc(opts.tgc)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    work = opts.workdir or tempfile.mkdtemp(prefix="tgc-bench-")
    os.makedirs(work, exist_ok=True)

    specs = []  # (name, desc, builder, {ir: pt2}, expected.safetensors or None)
    for name, desc in FIXTURE_DESC.items():
        specs.append((name, desc, models.MODELS[name],
                      {ir: os.path.join(FIXTURES, name, f"{ir}.pt2") for ir in irs},
                      os.path.join(FIXTURES, name, "expected.safetensors")))
    if not opts.quick:
        for name, (builder, desc) in LARGE.items():
            specs.append((name, desc, builder, None, None))
    if opts.only:
        unknown = set(opts.only) - {s[0] for s in specs}
        if unknown:
            sys.exit(f"bench_cpu: unknown models {sorted(unknown)}")
        specs = [s for s in specs if s[0] in opts.only]

    env = OrderedDict(
        torch=torch.__version__, python=platform.python_version(),
        machine=platform.machine(), cpus=os.cpu_count(),
        torch_num_threads=torch.get_num_threads(),
        torch_num_interop_threads=torch.get_num_interop_threads(),
        threads_option=opts.threads, omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"),
        openblas_threads=None, loadavg_start=list(os.getloadavg()), tgc=tgc,
        reps_max=reps, warmup=warmup, budget_s=budget, rtol=RTOL, atol=ATOL,
    )
    load = tuple(round(x, 2) for x in os.getloadavg())
    print(f"tgc {tgc}\ntorch {torch.__version__}, "
          f"torch.get_num_threads()={env['torch_num_threads']}"
          f"{' (--threads)' if opts.threads else ' (default)'}, cpus={env['cpus']}, "
          f"loadavg={load}")
    print(f"work dir {work}; warmup {warmup}, up to {reps} timed calls/side, "
          f"~{budget}s/row\n", flush=True)

    rows, failures = [], []
    for name, desc, builder, archives, expected in specs:
        model, inputs, _ = build(builder)
        if archives is None:
            d = os.path.join(work, name)
            os.makedirs(d, exist_ok=True)
            t0 = time.perf_counter()
            all_paths = export_archives(builder, d)
            print(f"[{name}] exported in {time.perf_counter() - t0:.1f}s", flush=True)
            archives = {ir: all_paths[ir] for ir in irs}
        ref = eager_reference(model, inputs)
        if expected:  # sanity: the rebuilt eager model is the archive's model
            from safetensors.numpy import load_file
            exp = load_file(expected)
            for i, o in enumerate(ref[0]):
                ok, _, msg = compare(f"output.{i}", o, exp[f"output.{i}"])
                if not ok:
                    print(f"[{name}] WARNING: rebuilt eager model differs from "
                          f"expected.safetensors: {msg}", flush=True)

        for ir, pt2 in archives.items():
            tag = f"{name}/{ir}"
            row = OrderedDict(model=name, ir=ir, desc=desc, archive=pt2)
            rows.append(row)
            so = os.path.join(work, f"{name}_{ir}.so")
            ctime, err = compile_archive(tgc, pt2, so)
            row["compile_s"] = round(ctime, 3)
            if err:
                row["status"] = "compile failed"
                row["error"] = err
                failures.append((tag, "COMPILE FAILED", err))
                print(f"[{tag}] COMPILE FAILED ({ctime:.2f}s):\n{err}\n", flush=True)
                continue
            if env["openblas_threads"] is None or opts.threads:
                env["openblas_threads"] = openblas_threads(so, opts.threads)

            # -- numerics: first call vs a fresh deep copy of the eager model
            try:
                problems, max_err = check_first_call(so, inputs, ref)
            except TgcError as e:
                problems, max_err = [f"run failed: {e}"], float("inf")
            row["max_abs_err"] = max_err
            row["match"] = not problems
            if problems:
                row["mismatch"] = problems
                failures.append((tag, "MISMATCH", "\n".join(problems)))
                print(f"[{tag}] !!! MISMATCH vs eager !!!\n  " + "\n  ".join(problems),
                      flush=True)

            # -- timing: separate inputs per side, mutated inputs restored before each call
            e_model = copy.deepcopy(model)
            e_in = [v.clone() for v in inputs.values()]
            try:
                tm = Model(so)
                t_in = [inputs[n].clone() for n in tm.input_names]
                call = tm.prepare(*t_in)
            except (TgcError, KeyError) as e:
                row["status"] = "load failed"
                row["error"] = str(e)
                failures.append((tag, "LOAD FAILED", str(e)))
                print(f"[{tag}] LOAD FAILED: {e}", flush=True)
                continue
            pristine = [v.clone() for v in inputs.values()]
            mut = [i for i, m in enumerate(tm.input_mutated) if m]

            def eager_fn():
                with torch.no_grad():
                    e_model(*e_in)

            def tgc_fn():
                call(copy_outputs=False)

            def reset(ts):
                for i in mut:
                    ts[i].copy_(pristine[i])

            try:
                te, tt = time_pair([eager_fn, tgc_fn],
                                   [lambda: reset(e_in), lambda: reset(t_in)],
                                   warmup, reps, budget)
            except TgcError as e:
                row["status"] = "run failed"
                row["error"] = str(e)
                failures.append((tag, "RUN FAILED", str(e)))
                print(f"[{tag}] RUN FAILED: {e}", flush=True)
                continue
            finally:
                tm.close()
            ms = lambda xs, f: 1e3 * f(xs)  # noqa: E731
            row.update(
                status="ok" if row["match"] else "mismatch", reps=len(te),
                eager_ms_median=ms(te, statistics.median), eager_ms_min=ms(te, min),
                tgc_ms_median=ms(tt, statistics.median), tgc_ms_min=ms(tt, min))
            row["ratio_median"] = row["tgc_ms_median"] / row["eager_ms_median"]
            row["ratio_min"] = row["tgc_ms_min"] / row["eager_ms_min"]
            print(f"[{tag}] compile {ctime:.2f}s  eager {row['eager_ms_median']:.4f} ms  "
                  f"tgc {row['tgc_ms_median']:.4f} ms  ratio {row['ratio_median']:.2f}  "
                  f"({len(te)} calls/side, max abs err {max_err:.2g})", flush=True)

    env["loadavg_end"] = list(os.getloadavg())

    # -- table
    hdr = (f"{'model':<14}{'ir':<6}{'compile s':>10}{'eager ms':>11}{'(min)':>10}"
           f"{'tgc ms':>11}{'(min)':>10}{'tgc/eager':>10}{'(min)':>7}{'calls':>7}  check")
    print("\n" + hdr + "\n" + "-" * len(hdr))
    for r in rows:
        if "tgc_ms_median" not in r:
            print(f"{r['model']:<14}{r['ir']:<6}{r['compile_s']:>10.2f}  {r['status'].upper()}")
            continue
        check = "ok" if r["match"] else "MISMATCH"
        print(f"{r['model']:<14}{r['ir']:<6}{r['compile_s']:>10.2f}"
              f"{r['eager_ms_median']:>11.4f}{r['eager_ms_min']:>10.4f}"
              f"{r['tgc_ms_median']:>11.4f}{r['tgc_ms_min']:>10.4f}"
              f"{r['ratio_median']:>10.2f}{r['ratio_min']:>7.2f}{r['reps']:>7}  {check}")
    print(f"\nratio = tgc ms / eager ms (median per-call; '(min)' = ratio of minima); "
          f"< 1 means tgc is faster.\ntorch threads {env['torch_num_threads']}, "
          f"OpenBLAS threads {env['openblas_threads']}, loadavg "
          f"{tuple(round(x, 2) for x in env['loadavg_start'])} -> "
          f"{tuple(round(x, 2) for x in env['loadavg_end'])}")
    if failures:
        print(f"\n{len(failures)} PROBLEM(S):")
        for tag, kind, text in failures:
            print(f"  {tag}: {kind}\n    " + text.replace("\n", "\n    "))

    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=2)
        print(f"\nwrote {opts.json}")
    if not opts.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
