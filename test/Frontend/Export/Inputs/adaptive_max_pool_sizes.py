"""Exports F.adaptive_max_pool2d of 5x4 to 3x2 (windows of varying size) to argv[1]
(adaptive-max-pool-sizes.test)."""
import sys, torch, torch.nn.functional as F
class M(torch.nn.Module):
    def forward(self, x):
        return F.adaptive_max_pool2d(x, (3, 2))
torch.export.save(torch.export.export(M(), (torch.randn(1, 2, 5, 4),)), sys.argv[1])
