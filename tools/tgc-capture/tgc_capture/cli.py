"""The tgc-capture command line.

    tgc-capture FILE.py:NAME --input x=f32[32,64] [--input ...] [--dynamic x:0[:min[:max]]]
                [--train] [--requires-grad NAME] [--seed N] [--save-inputs inputs.safetensors]
                -o model.trace
    tgc-capture --dump model.trace

FILE.py is loaded as a module named after its stem (`mlp.py` -> `mlp`) with its directory
on sys.path; NAME is then resolved by `resolve_target` (the rule is in its docstring and in
docs/trace-format.md).
"""

import argparse
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback

from . import format as fmt

#: --input dtype codes.
DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
          "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8", "u8": "uint8",
          "bool": "bool"}
_INPUT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=([a-z0-9]+)\[([0-9, ]*)\]$")


class UsageError(Exception):
    """A bad command line or target."""


def parse_input(text):
    """`x=f32[32,64]` -> ("x", "float32", [32, 64])."""
    match = _INPUT.match(text)
    if not match:
        raise UsageError("bad --input `%s` (expected NAME=DTYPE[d0,d1,...], e.g. x=f32[32,64])"
                         % text)
    name, code, dims = match.groups()
    if code not in DTYPES:
        raise UsageError("bad --input `%s`: unknown dtype `%s` (one of %s)"
                         % (text, code, ", ".join(DTYPES)))
    sizes = [int(d) for d in dims.replace(" ", "").split(",") if d != ""]
    return name, DTYPES[code], sizes


def parse_dynamic(text):
    """`x:0[:min[:max]]` -> ("x", 0, min or None, max or None)."""
    parts = text.split(":")
    try:
        if not 2 <= len(parts) <= 4 or not parts[0]:
            raise ValueError
        bounds = [int(p) if p not in ("", "inf") else None for p in parts[2:]]
        return (parts[0], int(parts[1])) + tuple(bounds + [None] * (2 - len(bounds)))
    except ValueError:
        raise UsageError("bad --dynamic `%s` (expected NAME:DIM[:MIN[:MAX]], e.g. x:0:1:64)"
                         % text)


def load_module(path):
    """Loads FILE.py as the module named after its stem, its directory on sys.path; its
    code objects' co_filename is `path` as given."""
    from .writer import LIBRARY_PACKAGES

    if not os.path.isfile(path):
        raise UsageError("no such file: %s" % path)
    name = os.path.splitext(os.path.basename(path))[0]
    if not name.isidentifier():
        raise UsageError("%s: the file stem `%s` is not a Python identifier" % (path, name))
    if name in LIBRARY_PACKAGES:
        raise UsageError("%s: the module name `%s` shadows a library module; rename the file"
                         % (path, name))
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Compiled here rather than by the loader, which makes the filename absolute: code
    # objects keep FILE.py as given, so that traces do not depend on the checkout path.
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    exec(code, module.__dict__)
    return module


def _takes_no_arguments(fn):
    try:
        return not inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def resolve_target(obj, input_names):
    """What NAME names -> the callable to capture.

    * an nn.Module instance is captured;
    * a class is a factory: it is called with no arguments;
    * a function without parameters is a factory: it is called;
    * any other callable (a function whose parameters take the --input names) is captured.

    A factory's result must be an nn.Module or a callable; it is captured as is."""
    import torch

    if isinstance(obj, torch.nn.Module):
        return obj
    if isinstance(obj, type) or (callable(obj) and _takes_no_arguments(obj)):
        result = obj()
        if not callable(result):
            raise UsageError("the factory returned a %s, which is not callable"
                             % type(result).__name__)
        return result
    if callable(obj):
        return obj
    raise UsageError("the target is a %s, not a module, function or factory"
                     % type(obj).__name__)


def bind_inputs(fn, inputs):
    """Splits {name: tensor} (in --input order) into (args, kwargs) by `fn`'s parameters
    (`forward`'s for a module). If every input name is a parameter name, inputs bind by
    name: leading positional parameters positionally, the rest by keyword, and a missing
    required parameter is an error. Otherwise the inputs are passed positionally in
    --input order (`nn.Sequential.forward(input)` takes `--input x=...`)."""
    import torch

    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return list(inputs.values()), {}
    if not all(any(p.name == n and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in parameters) for n in inputs):
        try:
            inspect.signature(target).bind(*inputs.values())
        except TypeError as e:
            raise UsageError("the inputs %s do not fit %s%s: %s"
                             % (", ".join(inputs), getattr(target, "__qualname__", "the target"),
                                inspect.signature(target), e))
        return list(inputs.values()), {}
    remaining = dict(inputs)
    args, kwargs, positional = [], {}, True
    for p in parameters:
        if p.kind == p.VAR_KEYWORD:
            kwargs.update(remaining)
            remaining = {}
        elif p.kind == p.VAR_POSITIONAL:
            positional = False
        elif p.name in remaining:
            if positional and p.kind != p.KEYWORD_ONLY:
                args.append(remaining.pop(p.name))
            elif p.kind == p.POSITIONAL_ONLY:
                raise UsageError("input `%s` is a positional-only parameter after a missing one"
                                 % p.name)
            else:
                kwargs[p.name] = remaining.pop(p.name)
        else:
            positional = False
            if p.default is p.empty:
                raise UsageError("no --input for the required parameter `%s` of %s%s"
                                 % (p.name, getattr(target, "__qualname__", "the target"),
                                    inspect.signature(target)))
    if remaining:
        raise UsageError("--input %s: not a parameter of %s%s"
                         % (", ".join(remaining), getattr(target, "__qualname__", "the target"),
                            inspect.signature(target)))
    return args, kwargs


def make_inputs(specs, seed):
    """Random example inputs {name: tensor} for [(name, dtype, sizes)], in order:
    torch.manual_seed(seed), randn for floating dtypes, randint(0, 10) for integers,
    randint(0, 2) for bool."""
    import torch

    torch.manual_seed(seed)
    inputs = {}
    for name, dtype_name, sizes in specs:
        dtype = getattr(torch, dtype_name)
        if dtype.is_floating_point:
            tensor = torch.randn(sizes, dtype=dtype)
        elif dtype == torch.bool:
            tensor = torch.randint(0, 2, sizes).bool()
        else:
            tensor = torch.randint(0, 10, sizes, dtype=dtype)
        inputs[name] = tensor
    return inputs


def save_safetensors(tensors, path):
    try:
        from safetensors.torch import save_file
    except ImportError:
        raise UsageError("writing %s needs the `safetensors` package" % path)
    save_file({k: v.detach().contiguous() for k, v in tensors.items()}, path)


def prepare(target, input_texts, dynamic_texts=(), train=False, seed=0, requires_grad=()):
    """Loads FILE.py:NAME and makes its inputs: (callable, args, kwargs, input names,
    dynamic map, inputs dict); the inputs named in `requires_grad` require grad (the
    trace's input tensors say so, and training differentiates with respect to them).
    Shared by main() and the fixture generator."""
    if ":" not in target:
        raise UsageError("the target must be FILE.py:NAME, got `%s`" % target)
    path, _, name = target.rpartition(":")
    specs = [parse_input(t) for t in input_texts]
    names = [s[0] for s in specs]
    if len(set(names)) != len(names):
        raise UsageError("duplicate --input names: %s" % ", ".join(names))
    dynamic = {}
    for text in dynamic_texts:
        input_name, dim, lo, hi = parse_dynamic(text)
        dynamic.setdefault(input_name, {})[dim] = (lo, hi)
    module = load_module(path)
    if not hasattr(module, name):
        raise UsageError("%s has no `%s`" % (path, name))
    fn = resolve_target(getattr(module, name), names)
    import torch
    if isinstance(fn, torch.nn.Module):
        fn.train(train)
    inputs = make_inputs(specs, seed)
    for input_name in requires_grad:
        if input_name not in inputs:
            raise UsageError("--requires-grad %s: no --input of that name" % input_name)
        if not inputs[input_name].is_floating_point():
            raise UsageError("--requires-grad %s: only floating inputs can require grad"
                             % input_name)
        inputs[input_name].requires_grad_(True)
    args, kwargs = bind_inputs(fn, inputs)
    name_of = {id(tensor): n for n, tensor in inputs.items()}
    ordered = [name_of[id(a)] for a in args] + list(kwargs)
    return fn, args, kwargs, ordered, dynamic, inputs


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tgc-capture",
        description="Capture a PyTorch program's bytecode and objects into a .trace file "
                    "for `tgc compile` (docs/trace-format.md).")
    parser.add_argument("target", nargs="?", help="FILE.py:NAME (module, function or factory)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=DTYPE[DIMS]",
                        help="a tensor input, e.g. x=f32[32,64] (dtypes: %s)"
                        % ", ".join(DTYPES))
    parser.add_argument("--dynamic", action="append", default=[], metavar="NAME:DIM[:MIN[:MAX]]",
                        help="make dimension DIM of input NAME a size symbol (MIN defaults to 2)")
    parser.add_argument("--train", action="store_true",
                        help="capture for training (modules in train() mode)")
    parser.add_argument("--requires-grad", action="append", default=[], metavar="NAME",
                        help="the input NAME requires grad (training differentiates it)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--save-inputs", metavar="FILE",
                        help="write the example inputs as safetensors keyed by input name")
    parser.add_argument("-o", "--output", metavar="FILE", help="the .trace to write")
    parser.add_argument("--dump", metavar="TRACE", help="print the JSON header of a .trace")
    return parser


def main(argv=None):
    parser = build_parser()
    options = parser.parse_args(argv)
    try:
        if options.dump:
            from .reader import load
            trace = load(options.dump)
            try:
                json.dump(trace.header, sys.stdout, indent=1, sort_keys=True)
                sys.stdout.write("\n")
                sys.stdout.flush()
            except BrokenPipeError:  # `tgc-capture --dump x.trace | head`
                sys.stdout = None
            return 0
        if not options.target or not options.output:
            raise UsageError("needs FILE.py:NAME and -o FILE (or --dump TRACE)")
        fmt.check_python()
        try:
            import torch  # noqa: F401
        except ImportError:
            raise UsageError("tgc-capture needs torch (not importable from %s)" % sys.executable)
        from .writer import CaptureError, capture
        try:
            fn, args, kwargs, names, dynamic, inputs = prepare(
                options.target, options.input, options.dynamic, options.train, options.seed,
                options.requires_grad)
            capture(fn, args, options.output, options.train, example_kwargs=kwargs,
                    input_names=names, dynamic=dynamic)
        except CaptureError as e:
            raise UsageError(str(e))
        if options.save_inputs:
            save_safetensors(inputs, options.save_inputs)
        return 0
    except (UsageError, fmt.UnsupportedPythonError, fmt.TraceFormatError, OSError) as e:
        sys.stderr.write("tgc-capture: error: %s\n" % e)
        return 1
    except Exception:
        traceback.print_exc()
        sys.stderr.write("tgc-capture: error: the program raised (traceback above)\n")
        return 1
