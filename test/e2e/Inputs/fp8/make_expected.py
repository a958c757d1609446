#!/usr/bin/env python3
"""Inputs and PyTorch's results for roundtrip.mlir (fp8/bf16 round trips).

    python3 test/e2e/Inputs/fp8/make_expected.py
"""
import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
# Ties, subnormals (fp8 subnormals are multiples of 2**-9), the largest finite value
# (448), values that round to it, values that overflow to NaN (>= 464), signed zeros,
# and a spread of ordinary values.
special = [0.0, -0.0, 448.0, -448.0, 450.0, 463.0, 2.0**-9, 3 * 2.0**-10, 2.0**-10,
           2.0**-11, 2.0**-6, 1.0625, 1.1875, -1.0625, 17.0, 0.1, -3.3, 1e-3, 240.0, 232.0,
           2.0**-7 * 1.5, 100.0, -0.015625, 7.5]
torch.manual_seed(0)
rest = (torch.randn(64 - len(special)) * torch.logspace(-3, 2, 64 - len(special)))
x = torch.cat([torch.tensor(special), rest]).to(torch.float32)
fp8 = x.to(torch.float8_e4m3fn).to(torch.float32)
bf16 = x.to(torch.bfloat16).to(torch.float32)
save_file({"x": x}, os.path.join(HERE, "roundtrip.inputs.safetensors"))
save_file({"output.0": fp8, "output.1": bf16}, os.path.join(HERE, "roundtrip.expected.safetensors"))
