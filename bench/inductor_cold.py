"""torch.compile (Inductor) with cold caches, for the side-by-side benchmarks.

`isolate_caches()` must run before torch is imported: it points TORCHINDUCTOR_CACHE_DIR
at a new temporary directory and turns the FX graph cache and the AOTAutograd cache off,
so nothing compiled by an earlier run (or another user) on this machine is reused.
`warm_up()` then pays Inductor's once-per-process costs (importing its lowerings,
probing the C++ compiler and the CPU's vector ISA, starting the compile workers) on a
throwaway function, so that they do not land on whichever model happens to come first;
the seconds it took are reported separately. `cold_first_call(fn)` runs a model's first
call (forward, or forward + backward) under `torch._inductor.utils.fresh_cache()` in a
fresh subdirectory: in-memory code caches cleared, an empty cache directory, Dynamo
reset. Its wall time is Inductor's cold compile time of that model.
"""

import atexit
import os
import shutil
import sys
import tempfile
import time

_BASE = None


def isolate_caches():
    """Fresh, private Inductor cache directory; FX graph and AOTAutograd caches off.
    Call before `import torch`."""
    global _BASE
    if _BASE:  # already done (bench_train imports bench_cpu)
        return _BASE
    if "torch" in sys.modules:
        raise RuntimeError("inductor_cold.isolate_caches() must run before `import torch`")
    _BASE = tempfile.mkdtemp(prefix="tgc-bench-inductor-")
    atexit.register(cleanup)  # also on sys.exit() and errors
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _BASE
    os.environ["TRITON_CACHE_DIR"] = os.path.join(_BASE, "triton")
    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    return _BASE


def cleanup():
    if _BASE:
        shutil.rmtree(_BASE, ignore_errors=True)


def warm_up():
    """Seconds of a first torch.compile in this process (a tiny function, not timed as
    any model's compile)."""
    import torch

    def tiny(x):
        return torch.relu(x @ x.t()).sum(0)

    return cold_first_call(lambda: torch.compile(tiny, dynamic=False)(torch.randn(4, 4)))[0]


def cold_first_call(first_call):
    """(seconds, result) of `first_call()` with every Inductor cache empty."""
    import torch
    import torch._dynamo
    from torch._inductor.utils import fresh_cache

    torch._dynamo.reset()
    # delete=False: compiled kernels stay loadable; the whole base dir goes at cleanup().
    with fresh_cache(dir=_BASE, delete=False):
        t0 = time.perf_counter()
        result = first_call()
        dt = time.perf_counter() - t0
    return dt, result


def compile_module(module):
    """torch.compile with the default backend (Inductor), static shapes."""
    import torch
    return torch.compile(module, dynamic=False)
