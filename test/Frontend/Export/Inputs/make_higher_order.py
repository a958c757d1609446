"""cond.pt2: a torch.cond, a higher-order op tgc's export reader does not read yet (it
reads grad-mode and autocast blocks: test/fixtures/models.py Regions). Regenerate with a
Python that has torch:

    python test/Frontend/Export/Inputs/make_higher_order.py
    python test/fixtures/portable_paths.py test/Frontend/Export/Inputs/cond.pt2
"""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))


def main():
    ep = torch.export.export(Cond(), (torch.randn(3),))
    torch.export.save(ep, os.path.join(HERE, "cond.pt2"))


if __name__ == "__main__":
    main()
