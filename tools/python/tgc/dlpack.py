"""Zero-copy torch <-> C ABI calls through DLPack capsules (docs/abi.md).

Inputs: `torch.utils.dlpack.to_dlpack(t)` gives a capsule holding a `DLManagedTensor *`
whose `dl_tensor` views `t`'s memory with its strides; the runtime reads it (and writes
mutated user inputs back through it) in place. The capsule is kept alive for as long as
the runtime may touch the memory and released by Python afterwards (its destructor calls
torch's deleter: the capsule is never consumed).

Outputs: the runtime returns `DLManagedTensor *`s; each is wrapped in a capsule named
`"dltensor"` and handed to `torch.utils.dlpack.from_dlpack`, which takes ownership: the
torch tensor uses the runtime's buffer and calls its deleter when it dies. The deleter
lives in the model's .so, which ctypes never unloads.
"""

import ctypes

import torch
import torch.utils.dlpack

from .runtime import DLManagedTensor, DLTensor, TgcError

_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_TENSOR_P = ctypes.POINTER(DLTensor)
_MANAGED_P = ctypes.POINTER(DLManagedTensor)


class TensorArgs:
    """A `DLTensor *[]` viewing torch tensors (None -> NULL) and the capsules that keep
    the views valid. `keep()` the object while the runtime may read or write them."""

    __slots__ = ("array", "count", "_capsules")

    def __init__(self, tensors, what="input"):
        self.count = len(tensors)
        self.array = (_TENSOR_P * max(self.count, 1))()
        self._capsules = []
        for i, t in enumerate(tensors):
            if t is None:
                continue
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"tgc: {what} #{i} is a {type(t).__name__}, expected a "
                                f"torch.Tensor")
            # CPU tensors for CPU models, CUDA tensors for CUDA models, which run on
            # torch's current stream (docs/cuda.md); the runtime checks the device.
            if t.device.type not in ("cpu", "cuda"):
                raise TgcError(f"tgc: {what} #{i}: expected a CPU or CUDA tensor, got device "
                               f"{t.device}")
            capsule = torch.utils.dlpack.to_dlpack(t.detach())
            self._capsules.append(capsule)
            # The legacy capsule's DLManagedTensor starts with its DLTensor.
            self.array[i] = ctypes.cast(_PyCapsule_GetPointer(capsule, b"dltensor"),
                                        _TENSOR_P)


def tensor_arg(t, what="tensor"):
    """(DLTensor pointer, keep-alive) for one torch tensor."""
    args = TensorArgs([t], what)
    return args.array[0], args


def managed_array(n):
    """A `DLManagedTensor *[n]` for the runtime to fill."""
    return (_MANAGED_P * max(n, 1))()


def take_outputs(array, n):
    """Torch tensors owning the runtime's n DLManagedTensors in `array` (zero-copy);
    None for NULL entries."""
    results = []
    try:
        for i in range(n):
            p = array[i]
            if not p:
                results.append(None)
                continue
            capsule = _PyCapsule_New(ctypes.cast(p, ctypes.c_void_p), b"dltensor", None)
            array[i] = None  # owned by the capsule, then by the torch tensor
            try:
                results.append(torch.utils.dlpack.from_dlpack(capsule))
            except Exception:
                p.contents.deleter(p)
                raise
    finally:
        for i in range(n):  # outputs not taken yet (after an error)
            p = array[i]
            if p:
                p.contents.deleter(p)
                array[i] = None
    return results


_NO_DELETER = DLManagedTensor._fields_[2][1](lambda managed: None)


def _borrowed_view(pointer):
    """A torch view of the memory a `DLTensor *` describes, and the DLManagedTensor it
    was imported through (keep it alive as long as the view: torch calls its deleter)."""
    managed = DLManagedTensor()
    managed.dl_tensor = pointer.contents
    managed.deleter = _NO_DELETER
    capsule = _PyCapsule_New(ctypes.addressof(managed), b"dltensor", None)
    return torch.utils.dlpack.from_dlpack(capsule), managed


def borrow_tensor(pointer):
    """A torch copy of the tensor a `DLTensor *` (valid only during the call) views."""
    view, managed = _borrowed_view(pointer)
    copy = view.clone()
    del view
    del managed
    return copy


def write_tensor(pointer, value):
    """Copies `value` (a tensor of the same shape) into the memory of a `DLTensor *`."""
    view, managed = _borrowed_view(pointer)
    with torch.no_grad():
        view.copy_(value)
    del view
    del managed
