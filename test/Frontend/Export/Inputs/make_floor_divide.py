"""floor_divide.pt2: torch.floor_divide of int64 and f32 tensors and of a tensor by a
Python number, as torch.export records them (aten.floor_divide.default / .Scalar in the
training IR; transformers' MoE routing computes expert slots this way). Regenerate with
a Python that has torch:

    python test/Frontend/Export/Inputs/make_floor_divide.py
    python test/fixtures/portable_paths.py test/Frontend/Export/Inputs/floor_divide.pt2
"""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class FloorDivide(torch.nn.Module):
    def forward(self, a, b, x):
        return torch.floor_divide(a, b), torch.floor_divide(x, 2.5), a // 3


def main():
    args = (torch.tensor([7, -7, 9, -9]), torch.tensor([2, 2, -4, -4]),
            torch.tensor([5.0, -5.0, 7.5, -0.5]))
    ep = torch.export.export(FloorDivide(), args)
    torch.export.save(ep, os.path.join(HERE, "floor_divide.pt2"))


if __name__ == "__main__":
    main()
