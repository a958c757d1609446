"""tgc-capture: writes .trace files (docs/trace-format.md) for `tgc compile`.

Importing this package does not import torch; `capture` does, when called.
"""

from .format import TraceFormatError, UnsupportedPythonError, check_python  # noqa: F401

__all__ = ["capture", "check_python", "TraceFormatError", "UnsupportedPythonError"]


def capture(fn_or_module, example_args, path, train=False, **options):
    """Writes the .trace of `fn_or_module(*example_args)` to `path` (see writer.capture
    for the options: example_kwargs, input_names, dynamic, saved_tensors_hooks)."""
    check_python()
    from .writer import capture as write
    return write(fn_or_module, example_args, path, train, **options)
