"""Eager's output layouts through torch.export (test/e2e/export-layouts.test; needs torch):
each module is exported, compiled with `tgc compile` and bound with tgc.load; every output
must have eager's values (rtol 1e-5) and eager's strides (model.json's output_layouts, read
from the archive's recorded tensor metadata): channels-last convolutions and copies,
elementwise results of transposed inputs, preserve_format copies. `tgc run` must give
the same values and record those strides in its output file's metadata.

    python export_layouts.py TGC WORKDIR
"""
import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "python"))

import tgc  # noqa: E402

TGC, WORK = sys.argv[1:3]


class ChannelsLastConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.bn(self.conv(x.contiguous(memory_format=torch.channels_last))).relu()
        return y, F.max_pool2d(y, 2), y.mean((2, 3))


class Transposed(nn.Module):
    def forward(self, x, y):
        return x.t() + y.t(), x.t().clone(), (x.t() * 2).contiguous(), x.t()[:, :2] * 1


class Views(nn.Module):
    def forward(self, x):
        y = x * 2
        return y.unsqueeze(0).expand(3, 4, 5), y[:, 1:], y.unfold(1, 3, 1), y[:, ::2]


CASES = [
    ("channels_last", ChannelsLastConv().eval(), (torch.randn(2, 3, 8, 8),)),
    ("transposed", Transposed(), (torch.randn(3, 5), torch.randn(3, 5))),
    ("views", Views(), (torch.randn(4, 5),)),
]

torch.manual_seed(0)
for name, module, args in CASES:
    archive, library = os.path.join(WORK, name + ".pt2"), os.path.join(WORK, name + ".so")
    torch.export.save(torch.export.export(module, args), archive)
    subprocess.run([TGC, "compile", archive, "-o", library], check=True)
    expected = module(*args)
    got = tgc.load(library)(*args)
    for i, (g, e) in enumerate(zip(got, expected)):
        values = torch.allclose(g, e, rtol=1e-5, atol=1e-6)
        print(f"{name} output {i}: values {'ok' if values else 'DIFFER'}, "
              f"strides {tuple(g.stride())} (eager {tuple(e.stride())})")
    # `tgc run` (the C ABI through dlopen) writes the values row-major and the strides
    # of each output not laid out row-major into the file's metadata.
    inputs, outputs = os.path.join(WORK, name + ".in"), os.path.join(WORK, name + ".out")
    save_file({f"input.{i}": a.contiguous() for i, a in enumerate(args)}, inputs)
    subprocess.run([TGC, "run", library, "--inputs", inputs, "-o", outputs], check=True)
    with safe_open(outputs, "pt") as f:
        metadata = f.metadata() or {}
        for i, e in enumerate(expected):
            values = torch.allclose(f.get_tensor(f"output.{i}"), e, rtol=1e-5, atol=1e-6)
            print(f"{name} run output {i}: values {'ok' if values else 'DIFFER'}, "
                  f"strides {metadata.get(f'strides.output.{i}', 'row-major')}")
