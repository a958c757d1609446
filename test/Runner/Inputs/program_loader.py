"""tgc.load on programs with graph breaks: the loader runs them through libtgc_runner.so
($TGC_RUNNER_LIBRARY), the executor `tgc run` uses, and performs the call steps in
Python. Each program of the conformance suite runs on the live function or module it was
captured from and is compared with eager PyTorch (fp32, rtol 1e-4, atol 1e-5).

    program_loader.py TGC FIXTURES WORK        the checks; prints `NAME ok`
    program_loader.py TGC FIXTURES WORK --load-only   tgc.load of one program (errors)

Failures are `error: ...` lines with exit code 1."""

import copy
import importlib.util
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))

import tgc  # noqa: E402

TGC, FIXTURES, WORK = sys.argv[1:4]
CONFORMANCE = os.path.join(FIXTURES, "capture", "conformance")


def fail(message):
    print(f"error: {message}")
    sys.exit(1)


def compile_program(name, *flags):
    so = os.path.join(WORK, name + ".so")
    result = subprocess.run([TGC, "compile", os.path.join(CONFORMANCE, name + ".trace"),
                             "--allow-graph-breaks", *flags, "-o", so],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"tgc compile {name}: {result.stderr}")
    return so


def import_program(name, source=None):
    """The program's module, fresh, under its own name (guards read its globals)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(CONFORMANCE, (source or name) + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def close(a, b, what):
    if not torch.allclose(a.detach(), b.detach(), rtol=1e-4, atol=1e-5):
        fail(f"{what}: max difference {(a - b).abs().max().item()}")


def inputs_of(name, key=""):
    return load_file(os.path.join(CONFORMANCE, f"{name}{key}.inputs.safetensors"))


def check_branch():
    """Both outcomes of a branch, the view that crosses the break (`v` writes `a`)."""
    so = compile_program("gb_break_branch")
    f = import_program("gb_break_branch").f
    compiled = tgc.load(so, f)
    if type(compiled).__name__ != "CompiledProgram":
        fail(f"tgc.load returned {compiled!r}")
    for key in ("", ".neg"):
        t = inputs_of("gb_break_branch", key)
        for got, want in zip(compiled(t["x"].clone(), t["y"].clone()),
                             f(t["x"].clone(), t["y"].clone())):
            close(got, want, f"gb_break_branch{key}")
    print("gb_break_branch ok")


def check_print():
    """print runs in Python between the graphs; the mutated input and the replay."""
    so = compile_program("gb_break_print")
    eager = import_program("gb_break_print_eager", "gb_break_print")
    live = import_program("gb_break_print")
    x = inputs_of("gb_break_print")["x"]
    mine, theirs = x.clone(), x.clone()
    out = tgc.load(so, live.f)(mine)
    sys.stdout.flush()
    close(out, eager.f(theirs), "gb_break_print")
    close(mine, theirs, "gb_break_print mutated x")
    if live.CALLS != eager.CALLS:
        fail(f"gb_break_print: CALLS is {live.CALLS}, eager's {eager.CALLS}")
    print("gb_break_print ok")


def check_module():
    """A buffer written before the break and read after it, over two calls."""
    so = compile_program("gb_break_module")
    torch.manual_seed(0)
    live = import_program("gb_break_module").make_model()
    eager = copy.deepcopy(live)
    compiled = tgc.load(so, live)
    x = inputs_of("gb_break_module")["x"]
    for step in range(2):
        close(compiled(x), eager(x), f"gb_break_module call {step}")
        close(live.count, eager.count, f"gb_break_module count {step}")
    print("gb_break_module ok")


def check_train():
    """One autograd.Function over the program: p.grad and x.grad as eager leaves them."""
    so = compile_program("gb_break_train", "--train")
    torch.manual_seed(0)
    live = import_program("gb_break_train").make_model()
    eager = copy.deepcopy(live)
    compiled = tgc.load(so, live, train=True)
    for key in ("", ".other"):
        x = inputs_of("gb_break_train", key)["x"]
        mine, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
        compiled(mine).sum().backward()
        eager(theirs).sum().backward()
        close(mine.grad, theirs.grad, f"gb_break_train{key} x.grad")
        for (name, p), q in zip(live.named_parameters(), eager.parameters()):
            close(p.grad, q.grad, f"gb_break_train{key} {name}.grad")
    print("gb_break_train ok")


def main():
    os.makedirs(WORK, exist_ok=True)
    os.chdir(CONFORMANCE)  # code filenames in the traces are relative
    if "--load-only" in sys.argv:
        try:
            tgc.load(compile_program("gb_break_branch"), import_program("gb_break_branch").f)
        except tgc.TgcError as e:
            fail(e)
        return
    check_branch()
    check_print()
    check_module()
    check_train()
    print("all ok")


if __name__ == "__main__":
    main()
