"""Archives with higher-order ops. Regenerate with a Python that has torch:

    python test/Frontend/Export/Inputs/make_higher_order.py
    python test/fixtures/portable_paths.py test/Frontend/Export/Inputs/cond.pt2 \\
        test/Frontend/Export/Inputs/map.pt2 test/Frontend/Export/Inputs/autocast_einsum.pt2

cond.pt2: torch.cond on a tensor predicate with a dynamic batch, branches that read a
parameter and a buffer and return two tensors, and a cond nested in a branch; with
cond.{pos,neg}.inputs.safetensors / .expected.safetensors (eager results) for both
outcomes of the outer predicate (and both of the inner one).
map.pt2: torch's map higher-order op, which tgc does not read.
autocast_einsum.pt2: an einsum in a CPU bf16 autocast block (training IR; torch's own
core IR of it is not eager's): einsum is not on autocast's lists, the bmm it calls in
eager is, so its result is bf16; autocast_einsum.{inputs,expected}.safetensors.
"""
import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


class Cond(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.register_buffer("shift", torch.tensor([0.5, -1.0, 2.0, 0.0]))

    def forward(self, x):
        def positive(t):
            inner = torch.cond(t[0, 0] > 0, lambda u: u * 2, lambda u: u - 1, (t,))
            return self.fc(t).relu() + inner, t.sum(0)

        def negative(t):
            return (t + self.shift).tanh(), t.amax(0)

        y, s = torch.cond(x.sum() > 0, positive, negative, (x,))
        return y * 3, s


class AutocastEinsum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(5, 4))

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.einsum("bi,oi->bo", x, self.w)


class Map(torch.nn.Module):
    def forward(self, xs):
        from torch._higher_order_ops.map import map as hop_map
        return hop_map(lambda x: x.sin(), xs)


def main():
    torch.manual_seed(0)
    model = Cond()
    batch = torch.export.Dim("batch", min=2)
    x = torch.randn(3, 4).abs()
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
    torch.export.save(ep, os.path.join(HERE, "cond.pt2"))
    first_negative = torch.randn(5, 4).abs()
    first_negative[0, 0] = -0.5
    for name, inputs in [("pos", x), ("pos5", first_negative), ("neg", -torch.randn(5, 4).abs())]:
        y, s = model(inputs)
        save_file({"x": inputs.contiguous()}, os.path.join(HERE, f"cond.{name}.inputs.safetensors"))
        save_file({"output.0": y.detach().contiguous(), "output.1": s.detach().contiguous(),
                   "state.shift": model.shift.clone()},
                  os.path.join(HERE, f"cond.{name}.expected.safetensors"))
        # One training step: the gradients of the parameters for random output gradients.
        grads = {"output.0": torch.randn_like(y), "output.1": torch.randn_like(s)}
        model.zero_grad()
        torch.autograd.backward([y, s], [grads["output.0"], grads["output.1"]])
        save_file(grads, os.path.join(HERE, f"cond.{name}.grad_outputs.safetensors"))
        expected = {"output.0": y.detach().contiguous(), "output.1": s.detach().contiguous(),
                    "state.shift": model.shift.clone()}
        for fqn, parameter in model.named_parameters():
            expected["grad." + fqn] = parameter.grad.clone()
        save_file(expected, os.path.join(HERE, f"cond.{name}.train_expected.safetensors"))
    ep = torch.export.export(Map(), (torch.randn(2, 3),))
    torch.export.save(ep, os.path.join(HERE, "map.pt2"))
    einsum = AutocastEinsum()
    x = torch.randn(3, 4)
    ep = torch.export.export(einsum, (x,))
    torch.export.save(ep, os.path.join(HERE, "autocast_einsum.pt2"))
    save_file({"x": x}, os.path.join(HERE, "autocast_einsum.inputs.safetensors"))
    save_file({"output.0": einsum(x).detach().contiguous()},
              os.path.join(HERE, "autocast_einsum.expected.safetensors"))


if __name__ == "__main__":
    main()
