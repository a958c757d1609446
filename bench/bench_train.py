#!/usr/bin/env python3
"""Training-step benchmark: tgc's compiled training model vs PyTorch eager vs torch.compile
(Inductor, AOTAutograd forward + backward), side by side in one process, 2 threads on every
side; plus tgc's saved values next to AOTAutograd's for the training fixtures.

    python bench/bench_train.py                          # every model (see bench/README.md)
    python bench/bench_train.py --quick                  # smoke test: fixture models
    python bench/bench_train.py --only mlp_wide gpt --json out.json
    python bench/bench_train.py --aot-only               # AOTAutograd saved values only

One training step is forward + backward with fresh gradients of every parameter (and of the
grad inputs), no optimizer:
* the training fixtures of test/fixtures (models.TRAIN_MODELS: mlp, convbn, gpt2, mutate,
  lm): forward, then backward with the fixture's tangents (train_grad_outputs), checked
  against train_expected.safetensors;
* the realistic models of bench/bench_models.py (resnet18, mobilenet_v2, a 4-layer GPT,
  a wide MLP), train() mode: forward, loss = mean(out^2), backward of the loss
  (bench_models.TrainLoss, exported here), checked against eager's first step.
Sides: eager (`model(*inputs)` + `torch.autograd.grad`), Inductor (the same on
`torch.compile(model)`; its cold compile is the first step, forward and backward, under
empty caches), tgc (`tgc compile --train`, then `tgc_model_run_train` +
`tgc_model_backward` through bench/tgc_ctypes.py). Exit status 1 when tgc failed to
compile, load, run or match. See bench/README.md.
"""

import sys
sys.dont_write_bytecode = True  # keep test/fixtures and bench free of __pycache__

import inductor_cold  # noqa: E402  (before torch: Inductor's caches must start empty)
inductor_cold.isolate_caches()

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import OrderedDict  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from safetensors import safe_open  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "test", "fixtures")
sys.path.insert(0, HERE)
sys.path.insert(0, FIXTURES)
import aot_saved  # noqa: E402  (test/fixtures/aot_saved.py)
import bench_models  # noqa: E402
import models  # noqa: E402  (test/fixtures/models.py)
import report  # noqa: E402
from bench_cpu import (ATOL, RTOL, Context, compare, compile_archive, environment, find_tgc,  # noqa: E402
                       print_footer, print_header, record_check, set_threads, time_row,
                       write_json)
from tgc_ctypes import Model, TgcError  # noqa: E402

SEED = 1234  # as test/fixtures/export_fixtures.py
# The realistic models' checks allow this many times eager fp32's own error (vs float64).
FP64_FACTOR = 4

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


def realistic_fixture(name, spec, work):
    """What load_fixture gives, built live for a realistic model: the loss module
    (TrainLoss, train() mode), its archive exported into `work`, the tangent 1 of the
    loss, and eager's first step as the expected values."""
    torch.manual_seed(SEED)
    model, inputs, _ = spec.builder()
    (value,) = inputs.values()
    inputs = OrderedDict(x=value)  # TrainLoss's input name
    loss = bench_models.TrainLoss(model).train()
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    archive = os.path.join(d, "train.pt2")
    t0 = time.perf_counter()
    ep = torch.export.export(copy.deepcopy(loss), tuple(v.clone() for v in inputs.values()))
    torch.export.save(ep, archive)
    print(f"[{name}] exported in {time.perf_counter() - t0:.1f}s", flush=True)
    tangents = {"output.0": torch.ones(())}
    expected = step_values(name, loss, inputs, tangents)
    # Deep networks' gradients differ from eager's by more than rtol 1e-4 under any other
    # summation order (Inductor's included), so the checks compare with a float64 run.
    reference64 = {k: v.numpy() for k, v in step_values(
        name, copy.deepcopy(loss).double(),
        OrderedDict((k, v.double() if v.is_floating_point() else v) for k, v in inputs.items()),
        {k: v.double() for k, v in tangents.items()}).items()}
    bounds = {k: max(ATOL + RTOL * float(np.max(np.abs(ref), initial=0.0)),
                     FP64_FACTOR * float(np.max(np.abs(expected[k].numpy() - ref), initial=0.0)))
              for k, ref in reference64.items()}
    return loss, inputs, dict(archive=archive, inputs=inputs, tangents=tangents,
                              expected=expected, reference64=reference64, bounds=bounds,
                              aot=None)


def step_values(name, module, inputs, tangents):
    """{output.N, grad.<fqn>, state.<fqn>: tensor} of one eager step on a deep copy."""
    outs, grads, m, _ = make_step(name, module, inputs, [], tangents)[0]()
    values = {f"output.{i}": o.detach().clone() for i, o in enumerate(outs)}
    values.update((f"grad.{k}", g) for k, g in grads.items())
    values.update((f"state.{k}", b.clone()) for k, b in m.named_buffers())
    return values


# ------------------------------------------------------------------ tgc side
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
        checks += [(f"output.{i}", f"output.{i}", o, exp[f"output.{i}"].numpy())
                   for i, o in enumerate(outs)]
        for n, a in zip(tm.input_names, args):
            want = exp.get(f"mutated.{n}", fx["inputs"][n])
            checks.append((f"mutated.{n}", f"input '{n}' after the step", a.numpy(),
                           want.numpy()))
        exp_grads = {k[5:] for k in exp if k.startswith("grad.")}
        got = dict(zip(tm.gradient_names, grads))
        if set(got) != exp_grads:
            problems.append(f"gradients {sorted(got)} != eager {sorted(exp_grads)}")
        checks += [(f"grad.{k}", f"grad.{k}", g, exp[f"grad.{k}"].numpy())
                   for k, g in got.items() if k in exp_grads]
        for fqn, kind in tm.state.items():
            if kind == "buffer":
                key = f"state.{fqn}"
                if key in exp:
                    checks.append((key, f"buffer '{fqn}'", tm.get_state(fqn),
                                   exp[key].numpy()))
                else:
                    problems.append(f"buffer '{fqn}' not in the eager model")
    for key, name, g, r in checks:
        ok, err, msg = judge(fx, key, name, g, r)
        max_err = max(max_err, err)
        if not ok:
            problems.append(msg)
    return problems, max_err


def judge(fx, key, name, got, want):
    """(ok, max abs err, message). Against eager fp32 with rtol/atol, or, where the
    fixture has a float64 reference (the realistic models), against that: the error may be
    up to FP64_FACTOR times eager fp32's own error on the same tensor."""
    ref = fx.get("reference64", {}).get(key)
    if ref is None:
        return compare(name, got, want)
    got = np.asarray(got, dtype=np.float64)
    if got.shape != ref.shape:
        return False, float("inf"), f"{name}: shape {got.shape} != eager {ref.shape}"
    err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
    bound = fx["bounds"][key]
    if err <= bound:
        return True, err, ""
    return False, err, (f"{name}: max abs err {err:.3g} from a float64 run of the step, more "
                        f"than {bound:.3g} ({FP64_FACTOR}x eager fp32's own error, or "
                        f"atol {ATOL} + rtol {RTOL} x max |value|)")


# ------------------------------------------------------------------ eager and Inductor
def make_step(name, model, inputs, grad_inputs, tangents, wrap=None):
    """(step, reset): one train step on a deep copy of `model` (through `wrap`, e.g.
    torch.compile, if given), and what restores the inputs the model mutates (run before
    every step, untimed). step() returns (output leaves, {gradient name: gradient}, the
    module, its inputs): gradients of every parameter and of the grad inputs
    (`input.N`), fresh each step (torch.autograd.grad, no .grad accumulation, like tgc)."""
    m = copy.deepcopy(model)
    run = wrap(m) if wrap else m
    args = OrderedDict((k, v.clone()) for k, v in inputs.items())
    for k in grad_inputs:
        args[k].requires_grad_(True)
    pristine = {k: v.clone() for k, v in inputs.items()}
    mutated = models.MUTATED_INPUTS.get(name, [])
    params = [(k, p) for k, p in m.named_parameters() if p.requires_grad]
    names = [k for k, _ in params] + [f"input.{list(inputs).index(k)}" for k in grad_inputs]
    wrt = [p for _, p in params] + [args[k] for k in grad_inputs]
    idx = [int(k.split(".")[1]) for k in tangents]
    tang = list(tangents.values())

    def step():
        leaves = pytree.tree_leaves(run(*args.values()))
        grads = torch.autograd.grad([leaves[i] for i in idx], wrt, tang) if idx else []
        return leaves, dict(zip(names, grads)), m, args

    def reset():
        with torch.no_grad():
            for k in mutated:
                args[k].copy_(pristine[k])

    return step, reset


def check_step(result, fx):
    """Problems of a step's result (make_step) against the expected values."""
    leaves, grads, m, args = result
    exp, problems, checks = fx["expected"], [], []
    checks += [(f"output.{i}", f"output.{i}", o.detach().numpy(), exp[f"output.{i}"].numpy())
               for i, o in enumerate(leaves) if f"output.{i}" in exp]
    checks += [(f"grad.{k}", f"grad.{k}", g.numpy(), exp[f"grad.{k}"].numpy())
               for k, g in grads.items() if f"grad.{k}" in exp]
    checks += [(f"mutated.{k}", f"input '{k}' after the step", a.detach().numpy(),
                exp.get(f"mutated.{k}", fx["inputs"][k]).numpy()) for k, a in args.items()]
    checks += [(f"state.{k}", f"buffer '{k}'", b.numpy(), exp[f"state.{k}"].numpy())
               for k, b in m.named_buffers() if f"state.{k}" in exp]
    for key, name, got, want in checks:
        ok, _, msg = judge(fx, key, name, got, want)
        if not ok:
            problems.append(msg)
    return problems


def compile_inductor(name, model, inputs, grad_inputs, fx):
    """(step, reset, cold compile seconds, problems): the first step (forward and
    backward: AOTAutograd compiles the backward at the first backward) under empty caches."""
    step, reset = make_step(name, model, inputs, grad_inputs, fx["tangents"],
                            wrap=inductor_cold.compile_module)
    reset()
    seconds, result = inductor_cold.cold_first_call(step)
    return step, reset, seconds, check_step(result, fx)


def fmt_saved(count, nbytes):
    if count is None and nbytes is None:
        return "?"
    return f"{'?' if count is None else count} / {'?' if nbytes is None else nbytes}"


def saved_values(row, name, model, inputs, gi, fx):
    """AOTAutograd's min-cut saved values, recomputed live (fixtures only)."""
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


def record_tgc_saved(row, so):
    count, nbytes, copied, total = tgc_saved(so)
    row.update(tgc_saved_count=count, tgc_saved_bytes=nbytes, tgc_saved_bytes_copied=copied,
               tgc_saved_bytes_total=total)
    best = (row.get("aot_best") or {}).get("saved_bytes")
    # Like for like: AOTAutograd counts the parameters it saves, so count ours too.
    compared = total if total is not None else nbytes
    row["saved_ratio"] = (compared / best) if compared is not None and best else None


def prepare_tgc(ctx, row, fx, inputs):
    """tgc compile --train + first-step check + a prepared step; None on failure."""
    name = row["model"]
    so = os.path.join(ctx.work, f"{name}.so")
    secs, err = compile_archive(ctx.tgc, fx["archive"], so, train=True)
    row["tgc_compile_s"] = round(secs, 3)
    if err:
        row["status"] = "compile failed"
        row["error"] = err
        ctx.failures.append((name, "tgc compile --train FAILED", err))
        print(f"[{name}] tgc compile --train FAILED ({secs:.2f}s):\n  "
              + err.replace("\n", "\n  "), flush=True)
        return None
    blas = set_threads(ctx.opts.threads, so)
    ctx.env["openblas_threads"] = ctx.env["openblas_threads"] or blas
    record_tgc_saved(row, so)
    try:
        problems, max_err = check_first_step(so, fx)
    except TgcError as e:
        problems, max_err = [f"run failed: {e}"], None
    record_check(ctx, row, name, problems, max_err, "MISMATCH vs eager")
    try:
        tm = Model(so)
        t_in = [inputs[n].clone() for n in tm.input_names]
        step = tm.prepare_train(
            t_in, [fx["tangents"].get(f"output.{i}") for i in range(tm.num_outputs)])
    except (TgcError, KeyError) as e:
        row["status"] = "load failed"
        row["error"] = str(e)
        ctx.failures.append((name, "LOAD FAILED", str(e)))
        return None
    pristine = [v.clone() for v in t_in]
    mut = [i for i, m in enumerate(tm.input_mutated) if m]

    def reset():
        for i in mut:
            t_in[i].copy_(pristine[i])

    return tm, step, reset


def run_model(ctx, name):
    """One row: build, (saved values), Inductor's cold compile, tgc, then the timing."""
    opts = ctx.opts
    spec = bench_models.REALISTIC.get(name) or bench_models.torchvision_spec(name)
    row = OrderedDict(model=name, mode="train step", desc=spec.desc if spec else DESC[name])
    ctx.rows.append(row)
    if spec:
        try:
            model, inputs, fx = realistic_fixture(name, spec, ctx.work)
        except bench_models.Skip as e:
            row["skipped"] = str(e)
            print(f"[{name}] SKIPPED: {e}", flush=True)
            return
        gi = []
    else:
        fx = load_fixture(name)
        model, inputs = build(name)
        gi = models.grad_inputs(name, inputs)
        saved_values(row, name, model, inputs, gi, fx)
    row["archive"] = os.path.relpath(fx["archive"], ROOT)
    if opts.aot_only:
        row["status"] = "aot only"
        return

    sides = []
    step, reset = make_step(name, model, inputs, gi, fx["tangents"])
    sides.append(("eager", step, reset))
    try:
        i_step, i_reset, secs, problems = compile_inductor(name, model, inputs, gi, fx)
        row["inductor_compile_s"] = secs
        sides.append(("inductor", i_step, i_reset))
        print(f"[{name}] inductor cold compile {secs:.2f}s", flush=True)
    except Exception as e:  # Inductor's own failures are reported, not fatal
        problems = [f"torch.compile failed: {type(e).__name__}: {e}"]
    if problems:
        row["inductor_problem"] = "; ".join(problems)[:300]
        ctx.notes.append((name, "Inductor vs eager", "\n".join(problems)))

    tgc = prepare_tgc(ctx, row, fx, inputs)
    if tgc:
        sides.append(("tgc", tgc[1], tgc[2]))
    if not time_row(ctx, row, name, sides, tgc[0] if tgc else None, opts.warmup, opts.reps,
                    opts.budget):
        return
    report.finish_row(row)
    print(f"[{name}] eager {row['eager_ms_median']:.3f} ms  inductor "
          f"{row.get('inductor_ms_median') or float('nan'):.3f} ms  tgc "
          f"{row.get('tgc_ms_median') or float('nan'):.3f} ms  tgc/best "
          f"{row.get('ratio_best') or float('nan'):.2f}  compile tgc "
          f"{row.get('tgc_compile_s') or float('nan'):.2f}s inductor "
          f"{row.get('inductor_compile_s') or float('nan'):.2f}s ({row['reps']} steps/side)",
          flush=True)


def saved_table(rows):
    """tgc's saved values next to AOTAutograd's (the fixture rows)."""
    lines = ["| model | tgc saved (n / B) | AOT min-cut, no decomps | AOT min-cut, core ATen "
             "| tgc/AOT bytes |", "|---|---|---|---|---|"]
    for r in rows:
        if "aot" not in r:
            continue
        s = r["aot"]
        aot = [fmt_saved(s[k]["min_cut"]["saved_count"], s[k]["min_cut"]["saved_bytes"])
               for k in ("none", "core_aten")]
        tgc = "-"
        if "tgc_saved_count" in r:
            tgc = fmt_saved(r["tgc_saved_count"], r["tgc_saved_bytes"])
            if r.get("tgc_saved_bytes_total") is not None:
                tgc += f"; {r['tgc_saved_bytes_total']} with parameters"
        ratio = f"{r['saved_ratio']:.2f}" if r.get("saved_ratio") is not None else "-"
        lines.append(f"| {r['model']} | {tgc} | {aot[0]} | {aot[1]} | {ratio} |")
    return "\n".join(lines)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = list(DESC) + list(bench_models.REALISTIC)
    ap.add_argument("--tgc", help="tgc binary (default: build/bin/tgc of this checkout)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: few steps; the fixture models unless --only")
    ap.add_argument("--aot-only", action="store_true",
                    help="only the AOTAutograd saved values of the fixtures (no tgc, no timing)")
    ap.add_argument("--only", nargs="*", help=f"only these models ({' '.join(names)}; tv:<name>[@<size>] "
                                              f"for any torchvision classifier)")
    ap.add_argument("--threads", type=int, default=2,
                    help="threads on every side (torch, TGC_NUM_THREADS); default 2")
    ap.add_argument("--reps", type=int, help="max timed steps per side (default 200, quick 10)")
    ap.add_argument("--warmup", type=int, help="untimed steps per side (default 3, quick 1)")
    ap.add_argument("--budget", type=float,
                    help="seconds of timed steps per model, all sides (default 6, quick 0.5)")
    ap.add_argument("--json", help="write the environment and all rows here")
    ap.add_argument("--workdir", help="keep archives and compiled .so/.h/.json here "
                                      "(default: a temp dir)")
    opts = ap.parse_args()
    opts.names = list(DESC) if (opts.quick or opts.aot_only) and not opts.only else names
    names += [n for n in opts.only or () if bench_models.torchvision_spec(n)]
    if opts.only:
        unknown = set(opts.only) - set(names)
        if unknown:
            sys.exit(f"bench_train: unknown models {sorted(unknown)}; known: {names}")
        opts.names = [n for n in names if n in opts.only]
    if opts.aot_only:
        opts.names = [n for n in opts.names if n in DESC]
    opts.reps = opts.reps or (10 if opts.quick else 200)
    opts.warmup = opts.warmup if opts.warmup is not None else (1 if opts.quick else 3)
    opts.budget = opts.budget or (0.5 if opts.quick else 6.0)
    return opts


def main():
    opts = parse_args()
    warnings.filterwarnings("ignore")
    tgc = None if opts.aot_only else find_tgc(opts.tgc, "bench_train")
    set_threads(opts.threads)
    work = opts.workdir or tempfile.mkdtemp(prefix="tgc-bench-train-")
    os.makedirs(work, exist_ok=True)
    env = environment(tgc, opts, reps_max=opts.reps, warmup=opts.warmup, budget_s=opts.budget)
    print_header(env)
    if not opts.aot_only:
        env["inductor_first_use_s"] = inductor_cold.warm_up()
        print(f"Inductor first use in this process: {env['inductor_first_use_s']:.1f}s (not "
              f"counted in any row)\nwork dir {work}; warmup {opts.warmup}, up to "
              f"{opts.reps} timed steps/side, ~{opts.budget}s/model\n", flush=True)

    ctx = Context(opts, tgc, work, env)
    for name in opts.names:
        run_model(ctx, name)
    env["loadavg_end"] = list(os.getloadavg())
    if not opts.aot_only:
        print_footer(env, ctx.rows, ctx.failures, ctx.notes)
    print("\nSaved values (training fixtures; count / bytes at the example sizes, gpt2: "
          "batch 3; tgc/AOT = tgc bytes with parameters, as AOTAutograd counts them, / the "
          "smaller AOTAutograd min-cut bytes):\n\n" + saved_table(ctx.rows))
    if opts.json:
        write_json(opts.json, env, ctx.rows)
    if not opts.workdir:
        shutil.rmtree(work, ignore_errors=True)
    inductor_cold.cleanup()
    return 1 if ctx.failures else 0


if __name__ == "__main__":
    sys.exit(main())
