"""Calls one instance of test/e2e/Inputs/arena/rows.mlir's model.so with batches of
different sizes, through the C ABI with nothing but ctypes (CI has no numpy or torch).

The model's temporaries have the dynamic batch size: the first call (and any call
needing more than the arena holds) places them in an allocation of its own and asks for
a larger arena; later calls place them in the grown arena. Each output row depends only
on its input row, and every batch's inputs are prefixes of the same rows, so each result
must equal the first rows of the largest one bit for bit, whichever way its
temporaries were placed.

    calls.py MODEL.so

Prints one line per call; a failure is an `error: ...` line with exit code 1."""

import ctypes
import math
import struct
import sys


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]

COLUMNS = 64


def fail(message):
    print(f"error: {message}")
    sys.exit(1)


def tensor(values, shape):
    data = (ctypes.c_float * len(values))(*values)
    dims = (ctypes.c_int64 * len(shape))(*shape)
    t = DLTensor(ctypes.cast(data, ctypes.c_void_p), DLDevice(1, 0), len(shape),
                 DLDataType(2, 32, 1), dims, None, 0)
    return t, (data, dims)


def main(path):
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    model = ctypes.c_void_p()
    if lib.rows_create(ctypes.byref(model)) != 0:
        fail("rows_create failed")
    lib.tgc_model_last_error.restype = ctypes.c_char_p
    lib.tgc_model_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(DLTensor)),
                                  ctypes.c_int64,
                                  ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_int64]
    w = [math.sin(0.37 * i) for i in range(COLUMNS)]
    rows = [math.cos(0.11 * i) * 3 for i in range(64 * COLUMNS)]
    results = {}
    for batch in (8, 2, 8, 33, 5, 33, 1):
        x, keep_x = tensor(rows[:batch * COLUMNS], [batch, COLUMNS])
        wt, keep_w = tensor(w, [COLUMNS])
        inputs = (ctypes.POINTER(DLTensor) * 2)(ctypes.pointer(x), ctypes.pointer(wt))
        outputs = (ctypes.POINTER(DLManagedTensor) * 1)()
        if lib.tgc_model_run(model, inputs, 2, outputs, 1) != 0:
            fail(lib.tgc_model_last_error(model).decode())
        out = outputs[0].contents
        data = ctypes.cast(out.dl_tensor.data, ctypes.POINTER(ctypes.c_float))
        values = struct.pack(f"<{batch * COLUMNS}f", *data[:batch * COLUMNS])
        out.deleter(outputs[0])
        results.setdefault(batch, values)
        if results[batch] != values:
            fail(f"batch {batch}: differs from the first call with that batch")
        print(f"batch {batch}: ok")
    largest = results[max(results)]
    for batch, values in results.items():
        if values != largest[:len(values)]:
            fail(f"batch {batch}: differs from the first {batch} rows of batch {max(results)}")
    print("prefixes: ok")
    lib.tgc_model_destroy(model)


if __name__ == "__main__":
    main(sys.argv[1])
