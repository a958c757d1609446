"""The in-place random fills (test/e2e/random-fills.test; needs torch): uniform_,
normal_ and exponential_ of tensors a program makes, exported live (training IR) and
compiled. tgc's generator is not torch's, so the draws are checked by their
distribution (range, mean and standard deviation over 65536 draws, 6 standard errors
of slack), and two calls must draw differently.

    python random_fills.py TGC WORKDIR
"""
import math
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))

import tgc  # noqa: E402

TGC, WORK = sys.argv[1:3]
N = 65536


class Fills(torch.nn.Module):
    def forward(self, x):
        u = torch.empty_like(x).uniform_(2, 5)
        n = torch.empty_like(x).normal_(1, 2)
        e = torch.empty_like(x).exponential_(4)
        g = x - torch.empty_like(x).exponential_().log()  # Gumbel noise (PhiMoE's router)
        return u, n, e, g


def check(name, t, lo, hi, mean, std):
    m, s = t.mean().item(), t.std().item()
    slack = 6 * std / math.sqrt(N)
    ok = (t.min().item() >= lo and t.max().item() < hi and abs(m - mean) <= slack
          and abs(s - std) <= 6 * std / math.sqrt(2 * N) * 2)
    print(f"{name}: {'ok' if ok else 'MISMATCH'} (mean {m:.4f}, std {s:.4f})")
    return ok


def main():
    x = torch.zeros(N)
    path = os.path.join(WORK, "fills.pt2")
    torch.export.save(torch.export.export(Fills(), (x,)), path)
    so = os.path.join(WORK, "fills.so")
    subprocess.run([TGC, "compile", path, "-o", so], check=True)
    model = tgc.load(so)
    u, n, e, g = model(x)
    ok = check("uniform_", u, 2, 5, 3.5, 3 / math.sqrt(12))
    ok &= check("normal_", n, -math.inf, math.inf, 1, 2)
    ok &= check("exponential_", e, 0, math.inf, 0.25, 0.25)
    # -log(Exp(1)) is Gumbel: mean Euler's gamma, std pi / sqrt(6).
    ok &= check("gumbel", g, -math.inf, math.inf, 0.5772156649, math.pi / math.sqrt(6))
    again = model(x)[0]
    differ = not torch.equal(again, u)
    print(f"second call: {'draws again' if differ else 'SAME DRAWS'}")
    sys.exit(0 if ok and differ else 1)


if __name__ == "__main__":
    main()
