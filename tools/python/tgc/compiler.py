"""`tgc.compile`: capture, compile and load in one call, the `torch.compile`-like path.

    import tgc
    compiled = tgc.compile(model, (x,))                # captured, compiled, loaded
    y = compiled(x)                                    # == model(x)
    step = tgc.compile(model, (x,), train=True)        # differentiable, like tgc.load(train=True)

The program is captured with `tgc_capture.capture` into a .trace and compiled by the
installed `tgc` (`find_compiler`). Compiled models are kept in an on-disk cache
(`cache_dir`: $TGC_CACHE_DIR, else $XDG_CACHE_HOME/tgc or ~/.cache/tgc), so a second
call with the same program, inputs' shapes and options, in this process or another one,
loads the model without compiling. docs/python.md describes the cache.
"""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from .runtime import TgcError

__all__ = ["compile", "find_compiler", "cache_directory"]

#: Bumped when the layout of a cache entry changes: older entries are then not used.
_CACHE_FORMAT = 1


def find_compiler(compiler=None):
    """The `tgc` executable: `compiler` if given, else $TGC, else the one of the install
    prefix this package is in (<prefix>/lib/python/tgc -> <prefix>/bin/tgc), else `tgc` on
    PATH. Raises TgcError if there is none."""
    candidates = []
    if compiler:
        candidates.append(compiler)
    elif os.environ.get("TGC"):
        candidates.append(os.environ["TGC"])
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        candidates.append(os.path.join(here, "..", "..", "..", "bin", "tgc"))
        found = shutil.which("tgc")
        if found:
            candidates.append(found)
    for candidate in candidates:
        path = shutil.which(candidate) if os.sep not in candidate else candidate
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.realpath(path)
    raise TgcError("tgc.compile: cannot find the tgc compiler (tried %s); install tgc, put it "
                   "on PATH, or set $TGC to its path" % (", ".join(candidates) or "PATH"))


def cache_directory(cache_dir=None):
    """Where compiled models are kept: `cache_dir`, else $TGC_CACHE_DIR, else
    $XDG_CACHE_HOME/tgc, else ~/.cache/tgc."""
    if cache_dir:
        return os.path.abspath(cache_dir)
    if os.environ.get("TGC_CACHE_DIR"):
        return os.path.abspath(os.environ["TGC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tgc")


def _file_identity(path):
    """(path, size, modification time in ns) of `path`, or (path, None, None) if it is
    gone: a file that changes changes its identity."""
    try:
        st = os.stat(path)
        return [path, st.st_size, st.st_mtime_ns]
    except OSError:
        return [path, None, None]


def _read_depfile(path, trace):
    """The files a compile read (`tgc compile --depfile`), without the trace itself."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    _, _, deps = text.partition(": ")
    files, current, escaped = [], "", False
    for c in deps.strip():
        if escaped:
            current += c
            escaped = False
        elif c == "\\":
            escaped = True
        elif c.isspace():
            if current:
                files.append(current)
            current = ""
        else:
            current += c
    if current:
        files.append(current)
    return sorted(f for f in files if os.path.realpath(f) != os.path.realpath(trace))


def _entry_key(program_key, root):
    """The cache entry of `program_key` for the compiler as it is now: the files the
    last compile of that program read (the tgc binary, the runtime it links; recorded in
    `<program_key>.deps`) with their current identities. A rebuilt tgc or runtime gives
    another entry, never a stale one."""
    deps_path = os.path.join(root, program_key + ".deps")
    try:
        with open(deps_path) as f:
            deps = json.load(f)
    except (OSError, ValueError):
        return None
    identities = [_file_identity(path) for path in deps]
    digest = hashlib.sha256(json.dumps([program_key, identities]).encode()).hexdigest()
    return digest[:32]


def _compile_into(compiler, trace, directory, flags):
    """Runs `tgc compile` on `trace` into `directory`/model.so; the files it read."""
    library = os.path.join(directory, "model.so")
    depfile = os.path.join(directory, "model.d")
    command = [compiler, "compile", trace, "-o", library, "--name", "model",
               "--depfile", depfile] + list(flags)
    env = dict(os.environ, TGC_NO_PROGRESS="1")
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    if result.returncode != 0:
        raise TgcError("tgc.compile: `%s` failed (exit code %d):\n%s"
                       % (" ".join(command), result.returncode,
                          (result.stderr or result.stdout).rstrip()))
    return _read_depfile(depfile, trace)


#: How many variants `on_guard_failure="recompile"` compiles for one program before it
#: calls the program eagerly (Dynamo's `recompile_limit` is 8 as well).
RECOMPILE_LIMIT = 8


class Recompiling:
    """What `tgc.compile(..., on_guard_failure="recompile")` returns: like torch.compile,
    a call whose guards fail, or whose tensors do not match any compiled variant's
    inputs (another dtype or static size), is captured and compiled again for that call,
    and the new variant is kept (`variants`, tried in order, each a `tgc.load` result).
    After `limit` variants a call no variant accepts runs the program eagerly (warning
    once), as torch.compile falls back at its recompile limit."""

    def __init__(self, fn, first, compile_variant, limit=RECOMPILE_LIMIT):
        self.fn = fn
        self.variants = [first]
        self.limit = limit
        self._compile_variant = compile_variant
        self._warned = False

    def __call__(self, *args, **kwargs):
        for variant in self.variants:
            if variant.accepts(args, kwargs):
                return variant(*args, **kwargs)
        if len(self.variants) < self.limit:
            variant = self._compile_variant(args, kwargs)
            self.variants.append(variant)
            return variant(*args, **kwargs)
        if not self._warned:
            import warnings
            warnings.warn(f"tgc.compile: {len(self.variants)} variants compiled (the limit); "
                          f"calling the program eagerly", stacklevel=2)
            self._warned = True
        return self.fn(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.variants[0], name)


def compile(fn_or_module, example_args, train=False, *, options=(), cache_dir=None,
            compiler=None, on_guard_failure="raise", **capture_options):
    """Captures `fn_or_module(*example_args)` (tgc_capture.capture, whose keyword options
    `example_kwargs`, `input_names`, `dynamic` and `saved_tensors_hooks` pass through
    `capture_options`), compiles it with `tgc compile` (plus `--train` with `train`, and
    the flags in `options`, e.g. `["--cpu", "x86-64-v3"]` or `["--allow-graph-breaks"]`)
    and returns `tgc.load(model.so, fn_or_module, train, on_guard_failure)`. With
    `on_guard_failure="recompile"` it returns a `Recompiling` callable instead, which
    compiles again for a call whose guards fail or whose tensors differ in dtype or a
    static size, keeping up to RECOMPILE_LIMIT variants (docs/python.md).

    The compiled model is cached under `cache_directory(cache_dir)`, keyed by the trace's
    bytes (the program, every object it reaches and the inputs' metadata), the flags, the
    compiler's path, and the files the compile read (the tgc binary and its runtime: a
    rebuilt tgc compiles again). Capture needs CPython 3.12 and torch."""
    if on_guard_failure == "recompile":
        def compile_variant(args, kwargs):
            options_now = dict(capture_options)
            if kwargs:
                options_now["example_kwargs"] = kwargs
            return compile(fn_or_module, tuple(args), train, options=options, cache_dir=cache_dir,
                           compiler=compiler, on_guard_failure="raise", **options_now)

        first = compile(fn_or_module, example_args, train, options=options, cache_dir=cache_dir,
                        compiler=compiler, on_guard_failure="raise", **capture_options)
        return Recompiling(fn_or_module, first, compile_variant)
    return _compile_one(fn_or_module, example_args, train, options, cache_dir, compiler,
                        on_guard_failure, capture_options)


def _compile_one(fn_or_module, example_args, train, options, cache_dir, compiler,
                 on_guard_failure, capture_options):
    """`compile` for one variant: capture, compile (or find in the cache) and load."""
    import tgc_capture

    from .loader import load

    compiler = find_compiler(compiler)
    flags = (["--train"] if train else []) + [str(flag) for flag in options]
    root = os.path.join(cache_directory(cache_dir), "v%d" % _CACHE_FORMAT)
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix="compile-", dir=root)
    try:
        trace = os.path.join(work, "model.trace")
        tgc_capture.capture(fn_or_module, example_args, trace, train, **capture_options)
        digest = hashlib.sha256()
        with open(trace, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        digest.update(json.dumps([compiler, flags]).encode())
        program_key = digest.hexdigest()[:32]

        entry_key = _entry_key(program_key, root)
        if entry_key is not None and os.path.exists(os.path.join(root, entry_key, "model.so")):
            return load(os.path.join(root, entry_key, "model.so"), fn_or_module, train,
                        on_guard_failure)

        deps = _compile_into(compiler, trace, work, flags)
        with open(os.path.join(root, program_key + ".deps.tmp%d" % os.getpid()), "w") as f:
            json.dump(deps, f)
        os.replace(f.name, os.path.join(root, program_key + ".deps"))
        entry_key = _entry_key(program_key, root)
        entry = os.path.join(root, entry_key)
        try:
            os.rename(work, entry)  # atomic: a concurrent reader sees all of it or nothing
            work = None
        except OSError:
            if not os.path.exists(os.path.join(entry, "model.so")):
                raise
            # Another process made the same entry meanwhile: use it.
        return load(os.path.join(entry, "model.so"), fn_or_module, train, on_guard_failure)
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
