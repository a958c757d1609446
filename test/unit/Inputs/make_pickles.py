#!/usr/bin/env python3
"""Make the torch.save pickles that test/unit/PickleTest.cpp reads.

    python3 test/unit/Inputs/make_pickles.py      # python3 with torch

(any torch 2.x works; these were made with torch 2.6.0). Each file is the data.pkl of a
torch.save zip; its storages are not kept, since the unpickler only reads the pickle.
Output, next to this script:

  tensors_p2.pkl      a dict of tensors, pickle protocol 2 (torch.save's default):
                        w  Parameter f32[2, 3] on storage 0
                        b  f32[2], a view of storage 1 at offset 2 (of 6 floats)
                        t  f32[3, 2], a transposed view of w's storage 0 (strides [1, 3])
                        n  int64 scalar (sizes [], strides [])
                        m  bool[4]
                        big  int64[3], strides [0]: 1 element broadcast
  tensors_p4.pkl      the same dict with pickle_protocol=4 (FRAME, MEMOIZE, STACK_GLOBAL,
                      SHORT_BINUNICODE)
  new_dtypes.pkl      float8_e4m3fn[3] and uint16[2]: _rebuild_tensor_v3 with an
                      UntypedStorage and a torch.<dtype> argument
  module_state.pkl    nn.Linear(3, 2).state_dict(): an OrderedDict with a `_metadata`
                      attribute set by BUILD
"""

import io
import os
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def pickle_of(obj, protocol=2):
    buffer = io.BytesIO()
    torch.save(obj, buffer, pickle_protocol=protocol)
    with zipfile.ZipFile(buffer) as z:
        name = next(n for n in z.namelist() if n.endswith("/data.pkl"))
        return z.read(name)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def main():
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    base = torch.arange(6, dtype=torch.float32) * 10
    tensors = {
        "w": w,
        "b": base[2:4],
        "t": w.detach().t(),
        "n": torch.tensor(7, dtype=torch.int64),
        "m": torch.tensor([True, False, True, True]),
        "big": torch.tensor([5], dtype=torch.int64).expand(3),
    }
    write("tensors_p2.pkl", pickle_of(tensors))
    write("tensors_p4.pkl", pickle_of(tensors, protocol=4))
    write("new_dtypes.pkl", pickle_of({
        "f8": torch.zeros(3, dtype=torch.float8_e4m3fn),
        "u16": torch.tensor([1, 2], dtype=torch.uint16),
    }))
    write("module_state.pkl", pickle_of(torch.nn.Linear(3, 2).state_dict()))


if __name__ == "__main__":
    main()
