"""NaN and infinities through compiled code (test/e2e/nonfinite.test; needs torch): each
module is exported live (torch.export) and captured (tgc_capture), each compiled with
`tgc compile`, bound with tgc.load and called on inputs that hold NaN, +inf, -inf, signed zeros and ordinary
values. Every output must match eager float32: NaN where eager has NaN, the same
infinities, the same indices (argmax of a row with a NaN is the NaN's), values within
rtol 1e-5.

    python nonfinite.py TGC WORKDIR
"""
import itertools
import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tgc-capture"))

import tgc  # noqa: E402
import tgc_capture  # noqa: E402

TGC, WORK = sys.argv[1:3]
NAN, INF = float("nan"), float("inf")


ELEMENTWISE = {  # (x, y): activations, clamps, math, comparisons, NaN-aware binaries
    "relu": lambda x, y: F.relu(x), "relu6": lambda x, y: F.relu6(x),
    "leaky_relu": lambda x, y: F.leaky_relu(x, 0.1), "hardtanh": lambda x, y: F.hardtanh(x),
    "clamp": lambda x, y: x.clamp(-1.5, 2.0), "clamp_min": lambda x, y: x.clamp_min(0.5),
    "clamp_max": lambda x, y: x.clamp_max(0.5), "sigmoid": lambda x, y: torch.sigmoid(x),
    "tanh": lambda x, y: torch.tanh(x),
    # Eager's gelu(+inf) is inf on its scalar path and NaN on its vector path (its erf
    # gives NaN there), so +inf is left out of gelu's input; tgc gives inf.
    "gelu": lambda x, y: F.gelu(x.masked_fill(x == INF, 0.0)),
    "gelu_tanh": lambda x, y: F.gelu(x, approximate="tanh"), "silu": lambda x, y: F.silu(x),
    "elu": lambda x, y: F.elu(x), "softplus": lambda x, y: F.softplus(x),
    "hardswish": lambda x, y: F.hardswish(x),
    "hardsigmoid": lambda x, y: F.hardsigmoid(x),
    "exp": lambda x, y: x.exp(), "log": lambda x, y: x.log(), "sqrt": lambda x, y: x.sqrt(),
    "rsqrt": lambda x, y: x.rsqrt(), "reciprocal": lambda x, y: x.reciprocal(),
    "div": lambda x, y: x / y, "abs": lambda x, y: x.abs(), "sign": lambda x, y: x.sign(),
    "floor": lambda x, y: x.floor(), "round": lambda x, y: x.round(),
    "pow": lambda x, y: x.pow(2.5), "pow_tensor": lambda x, y: x.abs().pow(y),
    "atan2": lambda x, y: torch.atan2(x, y), "maximum": lambda x, y: torch.maximum(x, y),
    "minimum": lambda x, y: torch.minimum(x, y),
    "new_full": lambda x, y: x + x.new_full(x.shape, 0.5),
    "new_empty": lambda x, y: y.new_empty(y.shape).fill_(2.0) * x,
    "where": lambda x, y: torch.where(x.isnan(), y, x),
    "nan_to_num": lambda x, y: torch.nan_to_num(x),
    "nan_to_num_args": lambda x, y: torch.nan_to_num(x, nan=7.0, posinf=1e3, neginf=-1e3),
    "isinf": lambda x, y: x.isinf(),
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
    "ge": lambda x, y: x >= y, "mul_zero": lambda x, y: x * 0.0,
    "mish": lambda x, y: F.mish(x), "logsigmoid": lambda x, y: F.logsigmoid(x),
    "fmax": lambda x, y: torch.fmax(x, y), "fmin": lambda x, y: torch.fmin(x, y),
    "isfinite": lambda x, y: x.isfinite(),
    "isfinite_int": lambda x, y: torch.isfinite(x.isnan().long()),
}

REDUCTIONS = {  # (x,): over rows with a NaN, an infinity of each sign, both, or neither
    "sum": lambda x: x.sum(1), "mean": lambda x: x.mean(1), "prod": lambda x: x.prod(1),
    "amax": lambda x: x.amax(1), "amin": lambda x: x.amin(1),
    "max": lambda x: x.max(1).values, "max_indices": lambda x: x.max(1).indices,
    "min": lambda x: x.min(1).values, "min_indices": lambda x: x.min(1).indices,
    "argmax": lambda x: x.argmax(1), "argmin": lambda x: x.argmin(1),
    "max_all": lambda x: x.max(), "var": lambda x: x.var(1), "std": lambda x: x.std(1),
    "norm": lambda x: torch.linalg.vector_norm(x, dim=1),
    "norm_inf": lambda x: torch.linalg.vector_norm(x, ord=INF, dim=1),
    "logsumexp": lambda x: x.logsumexp(1), "softmax": lambda x: x.softmax(1),
    "log_softmax": lambda x: x.log_softmax(1), "cumsum": lambda x: x.cumsum(1),
    "cumprod": lambda x: x.cumprod(1),
    "any_nan": lambda x: x.isnan().any(1),
    "nansum": lambda x: x.nansum(1), "nansum_all": lambda x: torch.nansum(x),
    "nansum_keepdim": lambda x: torch.nansum(x, dim=(0, 1), keepdim=True),
}

LAYERS = {  # (module, x, image): layers whose window or row holds a NaN or an infinity
    "layer_norm": lambda m, x, image: m.norm(x), "linear": lambda m, x, image: m.linear(x),
    "matmul": lambda m, x, image: x @ x.t(),
    "max_pool": lambda m, x, image: F.max_pool2d(image, 2),
    "avg_pool": lambda m, x, image: F.avg_pool2d(image, 2),
    "batch_norm": lambda m, x, image: m.bn(image),
    "masked_softmax": lambda m, x, image: x.masked_fill(x.isnan(), -INF).softmax(-1),
    "topk": lambda m, x, image: x.topk(2, dim=1).values,
    "sort": lambda m, x, image: x.sort(1).values,
    "sort_indices": lambda m, x, image: x.sort(1).indices,
    "adaptive_max_pool": lambda m, x, image: F.adaptive_max_pool2d(image, (3, 2)),
    "adaptive_max_pool_indices": lambda m, x, image: F.adaptive_max_pool2d(
        image, 1, return_indices=True)[1],
}


class Functions(nn.Module):
    """Returns each function of `ops` of the arguments, in order."""

    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def forward(self, *args):
        return tuple(op(*args) for op in self.ops.values())


class Layers(nn.Module):
    """The functions of LAYERS, given this module's layers."""

    def __init__(self, ops=LAYERS):
        super().__init__()
        self.ops = ops
        self.norm = nn.LayerNorm(6)
        self.linear = nn.Linear(6, 4)
        self.bn = nn.BatchNorm2d(2)

    def forward(self, x, image):
        return tuple(op(self, x, image) for op in self.ops.values())


def rows():
    """A 6x6 input: each row has a different mix of NaN, infinities and signed zeros."""
    return torch.tensor([
        [1.0, -2.0, 0.5, 3.0, -0.0, 0.0],
        [1.0, NAN, -2.0, 0.25, 4.0, -1.0],
        [INF, 1.0, -3.0, 0.5, 2.0, 0.0],
        [-INF, 1.0, 2.0, -0.5, 3.0, 0.0],
        [INF, -INF, 1.0, 2.0, 0.0, -1.0],
        [NAN, INF, -INF, -0.0, 1.0, 2.0],
    ])


def cases():
    x = rows()
    y = torch.tensor([2.0, 0.0, -0.0, NAN, INF, -INF]).expand(6, 6).t().contiguous()
    image = torch.cat([x, -x.flip(0)]).reshape(1, 2, 6, 6)
    return [("elementwise", Functions(ELEMENTWISE), (x, y)),
            ("reductions", Functions(REDUCTIONS), (x,)), ("layers", Layers().eval(), (x, image))]


def mismatch(actual, expected):
    """None when `actual` is eager's `expected`, else what differs."""
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return f"{actual.dtype}{list(actual.shape)} vs {expected.dtype}{list(expected.shape)}"
    if not expected.is_floating_point():
        return None if torch.equal(actual, expected) else f"{actual} vs {expected}"
    try:
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True)
    except AssertionError:
        return f"{actual.tolist()} vs {expected.tolist()}"
    return None


def main():
    torch.manual_seed(0)
    failed = False
    for (name, model, args), frontend in itertools.product(cases(), ("export", "trace")):
        if frontend == "export":
            path = os.path.join(WORK, name + ".pt2")
            torch.export.save(torch.export.export(model, args), path)
        else:
            path = os.path.join(WORK, name + ".trace")
            tgc_capture.capture(model, args, path)
        so = os.path.join(WORK, f"{name}.{frontend}.so")
        subprocess.run([TGC, "compile", path, "-o", so], check=True)
        expected = model(*args)
        actual = tgc.load(so, model)(*args)
        wrong = {key: mismatch(a, e) for key, a, e in zip(model.ops, actual, expected)}
        wrong = {key: why for key, why in wrong.items() if why}
        failed |= bool(wrong)
        print(f"{name} ({frontend}): {len(expected)} outputs, {len(wrong)} differ from eager")
        for key, why in wrong.items():
            print(f"  {key}: {why}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
