"""Compatibility shim: the ctypes binding now lives in the `tgc` Python package
(tools/python/tgc/runtime.py). Benchmarks keep importing `tgc_ctypes`."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                "python"))

from tgc.runtime import *  # noqa: E402,F401,F403
from tgc.runtime import __all__  # noqa: E402,F401
