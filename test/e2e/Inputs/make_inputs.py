"""Regenerates the malformed inputs of gpt2.test (needs numpy and safetensors)."""
import os

import numpy as np
from safetensors.numpy import save_file

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(0)
save_file({"x": rng.standard_normal((100, 8, 32), dtype=np.float32)},
          os.path.join(here, "gpt2_batch100.safetensors"))
save_file({"x": rng.standard_normal((3, 8, 32))}, os.path.join(here, "gpt2_f64.safetensors"))
save_file({"x": rng.standard_normal((3, 8), dtype=np.float32)},
          os.path.join(here, "gpt2_rank2.safetensors"))
