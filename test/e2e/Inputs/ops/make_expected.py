"""Inputs and PyTorch's results for the hand-written op tests in this directory.

Each `<case>.mlir` here is compiled and run by test/e2e/ops.test on
`<case>.inputs.safetensors`; its results (`output.N`, and `state.<name>` for state it
writes) must match `<case>.expected.safetensors`, which this script computes with
PyTorch's own kernels (ATen backward ops, autograd), or for random numbers, with an
independent Python Philox4x32-10 checked against Random123's known answer. Run with a
Python that has torch and safetensors:

    python test/e2e/Inputs/ops/make_expected.py [case...]
"""
import os
import sys

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
aten = torch.ops.aten


def conv_backward(gen):
    """Gradients of F.conv2d through aten.convolution_backward."""
    def case(n, c, f, groups, size, kernel, stride, padding, dilation):
        x = torch.randn(n, c, *size, generator=gen)
        w = torch.randn(f, c // groups, *kernel, generator=gen)
        out = torch.nn.functional.conv2d(x, w, None, stride, padding, dilation, groups)
        g = torch.randn(out.shape, generator=gen)
        gi, gw, _ = aten.convolution_backward(g, x, w, None, stride, padding, dilation,
                                              False, [0, 0], groups, [True, True, False])
        return g, w, x, gi, gw

    g1, w1, x1, gi1, gw1 = case(3, 3, 4, 1, (8, 8), (3, 3), [1, 1], [0, 0], [1, 1])
    g2, w2, x2, gi2, gw2 = case(2, 4, 6, 2, (10, 10), (3, 3), [2, 3], [1, 2], [2, 1])
    inputs = {"g1": g1, "w1": w1, "x1": x1, "g2": g2, "w2": w2, "x2": x2}
    return inputs, [gi1, gw1, gi2, gw2]


def conv(gen):
    """F.conv2d where the im2col columns of the whole batch exceed 1 MiB (tgc runs the
    batch in chunks): strided along the width, and with a bias."""
    F = torch.nn.functional
    x1 = torch.randn(4, 2, 32, 64, generator=gen)
    w1 = torch.randn(2, 2, 7, 7, generator=gen)
    x2 = torch.randn(3, 4, 40, 40, generator=gen)
    w2 = torch.randn(2, 4, 5, 5, generator=gen)
    b2 = torch.randn(2, generator=gen)
    inputs = {"x1": x1, "w1": w1, "x2": x2, "w2": w2, "b2": b2}
    return inputs, [F.conv2d(x1, w1, stride=(1, 2)), F.conv2d(x2, w2, b2)]


def depthwise(gen):
    """Depthwise F.conv2d (tgc: a sum of the kernel's taps) and its gradients through
    aten.convolution_backward, and a grouped one with two filters per channel."""
    inputs, outputs = {}, []

    def case(i, n, c, size, kernel, stride, padding, dilation, bias=False):
        x = torch.randn(n, c, *size, generator=gen)
        w = torch.randn(c, 1, *kernel, generator=gen)
        b = torch.randn(c, generator=gen) if bias else None
        out = torch.nn.functional.conv2d(x, w, b, stride, padding, dilation, c)
        g = torch.randn(out.shape, generator=gen)
        gi, gw, _ = aten.convolution_backward(g, x, w, None, stride, padding, dilation,
                                              False, [0, 0], c, [True, True, False])
        inputs.update({f"x{i}": x, f"w{i}": w, f"g{i}": g})
        if bias:
            inputs[f"b{i}"] = b
        outputs.extend([out, gi, gw])

    case(1, 3, 6, (11, 13), (3, 3), [2, 2], [1, 1], [1, 1], bias=True)
    case(2, 2, 5, (9, 9), (5, 5), [1, 1], [2, 2], [1, 2])
    case(3, 2, 3, (8, 20), (3, 3), [2, 3], [1, 2], [1, 2])
    x4 = torch.randn(2, 3, 6, 6, generator=gen)
    w4 = torch.randn(6, 1, 3, 3, generator=gen)
    inputs.update({"x4": x4, "w4": w4})
    outputs.append(torch.nn.functional.conv2d(x4, w4, groups=3))
    return inputs, outputs


def attention(gen):
    """F.scaled_dot_product_attention (tgc: one fused kernel with an online softmax over
    tiles of keys): causal; a float mask broadcast over heads with a scale; a boolean
    mask over [L, S] on 3-d operands (every query sees key 0)."""
    F = torch.nn.functional
    r = lambda *s: torch.randn(*s, generator=gen)
    q1, k1, v1 = r(1, 2, 160, 8), r(1, 2, 160, 8), r(1, 2, 160, 8)
    q2, k2, v2, m2 = r(1, 2, 40, 16), r(1, 2, 150, 16), r(1, 2, 150, 24), r(1, 1, 40, 150)
    q3, k3, v3 = r(1, 40, 16), r(1, 70, 16), r(1, 70, 16)
    m3 = torch.rand(40, 70, generator=gen) < 0.7
    m3[:, 0] = True
    inputs = {"q1": q1, "k1": k1, "v1": v1, "q2": q2, "k2": k2, "v2": v2, "m2": m2,
              "q3": q3, "k3": k3, "v3": v3, "m3": m3}
    return inputs, [F.scaled_dot_product_attention(q1, k1, v1, is_causal=True),
                    F.scaled_dot_product_attention(q2, k2, v2, m2, scale=0.3),
                    F.scaled_dot_product_attention(q3, k3, v3, m3)]


def losses(gen):
    """F.cross_entropy in its forms, aten.nll_loss_forward and nll_loss_backward."""
    F = torch.nn.functional
    x = torch.randn(4, 5, generator=gen)
    t = torch.tensor([1, 2, 4, 0])  # 2 is ignore_index below
    w = torch.rand(5, generator=gen) + 0.5
    img = torch.randn(2, 5, 3, generator=gen)
    timg = torch.randint(0, 5, (2, 3), generator=gen)
    p = torch.rand(4, 5, generator=gen).softmax(1)
    g = torch.tensor(1.7)
    gn = torch.randn(4, generator=gen)
    out, total = aten.nll_loss_forward(x, t, w, 1, 2)
    # N-d nll_loss has no ATen forward/backward of its own: autograd through F.nll_loss.
    img_leaf = img.clone().requires_grad_()
    F.nll_loss(img_leaf, timg, reduction="sum").backward(g)
    outputs = [
        F.cross_entropy(x, t),
        F.cross_entropy(x, t, w, reduction="none", ignore_index=2),
        F.cross_entropy(x, t, w, ignore_index=2),
        F.cross_entropy(img, timg, reduction="sum"),
        F.cross_entropy(x, p, w),
        out,
        total,
        aten.nll_loss_backward(g, x, t, w, 1, 2, total),
        aten.nll_loss_backward(gn, x, t, None, 0, -100, total),
        img_leaf.grad,
    ]
    inputs = {"x": x, "t": t, "w": w, "img": img, "timg": timg, "p": p, "g": g, "gn": gn}
    return inputs, outputs


def embedding(gen):
    """F.embedding and aten.embedding_dense_backward (repeated and padding indices)."""
    w = torch.randn(10, 4, generator=gen)
    i = torch.tensor([[0, 3, 3, 9, 1], [2, 0, 3, 5, 5], [7, 7, 7, 0, 8]])
    g = torch.randn(3, 5, 4, generator=gen)
    outputs = [
        torch.nn.functional.embedding(i, w, padding_idx=0),
        aten.embedding_dense_backward(g, i, 10, 0, False),
        aten.embedding_dense_backward(g, i, 10, -1, False),
    ]
    return {"w": w, "i": i, "g": g}, outputs


def philox_first_word(counter, key):
    """Philox4x32-10 (Random123), first output word, for a 64-bit counter (c2 = c3 = 0)
    and a 64-bit key: tgc.rand_bernoulli's generator, written independently."""
    mask32 = 0xFFFFFFFF
    c = [counter & mask32, counter >> 32, 0, 0]
    k = [key & mask32, (key >> 32) & mask32]
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & mask32, (k[1] + 0xBB67AE85) & mask32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & mask32, p1 & mask32,
             ((p0 >> 32) ^ c[3] ^ k[1]) & mask32, p0 & mask32]
    return c[0]


# Random123's known answer for counter 0, key 0.
assert philox_first_word(0, 0) == 0x6627E8D5


def bernoulli(seed, offset, shape, p):
    """tgc.rand_bernoulli: element i is kept when (philox(offset + i) >> 8) * 2^-24 < p."""
    n = 1
    for s in shape:
        n *= s
    keep = [(philox_first_word(offset + i, seed) >> 8) * 2.0**-24 < p for i in range(n)]
    return torch.tensor(keep).reshape(shape)


def dropout(gen):
    """Statistics of a large dropout (kept fraction 1 - p = 0.7, within the test's
    atol), and the mask of a second one drawn after it."""
    y = torch.randn(64, generator=gen)
    outputs = [torch.tensor(0.7), torch.tensor(True), bernoulli(0, 100000, [64], 0.5)]
    return {"y": y}, outputs, {"state.tgc.rng_state": torch.tensor([0, 100064])}


def rand(gen):
    """rand_bernoulli on given states."""
    s1, s2 = torch.tensor([0, 100000]), torch.tensor([12345, 7])
    outputs = [bernoulli(0, 100000, [64], 0.5), bernoulli(12345, 7 + 3, [8, 8], 0.25)]
    return {"s1": s1, "s2": s2}, outputs


def pool_backward(gen):
    """max_pool2d / avg_pool2d gradients through autograd."""
    F = torch.nn.functional
    x = torch.randn(2, 3, 9, 9, generator=gen)

    def grad(pool, g):
        leaf = x.clone().requires_grad_()
        pool(leaf).backward(g)
        return leaf.grad

    g1 = torch.randn(2, 3, 4, 4, generator=gen)
    g2 = torch.randn(2, 3, 5, 5, generator=gen)
    g3 = torch.randn(2, 3, 4, 4, generator=gen)
    outputs = [
        grad(lambda t: F.max_pool2d(t, 3, 2, 1, dilation=2, ceil_mode=True), g1),
        grad(lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False), g2),
        grad(lambda t: F.avg_pool2d(t, 2, divisor_override=3), g3),
    ]
    return {"x": x, "g1": g1, "g2": g2, "g3": g3}, outputs


def math(gen):
    """Transcendental functions over their whole fp32 domain (tgc computes exp, log, tanh
    and erf as inline polynomials): from denormals and tiny values, where the
    approximations lean on special cases, through the ranges models use, to overflow."""
    mag = torch.cat([torch.tensor([0.0, 1e-40, 1e-30, 1e-12, 1e-7, 3e-5]),
                     torch.logspace(-6, 1.9, 2000), torch.tensor([88.7, 89.0, 100.0, 1e30])])
    x = torch.cat([mag, -mag, torch.randn(4000, generator=gen) * 4])
    pos = torch.cat([torch.tensor([1e-40, 1.2e-38, 1e-20, 1e-7, 0.5, 1.0, 1.0 + 1e-6, 2.0,
                                   1e20, 3e38]),
                     torch.logspace(-30, 30, 2000)])
    F = torch.nn.functional
    outputs = [torch.exp(x), torch.tanh(x), torch.erf(x), torch.sigmoid(x), F.silu(x),
               F.gelu(x), F.gelu(x, approximate="tanh"), torch.log(pos)]
    return {"x": x, "pos": pos}, outputs


def cumsum(gen):
    """cumsum of f32 (middle and last dimension), int64 and bool; the gradient of
    cumsum(x, 1) through autograd (tgc's reverse cumsum)."""
    x = torch.randn(3, 5, 7, generator=gen)
    d = torch.randn(5, 9, generator=gen)
    i = torch.randint(-50, 50, (4, 6), generator=gen)
    m = torch.rand(2, 8, generator=gen) > 0.5
    g = torch.randn(3, 5, 7, generator=gen)
    leaf = x.clone().requires_grad_()
    torch.cumsum(leaf, 1).backward(g)
    outputs = [torch.cumsum(x, 1), torch.cumsum(d, -1), torch.cumsum(i, 0), torch.cumsum(m, 1),
               leaf.grad]
    return {"x": x, "d": d, "i": i, "m": m, "g": g}, outputs


def indexing(gen):
    """What LLM mask building uses: aten.index.Tensor with broadcasting index tensors
    (negative ones too) on the leading dimensions, torch.diff (with prepend; bool; n = 2),
    and the bitwise ops of bool and int64 tensors."""
    x = torch.randn(4, 6, 5, generator=gen)
    rows = torch.randint(-4, 4, (3, 1), generator=gen)
    cols = torch.randint(-6, 6, (1, 2), generator=gen)
    p = torch.randint(0, 10, (2, 7), generator=gen)
    first = torch.randint(0, 10, (2, 1), generator=gen)
    m = torch.rand(3, 8, generator=gen) > 0.5
    n = torch.rand(3, 8, generator=gen) > 0.5
    i = torch.randint(-100, 100, (3, 8), generator=gen)
    j = torch.randint(-100, 100, (8,), generator=gen)
    outputs = [x[rows, cols], x[rows], torch.diff(p, dim=-1, prepend=first), torch.diff(m, dim=1),
               torch.diff(p.to(torch.float32), n=2, dim=1), m & n, m | n, m ^ n, ~m, i & j,
               i | j, i ^ j, ~i]
    inputs = {"x": x, "rows": rows, "cols": cols, "p": p, "first": first, "m": m, "n": n,
              "i": i, "j": j}
    return inputs, outputs


def division(gen):
    """Rounded division: torch.floor_divide and div(rounding_mode="trunc") of int64 tensors
    of both signs, a broadcast divisor row, the same of f32 tensors, and the quotients ATen
    rejects or x86 traps on, which tgc defines."""
    a = torch.randint(-100, 100, (4, 8), generator=gen)
    b = torch.randint(1, 12, (4, 8), generator=gen) * (torch.randint(0, 2, (4, 8),
                                                                     generator=gen) * 2 - 1)
    r = torch.tensor([1, -1, 2, -2, 3, -3, 7, -7])
    x = torch.randn(4, 8, generator=gen) * 10
    y = torch.randn(4, 8, generator=gen)
    # Where ATen raises (a zero divisor) or x86 traps (INT64_MIN // -1), tgc's rule
    # (docs/ops.md): 0, and -x wrapping.
    lo = -2**63
    n = torch.tensor([7, -7, lo, lo, 5, lo, 0, 9])
    z = torch.tensor([0, 0, -1, 0, -1, 1, 0, 2])
    safe = torch.where((z == 0) | (z == -1), torch.ones_like(z), z)
    edge = torch.where(z == 0, torch.zeros_like(n), torch.where(z == -1, -n, n // safe))
    outputs = [torch.floor_divide(a, b), torch.div(a, b, rounding_mode="trunc"), a // r,
               torch.floor_divide(x, y), torch.div(x, y, rounding_mode="trunc"), edge]
    return {"a": a, "b": b, "r": r, "x": x, "y": y, "n": n, "z": z}, outputs


def moe(gen):
    """histc as mixture-of-experts routing uses it (integer-valued ids over [0, E - 1],
    one id out of range, one NaN) and over a fractional range; grouped_mm by PyTorch's own
    kernel (torch._grouped_mm) with an empty group and two rows after the last offset,
    which are 0 (the kernel leaves them unwritten: they are zeroed here)."""
    ids = torch.tensor([0, 0, 1, 3, 3, 3, 2, 1, 5, 0, float("nan"), 3.0])
    v = torch.randn(3, 5, generator=gen)
    a = torch.randn(10, 6, generator=gen)
    w = torch.randn(4, 6, 3, generator=gen)
    offs = torch.tensor([3, 3, 6, 8], dtype=torch.int32)
    out = torch.zeros(10, 3)
    start = 0
    for g, end in enumerate(offs.tolist()):
        out[start:end] = a[start:end] @ w[g]
        start = end
    outputs = [torch.histc(ids, bins=4, min=0, max=3), torch.histc(v, bins=7, min=-1.5, max=2.0),
               out]
    return {"ids": ids, "v": v, "a": a, "w": w, "offs": offs}, outputs


CASES = {
    "conv": conv,
    "depthwise": depthwise,
    "attention": attention,
    "conv_backward": conv_backward,
    "losses": losses,
    "embedding": embedding,
    "dropout": dropout,
    "rand": rand,
    "pool_backward": pool_backward,
    "math": math,
    "cumsum": cumsum,
    "indexing": indexing,
    "division": division,
    "moe": moe,
}


def main():
    only = sys.argv[1:]  # case names; all cases when none
    for name, make in CASES.items():
        if only and name not in only:
            continue
        gen = torch.Generator().manual_seed(0)
        inputs, outputs, *state = make(gen)
        save_file({k: v.contiguous() for k, v in inputs.items()},
                  os.path.join(HERE, f"{name}.inputs.safetensors"))
        expected = {f"output.{i}": v.contiguous() for i, v in enumerate(outputs)}
        expected.update(*state)
        save_file(expected, os.path.join(HERE, f"{name}.expected.safetensors"))


if __name__ == "__main__":
    main()
