#!/usr/bin/env python3
"""Training benchmark: tgc's forward/backward partition and train step vs AOTAutograd and
PyTorch eager, for the training fixture models, in one process.

    /root/.cache/tgc-venv/bin/python bench/bench_train.py               # all five models
    /root/.cache/tgc-venv/bin/python bench/bench_train.py --aot-only    # AOTAutograd half only
    ... --tgc build/bin/tgc --only gpt2 lm --json out.json --workdir /tmp/bt

For every model of test/fixtures (models.TRAIN_MODELS: mlp, convbn, gpt2, mutate, lm):

(a) saved values: tgc's `saved_count` / `saved_bytes` from the compiled model's JSON
    (written by `tgc compile --train`; "?" when absent) next to AOTAutograd's
    min-cut partitioner's, recomputed live (test/fixtures/aot_saved.py, the code that wrote
    the fixtures' aot_saved.json) with no decompositions and with core ATen decompositions;
    ratio tgc bytes / the smaller AOTAutograd bytes.
(b) train step: forward + backward with the fixture's tangents (train_grad_outputs), tgc
    (`tgc_model_run_train` + `tgc_model_backward` through bench/tgc_ctypes.py) vs eager PyTorch
    (`model(*inputs)` + `torch.autograd.grad(differentiable outputs, parameters and grad
    inputs, tangents)`), both single-threaded by default; median (and min) over interleaved
    repeats; ratio tgc/eager (< 1: tgc is faster). Before timing, a fresh tgc instance's
    first step is checked against train_expected.safetensors (outputs, gradients, mutated
    inputs, buffers; rtol 1e-4, atol 1e-5).

Exit status 1 when a compile, load, run or check failed. See bench/README.md.
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

import torch
import torch.utils._pytree as pytree
from safetensors import safe_open
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "test", "fixtures")
sys.path.insert(0, HERE)
sys.path.insert(0, FIXTURES)
import aot_saved  # noqa: E402  (test/fixtures/aot_saved.py)
import models  # noqa: E402  (test/fixtures/models.py)
from bench_cpu import compare, openblas_threads, time_pair  # noqa: E402
from tgc_ctypes import Model, TgcError  # noqa: E402

SEED = 1234  # as test/fixtures/export_fixtures.py

DESC = OrderedDict(
    mlp="MLP 16-32-8, x[4,16] (grad)",
    convbn="ConvBN 3-8-8 (train BN), x[2,3,8,8] (grad)",
    gpt2="GPT-2 block C=32 4 heads, x[3,8,32] (grad), dyn batch",
    mutate="buffer + input mutation, x[4,6]; nothing differentiable",
    lm="Embedding-LN-Linear LM + cross_entropy, idx/targets i64[2,5]",
)


# ------------------------------------------------------------------ fixtures
def load_fixture(name):
    """The training fixture files of test/fixtures/<name>/ (README.md there)."""
    d = os.path.join(FIXTURES, name)
    exp_path = os.path.join(d, "train_expected.safetensors")
    if not os.path.exists(exp_path):
        sys.exit(f"bench_train: {exp_path} is missing: run "
                 f"test/fixtures/export_fixtures.py --train-only")
    with safe_open(exp_path, "pt") as f:
        archive = f.metadata()["archive"]
    with open(os.path.join(d, "aot_saved.json")) as f:
        aot = json.load(f)
    return dict(archive=os.path.join(d, archive),
                inputs=load_file(os.path.join(d, "train_inputs.safetensors")),
                tangents=load_file(os.path.join(d, "train_grad_outputs.safetensors")),
                expected=load_file(exp_path), aot=aot)


def build(name):
    torch.manual_seed(SEED)
    model, inputs, _ = models.MODELS[name]()
    model.train()
    return model, inputs


# ------------------------------------------------------------------ tgc side
def find_tgc(opt):
    path = os.path.abspath(opt) if opt else os.path.join(ROOT, "build", "bin", "tgc")
    if not os.access(path, os.X_OK):
        sys.exit(f"bench_train: no tgc binary at {path} (build it, or pass --tgc PATH; "
                 f"--aot-only needs none)")
    return path


def compile_train(tgc, pt2, so):
    """`tgc compile --train pt2 -o so`; returns (seconds, error text or None)."""
    cmd = [tgc, "compile", "--train", pt2, "-o", so]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        text = (r.stderr or r.stdout or "").strip()
        errs = [ln for ln in text.splitlines() if "error" in ln.lower()]
        msg = "\n".join(errs[:5]) or text[:2000] or "(no output)"
        return dt, f"`{' '.join(cmd)}` exited with {r.returncode}:\n{msg}"
    return dt, None


def tgc_saved(so):
    """(saved_count, saved_bytes, bytes of saved values that are not references, bytes of
    every saved value references included) from the model JSON beside `so`; None for what
    it does not say. AOTAutograd's counts include the parameters it saves, so the
    like-for-like comparison uses the last number."""
    path = os.path.splitext(so)[0] + ".json"
    try:
        with open(path) as f:
            sig = json.load(f)
    except (OSError, ValueError):
        return None, None, None, None
    copied = references = None
    saved = sig.get("saved")
    if isinstance(saved, list) and all(isinstance(e, dict) for e in saved):
        copied = references = 0
        for e in saved:
            shape, nbytes = e.get("shape"), dtype_bytes(e.get("dtype"))
            if nbytes is None or not all(isinstance(s, int) for s in shape or []):
                if e.get("reference"):  # parameters have static shapes
                    references = None
                copied = None
                continue
            for s in shape:
                nbytes *= s
            if e.get("reference"):
                if references is not None:
                    references += nbytes
            elif copied is not None:
                copied += nbytes
    # saved_bytes counts copied values at the symbols' hints and references as 0.
    total = (sig["saved_bytes"] + references
             if sig.get("saved_bytes") is not None and references is not None else None)
    return sig.get("saved_count"), sig.get("saved_bytes"), copied, total


def dtype_bytes(name):
    try:
        return torch.empty((), dtype=getattr(torch, name)).element_size()
    except (AttributeError, TypeError):
        return None


def check_first_step(so, fx):
    """A fresh instance's first train step against train_expected.safetensors."""
    exp, tangents = fx["expected"], fx["tangents"]
    problems, max_err, checks = [], 0.0, []
    with Model(so) as tm:
        if not tm.trainable:
            return ["the .so has no training entry points (tgc_model_run_train ...)"], None
        missing = [n for n in tm.input_names if n not in fx["inputs"]]
        if missing:
            return [f"tgc inputs {tm.input_names} != fixture {list(fx['inputs'])}"], None
        args = [fx["inputs"][n].clone() for n in tm.input_names]
        gouts = [tangents.get(f"output.{i}") for i in range(tm.num_outputs)]
        n_exp_out = sum(k.startswith("output.") for k in exp)
        if tm.num_outputs != n_exp_out:
            return [f"{tm.num_outputs} outputs, eager has {n_exp_out}"], None
        for i in range(tm.num_outputs):
            has = tm.output_has_gradient(i)
            if has is not None and bool(has) != (gouts[i] is not None):
                problems.append(f"output.{i}: tgc says has_gradient={has}, eager says "
                                f"{gouts[i] is not None}")
        step = tm.prepare_train(args, gouts)
        outs = step.forward(copy_outputs=True)
        grads = step.backward(copy_outputs=True)
        checks += [(f"output.{i}", o, exp[f"output.{i}"].numpy()) for i, o in enumerate(outs)]
        for n, a in zip(tm.input_names, args):
            want = exp.get(f"mutated.{n}", fx["inputs"][n])
            checks.append((f"input '{n}' after the step", a.numpy(), want.numpy()))
        exp_grads = {k[5:] for k in exp if k.startswith("grad.")}
        got = dict(zip(tm.gradient_names, grads))
        if set(got) != exp_grads:
            problems.append(f"gradients {sorted(got)} != eager {sorted(exp_grads)}")
        checks += [(f"grad.{k}", g, exp[f"grad.{k}"].numpy())
                   for k, g in got.items() if k in exp_grads]
        for fqn, kind in tm.state.items():
            if kind == "buffer":
                key = f"state.{fqn}"
                if key in exp:
                    checks.append((f"buffer '{fqn}'", tm.get_state(fqn), exp[key].numpy()))
                else:
                    problems.append(f"buffer '{fqn}' not in the eager model")
    for name, g, r in checks:
        ok, err, msg = compare(name, g, r)
        max_err = max(max_err, err)
        if not ok:
            problems.append(msg)
    return problems, max_err


# ------------------------------------------------------------------ eager side
def eager_step(name, model, inputs, grad_inputs, tangents):
    """(step, reset): one eager train step on a deep copy, and what restores the inputs
    the model mutates (run before every step, untimed)."""
    m = copy.deepcopy(model)
    args = OrderedDict((k, v.clone()) for k, v in inputs.items())
    for k in grad_inputs:
        args[k].requires_grad_(True)
    pristine = {k: v.clone() for k, v in inputs.items()}
    mutated = models.MUTATED_INPUTS.get(name, [])
    wrt = [p for p in m.parameters() if p.requires_grad] + [args[k] for k in grad_inputs]
    idx = [int(k.split(".")[1]) for k in tangents]
    tang = list(tangents.values())

    def step():
        leaves = pytree.tree_leaves(m(*args.values()))
        if idx:
            torch.autograd.grad([leaves[i] for i in idx], wrt, tang)

    def reset():
        with torch.no_grad():
            for k in mutated:
                args[k].copy_(pristine[k])

    return step, reset


# ------------------------------------------------------------------ main
def fmt_saved(count, nbytes):
    if count is None and nbytes is None:
        return "?"
    return f"{'?' if count is None else count} / {'?' if nbytes is None else nbytes}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tgc", help="tgc binary (default: build/bin/tgc of this checkout)")
    ap.add_argument("--aot-only", action="store_true",
                    help="only the AOTAutograd saved values (no tgc, no timing)")
    ap.add_argument("--only", nargs="*", help=f"only these models ({' '.join(DESC)})")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch.set_num_threads and the .so's OpenBLAS threads (default 1)")
    ap.add_argument("--reps", type=int, default=200, help="max timed steps per side (200)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps per side (3)")
    ap.add_argument("--budget", type=float, default=3.0,
                    help="seconds of timed steps per model, both sides (3)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--workdir", help="keep the compiled .so/.h/.json here (default: temp)")
    opts = ap.parse_args()
    warnings.filterwarnings("ignore")

    names = list(DESC)
    if opts.only:
        unknown = set(opts.only) - set(names)
        if unknown:
            sys.exit(f"bench_train: unknown models {sorted(unknown)}; known: {names}")
        names = [n for n in names if n in opts.only]
    tgc = None if opts.aot_only else find_tgc(opts.tgc)
    torch.set_num_threads(opts.threads)
    work = opts.workdir or tempfile.mkdtemp(prefix="tgc-bench-train-")
    os.makedirs(work, exist_ok=True)
    env = OrderedDict(torch=torch.__version__, python=platform.python_version(),
                      machine=platform.machine(), cpus=os.cpu_count(),
                      torch_num_threads=torch.get_num_threads(), openblas_threads=None,
                      loadavg_start=list(os.getloadavg()), tgc=tgc, reps_max=opts.reps,
                      warmup=opts.warmup, budget_s=opts.budget)
    print(f"tgc {tgc or '(--aot-only)'}\ntorch {torch.__version__}, threads "
          f"{torch.get_num_threads()}, cpus {env['cpus']}, loadavg "
          f"{tuple(round(x, 2) for x in os.getloadavg())}\n", flush=True)

    rows, failures = [], []
    for name in names:
        fx = load_fixture(name)
        model, inputs = build(name)
        gi = models.grad_inputs(name, inputs)
        row = OrderedDict(model=name, desc=DESC[name], archive=os.path.relpath(fx["archive"],
                                                                             ROOT))
        rows.append(row)
        for k, v in inputs.items():  # the rebuilt model is the fixture's model
            if not torch.equal(v, fx["inputs"][k]):
                print(f"[{name}] WARNING: rebuilt input '{k}' differs from the fixture",
                      flush=True)

        # -- (a) AOTAutograd, live
        t0 = time.perf_counter()
        rep = aot_saved.report(model, inputs, gi)
        row["aot"] = rep["summary"]
        row["aot_best"] = rep["best"]
        row["aot_s"] = round(time.perf_counter() - t0, 2)
        if rep["summary"] != fx["aot"]["summary"]:
            row["aot_note"] = f"differs from aot_saved.json (torch {fx['aot']['torch']})"
            print(f"[{name}] note: live AOTAutograd numbers {row['aot_note']}", flush=True)
        mc = rep["summary"]
        print(f"[{name}] AOTAutograd min-cut saved: "
              f"{fmt_saved(mc['none']['min_cut']['saved_count'], mc['none']['min_cut']['saved_bytes'])} B (no decomps), "
              f"{fmt_saved(mc['core_aten']['min_cut']['saved_count'], mc['core_aten']['min_cut']['saved_bytes'])} B (core ATen) "
              f"[{row['aot_s']}s]", flush=True)
        if opts.aot_only:
            row["status"] = "aot only"
            continue

        # -- compile
        so = os.path.join(work, f"{name}.so")
        ctime, err = compile_train(tgc, fx["archive"], so)
        row["compile_s"] = round(ctime, 3)
        if err:
            row["status"] = "compile failed"
            row["error"] = err
            failures.append((name, "tgc compile --train FAILED", err))
            print(f"[{name}] tgc compile --train FAILED ({ctime:.2f}s):\n  "
                  + err.replace("\n", "\n  ") + "\n", flush=True)
            continue
        if env["openblas_threads"] is None:
            env["openblas_threads"] = openblas_threads(so, opts.threads)
        count, nbytes, copied, total = tgc_saved(so)
        row.update(tgc_saved_count=count, tgc_saved_bytes=nbytes, tgc_saved_bytes_copied=copied,
                   tgc_saved_bytes_total=total)
        best = rep["best"]["saved_bytes"]
        # Like for like: AOTAutograd counts the parameters it saves, so count ours too.
        compared = total if total is not None else nbytes
        row["saved_ratio"] = (compared / best) if compared is not None and best else None

        # -- check the first step
        try:
            problems, max_err = check_first_step(so, fx)
        except TgcError as e:
            problems, max_err = [f"run failed: {e}"], None
        row["max_abs_err"] = max_err
        row["match"] = not problems
        if problems:
            row["mismatch"] = problems
            failures.append((name, "MISMATCH vs eager", "\n".join(problems)))
            print(f"[{name}] !!! MISMATCH vs eager !!!\n  " + "\n  ".join(problems),
                  flush=True)

        # -- (b) timing
        e_step, e_reset = eager_step(name, model, inputs, gi, fx["tangents"])
        try:
            tm = Model(so)
            t_in = [inputs[n].clone() for n in tm.input_names]
            t_step = tm.prepare_train(
                t_in, [fx["tangents"].get(f"output.{i}") for i in range(tm.num_outputs)])
        except (TgcError, KeyError) as e:
            row["status"] = "load failed"
            row["error"] = str(e)
            failures.append((name, "LOAD FAILED", str(e)))
            print(f"[{name}] LOAD FAILED: {e}", flush=True)
            continue
        pristine = [v.clone() for v in t_in]
        mut = [i for i, m in enumerate(tm.input_mutated) if m]

        def t_reset():
            for i in mut:
                t_in[i].copy_(pristine[i])

        try:
            te, tt = time_pair([e_step, t_step], [e_reset, t_reset], opts.warmup, opts.reps,
                               opts.budget)
        except TgcError as e:
            row["status"] = "run failed"
            row["error"] = str(e)
            failures.append((name, "RUN FAILED", str(e)))
            print(f"[{name}] RUN FAILED: {e}", flush=True)
            continue
        finally:
            tm.close()
        ms = lambda xs, f: 1e3 * f(xs)  # noqa: E731
        row.update(status="ok" if row["match"] else "mismatch", reps=len(te),
                   eager_ms_median=ms(te, statistics.median), eager_ms_min=ms(te, min),
                   tgc_ms_median=ms(tt, statistics.median), tgc_ms_min=ms(tt, min))
        row["ratio_median"] = row["tgc_ms_median"] / row["eager_ms_median"]
        row["ratio_min"] = row["tgc_ms_min"] / row["eager_ms_min"]
        print(f"[{name}] compile {ctime:.2f}s  saved {fmt_saved(count, nbytes)} B  "
              f"eager {row['eager_ms_median']:.4f} ms  tgc {row['tgc_ms_median']:.4f} ms  "
              f"ratio {row['ratio_median']:.2f} ({len(te)} steps/side)", flush=True)

    env["loadavg_end"] = list(os.getloadavg())

    # -- markdown table
    print("\n| model | tgc saved (n / B) | AOT min-cut, no decomps | AOT min-cut, core ATen "
          "| tgc/AOT bytes | eager step ms (min) | tgc step ms (min) | tgc/eager (min) | check |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["aot"]
        aot_none = fmt_saved(s["none"]["min_cut"]["saved_count"],
                             s["none"]["min_cut"]["saved_bytes"])
        aot_core = fmt_saved(s["core_aten"]["min_cut"]["saved_count"],
                             s["core_aten"]["min_cut"]["saved_bytes"])
        if r["status"] in ("aot only", "compile failed", "load failed"):
            print(f"| {r['model']} | - | {aot_none} | {aot_core} | - | - | - | - | "
                  f"{r['status'].upper() if r['status'] != 'aot only' else '-'} |")
            continue
        tgc_saved_s = fmt_saved(r["tgc_saved_count"], r["tgc_saved_bytes"])
        if r.get("tgc_saved_bytes_total") is not None:
            tgc_saved_s += f"; {r['tgc_saved_bytes_total']} with parameters"
        ratio = f"{r['saved_ratio']:.2f}" if r.get("saved_ratio") is not None else "-"
        if "tgc_ms_median" in r:
            times = (f"{r['eager_ms_median']:.4f} ({r['eager_ms_min']:.4f}) | "
                     f"{r['tgc_ms_median']:.4f} ({r['tgc_ms_min']:.4f}) | "
                     f"{r['ratio_median']:.2f} ({r['ratio_min']:.2f})")
        else:
            times = "- | - | -"
        check = "ok" if r.get("match") else "MISMATCH"
        print(f"| {r['model']} | {tgc_saved_s} | {aot_none} | {aot_core} | {ratio} | {times} "
              f"| {check if r['status'] != 'run failed' else 'RUN FAILED'} |")
    print(f"\nsaved: count / bytes at the example sizes (gpt2: batch 3); tgc/AOT = tgc bytes "
          f"with parameters (as AOTAutograd counts them) / the smaller AOTAutograd min-cut "
          f"bytes. Step ratio = tgc / eager median ms "
          f"(< 1: tgc is faster).\ntorch threads {env['torch_num_threads']}, OpenBLAS "
          f"threads {env['openblas_threads']}, loadavg "
          f"{tuple(round(x, 2) for x in env['loadavg_start'])} -> "
          f"{tuple(round(x, 2) for x in env['loadavg_end'])}")
    if failures:
        print(f"\n{len(failures)} PROBLEM(S):")
        for name, kind, text in failures:
            print(f"  {name}: {kind}\n    " + text.replace("\n", "\n    "))

    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=2)
        print(f"\nwrote {opts.json}")
    if not opts.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
