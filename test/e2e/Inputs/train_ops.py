"""Training through ops of the training IR (test/e2e/train-ops.test; needs torch): each
small module is exported live (torch.export, training IR) and captured (tgc_capture,
train=True), each compiled with
`tgc compile --train`, bound with tgc.load(train=True), and one step (loss mean(out^2))
is compared with eager float32: the output and every parameter's gradient (rtol 1e-4 of
the largest magnitude), all of them finite.

    python train_ops.py TGC WORKDIR
"""
import copy
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

# The inputs below are drawn once per run from this seed, so that a run repeats.
torch.manual_seed(1234)

TGC, WORK = sys.argv[1:3]


class VectorNorm(nn.Module):
    """F.normalize (vector_norm, clamp_min, expand_as) and raw norms of a parameter with
    all-zero rows: ATen's norm backward gives 0 there, not NaN."""

    def __init__(self):
        super().__init__()
        self.z = nn.Parameter(torch.zeros(3, 4))
        with torch.no_grad():
            self.z[1] = torch.randn(4)
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        a = F.normalize(self.lin(x), dim=-1)
        return (a.sum() + torch.linalg.vector_norm(self.z, dim=1).sum()
                + torch.linalg.vector_norm(self.z, ord=3, dim=1).sum()
                + torch.linalg.vector_norm(self.z, ord=float("inf")) + a * 0)


class Einsum(nn.Module):
    """Attention-style einsums, a bilinear form of three operands, an ellipsis and a
    diagonal (a subscript repeated within an operand)."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.w = nn.Parameter(torch.randn(3, 8, 8) / 8)

    def forward(self, x):
        q = self.q(x).view(2, 5, 2, 4)
        k = self.k(x).view(2, 5, 2, 4)
        s = torch.einsum("bqhd,bkhd->bhqk", q, k).softmax(-1)
        o = torch.einsum("bhqk,bkhd->bqhd", s, k).reshape(2, 5, 8)
        return torch.einsum("bn,anm,bm->ba", o[:, 0], self.w, o[:, 1]) + torch.einsum(
            "...ij,...ij->...i", o, x).sum(-1, keepdim=True) + torch.einsum(
            "aii,bi->ba", self.w, o[:, 2])


class Resample(nn.Module):
    """Bicubic and trilinear upsampling, unbind."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.vol = nn.Parameter(torch.randn(1, 2, 2, 3, 3))

    def forward(self, x):
        y = F.interpolate(self.conv(x), size=(11, 13), mode="bicubic", align_corners=False)
        v = F.interpolate(self.vol, scale_factor=2.0, mode="trilinear", align_corners=True)
        a, b = y.unbind(1)[:2]
        return a.sum((1, 2)) * b.mean() + v.sum()


class Square(nn.Module):
    """torch.square (aten.square in the training IR)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        return self.fc(x).square().mean(-1) + torch.square(x).sum(-1)


class Unary(nn.Module):
    """The unary math functions, ELU and softplus in both pieces, each on its domain."""

    def __init__(self):
        super().__init__()
        self.unit = nn.Parameter(torch.rand(6) * 1.6 - 0.8)  # inside (-1, 1)
        self.above = nn.Parameter(torch.rand(6) * 2 + 1.2)   # above 1
        self.any = nn.Parameter(torch.randn(6))

    def forward(self, x):
        u, a, z = self.unit, self.above, self.any
        terms = [u.tan(), u.asin(), u.acos(), u.atan(), u.atanh(), z.sinh(), z.cosh(),
                 z.asinh(), a.acosh(), z.expm1(), u.log1p(), a.log2(), a.log10(),
                 F.elu(z * 2, alpha=0.7), F.selu(z), F.celu(z, alpha=1.3), F.softplus(z),
                 F.softplus(z * 10, beta=2, threshold=5)]
        return torch.stack(terms) * x


class NanAware(nn.Module):
    """mish, log_sigmoid, fmax/fmin (NaN in one operand), nansum and
    adaptive_max_pool2d (an output size that divides the input's), and their derivatives."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.other = nn.Parameter(torch.randn(8))

    def forward(self, x):
        h = self.fc(x)
        nan = torch.where(torch.arange(8) % 3 == 0, float("nan"), 0.0)
        a = F.mish(h * 3) + F.logsigmoid(h * 4)
        b = torch.fmax(h, self.other + nan) + torch.fmin(h + nan, self.other)
        c = F.adaptive_max_pool2d(h.reshape(-1, 1, 4, 2), (2, 1)).reshape(-1, 2).sum(-1)
        return a.sum(-1) + torch.nansum(b * h + nan, -1) + c


class Composites(nn.Module):
    """Ops the frontends build from others: rms_norm, glu, prelu (one slope per
    channel), cosine_similarity, pixel_shuffle/unshuffle, channel_shuffle, instance_norm
    (affine), threshold and one_hot, and their derivatives."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 8, 3, padding=1)
        self.prelu = nn.PReLU(8)
        self.norm = nn.InstanceNorm2d(2, affine=True)
        self.rms = nn.RMSNorm(8)
        self.fc = nn.Linear(8, 16)

    def forward(self, x):
        h = self.prelu(self.conv(x))                                  # [N, 8, 4, 4]
        s = F.pixel_unshuffle(F.pixel_shuffle(h, 2) * 1.5, 2)         # [N, 8, 4, 4]
        s = F.channel_shuffle(s, 2)
        t = self.norm(F.pixel_shuffle(s, 2))                           # [N, 2, 8, 8]
        v = self.rms(t[:, :, :2, :2].reshape(-1, 8))                  # [N, 8]
        g = F.glu(self.fc(v), -1)                                     # [N, 8]
        c = F.cosine_similarity(g, v, dim=1)
        hot = F.one_hot(v.argmax(1), 8).to(v.dtype)
        return F.threshold(g, 0.1, -2.0).sum(1) + c + (hot * g).sum(1) + t.sum((1, 2, 3))


class Losses(nn.Module):
    """The losses ATen composes of other ops, which torch.nn.functional calls through
    torch's bindings: soft_margin, kl_div (probability targets with zeros under
    batchmean, log targets), hinge_embedding, margin_ranking, poisson_nll (log input with
    the Stirling term, probability input), cosine_embedding, triplet_margin (swap),
    pairwise_distance, hardshrink and softshrink, with each reduction; eye (square,
    rectangular) and rrelu in evaluation; and their derivatives."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 12)
        self.register_buffer("sign", torch.tensor([1.0, -1.0, -1.0, 1.0]))
        self.register_buffer("probs", torch.tensor([[0.5, 0.0, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0],
                                                    [0.1, 0.2, 0.3, 0.4], [0.25] * 4]))
        self.register_buffer("counts", torch.tensor([[0.0, 1.0, 3.0, 7.0], [2.0, 0.0, 5.0, 1.0],
                                                     [1.0, 1.0, 0.0, 2.0], [4.0, 2.0, 1.0, 0.0]]))

    def forward(self, x):
        h = self.fc(x)                                                # [4, 12]
        a, b, c = h[:, :4], h[:, 4:8], h[:, 8:]
        y = self.sign
        signs = y.view(4, 1) * y.view(1, 4)
        losses = [
            F.soft_margin_loss(a, signs),
            F.soft_margin_loss(b, signs, reduction="none").sum(1).mean(),
            F.kl_div(F.log_softmax(a, -1), self.probs, reduction="batchmean"),
            F.kl_div(F.log_softmax(a, -1), F.log_softmax(c, -1), reduction="sum", log_target=True),
            F.hinge_embedding_loss(a, signs, margin=0.5),
            F.margin_ranking_loss(a[:, 0], b[:, 0], y, margin=0.2),
            F.poisson_nll_loss(a, self.counts, full=True),
            F.poisson_nll_loss(c.exp(), self.counts, log_input=False, reduction="sum"),
            F.cosine_embedding_loss(a, b, y, margin=0.1),
            F.triplet_margin_loss(a, b, c, margin=0.5, swap=True),
            F.pairwise_distance(a, b, p=1.5).sum(),
            F.hardshrink(h, 0.3).sum(),
            F.softshrink(h, 0.2).sum(),
            (a @ torch.eye(4) * 2 + torch.eye(4, 4 + 1)[:, 1:]).sum(),
            F.rrelu(h, 0.1, 0.3, training=False).sum(),
        ]
        return torch.stack(losses)


class Statistics(nn.Module):
    """The composites of several results (std_mean, var_mean, aminmax, median and
    nanmedian along a dim, kthvalue: sort positions gathered; cummax, cummin and
    logcumsumexp over the prefix pairs) and the math composites
    (cdist, kron, linalg.cross, renorm, erfinv, xlog1py, round(decimals), bucketize,
    matrix norms), and in-place forms of composites (addcmul_, lerp_) on an
    intermediate; and their derivatives."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 12)
        self.register_buffer("edges", torch.tensor([-1.0, 0.0, 0.5, 2.0]))

    def forward(self, x):
        h = self.fc(x)                                                # [4, 12]
        a, b = h[:, :6], h[:, 6:]
        s, m = torch.std_mean(a, dim=1)
        v, m0 = torch.var_mean(b, dim=0, correction=0, keepdim=True)
        lo, hi = torch.aminmax(a, dim=1)
        med = torch.median(b, dim=1)
        nmed = torch.nanmedian(a, dim=0, keepdim=True).values
        kth = torch.kthvalue(a, 2, dim=1)
        d = torch.cdist(a, b) + torch.cdist(a, b, p=1.0)
        k = torch.kron(a[:2, :2], b[:2, :3])
        c = torch.linalg.cross(a[:, :3], b[:, :3])
        r = torch.renorm(h, 2, 0, 1.0)
        e = torch.erfinv(torch.tanh(a) * 0.5) + torch.special.xlog1py(a, b.abs())
        q = torch.round(h * 3, decimals=1).detach() + torch.bucketize(h.detach(), self.edges)
        n = torch.linalg.matrix_norm(a.view(2, 2, 6)) + torch.linalg.matrix_norm(b, ord=1)
        t = h.clone()
        t.addcmul_(a.repeat(1, 2), b.repeat(1, 2), value=0.5)
        t.lerp_(h.tanh(), 0.25)
        scans = torch.cummax(a, 1).values.sum() + torch.cummin(b, 0).values.sum() + \
            torch.logcumsumexp(h, 1).sum()
        return (scans + s.sum() + m.sum() + v.sum() + m0.sum() + (hi - lo).sum() + med.values.sum()
                + med.indices.sum() + nmed.sum() + kth.values.sum() + d.sum() + k.sum()
                + c.sum() + r.sum() + e.sum() + q.sum() + n.sum() + t.sum(1))


class ErfinvNearZero(nn.Module):
    """erfinv at 0 and next to it, where (1 - x)(1 + x) rounds to 1: its derivative
    (sqrt(pi)/2 exp(erfinv(x)^2)) is finite there, as eager's, through the unused tail
    branch of the approximation."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(6))

    def forward(self, x):
        return torch.erfinv(x * self.scale) * 2


class Recurrent(nn.Module):
    """nn.LSTM (two layers, bidirectional) and nn.GRU (batch_first, no biases, a given
    initial state): aten.lstm.input / gru.input unrolled over the sequence; their
    parameters' gradients."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 3, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(6, 5, bias=False, batch_first=True)

    def forward(self, x):
        o, (h, c) = self.lstm(x)                                   # x: [T=5, B=2, 4]
        g, hg = self.gru(o.transpose(0, 1), h[-2:].mean(0, keepdim=True).repeat(1, 1, 2)[..., :5])
        return g.sum(1) + hg[0] + c.sum(0).sum(-1, keepdim=True)


class Unfold(nn.Module):
    """F.unfold (aten.im2col): kernel, dilation, padding and stride that differ per
    dimension, and an unbatched input; the gradient flows to the conv before it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 1)

    def forward(self, x):
        h = self.conv(x)
        a = F.unfold(h, kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
        b = F.unfold(h[0], kernel_size=2)
        return a.sum(-1) + b.sum(-1).mean()


class MaxPool1d(nn.Module):
    """F.max_pool1d (aten.max_pool1d in the training IR): stride, padding, dilation and
    ceil_mode, and an unbatched input; unbatched 2-d max and average pooling and 1-d
    average pooling."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 1)

    def forward(self, x):
        h = self.conv(x)
        a = F.max_pool1d(h, 3, stride=2, padding=1, dilation=2, ceil_mode=True)
        b = F.max_pool1d(h[0], 2)
        c = F.max_pool2d(h, (2, 3)) + F.avg_pool2d(h, 2, ceil_mode=True)[:, :, :3]
        d = F.avg_pool1d(h[1], 3, stride=2)
        return a.sum(-1) + b.sum(-1).mean() + c.sum() + d.mean()


class Scatter(nn.Module):
    """scatter of a tensor and of a value (PhiMoE's router masks this way): the written
    positions take no gradient from the tensor written into; src gets its own back."""

    def __init__(self):
        super().__init__()
        self.base = nn.Parameter(torch.randn(3, 5))
        self.src = nn.Parameter(torch.randn(3, 2))
        self.register_buffer("index", torch.tensor([[0, 3], [4, 1], [2, 0]]))

    def forward(self, x):
        a = self.base.scatter(1, self.index, self.src * x)
        b = self.base.scatter(1, self.index, -0.5)
        return a * b


CASES = [("vector_norm", VectorNorm, (torch.randn(2, 4),)),
         ("scatter", Scatter, (torch.randn(3, 2),)),
         ("max_pool1d", MaxPool1d, (torch.randn(2, 2, 11),)),
         ("unfold", Unfold, (torch.randn(2, 2, 7, 6),)),
         ("unary", Unary, (torch.randn(6),)),
         ("einsum", Einsum, (torch.randn(2, 5, 8),)),
         ("resample", Resample, (torch.randn(2, 3, 6, 7),)),
         ("square", Square, (torch.randn(4, 8),)),
         ("nan_aware", NanAware, (torch.randn(4, 8),)),
         ("composites", Composites, (torch.randn(3, 2, 4, 4),)),
         ("losses", Losses, (torch.randn(4, 6),)),
         ("statistics", Statistics, (torch.randn(4, 6),)),
         ("erfinv_near_zero", ErfinvNearZero, (torch.tensor([[0.0, 1e-8, -3e-5, 2e-4, -0.3, 0.9]]),)),
         ("recurrent", Recurrent, (torch.randn(5, 2, 4),))]


def relative(actual, expected):
    scale = expected.abs().max().item() or 1.0
    return (actual - expected).abs().max().item() / scale


def main():
    torch.manual_seed(0)
    failed = False
    for (name, cls, args), frontend in itertools.product(CASES, ("export", "trace")):
        model = cls().train()
        if frontend == "export":
            path = os.path.join(WORK, name + ".pt2")
            torch.export.save(torch.export.export(copy.deepcopy(model), args), path)
        else:
            path = os.path.join(WORK, name + ".trace")
            tgc_capture.capture(copy.deepcopy(model), args, path, train=True)
        so = os.path.join(WORK, f"{name}.{frontend}.so")
        subprocess.run([TGC, "compile", path, "--train", "-o", so], check=True)
        eager = copy.deepcopy(model)
        expected = eager(*args)
        expected.pow(2).mean().backward()
        compiled = copy.deepcopy(model)
        out = tgc.load(so, compiled, train=True)(*args)
        out.pow(2).mean().backward()
        errors = {"output": relative(out.detach(), expected.detach())}
        for (n, p), (_, q) in zip(compiled.named_parameters(), eager.named_parameters()):
            if not torch.isfinite(p.grad).all():
                errors[n] = float("inf")
            else:
                errors[n] = relative(p.grad, q.grad)
        worst = max(errors, key=errors.get)
        ok = errors[worst] <= 1e-4
        failed |= not ok
        print(f"{name} ({frontend}): {'ok' if ok else 'MISMATCH'} ({len(errors) - 1} gradients; worst "
              f"{worst} {errors[worst]:.1e})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
