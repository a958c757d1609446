"""Runs a program with graph breaks through the C ABI of libtgc_runner.so (tgc_runner.h)
with nothing but ctypes: f32 inputs from a safetensors file, the call steps printed by
the callback, the outputs and mutated inputs compared with a safetensors file of
PyTorch's numbers (rtol 1e-4, atol 1e-5).

    program_capi.py LIBRARY MODEL.so INPUTS.safetensors [EXPECTED.safetensors]
                    [--inputs=N]   (pass only the first N inputs)

Prints what it sees; failures are `error: ...` lines with exit code 1."""

import ctypes
import json
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


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]

TENSORS = ctypes.POINTER(ctypes.POINTER(DLTensor))
CALL_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, TENSORS,
                           ctypes.c_int64)


def fail(message):
    print(f"error: {message}")
    sys.exit(1)


def read_safetensors(path):
    """{name: (shape, [floats])} of the F32 tensors of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        tensors[name] = (entry["shape"], list(struct.unpack(f"<{len(raw) // 4}f", raw)))
    return tensors


class Input:
    """A contiguous f32 DLTensor over a ctypes array."""

    def __init__(self, shape, values):
        self.values = (ctypes.c_float * max(len(values), 1))(*values)
        self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.dl = DLTensor(ctypes.cast(self.values, ctypes.c_void_p), DLDevice(1, 0),
                           len(shape), DLDataType(2, 32, 1),
                           ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)), None, 0)


def values_of(t):
    """The f32 values of a DLTensor (contiguous or strided)."""
    shape = [t.shape[d] for d in range(t.ndim)]
    count = 1
    for size in shape:
        count *= size
    data = ctypes.cast(t.data + t.byte_offset, ctypes.POINTER(ctypes.c_float))
    if not t.strides:
        return shape, [data[i] for i in range(count)]
    values, index = [], [0] * t.ndim
    for _ in range(count):
        values.append(data[sum(i * t.strides[d] for d, i in enumerate(index))])
        for d in reversed(range(t.ndim)):
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
    return shape, values


def compare(name, got, expected):
    (shape, values), (want_shape, want) = got, expected
    if shape != want_shape:
        fail(f"{name}: shape {shape}, PyTorch's {want_shape}")
    for a, b in zip(values, want):
        if abs(a - b) > 1e-5 + 1e-4 * abs(b):
            fail(f"{name}: {a} where PyTorch has {b}")
    print(f"{name} ok")


def declare(lib):
    P, I64, C = ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p
    for name, restype, argtypes in [
            ("tgc_program_open", ctypes.c_int, [C, ctypes.POINTER(P)]),
            ("tgc_program_free", None, [P]),
            ("tgc_program_last_error", C, [P]),
            ("tgc_program_num_inputs", I64, [P]),
            ("tgc_program_input_name", C, [P, I64]),
            ("tgc_program_run", ctypes.c_int, [P, TENSORS, I64, ctypes.c_int, CALL_FN, P]),
            ("tgc_program_result_graph", C, [P]),
            ("tgc_program_num_outputs", I64, [P]),
            ("tgc_program_take_outputs", ctypes.c_int,
             [P, ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), I64]),
            ("tgc_program_input_is_mutated", ctypes.c_int, [P, I64]),
            ("tgc_program_num_state", I64, [P]),
            ("tgc_program_state_name", C, [P, I64])]:
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes


def on_call(user, call_json, tensors, count):
    call = json.loads(call_json)
    print("call:", json.dumps(call, sort_keys=True))
    for k in range(count):
        shape, values = values_of(tensors[k].contents)
        print(f"  tensor {k}: shape {shape} sum {sum(values):.4f}")
    return 0


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    limit = [int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("--inputs=")]
    library, model, inputs_path = args[:3]
    expected = read_safetensors(args[3]) if len(args) > 3 else {}
    lib = ctypes.CDLL(library)
    declare(lib)
    program = ctypes.c_void_p()
    if lib.tgc_program_open(model.encode(), ctypes.byref(program)) != 0:
        fail(lib.tgc_program_last_error(None).decode())
    names = [lib.tgc_program_input_name(program, i).decode()
             for i in range(lib.tgc_program_num_inputs(program))]
    print("inputs:", " ".join(names))
    print("state:", " ".join(sorted(lib.tgc_program_state_name(program, i).decode()
                                    for i in range(lib.tgc_program_num_state(program)))))
    saved = read_safetensors(inputs_path)
    inputs = [Input(*saved[name]) for name in names][:limit[0] if limit else None]
    array = (ctypes.POINTER(DLTensor) * max(len(inputs), 1))(
        *[ctypes.pointer(i.dl) for i in inputs])
    callback = CALL_FN(on_call)
    if lib.tgc_program_run(program, array, len(inputs), 0, callback, None) != 0:
        fail(lib.tgc_program_last_error(program).decode())
    print("result graph:", lib.tgc_program_result_graph(program).decode())
    n = lib.tgc_program_num_outputs(program)
    outputs = (ctypes.POINTER(DLManagedTensor) * max(n, 1))()
    if lib.tgc_program_take_outputs(program, outputs, n) != 0:
        fail(lib.tgc_program_last_error(program).decode())
    for k in range(n):
        if f"output.{k}" in expected:
            compare(f"output.{k}", values_of(outputs[k].contents.dl_tensor),
                    expected[f"output.{k}"])
        outputs[k].contents.deleter(outputs[k])
    for i, name in enumerate(names):
        if lib.tgc_program_input_is_mutated(program, i) == 1:
            compare(f"mutated.{name}", values_of(inputs[i].dl), expected[f"mutated.{name}"])
    lib.tgc_program_free(program)


if __name__ == "__main__":
    main()
