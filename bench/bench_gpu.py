#!/usr/bin/env python3
"""CUDA benchmark: tgc's CUDA model.so vs PyTorch eager vs torch.compile (default and
mode="reduce-overhead"), inference and training step, side by side in one process, timed
with CUDA events (docs/cuda.md, issue 15).

tgc compiles on a machine with LLVM/MLIR and the CUDA toolkit; the GPU machine has
PyTorch and a GPU but no compiler. So the benchmark has two halves:

    python bench/bench_gpu.py prepare --out DIR [--only mlp resnet18 gpt] [--quick]
        # build machine: builds each model (fixed seed), exports its inference program
        # and its training step (loss = mean(out^2), bench_models.TrainLoss) with
        # torch.export, compiles both with `tgc compile --target=cuda` (timed: the cold
        # compile), and writes DIR/manifest.json with the weights and inputs.
    python bench/bench_gpu.py run DIR [--json out.json] [--iters 50]
        # GPU machine: rebuilds the same models on CUDA from DIR's weights, loads the
        # model.so files with tgc.load (tools/python), and for each model and mode times
        # eager, torch.compile (cold compile under empty caches, then steady state) and
        # tgc; checks tgc against eager (fp32, TF32 off: rel 1e-4 inference, 1e-3
        # gradients); reports the medians of interleaved runs, each side's ratio to the
        # faster of eager and torch.compile, and the peak memory of a training step.

Models (issue 15): an MLP 1024-4096-4096-1024 at batch 256, torchvision ResNet-18 at
batch 32 and 224x224, and a GPT of 6 layers (d512, 8 heads, T256, vocab 2048) at batch 8.
`--quick` makes each small, for a smoke test. Exit status 1 when a tgc side failed to
compile, load, run or match.
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from collections import OrderedDict

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "fixtures"))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

SEED = 1234
RTOL_INFERENCE, RTOL_GRAD = 1e-4, 1e-3


# ------------------------------------------------------------------ models
def build_model(name, quick):
    """(module, example input) of benchmark model `name`, on the CPU, fixed seed."""
    import torch
    import torch.nn as nn
    import bench_models
    torch.manual_seed(SEED)
    if name == "mlp":
        d = (64, 128, 128, 64) if quick else (1024, 4096, 4096, 1024)
        layers = []
        for i in range(3):
            layers.append(nn.Linear(d[i], d[i + 1]))
            if i < 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers), torch.randn(8 if quick else 256, d[0])
    if name == "resnet18":
        model = bench_models.torchvision_models().resnet18(weights=None, num_classes=1000)
        size, batch = (32, 2) if quick else (224, 32)
        return model, torch.randn(batch, 3, size, size)
    if name == "gpt":
        if quick:
            model = bench_models.GPT(vocab=256, block_size=32, n_layer=2, n_embd=64, n_head=4,
                                     sdpa=True)
            return model, torch.randint(0, 256, (2, 32))
        model = bench_models.GPT(vocab=2048, block_size=256, n_layer=6, n_embd=512, n_head=8,
                                 sdpa=True)
        bench_models.randomize_layer_norms(model)
        return model, torch.randint(0, 2048, (8, 256))
    raise SystemExit(f"bench_gpu: unknown model '{name}'")


MODELS = OrderedDict(
    mlp="MLP 1024-4096-4096-1024, x[256,1024]",
    resnet18="torchvision resnet18, x[32,3,224,224]",
    gpt="GPT 6 layers d512 8 heads T256 vocab 2048 (SDPA), idx[8,256]",
)


# ------------------------------------------------------------------ prepare
def find_tgc():
    for path in (os.environ.get("TGC"), os.path.join(ROOT, "build", "bin", "tgc")):
        if path and os.path.exists(path):
            return path
    raise SystemExit("bench_gpu: no tgc compiler: build it (README) or set TGC")


def prepare(args):
    import torch
    import bench_models
    from safetensors.torch import save_file
    tgc = find_tgc()
    os.makedirs(args.out, exist_ok=True)
    manifest = OrderedDict(quick=args.quick, target=args.target, models=OrderedDict())
    failed = False
    for name in args.only or MODELS:
        model, x = build_model(name, args.quick)
        entry = OrderedDict(description=MODELS[name])
        # The weights and input the GPU side rebuilds the models from.
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        save_file(state, os.path.join(args.out, f"{name}.weights.safetensors"))
        save_file({"x": x}, os.path.join(args.out, f"{name}.inputs.safetensors"))
        for mode in ("inference", "train"):
            module = copy.deepcopy(model)
            if mode == "train":
                module = bench_models.TrainLoss(module).train()
            else:
                module.eval()
            archive = os.path.join(args.out, f"{name}.{mode}.pt2")
            so = os.path.join(args.out, f"{name}.{mode}.so")
            t0 = time.perf_counter()
            with torch.no_grad() if mode == "inference" else torch.enable_grad():
                ep = torch.export.export(module, (x.clone(),))
            torch.export.save(ep, archive)
            export_s = time.perf_counter() - t0
            cmd = [tgc, "compile", archive, f"--target={args.target}", "-o", so]
            if mode == "train":
                cmd.insert(3, "--train")
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True)
            compile_s = time.perf_counter() - t0
            ok = done.returncode == 0
            failed |= not ok
            entry[mode] = OrderedDict(archive=os.path.basename(archive), so=os.path.basename(so),
                                      export_s=round(export_s, 2),
                                      tgc_compile_s=round(compile_s, 2), ok=ok,
                                      error=None if ok else done.stderr.strip()[-2000:])
            print(f"[{name} {mode}] export {export_s:.1f} s, tgc compile {compile_s:.1f} s"
                  + ("" if ok else f": FAILED\n{done.stderr.strip()[-2000:]}"), flush=True)
        manifest["models"][name] = entry
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"bench_gpu: wrote {args.out}/manifest.json; carry {args.out} to the GPU machine "
          f"and run `bench/bench_gpu.py run {args.out}`")
    return 1 if failed else 0


# ------------------------------------------------------------------ run
def cuda_time(fn, iters):
    """Milliseconds of each of `iters` calls of fn, by CUDA events."""
    import torch
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def max_rel_error(got, want):
    import torch
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    scale = float(want.abs().max()) if want.numel() else 0.0
    return float((got - want).abs().max()) / max(scale, 1e-30) if want.numel() else 0.0


def run(args):
    import inductor_cold
    inductor_cold.isolate_caches()  # before torch: Inductor's caches start empty
    import torch
    import bench_models
    from safetensors.torch import load_file
    import tgc
    if not torch.cuda.is_available():
        raise SystemExit("bench_gpu run: no CUDA device here")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    device = torch.device("cuda")
    print(f"bench_gpu: Inductor's once-per-process start took "
          f"{inductor_cold.warm_up():.1f} s (not counted)", flush=True)
    rows, failed = [], False
    for name, entry in manifest["models"].items():
        model, _ = build_model(name, manifest["quick"])
        model.load_state_dict(load_file(os.path.join(args.dir, f"{name}.weights.safetensors")))
        x = load_file(os.path.join(args.dir, f"{name}.inputs.safetensors"))["x"].to(device)
        for mode in ("inference", "train"):
            info = entry[mode]
            module = copy.deepcopy(model).to(device)
            module = bench_models.TrainLoss(module).train() if mode == "train" else module.eval()
            sides = OrderedDict()
            sides["eager"] = module
            compile_s = {}
            for label, kwargs in (("compile", {}), ("compile-ro", {"mode": "reduce-overhead"})):
                compiled = torch.compile(copy.deepcopy(module), **kwargs)

                def first_call():
                    step(compiled, x, mode)
                    torch.cuda.synchronize()

                compile_s[label] = inductor_cold.cold_first_call(first_call)[0]
                sides[label] = compiled
            if info["ok"]:
                try:
                    tgc_module = copy.deepcopy(module)
                    sides["tgc"] = tgc.load(os.path.join(args.dir, info["so"]), tgc_module,
                                            train=mode == "train")
                except Exception as e:  # noqa: BLE001 (reported, the row goes on)
                    failed = True
                    print(f"[{name} {mode}] tgc.load failed: {e}", flush=True)
            # Numerics: tgc against eager, one step each on fresh gradients.
            check = None
            if "tgc" in sides:
                try:
                    want = step(sides["eager"], x, mode, grads_of=module)
                    got = step(sides["tgc"], x, mode, grads_of=tgc_module)
                    rtol = RTOL_GRAD if mode == "train" else RTOL_INFERENCE
                    errors = {k: max_rel_error(got[k], want[k]) for k in want}
                    worst = max(errors.values(), default=0.0)
                    check = worst <= rtol
                    failed |= not check
                    if not check:
                        bad = sorted(errors.items(), key=lambda kv: -kv[1])[:3]
                        print(f"[{name} {mode}] tgc MISMATCH vs eager: {bad}", flush=True)
                except Exception as e:  # noqa: BLE001
                    failed = True
                    check = False
                    print(f"[{name} {mode}] tgc failed: {e}", flush=True)
                    del sides["tgc"]
            # Warm up, then interleave the sides' timed rounds.
            for fn in sides.values():
                for _ in range(3):
                    step(fn, x, mode)
            torch.cuda.synchronize()
            samples = {k: [] for k in sides}
            for _ in range(args.rounds):
                for label, fn in sides.items():
                    samples[label] += cuda_time(lambda: step(fn, x, mode), args.iters)
            medians = {k: statistics.median(v) for k, v in samples.items()}
            peaks = {}
            for label, fn in sides.items():
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                free_before = torch.cuda.mem_get_info()[0]
                step(fn, x, mode)
                torch.cuda.synchronize()
                # tgc's memory is its own (cuMemAlloc), not torch's allocator's: what the
                # device lost during the step is the nearest measure.
                peaks[label] = (torch.cuda.max_memory_allocated() if label != "tgc"
                                else max(0, free_before - torch.cuda.mem_get_info()[0]))
            best = min(medians.get("eager", float("inf")), medians.get("compile", float("inf")),
                       medians.get("compile-ro", float("inf")))
            row = OrderedDict(model=name, mode=mode, ms=medians,
                              ratio={k: v / best for k, v in medians.items()},
                              compile_s=dict(compile_s, tgc=info["tgc_compile_s"]),
                              peak_bytes=peaks, check=check)
            rows.append(row)
            print(f"[{name} {mode}] " + "  ".join(
                f"{k} {v:.3f} ms ({v / best:.2f}x)" for k, v in medians.items())
                + f"  | compile s: " + ", ".join(f"{k} {v:.1f}" for k, v in row["compile_s"].items())
                + f"  | check {check}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           rows=rows), f, indent=2)
    return 1 if failed else 0


def step(fn, x, mode, grads_of=None):
    """One call: inference under no_grad, or a training step (forward, backward of the loss
    with fresh gradients). With `grads_of`, returns {output / grad.<name>: tensor}."""
    import torch
    if mode == "inference":
        with torch.no_grad():
            out = fn(x)
        return {"output": out} if grads_of is not None else None
    owner = grads_of if grads_of is not None else fn
    for p in owner.parameters() if hasattr(owner, "parameters") else ():
        p.grad = None
    loss = fn(x)
    loss.backward()
    if grads_of is None:
        return None
    values = {"output": loss.detach()}
    values.update((f"grad.{k}", p.grad.detach().clone())
                  for k, p in grads_of.named_parameters() if p.grad is not None)
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="export and compile (build machine)")
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*", choices=list(MODELS))
    p.add_argument("--quick", action="store_true", help="small models (smoke test)")
    p.add_argument("--target", default="cuda", help="tgc --target (cuda, cuda:sm_XX)")
    r = sub.add_parser("run", help="time and check (GPU machine)")
    r.add_argument("dir")
    r.add_argument("--json")
    r.add_argument("--iters", type=int, default=20)
    r.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    return prepare(args) if args.command == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())
