"""ctypes binding of libtgc_runner.so, the executor of programs with graph breaks
(tgc_program_*, include/tgc/Runner/tgc_runner.h; docs/graph-breaks.md).

The library is found through $TGC_RUNNER_LIBRARY, else beside this package (where
`cmake --install` puts it), else beside the tgc compiler that `tgc.compile` uses (its
install prefix, or its build tree: a pip-installed package). `tgc.load` runs every program with graph breaks through it:
the graphs, the branches and the buffers they share run there; the calls between
graphs (print) come back to Python through a callback.
"""

import ctypes
import os

from .runtime import DLManagedTensor, DLTensor, TgcError

__all__ = ["library", "ProgramInstance", "CALL_FN"]

_TENSORS_IN = ctypes.POINTER(ctypes.POINTER(DLTensor))
_TENSORS_OUT = ctypes.POINTER(ctypes.POINTER(DLManagedTensor))
# int (*)(void *user, const char *call_json, DLTensor *const *tensors, int64_t n)
CALL_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, _TENSORS_IN,
                           ctypes.c_int64)

_SIGNATURES = {
    "tgc_program_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tgc_program_free": (None, [ctypes.c_void_p]),
    "tgc_program_last_error": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tgc_program_num_inputs": (ctypes.c_int64, [ctypes.c_void_p]),
    "tgc_program_input_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int64]),
    "tgc_program_is_trainable": (ctypes.c_int, [ctypes.c_void_p]),
    "tgc_program_run": (ctypes.c_int, [ctypes.c_void_p, _TENSORS_IN, ctypes.c_int64,
                                       ctypes.c_int, CALL_FN, ctypes.c_void_p]),
    "tgc_program_result_graph": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tgc_program_num_outputs": (ctypes.c_int64, [ctypes.c_void_p]),
    "tgc_program_take_outputs": (ctypes.c_int, [ctypes.c_void_p, _TENSORS_OUT,
                                                ctypes.c_int64]),
    "tgc_program_input_is_mutated": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64]),
    "tgc_program_output_has_gradient": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64]),
    "tgc_program_num_gradients": (ctypes.c_int64, [ctypes.c_void_p]),
    "tgc_program_gradient_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int64]),
    "tgc_program_backward": (ctypes.c_int, [ctypes.c_void_p, _TENSORS_IN, ctypes.c_int64,
                                            _TENSORS_OUT, ctypes.c_int64]),
    "tgc_program_backward_with_hooks": (ctypes.c_int, [ctypes.c_void_p, _TENSORS_IN,
                                                       ctypes.c_int64, _TENSORS_OUT,
                                                       ctypes.c_int64, CALL_FN,
                                                       ctypes.c_void_p]),
    "tgc_program_num_state": (ctypes.c_int64, [ctypes.c_void_p]),
    "tgc_program_state_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int64]),
    "tgc_program_state_kind": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64]),
    "tgc_program_set_state": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                             ctypes.POINTER(DLTensor)]),
    "tgc_program_get_state": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                             ctypes.POINTER(DLTensor)]),
}

_library = None


def _candidates():
    """Where libtgc_runner.so may be, in order (the module docstring)."""
    if os.environ.get("TGC_RUNNER_LIBRARY"):
        return [os.environ["TGC_RUNNER_LIBRARY"]]
    candidates = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtgc_runner.so")]
    try:
        from .compiler import find_compiler

        bindir = os.path.dirname(find_compiler())
        candidates += [os.path.join(bindir, "..", "lib", "python", "tgc", "libtgc_runner.so"),
                       os.path.join(bindir, "..", "lib", "libtgc_runner.so")]
    except TgcError:
        pass
    return [os.path.normpath(c) for c in candidates]


def library():
    """The loaded libtgc_runner.so (once per process)."""
    global _library
    if _library is None:
        candidates = _candidates()
        path = next((c for c in candidates if os.path.exists(c)), None)
        if path is None:
            raise TgcError("tgc: cannot find the runner library libtgc_runner.so (tried %s; "
                           "set TGC_RUNNER_LIBRARY to the one of the tgc build)"
                           % ", ".join(candidates))
        lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW)
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        _library = lib
    return _library


def _str(b):
    return b.decode("utf-8", "replace") if b is not None else None


class ProgramInstance:
    """One `tgc_program` (an instance of every graph of a program) and what it last
    received from the live module."""

    _KINDS = {0: "parameter", 1: "buffer", 2: "constant"}

    def __init__(self, path):
        self.lib = lib = library()
        handle = ctypes.c_void_p()
        if lib.tgc_program_open(os.path.abspath(path).encode(), ctypes.byref(handle)) != 0:
            raise TgcError(f"tgc: {_str(lib.tgc_program_last_error(None))}")
        self.handle = handle
        self.input_names = [_str(lib.tgc_program_input_name(handle, i))
                            for i in range(lib.tgc_program_num_inputs(handle))]
        self.trainable = lib.tgc_program_is_trainable(handle) == 1
        self.gradient_names = [_str(lib.tgc_program_gradient_name(handle, i))
                               for i in range(lib.tgc_program_num_gradients(handle))]
        self.state = {_str(lib.tgc_program_state_name(handle, i)):
                      self._KINDS.get(lib.tgc_program_state_kind(handle, i), "?")
                      for i in range(lib.tgc_program_num_state(handle))}
        self.pushed = {}  # state name -> key of the live tensor's last pushed value
        self.owner = None  # the _Pending of the forward whose saved values it holds
        self.result = None  # after a run: the name of the graph whose outputs it returned
        self.has_gradient = []

    @property
    def pending(self):
        return self.owner is not None

    def last_error(self):
        return _str(self.lib.tgc_program_last_error(self.handle))

    def check(self, rc, what):
        if rc != 0:
            raise TgcError(f"{what}: {self.last_error()}")

    def set_state(self, name, ptr):
        self.check(self.lib.tgc_program_set_state(self.handle, name.encode(), ptr),
                   f"set_state('{name}')")

    def get_state(self, name, ptr):
        self.check(self.lib.tgc_program_get_state(self.handle, name.encode(), ptr),
                   f"get_state('{name}')")

    def __del__(self):
        handle, self.handle = getattr(self, "handle", None), None
        if handle:
            self.lib.tgc_program_free(handle)
