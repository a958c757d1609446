#!/usr/bin/env python3
"""Export a small program with every kind of stored tensor, for the reader's tests.

    python3 test/Frontend/Export/Inputs/make_constants.py   # with torch 2.6, then 2.8 installed

writes constants_torch<major>.<minor>.pt2 next to this script: torch 2.6 and 2.7 store the
tensors in serialized_state_dict.pt / serialized_constants.pt, torch 2.8 in
data/weights/model.pt / data/constants/model.pt (docs/pt2-format.md §10). The program:

  fc      Linear(4, 3): parameters (state dict)
  window  a persistent buffer that is a view, base[2:5] of an 8-float storage (state dict)
  scale   a non-persistent buffer [1, 2, 3] (constants)
  c       a plain tensor attribute [0.5, -0.5, 0.25], lifted to a tensor constant
          (constants)

forward(x) = fc(x) * scale + window + c, x: f32[2, 4].
"""

import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Constants(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        base = torch.arange(8, dtype=torch.float32)
        self.register_buffer("window", base[2:5])
        self.register_buffer("scale", torch.tensor([1.0, 2.0, 3.0]), persistent=False)
        self.c = torch.tensor([0.5, -0.5, 0.25])

    def forward(self, x):
        return self.fc(x) * self.scale + self.window + self.c


def main():
    torch.manual_seed(0)
    ep = torch.export.export(Constants(), (torch.randn(2, 4),))
    version = ".".join(torch.__version__.split(".")[:2])
    torch.export.save(ep, os.path.join(HERE, f"constants_torch{version}.pt2"))


if __name__ == "__main__":
    main()
