"""The pip-installed Python package (test/e2e/python-package.test; needs torch): imports
`tgc` and `tgc_capture` from SITE alone (pip install --target SITE) and checks
tgc.compile: an nn.Module for inference and training against eager, the on-disk cache
(a second call compiles nothing, a changed compiler compiles again), a program with a
graph break (whose runner library is found beside the compiler), and its errors.

    python pip_package.py SITE TGC WORKDIR
"""
import os
import shutil
import sys

SITE, TGC, WORK = sys.argv[1:4]
sys.path.insert(0, SITE)

import torch  # noqa: E402

import tgc  # noqa: E402
import tgc_capture  # noqa: E402

for module in (tgc, tgc_capture):
    assert os.path.realpath(module.__file__).startswith(os.path.realpath(SITE)), module.__file__
print("imported from the install")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return torch.relu(self.norm(self.fc(x))) * 2.0


def with_break(x):
    y = torch.sin(x) + 1.0
    print("between the graphs")
    return torch.cos(y) * x


def entries(cache):
    """The compiled models in the cache."""
    root = os.path.join(cache, "v1")
    return sorted(d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "model.so")))


torch.manual_seed(0)
net = Net()
x = torch.randn(4, 16)
cache = os.path.join(WORK, "cache")
os.environ["TGC"] = TGC

compiled = tgc.compile(net, (x,), cache_dir=cache)
torch.testing.assert_close(compiled(x), net(x), rtol=1e-4, atol=1e-5)
again = tgc.compile(net, (x,), cache_dir=cache)
torch.testing.assert_close(again(x + 1), net(x + 1), rtol=1e-4, atol=1e-5)
print("inference ok, %d cached model" % len(entries(cache)))

step = tgc.compile(net, (x,), train=True, cache_dir=cache)
step(x).square().mean().backward()
grads = [p.grad.clone() for p in net.parameters()]
net.zero_grad()
net(x).square().mean().backward()
for got, want in zip(grads, [p.grad for p in net.parameters()]):
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
print("training ok, %d cached models" % len(entries(cache)))

# A different compiler (a copy of tgc, then the copy touched) is not served a model the
# first one compiled.
bindir = os.path.join(WORK, "bin")
os.makedirs(bindir)
copy = shutil.copy2(TGC, os.path.join(bindir, "tgc"))
tgc.compile(net, (x,), cache_dir=cache, compiler=copy)
tgc.compile(net, (x,), cache_dir=cache, compiler=copy)
print("another compiler: %d cached models" % len(entries(cache)))
os.utime(copy, ns=(os.stat(copy).st_atime_ns, os.stat(copy).st_mtime_ns + 10**9))
tgc.compile(net, (x,), cache_dir=cache, compiler=copy)
print("rebuilt compiler: %d cached models" % len(entries(cache)))

program = tgc.compile(with_break, (x,), cache_dir=cache, options=["--allow-graph-breaks"])
torch.testing.assert_close(program(x), with_break(x), rtol=1e-4, atol=1e-5)
print("graph break ok")

for kwargs in ({"compiler": os.path.join(WORK, "missing", "tgc")},
               {"options": ["--cpu", "no-such-cpu"]}):
    try:
        tgc.compile(net, (x,), cache_dir=cache, **kwargs)
        print("error: no error for %s" % kwargs)
    except tgc.TgcError as e:
        print("TgcError:", str(e).splitlines()[-1])
