"""A small ctypes binding to a tgc-compiled model.so (see docs/abi.md).

    from tgc.runtime import Model    # (bench/tgc_ctypes.py re-exports it)
    m = Model("model.so")            # name from model.json beside it, else the stem
    outs = m.run(x)                  # numpy arrays or torch CPU tensors in, numpy copies out
    m.get_state("bn1.running_mean")  # numpy copy of a parameter / buffer / constant
    m.set_state("fc.weight", w)

Inputs are passed zero-copy: each DLTensor points at the caller's data with the
caller's strides (in elements), so user inputs that the program mutates are updated
in place, exactly like the eager model does. Outputs come back as DLManagedTensor and
are copied into numpy (or torch) before their deleter is called. Any failure raises
TgcError with the runtime's `tgc_model_last_error` message.

`Model.prepare(*inputs)` builds the DLTensor argument arrays once and returns a callable
that only calls `tgc_model_run` (and frees the outputs): that is what benchmarks time.

Trainable models (`tgc compile --train`, docs/abi.md "Training"):

    outs = m.run_train(x)             # forward; keeps the saved values for one backward
    grads = m.backward(g0, None)      # one entry per user output, None = no gradient
    dict(zip(m.gradient_names, grads))   # {"fc.weight": ..., "input.0": ...}
    step = m.prepare_train([x], [g0, None]); step()   # run_train + backward, timed

The training functions are looked up when the model is loaded; `m.trainable` is False
when the .so lacks them (an older runtime) or says it has no backward.

`Model` needs numpy for numpy arrays; torch is optional (torch tensors in, `as_torch=True` out). An instance is not
thread-safe (one call at a time), like the C API.
"""

import ctypes
import json
import os

try:
    import numpy as np
except ImportError:  # pragma: no cover - tgc.load needs only torch
    np = None

__all__ = ["TgcError", "Model", "DLDevice", "DLDataType", "DLTensor", "DLManagedTensor"]

# --------------------------------------------------------------------- DLPack 0.6 structs
kDLCPU = 1
kDLCUDA = 2
kDLInt, kDLUInt, kDLFloat, kDLBfloat = 0, 1, 2, 4
TGC_DL_BOOL = 6  # kDLBool in DLPack >= 0.8; tgc_runtime.h spells it TGC_DL_BOOL


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements; NULL = row-major
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]

# numpy dtype <-> DLPack (code, bits)
_NP_TO_DL = {} if np is None else {
    np.dtype(np.float32): (kDLFloat, 32),
    np.dtype(np.float64): (kDLFloat, 64),
    np.dtype(np.float16): (kDLFloat, 16),
    np.dtype(np.int8): (kDLInt, 8),
    np.dtype(np.int16): (kDLInt, 16),
    np.dtype(np.int32): (kDLInt, 32),
    np.dtype(np.int64): (kDLInt, 64),
    np.dtype(np.uint8): (kDLUInt, 8),
    np.dtype(np.uint16): (kDLUInt, 16),
    np.dtype(np.uint32): (kDLUInt, 32),
    np.dtype(np.uint64): (kDLUInt, 64),
    np.dtype(np.bool_): (TGC_DL_BOOL, 8),
}
_DL_TO_NP = {v: k for k, v in _NP_TO_DL.items()}


def _torch():
    try:
        import torch  # noqa: F401
        return torch
    except ImportError:  # pragma: no cover
        return None


def _is_torch_tensor(x):
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def _torch_dl_dtype(dt):
    torch = _torch()
    table = {
        torch.float32: (kDLFloat, 32), torch.float64: (kDLFloat, 64),
        torch.float16: (kDLFloat, 16), torch.bfloat16: (kDLBfloat, 16),
        torch.int8: (kDLInt, 8), torch.int16: (kDLInt, 16), torch.int32: (kDLInt, 32),
        torch.int64: (kDLInt, 64), torch.uint8: (kDLUInt, 8), torch.bool: (TGC_DL_BOOL, 8),
    }
    if dt not in table:
        raise TypeError(f"tgc: unsupported torch dtype {dt}")
    return table[dt]


class TgcError(RuntimeError):
    pass


class _TensorArg:
    """A DLTensor viewing a numpy array or a torch CPU or CUDA tensor (for a CUDA model,
    docs/cuda.md), plus what keeps it valid."""

    __slots__ = ("dl", "_shape", "_strides", "_owner")

    def __init__(self, x):
        device = DLDevice(kDLCPU, 0)
        if _is_torch_tensor(x):
            if x.device.type == "cuda":
                device = DLDevice(kDLCUDA, x.device.index or 0)
            elif x.device.type != "cpu":
                raise TgcError(f"tgc: expected a CPU or CUDA tensor, got device {x.device}")
            if x.requires_grad:
                x = x.detach()  # same storage
            code_bits = _torch_dl_dtype(x.dtype)
            shape, strides = tuple(x.shape), tuple(x.stride())  # strides in elements
            data = x.data_ptr() if x.numel() > 0 else None  # data_ptr includes the offset
        else:
            if not isinstance(x, np.ndarray):
                x = np.asarray(x)
            if x.dtype not in _NP_TO_DL:
                raise TypeError(f"tgc: unsupported numpy dtype {x.dtype}")
            code_bits = _NP_TO_DL[x.dtype]
            item = x.itemsize
            if any(s % item for s in x.strides):  # not element-aligned strides: copy
                x = np.ascontiguousarray(x)
            shape, strides = x.shape, tuple(s // item for s in x.strides)
            data = x.ctypes.data if x.size > 0 else None
        nd = len(shape)
        self._owner = x  # keeps the data alive while the DLTensor is in use
        self._shape = (ctypes.c_int64 * max(nd, 1))(*shape)
        self._strides = (ctypes.c_int64 * max(nd, 1))(*strides)
        self.dl = DLTensor(
            data, device, nd, DLDataType(code_bits[0], code_bits[1], 1),
            ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64)),
            ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)), 0)


def _dl_to_numpy(t):
    """Copies a DLTensor's data into a new numpy array (bf16 as raw uint16)."""
    if t.device.device_type != kDLCPU:
        raise TgcError("tgc: the output is in CUDA memory: read a CUDA model's outputs as "
                       "torch tensors (tgc.load)")
    key = (t.dtype.code, t.dtype.bits)
    if key == (kDLBfloat, 16):
        dt = np.dtype(np.uint16)
    elif key in _DL_TO_NP and t.dtype.lanes == 1:
        dt = _DL_TO_NP[key]
    else:
        raise TgcError(f"tgc: unsupported output dtype code={t.dtype.code} "
                       f"bits={t.dtype.bits} lanes={t.dtype.lanes}")
    nd = t.ndim
    shape = tuple(t.shape[i] for i in range(nd))
    numel = int(np.prod(shape, dtype=np.int64)) if nd else 1
    if numel == 0:
        return np.empty(shape, dt)
    if t.strides:
        strides = tuple(t.strides[i] for i in range(nd))
    else:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= max(s, 1)
        strides = tuple(reversed(strides))
    lo = sum(st * (sz - 1) for st, sz in zip(strides, shape) if st < 0)
    hi = sum(st * (sz - 1) for st, sz in zip(strides, shape) if st > 0)
    base = t.data + t.byte_offset + lo * dt.itemsize
    nbytes = (hi - lo + 1) * dt.itemsize
    buf = np.frombuffer((ctypes.c_char * nbytes).from_address(base), dtype=dt)
    view = np.lib.stride_tricks.as_strided(
        buf[-lo:], shape=shape, strides=tuple(s * dt.itemsize for s in strides))
    return np.array(view, copy=True, order="C")


def _to_torch(arr, code_bits):
    torch = _torch()
    if code_bits == (kDLBfloat, 16):
        return torch.from_numpy(arr).view(torch.bfloat16)
    return torch.from_numpy(arr)


def _collect(out, n, copy_outputs, as_torch):
    """Copies (optionally) and frees the n DLManagedTensors in `out`."""
    results = []
    try:
        if copy_outputs:
            for i in range(n):
                t = out[i].contents.dl_tensor
                arr = _dl_to_numpy(t)
                results.append(_to_torch(arr, (t.dtype.code, t.dtype.bits))
                               if as_torch else arr)
    finally:
        for i in range(n):
            p = out[i]
            if p:
                p.contents.deleter(p)
                out[i] = None
    return results if copy_outputs else None


def _dl_array(args):
    """A `DLTensor *[]` over _TensorArg objects (None -> NULL)."""
    n = len(args)
    arr = (ctypes.POINTER(DLTensor) * max(n, 1))()
    for i, a in enumerate(args):
        if a is not None:
            arr[i] = ctypes.pointer(a.dl)
    return arr


class PreparedCall:
    """tgc_model_run with argument arrays built once (inputs are still zero-copy views,
    so changing the tensors' contents between calls is seen by the next call)."""

    def __init__(self, model, inputs):
        self._model = model
        self._args = [_TensorArg(x) for x in inputs]
        n = len(self._args)
        self._in = (ctypes.POINTER(DLTensor) * max(n, 1))(
            *[ctypes.pointer(a.dl) for a in self._args])
        self._nin = n
        self._nout = model.num_outputs
        self._out = (ctypes.POINTER(DLManagedTensor) * max(self._nout, 1))()

    def __call__(self, copy_outputs=True, as_torch=False):
        m = self._model
        rc = m._lib.tgc_model_run(m._handle, self._in, self._nin, self._out, self._nout)
        if rc != 0:
            raise TgcError(f"tgc_model_run({m.name}): {m.last_error()}")
        return _collect(self._out, self._nout, copy_outputs, as_torch)


class PreparedTrainStep:
    """One training step, tgc_model_run_train then tgc_model_backward, with the argument
    arrays built once (zero-copy views, as PreparedCall). `grad_outputs` has one entry per
    user output; None for outputs without a gradient (passed as NULL)."""

    def __init__(self, model, inputs, grad_outputs):
        if not model.trainable:
            raise TgcError(f"tgc: model '{model.name}' is not trainable "
                           f"(compile it with `tgc compile --train`)")
        if len(grad_outputs) != model.num_outputs:
            raise TgcError(f"tgc: {len(grad_outputs)} grad outputs for "
                           f"{model.num_outputs} outputs")
        self._model = model
        self._args = [_TensorArg(x) for x in inputs]
        self._gargs = [None if g is None else _TensorArg(g) for g in grad_outputs]
        self._in = _dl_array(self._args)
        self._gin = _dl_array(self._gargs)
        self._nout = model.num_outputs
        self._ngrad = model.num_gradients
        self._out = (ctypes.POINTER(DLManagedTensor) * max(self._nout, 1))()
        self._grads = (ctypes.POINTER(DLManagedTensor) * max(self._ngrad, 1))()

    def forward(self, copy_outputs=True, as_torch=False):
        m = self._model
        rc = m._lib.tgc_model_run_train(m._handle, self._in, len(self._args), self._out,
                                        self._nout)
        if rc != 0:
            raise TgcError(f"tgc_model_run_train({m.name}): {m.last_error()}")
        return _collect(self._out, self._nout, copy_outputs, as_torch)

    def backward(self, copy_outputs=True, as_torch=False):
        m = self._model
        rc = m._lib.tgc_model_backward(m._handle, self._gin, len(self._gargs), self._grads,
                                       self._ngrad)
        if rc != 0:
            raise TgcError(f"tgc_model_backward({m.name}): {m.last_error()}")
        return _collect(self._grads, self._ngrad, copy_outputs, as_torch)

    def __call__(self, copy_outputs=False, as_torch=False):
        """Both halves; returns (outputs, gradients), or None without copies."""
        outs = self.forward(copy_outputs, as_torch)
        grads = self.backward(copy_outputs, as_torch)
        return (outs, grads) if copy_outputs else None


class Model:
    """One instance of a compiled model (`<name>_create`), destroyed by close()/GC."""

    def __init__(self, so_path, name=None, signature=None):
        """`name`/`signature`: one graph of a program with graph breaks (its entry in
        model.json's "graphs"); by default the model X.json describes."""
        so_path = os.path.abspath(so_path)
        self.path = so_path
        stem = os.path.splitext(so_path)[0]
        self.signature = signature
        if signature is None and os.path.exists(stem + ".json"):
            with open(stem + ".json") as f:
                self.signature = json.load(f)
        if name is None:
            name = (self.signature or {}).get("name") or os.path.basename(stem)
        self._lib = lib = ctypes.CDLL(so_path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
        self._declare(lib)
        create = getattr(lib, f"{name}_create")
        create.restype = ctypes.c_int
        create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        h = ctypes.c_void_p()
        if create(ctypes.byref(h)) != 0 or not h:
            raise TgcError(f"{name}_create: {self._str(lib.tgc_model_last_error(None))}")
        self._handle = h
        self.name = self._str(lib.tgc_model_name(h))
        self.num_inputs = lib.tgc_model_num_inputs(h)
        self.num_outputs = lib.tgc_model_num_outputs(h)
        self.input_names = [self._str(lib.tgc_model_input_name(h, i))
                            for i in range(self.num_inputs)]
        self.output_names = [self._str(lib.tgc_model_output_name(h, i))
                             for i in range(self.num_outputs)]
        self.input_mutated = [lib.tgc_model_input_is_mutated(h, i) == 1
                              for i in range(self.num_inputs)]
        self.trainable = self._declare_training(lib) and (
            not hasattr(lib, "tgc_model_is_trainable") or lib.tgc_model_is_trainable(h) == 1)
        self.num_gradients = lib.tgc_model_num_gradients(h) if self.trainable else 0
        self.gradient_names = [self._str(lib.tgc_model_gradient_name(h, i))
                               for i in range(self.num_gradients)]
        n = lib.tgc_model_num_state(h)
        kinds = {0: "parameter", 1: "buffer", 2: "constant"}
        self.state = {self._str(lib.tgc_model_state_name(h, i)):
                      kinds.get(lib.tgc_model_state_kind(h, i), "?") for i in range(n)}

    @staticmethod
    def _declare(lib):
        P, I64, C = ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p
        sigs = {
            "tgc_model_destroy": (None, [P]),
            "tgc_model_last_error": (C, [P]),
            "tgc_model_name": (C, [P]),
            "tgc_model_num_inputs": (I64, [P]),
            "tgc_model_num_outputs": (I64, [P]),
            "tgc_model_input_name": (C, [P, I64]),
            "tgc_model_output_name": (C, [P, I64]),
            "tgc_model_input_is_mutated": (ctypes.c_int, [P, I64]),
            "tgc_model_run": (ctypes.c_int, [P, ctypes.POINTER(ctypes.POINTER(DLTensor)), I64,
                                             ctypes.POINTER(ctypes.POINTER(DLManagedTensor)),
                                             I64]),
            "tgc_model_num_state": (I64, [P]),
            "tgc_model_state_name": (C, [P, I64]),
            "tgc_model_state_kind": (ctypes.c_int, [P, I64]),
            "tgc_model_state_dtype": (ctypes.c_int, [P, C, ctypes.POINTER(DLDataType)]),
            "tgc_model_state_shape": (ctypes.c_int, [P, C, ctypes.POINTER(I64),
                                                     ctypes.POINTER(I64), I64]),
            "tgc_model_get_state": (ctypes.c_int, [P, C, ctypes.POINTER(DLTensor)]),
            "tgc_model_set_state": (ctypes.c_int, [P, C, ctypes.POINTER(DLTensor)]),
        }
        for fn, (res, args) in sigs.items():
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        optional = {
            "tgc_model_set_num_threads": (None, [P, ctypes.c_int]),
            "tgc_model_num_threads": (ctypes.c_int, [P]),
            "tgc_model_device_type": (ctypes.c_int, [P]),
            "tgc_model_set_cuda_stream": (ctypes.c_int, [P, P]),
        }
        for fn, (res, args) in optional.items():
            f = getattr(lib, fn, None)
            if f is not None:
                f.restype, f.argtypes = res, args

    @property
    def device_type(self):
        """Where the model runs: kDLCPU (1) or kDLCUDA (2)."""
        f = getattr(self._lib, "tgc_model_device_type", None)
        return kDLCPU if f is None else f(self._handle)

    def set_cuda_stream(self, stream):
        """tgc_model_set_cuda_stream: the CUDA stream (an integer handle, None or 0 for the
        legacy default stream) this instance's calls run on, without waiting for their
        work."""
        f = getattr(self._lib, "tgc_model_set_cuda_stream", None)
        if f is None:
            raise TgcError("this model.so's runtime has no CUDA streams")
        if f(self._handle, ctypes.c_void_p(stream or None)) != 0:
            raise TgcError(f"tgc: {self.name}: {self.last_error()}")

    @property
    def num_threads(self):
        """Threads of this instance's calls (None if the runtime predates threads)."""
        f = getattr(self._lib, "tgc_model_num_threads", None)
        return None if f is None else f(self._handle)

    @num_threads.setter
    def num_threads(self, n):
        """tgc_model_set_num_threads: n < 1 restores the default (TGC_NUM_THREADS, else
        the CPUs the process may run on)."""
        f = getattr(self._lib, "tgc_model_set_num_threads", None)
        if f is None:
            raise TgcError("this model.so's runtime has no thread control")
        f(self._handle, int(n))

    @staticmethod
    def _declare_training(lib):
        """Declares the training functions; False if the .so lacks a required one."""
        P, I64, C = ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p
        tensors_in = ctypes.POINTER(ctypes.POINTER(DLTensor))
        tensors_out = ctypes.POINTER(ctypes.POINTER(DLManagedTensor))
        required = {
            "tgc_model_run_train": (ctypes.c_int, [P, tensors_in, I64, tensors_out, I64]),
            "tgc_model_num_gradients": (I64, [P]),
            "tgc_model_gradient_name": (C, [P, I64]),
            "tgc_model_backward": (ctypes.c_int, [P, tensors_in, I64, tensors_out, I64]),
        }
        optional = {
            "tgc_model_is_trainable": (ctypes.c_int, [P]),
            "tgc_model_output_has_gradient": (ctypes.c_int, [P, I64]),
            "tgc_model_saved_count": (I64, [P]),
            "tgc_model_saved_bytes": (I64, [P]),
        }
        for fn, (res, args) in list(required.items()) + list(optional.items()):
            try:
                f = getattr(lib, fn)
            except AttributeError:
                if fn in required:
                    return False
                continue
            f.restype, f.argtypes = res, args
        return True

    @staticmethod
    def _str(b):
        return b.decode("utf-8", "replace") if b is not None else None

    def last_error(self):
        return self._str(self._lib.tgc_model_last_error(self._handle))

    def _check(self, rc, what):
        if rc != 0:
            raise TgcError(f"{what}: {self.last_error()}")

    # ------------------------------------------------------------------ running
    def prepare(self, *inputs):
        return PreparedCall(self, inputs)

    def run(self, *inputs, as_torch=False):
        """Runs forward; returns the user outputs as numpy (or torch) copies."""
        return PreparedCall(self, inputs)(copy_outputs=True, as_torch=as_torch)

    __call__ = run

    # ------------------------------------------------------------------ training
    def prepare_train(self, inputs, grad_outputs):
        return PreparedTrainStep(self, inputs, grad_outputs)

    def run_train(self, *inputs, as_torch=False):
        """tgc_model_run_train: forward that keeps the saved values for one backward;
        returns the user outputs as numpy (or torch) copies."""
        self._pending = PreparedTrainStep(self, inputs, [None] * self.num_outputs)
        return self._pending.forward(True, as_torch)

    def backward(self, *grad_outputs, as_torch=False):
        """tgc_model_backward after run_train: one gradient (or None) per user output;
        returns num_gradients copies, in `gradient_names` order. The inputs of the last
        run_train are kept alive until then (the backward may write mutated inputs)."""
        step = PreparedTrainStep(self, [], grad_outputs)
        try:
            return step.backward(True, as_torch)
        finally:
            self._pending = None

    def output_has_gradient(self, i):
        """1 / 0 (tgc_model_output_has_gradient), or None if the runtime lacks it."""
        f = getattr(self._lib, "tgc_model_output_has_gradient", None)
        return None if f is None or not self.trainable else f(self._handle, i)

    def saved_count(self):
        f = getattr(self._lib, "tgc_model_saved_count", None)
        return None if f is None else f(self._handle)

    def saved_bytes(self):
        """Bytes the last run_train allocated for saved values (None if unknown)."""
        f = getattr(self._lib, "tgc_model_saved_bytes", None)
        return None if f is None else f(self._handle)

    # ------------------------------------------------------------------ state
    def state_dtype_shape(self, name):
        b = name.encode()
        dt = DLDataType()
        self._check(self._lib.tgc_model_state_dtype(self._handle, b, ctypes.byref(dt)),
                    f"state_dtype('{name}')")
        rank = ctypes.c_int64(0)
        sizes = (ctypes.c_int64 * 8)()
        rc = self._lib.tgc_model_state_shape(self._handle, b, ctypes.byref(rank), sizes, 8)
        if rc != 0 and rank.value > 8:
            sizes = (ctypes.c_int64 * rank.value)()
            rc = self._lib.tgc_model_state_shape(self._handle, b, ctypes.byref(rank), sizes,
                                                 rank.value)
        self._check(rc, f"state_shape('{name}')")
        return (dt.code, dt.bits), tuple(sizes[i] for i in range(rank.value))

    def get_state(self, name, as_torch=False):
        code_bits, shape = self.state_dtype_shape(name)
        np_dt = np.dtype(np.uint16) if code_bits == (kDLBfloat, 16) else _DL_TO_NP[code_bits]
        arr = np.empty(shape, np_dt)
        arg = _TensorArg(arr)
        arg.dl.dtype = DLDataType(code_bits[0], code_bits[1], 1)
        self._check(self._lib.tgc_model_get_state(self._handle, name.encode(),
                                                  ctypes.byref(arg.dl)),
                    f"get_state('{name}')")
        return _to_torch(arr, code_bits) if as_torch else arr

    def set_state(self, name, value):
        arg = _TensorArg(value)
        self._check(self._lib.tgc_model_set_state(self._handle, name.encode(),
                                                  ctypes.byref(arg.dl)),
                    f"set_state('{name}')")

    # ------------------------------------------------------------------ lifetime
    def close(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h:
            self._lib.tgc_model_destroy(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<tgc.Model {self.name!r} inputs={self.input_names} "
                f"outputs={self.output_names} path={self.path!r}>")
