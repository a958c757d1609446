# lit configuration for tgc: pass tests on textual IR, reader and CLI tests on fixtures.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tgc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.join(config.tgc_src_root, "test")
config.test_exec_root = os.path.join(config.tgc_obj_root, "test")
config.excludes = ["Inputs", "fixtures", "zoo", "unit", "tools", "CMakeLists.txt",
                   "lit.site.cfg.py.in"]
config.substitutions.append(("%fixtures", os.path.join(config.tgc_src_root, "test", "fixtures")))
config.substitutions.append(("%zoo", os.path.join(config.tgc_src_root, "test", "zoo")))
# The package test (test/install) installs the build and builds examples/cmake with it.
config.substitutions.append(("%tgc_src_root", config.tgc_src_root))
config.substitutions.append(("%tgc_obj_root", config.tgc_obj_root))
# A sanitizer build (TGC_SANITIZE, docs/fuzzing.md): a C program linked with a model.so
# links the sanitizers' shared runtime as tgc's executables do, and Python, which did
# not, preloads it (for model.so and libtgc_runner.so) and passes it on to the tools it
# starts. Python's own allocations live to its exit: no leak check there.
_python_prefix = ""
if config.tgc_sanitize:
    # Tests of Python code alone (tgc-capture's own) run nothing the sanitizers
    # instrument: `UNSUPPORTED: sanitizer` leaves them to the normal build.
    config.available_features.add("sanitizer")
    _sanitizer_dir = os.path.dirname(config.tgc_sanitizer_runtime)
    config.substitutions.append(("%cc", "%s -fsanitize=%s -shared-libsan -Wl,-rpath,%s" % (
        config.tgc_c_compiler, config.tgc_sanitize, _sanitizer_dir)))
    _python_prefix = ("env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0:"
                      "allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 "
                      % config.tgc_sanitizer_runtime)
else:
    config.substitutions.append(("%cc", config.tgc_c_compiler))
    # ThreadSanitizer programs (a build instrumented for ASan cannot link them): the C
    # compiler is clang with its TSan runtime.
    import subprocess as _subprocess
    _tsan = _subprocess.run([config.tgc_c_compiler, "-print-file-name=libclang_rt.tsan-x86_64.a"],
                            capture_output=True, text=True).stdout.strip()
    if os.path.isabs(_tsan) and os.path.exists(_tsan):
        config.available_features.add("tsan")

# FileCheck variables are local to their CHECK-LABEL block unless named `$X`.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
if _python_prefix:
    config.substitutions = [(key, _python_prefix + value if key == "%python" else value)
                            for key, value in config.substitutions]
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["tgc-opt", "tgc", "safetensors-compare"], [config.tgc_tools_dir])

# libtgc_runner.so, the executor of programs with graph breaks: tgc.load finds it through
# $TGC_RUNNER_LIBRARY; tests of its C ABI name it %tgc_runner_library.
_runner_library = os.path.join(config.tgc_obj_root, "lib", "libtgc_runner.so")
config.environment["TGC_RUNNER_LIBRARY"] = _runner_library
config.substitutions.append(("%tgc_runner_library", _runner_library))

# Tests that need PyTorch (`REQUIRES: torch`) run with %torch-python: $TGC_TORCH_PYTHON,
# else the project's .venv (scripts/setup.sh --with-torch), if `import torch` works there.
import subprocess

_torch_python = os.environ.get("TGC_TORCH_PYTHON") or os.path.join(
    config.tgc_src_root, ".venv", "bin", "python")
if _torch_python and os.path.exists(_torch_python) and subprocess.run(
        [_torch_python, "-c", "import torch"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torch")
    config.substitutions.append(("%torch-python", _python_prefix + _torch_python))
    # `pip install` of the Python package without build isolation (no network) needs
    # its build backend there (scripts/setup.sh --with-torch installs it).
    if subprocess.run([_torch_python, "-c", "import hatchling"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        config.available_features.add("hatchling")

# The other Python versions capture supports (3.11, 3.13), each with torch:
# $TGC_TORCH_PYTHON311 / $TGC_TORCH_PYTHON313, else .venv311 / .venv313
# (scripts/setup.sh --with-pythons). `REQUIRES: torch-py311` and %torch311-python.
for _minor in ("311", "313"):
    _python = os.environ.get("TGC_TORCH_PYTHON" + _minor) or os.path.join(
        config.tgc_src_root, ".venv" + _minor, "bin", "python")
    if os.path.exists(_python) and subprocess.run(
            [_python, "-c", "import sys, torch; assert sys.version_info[:2] == (3, %s)"
             % _minor[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        config.available_features.add("torch-py" + _minor)
        config.substitutions.append(("%torch" + _minor + "-python", _python_prefix + _python))

# The CUDA toolkit (compile and link only: no test here runs CUDA code): `ptxas` tests build
# cubins; `cuobjdump` tests list what a binary holds, with the toolkit's cuobjdump or the
# one from PyPI's nvidia-cuda-cuobjdump in the project's .venv (scripts/setup.sh).
if config.tgc_cuda_toolkit:
    config.available_features.add("ptxas")
    import glob as _glob
    _cuobjdumps = [os.path.join(config.tgc_cuda_toolkit, "bin", "cuobjdump")] + sorted(
        _glob.glob(os.path.join(config.tgc_src_root, ".venv", "lib", "python3*", "site-packages",
                                "nvidia", "cu*", "bin", "cuobjdump")))
    _cuobjdumps = [path for path in _cuobjdumps if os.access(path, os.X_OK)]
    if _cuobjdumps:
        config.available_features.add("cuobjdump")
        config.substitutions.append(("%cuobjdump", _cuobjdumps[0]))

# A CUDA driver (and so, here, a GPU): `REQUIRES: cuda` tests run CUDA models,
# `UNSUPPORTED: cuda` ones check what a machine without one says.
import ctypes as _ctypes
try:
    _ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda")
except OSError:
    pass
