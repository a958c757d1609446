"""Captures `x.contiguous(memory_format=torch.preserve_format)`, which eager refuses
(trace-memory-format-errors.test), to argv[1]."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "tools",
                                "tgc-capture"))
import tgc_capture  # noqa: E402


def f(x):
    return x.contiguous(memory_format=torch.preserve_format) * 2


tgc_capture.capture(f, (torch.randn(2, 3),), sys.argv[1])
