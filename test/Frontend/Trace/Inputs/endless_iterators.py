"""Captures a program that reads an endless iterator to its end (argv[2]: `list` lists
itertools.count(), `zip` zips two of them, `islice` takes islice(cycle(...)) without a
stop), which never returns in eager (trace-endless-iterators.test), to argv[1]."""
import itertools
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "tools",
                                "tgc-capture"))
import tgc_capture  # noqa: E402


def listed(x):
    return x * len(list(itertools.count(1)))


def zipped(x):
    return x * len(list(zip(itertools.count(), itertools.repeat(2))))


def sliced(x):
    return x * len(list(itertools.islice(itertools.cycle([1, 2]), 1, None)))


PROGRAMS = {"list": listed, "zip": zipped, "islice": sliced}
# The capture does not call the program (which would never return).
tgc_capture.capture(PROGRAMS[sys.argv[2]], (torch.randn(2, 3),), sys.argv[1])
