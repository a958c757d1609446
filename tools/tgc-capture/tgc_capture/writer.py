"""Writes a .trace file (docs/trace-format.md): the object graph walk and the serializer.

This module imports torch; import it at capture time only.
"""

import dataclasses
import dis
import functools
import importlib.util
import inspect
import marshal
import math
import operator
import os
import platform
import re
import sys
import sysconfig
import types
import typing
import weakref

import torch

from . import format as fmt

#: Top-level packages whose classes and functions are `external` (known to tgc by
#: name) rather than interpreted; nn.Module / autograd.Function subclasses excepted.
LIBRARY_PACKAGES = frozenset(sys.stdlib_module_names) | {
    "builtins", "torch", "functorch", "numpy", "sympy", "typing_extensions", "safetensors",
    "triton", "_frozen_importlib", "_frozen_importlib_external", "tgc_capture",
}

#: Library functions written in Python that tgc interprets like user code (their
#: bytecode is in the trace), as Dynamo inlines them: the body of
#: nn.MultiheadAttention, which calls them, is ordinary tensor code.
INTERPRETED_LIBRARY_FUNCTIONS = frozenset({
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.functional._canonical_mask",
    "torch.nn.functional._in_projection_packed",
    "torch.nn.functional._in_projection",
    "torch.nn.functional._mha_shape_check",
    "torch.nn.functional._check_key_padding_mask",
    "torch.nn.functional.normalize",
})

#: Modules whose Python functions the trace records twice over: as `external` (by name,
#: which tgc binds when it models the function) with the function itself (`python`: its
#: bytecode, globals and defaults), which tgc interprets when it has no binding of its own,
#: as Dynamo inlines them (docs/trace-format.md). torch.nn.functional's wrappers are plain
#: tensor code over ATen operators (F.softsign, F.kl_div, the losses).
INTERPRETED_FALLBACK_MODULES = frozenset({"torch.nn.functional", "torch.nn._reduction"})

#: The grad-mode context managers, recorded with their state (`mode`) when the program
#: reaches an instance made outside it: a `@torch.no_grad()` decorator's wrapper calls the
#: instance's `clone` for each call, and a module may keep one to enter.
GRAD_MODE_MANAGERS = (torch.no_grad, torch.enable_grad, torch.set_grad_enabled,
                      torch.inference_mode)

#: Class-dict entries left out unless the reachable bytecode names them.
CLASS_DICT_SKIPPED = frozenset({
    "__doc__", "__annotations__", "__dict__", "__weakref__", "__static_attributes__",
    "__firstlineno__",
})

#: torch's private C modules and the public modules that re-export their functions.
PUBLIC_ALIASES = {
    "torch._C._nn": "torch.nn.functional",
    "torch._C._linalg": "torch.linalg",
    "torch._C._fft": "torch.fft",
    "torch._C._special": "torch.special",
    "torch._C._nested": "torch.nested",
}

#: The types of typing's bare aliases of classes (`typing.Sequence`, `typing.Dict`).
_TYPING_ALIASES = tuple(t for t in (getattr(typing, "_SpecialGenericAlias", None),
                                    getattr(typing, "_CallableType", None)) if t is not None)

DESCRIPTOR_TYPES = (
    types.MethodDescriptorType, types.WrapperDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.ClassMethodDescriptorType,
)
BOUND_BUILTIN_TYPES = (types.BuiltinFunctionType, types.MethodWrapperType)
CONTAINER_KINDS = ((tuple, "tuple"), (list, "list"), (set, "set"), (frozenset, "frozenset"),
                   (dict, "dict"))
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _library_roots():
    """The directories installed Python code lives in: the standard library and every
    site-packages (sysconfig's and those on sys.path), longest first."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots.update(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))
    return sorted({os.path.normpath(r) for r in roots if r}, key=len, reverse=True)


def portable_filename(filename, roots=None):
    """`filename` as a trace records it: the file of installed code relative to the root
    it was imported from (`torch/nn/modules/linear.py`), so that the same program gives
    the same trace whatever the machine and the environment's path; the user's own files
    as Python names them."""
    if not os.path.isabs(filename):
        return filename
    for root in roots if roots is not None else _library_roots():
        if filename.startswith(root + os.sep):
            return filename[len(root) + 1:]
    return filename


def portable_code(code, roots=None):
    """`code` and the code objects nested in it with portable_filename's filenames."""
    roots = _library_roots() if roots is None else roots
    consts = tuple(portable_code(c, roots) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    filename = portable_filename(code.co_filename, roots)
    if filename == code.co_filename and all(a is b for a, b in zip(consts, code.co_consts)):
        return code
    return code.replace(co_filename=filename, co_consts=consts)


class CaptureError(Exception):
    """A capture that cannot be written (bad arguments, unsupported Python)."""


def _module_dict(module):
    try:
        return vars(module)
    except TypeError:
        return {}


def _resolve(module_name, qualname):
    """The object `module_name`.`qualname` names, without importing anything, or None."""
    module = sys.modules.get(module_name)
    if module is None:
        return None
    parts = qualname.split(".")
    obj = _module_dict(module).get(parts[0])
    for part in parts[1:]:
        if obj is None or "<" in part:
            return None
        try:
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            return None
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
    return obj


def _safe_repr(obj):
    try:
        text = repr(obj)
    except Exception as e:  # an unused object must never fail the capture
        text = "<repr failed: %s>" % type(e).__name__
    text = _ADDRESS.sub("", text)
    return text if len(text) <= 200 else text[:200] + "..."


@functools.lru_cache(maxsize=None)
def _aten_overloads(name):
    """[[target, schema]...] of the ATen operator `name` (`aten::std`), in the registry's
    order; [] when there is none."""
    if not name.isidentifier() or name.startswith("__"):
        return []
    # Not the out= overloads: tgc calls the functional ones.
    return [["aten.%s.%s" % (name, s.overload_name or "default"), str(s).partition("::")[2]]
            for s in torch._C._jit_get_schemas_for_operator("aten::" + name)
            if not any(a.is_out for a in s.arguments)]


def _operator_target(overload):
    """`aten.addmm.default`: an operator overload as torch.export names its target."""
    return "%s.%s" % (overload._schema.name.replace("::", "."),
                      overload._overloadname or "default")


def _is_python_constant(value):
    if value is None or type(value) in (bool, int, float, str):
        return True
    return type(value) is tuple and all(_is_python_constant(v) for v in value)


def _assumed_constant_result(fn):
    """(True, fn()) for a function marked `torch._dynamo.assume_constant_result` (the
    `_dynamo_marked_constant` attribute; transformers' install and hardware probes) that
    takes no arguments and returns a Python constant; (False, None) otherwise. Dynamo
    calls such a function while tracing and uses its result as a constant; the call is
    made here, where Python runs."""
    if not fn.__dict__.get("_dynamo_marked_constant"):
        return False, None
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False, None
    if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
           for p in signature.parameters.values()):
        return False, None
    try:
        result = fn()
    except Exception:  # noqa: BLE001 - the call is then interpreted (and fails there)
        return False, None
    return (True, result) if _is_python_constant(result) else (False, None)


def _type_name(cls):
    return "%s.%s" % (getattr(cls, "__module__", "?"), getattr(cls, "__qualname__", "?"))


def _is_library_module(module_name):
    return bool(module_name) and module_name.split(".")[0] in LIBRARY_PACKAGES


def _code_names(code, out, strings=None):
    """Adds the co_names of `code` and of its nested code constants to `out`, and its
    string constants to `strings`."""
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_names(const, out, strings)
        elif isinstance(const, str) and strings is not None:
            strings.add(const)


_IMPORT_NAME = bytes([dis.opmap["IMPORT_NAME"]])


def _code_imports(code, package, out):
    """Adds the absolute module names of `code`'s IMPORT_NAME instructions (and of its
    nested code), with their parent packages, to `out`."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_imports(const, package, out)
    # Most code imports nothing: a scan of the opcode bytes (every other byte) saves
    # dis's decoding, which dominates the capture of large libraries.
    if _IMPORT_NAME not in code.co_code[::2]:
        return
    instructions = list(dis.get_instructions(code))
    for i, ins in enumerate(instructions):
        if ins.opname != "IMPORT_NAME":
            continue
        level = 0
        if i >= 2 and instructions[i - 2].opname == "LOAD_CONST" \
                and isinstance(instructions[i - 2].argval, int):
            level = instructions[i - 2].argval
        try:
            name = importlib.util.resolve_name("." * level + ins.argval, package) \
                if level else ins.argval
        except (ImportError, ValueError, TypeError):
            continue
        parts = name.split(".")
        for n in range(1, len(parts) + 1):
            out.add(".".join(parts[:n]))


class _Walk:
    """One depth-first walk of the object graph with a fixed name restriction.

    Ids are assigned in pre-order (an object gets its id before its children), children
    in a fixed order, so the same objects and options give the same table."""

    def __init__(self, names, input_storages, strings=frozenset()):
        self.names = names
        self.strings = strings
        self.input_storages = input_storages
        self.found_names = set()
        self.found_strings = set()
        self.found_imports = set()
        self.ids = {}
        self.keep = []
        self.objects = []
        self.blobs = []
        self.scanned = set()
        self.library_roots = _library_roots()

    # -- values -------------------------------------------------------------------------

    def value(self, obj, hint=None):
        t = type(obj)
        if obj is None or t is bool or t is str:
            return obj
        if t is int:
            return obj if INT64_MIN <= obj <= INT64_MAX else {"int": str(obj)}
        if t is float:
            if math.isfinite(obj):
                return obj
            return {"float": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        key = id(obj)
        if key in self.ids:
            return {"ref": self.ids[key]}
        return {"ref": self._add(key, obj, lambda: self._record_or_opaque(obj, hint))}

    def _record_or_opaque(self, obj, hint):
        # An object the walk cannot describe must not fail the capture: the program may
        # never use it, and if it does tgc reports the opaque object's type.
        try:
            return self._record(obj, hint)
        except Exception:
            return {"kind": "opaque", "type": _type_name(type(obj)), "repr": _safe_repr(obj)}

    def _add(self, key, obj, make):
        index = len(self.objects)
        self.objects.append(None)
        self.ids[key] = index
        self.keep.append(obj)
        self.objects[index] = make()
        return index

    def _blob(self, data):
        """Registers a blob (bytes, or a callable producing them at write time)."""
        self.blobs.append(data)
        return len(self.blobs) - 1

    # -- kinds --------------------------------------------------------------------------

    def _record(self, obj, hint):
        t = type(obj)
        if obj is os.environ:
            # The environment variables the reachable code names (as string constants),
            # not the whole environment: a trace must not carry the capturing machine's
            # secrets, and stays the same on another machine.
            return {"kind": "dict", "class": self.value(type(obj)),
                    "items": [[k, os.environ[k]] for k in sorted(self.strings)
                              if k in os.environ]}
        if isinstance(obj, torch.Tensor):
            return self._tensor(obj)
        if t is torch.dtype:
            return {"kind": "dtype", "name": str(obj).rpartition(".")[2]}
        if t is torch.device:
            return {"kind": "device", "type": obj.type, "index": obj.index}
        if t in (torch.layout, torch.memory_format, torch.qscheme):
            return {"kind": "external", "module": "torch",
                    "qualname": str(obj).rpartition(".")[2]}
        for base, kind in CONTAINER_KINDS:
            if isinstance(obj, base):
                return self._container(obj, base, kind)
        if t is bytes:
            return {"kind": "bytes", "blob": self._blob(obj)}
        if t is complex:
            return {"kind": "complex", "real": self.value(obj.real), "imag": self.value(obj.imag)}
        if t in (range, slice):
            return {"kind": t.__name__, "start": self.value(obj.start),
                    "stop": self.value(obj.stop), "step": self.value(obj.step)}
        if obj is Ellipsis:
            return {"kind": "ellipsis"}
        if obj is NotImplemented:
            return {"kind": "external", "module": "builtins", "qualname": "NotImplemented"}
        if t is types.CodeType:
            return self._code(obj)
        if t is types.FunctionType:
            return self._function(obj, hint)
        if t is types.MethodType:
            return {"kind": "method", "function": self.value(obj.__func__),
                    "self": self.value(obj.__self__)}
        if isinstance(obj, BOUND_BUILTIN_TYPES):
            owner = getattr(obj, "__self__", None)
            if owner is None or isinstance(owner, (types.ModuleType, type)):
                return self._external(obj, hint)
            return self._bound_builtin(obj, owner)
        if isinstance(obj, DESCRIPTOR_TYPES):
            return self._external(obj, hint)
        if t in (staticmethod, classmethod):
            return {"kind": t.__name__, "function": self.value(obj.__func__)}
        if t is property:
            return {"kind": "property", "fget": self.value(obj.fget),
                    "fset": self.value(obj.fset), "fdel": self.value(obj.fdel)}
        if isinstance(obj, torch._ops.OpOverloadPacket):
            return self._operator(obj._qualified_op_name.replace("::", "."),
                                  [getattr(obj, name) for name in obj.overloads()])
        if isinstance(obj, torch._ops.OpOverload):
            return self._operator(_operator_target(obj), [obj])
        if isinstance(obj, types.ModuleType):
            return self._module(obj)
        if isinstance(obj, type):
            if self._interpreted_class(obj):
                return self._class(obj)
            return self._external(obj, hint)
        if t is types.CellType:
            try:
                contents = obj.cell_contents
            except ValueError:
                return {"kind": "cell"}
            return {"kind": "cell", "contents": self.value(contents)}
        # functools.lru_cache / cache: the function it wraps (the cache does not change
        # what a call returns; library code caches pure probes this way).
        if t is functools._lru_cache_wrapper and isinstance(
                getattr(obj, "__wrapped__", None), types.FunctionType):
            return self._function(obj.__wrapped__, hint)
        # A weak reference (nn.RNNBase keeps its parameters' in `_flat_weight_refs`): its
        # referent, which calling it returns (None once it is dead).
        if t is weakref.ref:
            return {"kind": "object", "class": self.value(t),
                    "dict": {"referent": self.value(obj())}}
        # functools.partial (a C type): what tgc calls it with (its func, args, keywords).
        if t is functools.partial:
            return {"kind": "object", "class": self.value(t),
                    "dict": {"func": self.value(obj.func), "args": self.value(obj.args),
                             "keywords": self.value(obj.keywords)}}
        # A bare alias of the typing module (`typing.Sequence`, `typing.List`): external by
        # its name (tgc checks isinstance() against the class it stands for).
        if isinstance(obj, _TYPING_ALIASES) and getattr(obj, "_name", None):
            return {"kind": "external", "module": "typing", "qualname": obj._name}
        # operator.itemgetter / attrgetter / methodcaller (C types): what they were made
        # from, as tgc makes them (their __reduce__ gives it).
        if t in (operator.itemgetter, operator.attrgetter):
            return {"kind": "object", "class": self.value(t),
                    "dict": {"items": self.value(tuple(obj.__reduce__()[1]))}}
        if t is operator.methodcaller:
            maker, args = obj.__reduce__()
            if isinstance(maker, functools.partial):  # made with keywords
                name, kwargs = maker.args[0], dict(maker.keywords)
            else:
                name, args, kwargs = args[0], args[1:], {}
            return {"kind": "object", "class": self.value(t),
                    "dict": {"name": self.value(name), "args": self.value(tuple(args)),
                             "kwargs": self.value(kwargs)}}
        # A dataclass's fields (its class's `__dataclass_fields__`) with their attributes:
        # `dataclasses.fields()` reads their names and defaults.
        if self._interpreted_class(t) or isinstance(
                obj, (torch.nn.Module, dataclasses.Field) + GRAD_MODE_MANAGERS):
            return self._object(obj)
        return {"kind": "opaque", "type": _type_name(t), "repr": _safe_repr(obj)}

    def _container(self, obj, base, kind):
        record = {"kind": kind}
        if type(obj) is not base:
            record["class"] = self.value(type(obj))
        if base is dict:
            record["items"] = [[self.value(k), self.value(v)] for k, v in dict.items(obj)]
        elif base in (set, frozenset):
            ordered = sorted(obj, key=lambda x: (_type_name(type(x)), _safe_repr(x)))
            record["items"] = [self.value(x) for x in ordered]
        else:
            record["items"] = [self.value(x) for x in base.__iter__(obj)]
        return record

    def _code(self, code):
        code = portable_code(code, self.library_roots)
        _code_names(code, self.found_names, self.found_strings)
        return {"kind": "code", "blob": self._blob(marshal.dumps(code)), "name": code.co_name,
                "qualname": code.co_qualname, "filename": code.co_filename,
                "firstlineno": code.co_firstlineno}

    def _interpreted_function(self, fn):
        module_name = fn.__module__
        if not _is_library_module(module_name):
            return True
        qualname = fn.__qualname__
        if "%s.%s" % (module_name, qualname) in INTERPRETED_LIBRARY_FUNCTIONS:
            return True
        if "<locals>" in qualname:
            return True
        owner = _module_dict(sys.modules.get(module_name)).get(qualname.split(".")[0]) \
            if "." in qualname and module_name in sys.modules else None
        return isinstance(owner, type) and self._interpreted_class(owner)

    def _function(self, fn, hint):
        if not self._interpreted_function(fn):
            record = self._external(fn, hint)
            if fn.__module__ in INTERPRETED_FALLBACK_MODULES:
                key = ("python", id(fn))
                index = self.ids[key] if key in self.ids else \
                    self._add(key, fn, lambda: self._function_record(fn))
                record["python"] = {"ref": index}
            return record
        return self._function_record(fn)

    def _function_record(self, fn):
        scan_key = (id(fn.__code__), id(fn.__globals__))
        if scan_key not in self.scanned:
            self.scanned.add(scan_key)
            _code_imports(fn.__code__, fn.__globals__.get("__package__")
                          or fn.__globals__.get("__name__"), self.found_imports)
        record = {"kind": "function", "code": self.value(fn.__code__),
                  "globals": self._globals(fn.__globals__), "name": fn.__name__,
                  "qualname": fn.__qualname__, "module": self.value(fn.__module__)}
        record["defaults"] = None if fn.__defaults__ is None else \
            [self.value(v) for v in fn.__defaults__]
        record["kwdefaults"] = None if fn.__kwdefaults__ is None else \
            {k: self.value(v) for k, v in fn.__kwdefaults__.items()}
        record["closure"] = None if fn.__closure__ is None else \
            [self.value(c) for c in fn.__closure__]
        if fn.__dict__:
            record["dict"] = {k: self.value(v) for k, v in fn.__dict__.items()}
        found, result = _assumed_constant_result(fn)
        if found:
            record["constant_result"] = self.value(result)
        return record

    def _globals(self, namespace):
        key = ("globals", id(namespace))
        if key in self.ids:
            return {"ref": self.ids[key]}

        def make():
            module_name = namespace.get("__name__")
            return {"kind": "globals", "module": module_name if type(module_name) is str else None,
                    "entries": self._restricted(namespace, module_name)}

        return {"ref": self._add(key, namespace, make)}

    def _restricted(self, namespace, module_name):
        entries = {}
        # The names in both, in sorted order (a namespace can be far smaller or larger
        # than the names).
        for name in sorted(self.names.intersection(namespace)):
            hint = (module_name, name) if type(module_name) is str else None
            entries[name] = self.value(namespace[name], hint)
        return entries

    def _module(self, module):
        name = getattr(module, "__name__", None)
        namespace = _module_dict(module)
        if isinstance(module, torch._ops._OpNamespace):
            # torch.ops.<namespace> makes an operator on first access: the names the
            # code uses that name one are added.
            namespace = dict(namespace)
            for op in sorted(self.names - namespace.keys()):
                if torch._C._jit_get_schemas_for_operator("%s::%s" % (module.name, op)):
                    namespace[op] = getattr(module, op)
        return {"kind": "module", "name": name,
                "attributes": self._restricted(namespace, name)}

    def _operator(self, qualname, overloads):
        """A torch.ops operator (`torch.ops.aten.addmm`, an overload packet, or one of
        its overloads): external, with each overload's ATen target and schema, by which
        tgc binds a call as torch's dispatcher does."""
        return {"kind": "external", "module": "torch.ops", "qualname": qualname,
                "overloads": [[_operator_target(o), str(o._schema).partition("::")[2]]
                              for o in overloads]}

    def _interpreted_class(self, cls):
        if cls in (torch.nn.Module, torch.autograd.Function):
            return False
        try:
            if issubclass(cls, (torch.nn.Module, torch.autograd.Function)):
                return True
        except TypeError:
            return False
        if not cls.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: C types are external
            return False
        return not _is_library_module(getattr(cls, "__module__", None))

    def _class(self, cls):
        entries = {}
        for name, value in cls.__dict__.items():
            if name in CLASS_DICT_SKIPPED and name not in self.names:
                continue
            entries[name] = self.value(value)
        return {"kind": "class", "name": cls.__name__, "qualname": cls.__qualname__,
                "module": self.value(cls.__module__),
                "bases": [self.value(b) for b in cls.__bases__],
                "mro": [self.value(c) for c in cls.__mro__], "dict": entries}

    def _object(self, obj):
        class_value = self.value(type(obj))
        entries = {}
        try:
            namespace = object.__getattribute__(obj, "__dict__")
        except AttributeError:
            namespace = {}
        for name, value in namespace.items():
            entries[name] = self.value(value)
        for klass in type(obj).__mro__:
            slots = klass.__dict__.get("__slots__", ())
            for slot in [slots] if isinstance(slots, str) else slots:
                if slot in ("__dict__", "__weakref__") or slot in entries:
                    continue
                try:
                    entries[slot] = self.value(object.__getattribute__(obj, slot))
                except AttributeError:
                    pass
        return {"kind": "object", "class": class_value, "dict": entries}

    def _bound_builtin(self, method, owner):
        name = method.__name__
        function = getattr(type(owner), name, None)
        if isinstance(function, DESCRIPTOR_TYPES + (types.BuiltinFunctionType,)):
            function_value = self.value(function)
        else:
            module, qualname = self._public_name_of_type(type(owner))
            function_value = {"ref": self._add(("bound", id(method)), method, lambda: {
                "kind": "external", "module": module, "qualname": qualname + "." + name})}
        return {"kind": "method", "function": function_value, "self": self.value(owner)}

    # -- externals ----------------------------------------------------------------------

    def _external(self, obj, hint):
        module, qualname = self._external_name(obj, hint)
        record = {"kind": "external", "module": module, "qualname": qualname}
        # A torch builtin (`torch.std`, `Tensor.std`, `torch._C._nn.X`): the overloads of
        # the ATen operator of its name, by which tgc binds a call it has no entry for.
        if module.split(".")[0] == "torch" and \
                isinstance(obj, BOUND_BUILTIN_TYPES + (types.MethodDescriptorType,)):
            overloads = _aten_overloads(qualname.rpartition(".")[2])
            if overloads:
                record["overloads"] = overloads
        return record

    def _public_name_of_type(self, cls):
        if cls in (torch.Tensor, torch._C.TensorBase):
            return "torch", "Tensor"
        return self._public_name(cls, cls.__module__, cls.__qualname__) \
            or (cls.__module__, cls.__qualname__)

    def _external_name(self, obj, hint):
        objclass = getattr(obj, "__objclass__", None)
        if isinstance(obj, DESCRIPTOR_TYPES) and isinstance(objclass, type):
            module, qualname = self._public_name_of_type(objclass)
            return module, qualname + "." + obj.__name__
        if isinstance(obj, type):
            return self._public_name_of_type(obj)
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
        if type(qualname) is str and qualname.startswith("_VariableFunctionsClass."):
            return "torch", qualname.partition(".")[2]
        if type(module) is str and type(qualname) is str:
            found = self._public_name(obj, module, qualname)
            if found:
                return found
        if hint:
            return hint
        return (module if type(module) is str else _type_name(type(obj)),
                qualname if type(qualname) is str else _safe_repr(obj))

    def _public_name(self, obj, module, qualname):
        """The shortest public path naming `obj` (`torch.nn.Module`, not
        `torch.nn.modules.module.Module`), or None if `module.qualname` is not `obj`."""
        candidates = []
        if module in PUBLIC_ALIASES:
            candidates.append(PUBLIC_ALIASES[module])
        if module.startswith("_") and "." not in module:
            candidates.append(module[1:])
        parts = module.split(".")
        candidates += [".".join(parts[:n]) for n in range(1, len(parts) + 1)]
        for candidate in candidates:
            if _resolve(candidate, qualname) is obj:
                return candidate, qualname
        return None

    # -- tensors ------------------------------------------------------------------------

    def _tensor(self, t):
        if t.layout != torch.strided or type(t) not in (torch.Tensor, torch.nn.Parameter):
            return {"kind": "opaque", "type": _type_name(type(t)), "repr": _safe_repr(t)}
        hooks = getattr(t, "_backward_hooks", None) or {}
        return {"kind": "tensor", "storage": self._storage(t), "dtype": str(t.dtype).rpartition(".")[2],
                "shape": list(t.shape), "stride": list(t.stride()),
                "storage_offset": t.storage_offset(), "device": str(t.device),
                "requires_grad": t.requires_grad,
                "parameter": isinstance(t, torch.nn.Parameter),
                "hooks": [self.value(h) for h in hooks.values()]}

    def _storage(self, t):
        storage = t.untyped_storage()
        key = ("storage", storage._cdata)
        if key in self.ids:
            return {"ref": self.ids[key]}

        def make():
            record = {"kind": "storage", "nbytes": storage.nbytes()}
            if storage._cdata not in self.input_storages and storage.device.type != "meta":
                record["blob"] = self._blob(lambda: _storage_bytes(storage))
            return record

        return {"ref": self._add(key, storage, make)}


def _storage_bytes(storage):
    if storage.device.type != "cpu":
        storage = storage.cpu()
    if storage.nbytes() == 0:
        return b""
    tensor = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (storage.nbytes(),), (1,))
    return tensor.numpy().tobytes() if _has_numpy() else bytes(tensor.tolist())


def _has_numpy():
    try:
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def _tensor_leaves(value, name, out):
    """(name, tensor) for every tensor of an argument (nested lists/tuples/dicts too)."""
    if isinstance(value, torch.Tensor):
        out.append((name, value))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _tensor_leaves(item, "%s.%d" % (name, i), out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _tensor_leaves(item, "%s.%s" % (name, key), out)


def _parameter_names(fn, count):
    """Names of the first `count` positional parameters of `fn` (self excluded)."""
    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = []
    for p in parameters:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names += ["%s_%d" % (p.name, i) for i in range(count - len(names))]
    names += ["arg%d" % i for i in range(len(names), count)]
    return names[:count]


def _normalize_dynamic(dynamic, input_names, inputs):
    """{name: {dim: (min, max)}} (or {name: [dim, ...]}) -> the header's `dynamic` maps."""
    result = {}
    for name, dims in (dynamic or {}).items():
        if name not in input_names:
            raise CaptureError("dynamic: `%s` is not a tensor input (inputs: %s)"
                               % (name, ", ".join(input_names) or "none"))
        tensor = inputs[input_names.index(name)]
        if not isinstance(dims, dict):
            dims = {d: (None, None) for d in dims}
        entry = {}
        for dim, bounds in sorted(dims.items()):
            lo, hi = (tuple(bounds) + (None, None))[:2] if bounds is not None else (None, None)
            lo = 2 if lo is None else lo
            if not 0 <= dim < tensor.dim():
                raise CaptureError("dynamic %s:%d: `%s` has %d dimensions"
                                   % (name, dim, name, tensor.dim()))
            size = tensor.shape[dim]
            if size < lo or (hi is not None and size > hi):
                raise CaptureError("dynamic %s:%d: the example size %d is outside [%s, %s]"
                                   % (name, dim, size, lo, "inf" if hi is None else hi))
            entry[str(dim)] = {"symbol": "%s_%d" % (name, dim), "min": lo, "max": hi}
        result[name] = entry
    return result


def _active_saved_tensors_hooks():
    """The saved-tensor hooks torch applies now: [(pack, unpack)] or []."""
    top = getattr(torch._C._autograd, "_top_saved_tensors_default_hooks", None)
    if top is None:
        return []
    pair = top(False)
    return [tuple(pair)] if pair is not None else []


def _walk_to_fixpoint(fn, args, kwargs, hooks, input_storages):
    """The globals/module restriction grows with the code it reaches: walks until the
    names (and the modules imported by reachable code) no longer change; returns the
    last walk and the header's entry, hook and module values."""
    names, imports, strings = set(), set(), set()
    while True:
        walk = _Walk(frozenset(names), input_storages, frozenset(strings))
        entry = {"callable": walk.value(fn), "args": [walk.value(a) for a in args],
                 "kwargs": {k: walk.value(v) for k, v in kwargs.items()}}
        hook_values = [[walk.value(pack), walk.value(unpack)] for pack, unpack in hooks]
        modules = {name: walk.value(sys.modules[name])
                   for name in sorted(imports) if name in sys.modules}
        if walk.found_names <= names and walk.found_imports <= imports and \
                walk.found_strings <= strings:
            return walk, entry, hook_values, modules
        names |= walk.found_names
        imports |= walk.found_imports
        strings |= walk.found_strings


def capture(fn_or_module, example_args, path, train=False, *, example_kwargs=None,
            input_names=None, dynamic=None, saved_tensors_hooks=None):
    """Writes the .trace of calling `fn_or_module(*example_args, **example_kwargs)`.

    Nothing is called or traced: the callable's bytecode and every object it can reach
    are serialized (docs/trace-format.md).

    * `example_args`: a tuple/list of arguments (a single tensor is wrapped).
    * `train`: recorded in the header (`tgc compile` builds the training step); the
      modules' own `training` flags are captured as they are.
    * `input_names`: names of the tensor inputs (all tensors in the arguments, in order,
      nested ones included); default: the parameter names of `forward` / the function
      (`x`, or `xs.0` for a tensor in a list argument), keyword names for kwargs.
    * `dynamic`: {input name: {dim: (min, max)}} or {input name: [dim, ...]}; `min`
      defaults to 2, `max` to None (unbounded).
    * `saved_tensors_hooks`: [(pack, unpack)] to record instead of the hooks active now.

    Returns the JSON header that was written."""
    fmt.check_python()
    if not callable(fn_or_module):
        raise CaptureError("capture: %s is not callable" % _type_name(type(fn_or_module)))
    if isinstance(example_args, torch.Tensor) or not isinstance(example_args, (list, tuple)):
        example_args = (example_args,)
    example_args = tuple(example_args)
    example_kwargs = dict(example_kwargs or {})

    leaves = []
    for name, arg in zip(_parameter_names(fn_or_module, len(example_args)), example_args):
        _tensor_leaves(arg, name, leaves)
    for name, arg in example_kwargs.items():
        _tensor_leaves(arg, name, leaves)
    if input_names is not None:
        input_names = list(input_names)
        if len(input_names) != len(leaves):
            raise CaptureError("capture: %d input names for %d tensor inputs"
                               % (len(input_names), len(leaves)))
    else:
        input_names = [name for name, _ in leaves]
    if len(set(input_names)) != len(input_names):
        raise CaptureError("capture: duplicate input names %s" % input_names)
    input_tensors = [t for _, t in leaves]
    dynamic_maps = _normalize_dynamic(dynamic, input_names, input_tensors)
    hooks = _active_saved_tensors_hooks() if saved_tensors_hooks is None \
        else [tuple(pair) for pair in saved_tensors_hooks]
    for pair in hooks:
        if len(pair) != 2:
            raise CaptureError("capture: saved_tensors_hooks must be (pack, unpack) pairs")
    input_storages = {t.untyped_storage()._cdata for t in input_tensors}

    recursion_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(recursion_limit, 50000))
    try:
        walk, entry, hook_values, modules = _walk_to_fixpoint(
            fn_or_module, example_args, example_kwargs, hooks, input_storages)
    finally:
        sys.setrecursionlimit(recursion_limit)

    inputs = []
    for name, tensor in zip(input_names, input_tensors):
        record = {"name": name, "tensor": walk.ids[id(tensor)]}
        if name in dynamic_maps:
            record["dynamic"] = dynamic_maps[name]
        inputs.append(record)
    header = {
        "format": "tgc-trace", "version": list(fmt.VERSION), "producer": fmt.PRODUCER,
        "python": {"implementation": platform.python_implementation().lower(),
                   "version": list(sys.version_info[:3]),
                   "magic": int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little")},
        "torch": torch.__version__.split("+")[0],
        "train": bool(train),
        "entry": entry,
        "inputs": inputs,
        "saved_tensors_hooks": hook_values,
        "modules": modules,
        "objects": walk.objects,
    }
    # The grad mode of the call (torch.no_grad() around an eval capture): the program's
    # outside its own blocks; only when disabled, so other traces keep their bytes.
    if not torch.is_grad_enabled():
        header["grad_enabled"] = False
    # hasattr(t, name) / getattr(t, name, default) on a tensor: whether torch.Tensor has
    # the attribute, which tgc cannot know (transformers asks for `jax`); only for code
    # that names them, so other traces keep their bytes.
    if walk.names & {"hasattr", "getattr"}:
        header["tensor_attributes"] = sorted(dir(torch.Tensor))
    # The ATen overloads of the Tensor methods the code names (`x.std(dim=1)`), by which
    # tgc binds a method call it has no entry for.
    methods = {}
    for name in sorted(walk.names):
        if isinstance(getattr(torch.Tensor, name, None), types.MethodDescriptorType):
            overloads = _aten_overloads(name)
            if overloads:
                methods[name] = overloads
    if methods:
        header["tensor_methods"] = methods
    blobs = [b() if callable(b) else b for b in walk.blobs]
    return fmt.write_trace(path, header, blobs)
