"""Inputs and PyTorch's results for the hand-written op tests in this directory.

Each `<case>.mlir` here is compiled and run by test/e2e/ops.test on
`<case>.inputs.safetensors`; its results (`output.N`) must match
`<case>.expected.safetensors`, which this script computes with PyTorch's own kernels
(ATen backward ops, autograd). Run with the project's venv:

    /root/.cache/tgc-venv/bin/python test/e2e/Inputs/ops/make_expected.py
"""
import os

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


CASES = {
    "conv_backward": conv_backward,
}


def main():
    for name, make in CASES.items():
        gen = torch.Generator().manual_seed(0)
        inputs, outputs = make(gen)
        save_file({k: v.contiguous() for k, v in inputs.items()},
                  os.path.join(HERE, f"{name}.inputs.safetensors"))
        save_file({f"output.{i}": v.contiguous() for i, v in enumerate(outputs)},
                  os.path.join(HERE, f"{name}.expected.safetensors"))


if __name__ == "__main__":
    main()
