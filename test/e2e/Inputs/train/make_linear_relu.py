"""Expected values for linear_relu.mlir and sum_scale.mlir, computed with PyTorch.

    python3 test/e2e/Inputs/train/make_linear_relu.py

writes, for batch sizes 2 and 5, `inputs_bN.safetensors` (x), `grads_bN.safetensors`
(output.0, the gradient of y) and `expected_bN.safetensors` (what `tgc run --train`
writes: output.0, output.1, grad.fc.weight, grad.fc.bias, grad.input.0, state.steps,
state.gsq after forward and backward), and `expected_forward_b2.safetensors` (what a
plain `tgc run` writes); for sum_scale.mlir, `sum_scale_{inputs,grads,expected}.safetensors`
(batch 4).
"""
import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

# The initial state of linear_relu.mlir's tgc.global ops.
W = [[0.5, -1.0, 0.25], [1.5, 0.5, -0.5], [-0.75, 0.25, 1.0], [0.1, 0.2, 0.3]]
B = [0.1, -0.2, 0.3, -2.0]
STEPS = 7
GSQ = [1.0, 2.0, 3.0, 4.0]


def make(batch: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 3, generator=gen)
    g = torch.randn(batch, 4, generator=gen)
    w = torch.tensor(W, requires_grad=True)
    b = torch.tensor(B, requires_grad=True)
    xg = x.clone().requires_grad_(True)
    y = torch.relu(xg @ w.T + b)
    mask = y > 0
    y.backward(g)
    expected = {
        "output.0": y.detach(),
        "output.1": mask,
        "grad.fc.weight": w.grad,
        "grad.fc.bias": b.grad,
        "grad.input.0": xg.grad,
        "state.steps": torch.tensor(STEPS + 1),
        "state.gsq": torch.tensor(GSQ) + b.grad * b.grad,
    }
    if batch == 2:
        # What plain `tgc run` (forward only) writes.
        forward = {k: expected[k] for k in ("output.0", "output.1", "state.steps")}
        forward["state.gsq"] = torch.tensor(GSQ)
        save_file(forward, os.path.join(HERE, "expected_forward_b2.safetensors"))
    save_file({"x": x}, os.path.join(HERE, f"inputs_b{batch}.safetensors"))
    save_file({"output.0": g}, os.path.join(HERE, f"grads_b{batch}.safetensors"))
    save_file({k: v.contiguous() for k, v in expected.items()},
              os.path.join(HERE, f"expected_b{batch}.safetensors"))


def make_sum_scale() -> None:
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(4, 3, generator=gen)
    g = torch.tensor(1.5)
    w = torch.tensor([0.5, -1.0, 2.0])
    xg = x.clone().requires_grad_(True)
    loss = (xg * w).sum()
    loss.backward(g)
    save_file({"x": x}, os.path.join(HERE, "sum_scale_inputs.safetensors"))
    save_file({"output.0": g}, os.path.join(HERE, "sum_scale_grads.safetensors"))
    save_file({"output.0": loss.detach(), "grad.input.0": xg.grad},
              os.path.join(HERE, "sum_scale_expected.safetensors"))


if __name__ == "__main__":
    make(2, 0)
    make(5, 1)
    make_sum_scale()
