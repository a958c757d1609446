#!/usr/bin/env bash
# Installs tgc's build dependencies from Debian's packages (only the missing ones) and
# builds tgc with CMake + Ninja into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build pkg-config python3
  clang-22 clang-format-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libclang-rt-22-dev
  libomp-22-dev
  libcli11-dev nlohmann-json3-dev catch2 libzip-dev libdlpack-dev libboost-graph-dev
  libopenblas-dev libdnnl2 zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "tgc setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --with-torch (or TGC_WITH_TORCH=1): a project virtualenv .venv/ with torch, safetensors,
# numpy and hatchling (the build backend of pyproject.toml, for the pip install test) from
# PyPI, where the tests that call PyTorch find it (lit.cfg.py: .venv or
# $TGC_TORCH_PYTHON, nothing else). Bytecode capture targets CPython 3.12: the venv uses
# python3.12 when there is one (on PATH or in pyenv), else python3.
#
# --with-pythons (or TGC_WITH_PYTHONS=1): also .venv311/ and .venv313/ with torch,
# safetensors and numpy for each of CPython 3.11 and 3.13 that the machine has (on PATH
# or in pyenv), where the conformance suite runs again (capture-conformance-py3NN.test).
#
# The packages come from PyPI through uv, which pip installs into each venv first: uv
# fetches and unpacks torch and its CUDA libraries (about 4 GB) in parallel and links the
# files of a second venv from its cache, where pip unpacks every venv's copy file by file
# (three venvs: 17 minutes with pip on a 2-core machine, about 1 with uv).
venv_install() { # venv_install VENV PACKAGES...
  local venv="$1"
  shift
  if [ ! -x "$venv/bin/uv" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check uv
  fi
  "$venv/bin/uv" pip install -q --python "$venv/bin/python" "$@"
}
WITH_TORCH="${TGC_WITH_TORCH:-0}"
WITH_PYTHONS="${TGC_WITH_PYTHONS:-0}"
for arg in "$@"; do
  case "$arg" in
    --with-torch) WITH_TORCH=1 ;;
    --with-pythons) WITH_PYTHONS=1 ;;
    *) echo "usage: scripts/setup.sh [--with-torch] [--with-pythons]" >&2; exit 2 ;;
  esac
done
if [ "$WITH_TORCH" = 1 ]; then
  if [ ! -x .venv/bin/python ]; then
    python=""
    for candidate in "$(pyenv root 2>/dev/null)/versions/3.12"*/bin/python3.12 python3.12 python3; do
      # (a pyenv shim exists for versions that are installed but not selected: run it)
      if "$candidate" -c "import sys" > /dev/null 2>&1; then
        python="$(command -v "$candidate")"
        break
      fi
    done
    echo "tgc setup: creating .venv with $python"
    if ! "$python" -m venv .venv 2>/dev/null; then
      # Debian's python3 needs python3-venv for `-m venv`.
      sudo=""
      if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
      $sudo apt-get install -y -qq --no-install-recommends python3-venv
      "$python" -m venv .venv
    fi
  fi
  # nvidia-cuda-cuobjdump: cuobjdump (300 KB), with which tests list the cubins of CUDA
  # models; the CUDA toolkit does not always ship it.
  venv_install .venv torch safetensors numpy hatchling nvidia-cuda-cuobjdump
fi
if [ "$WITH_PYTHONS" = 1 ]; then
  for minor in 11 13; do
    venv=".venv3$minor"
    if [ ! -x "$venv/bin/python" ]; then
      python=""
      for candidate in "$(pyenv root 2>/dev/null)/versions/3.$minor"*/bin/python3.$minor python3.$minor; do
        if "$candidate" -c "import sys" > /dev/null 2>&1; then
          python="$(command -v "$candidate")"
          break
        fi
      done
      if [ -z "$python" ]; then
        echo "tgc setup: no CPython 3.$minor here; its conformance run is skipped"
        continue
      fi
      echo "tgc setup: creating $venv with $python"
      "$python" -m venv "$venv" || { echo "tgc setup: cannot make $venv; skipped"; continue; }
    fi
    venv_install "$venv" torch safetensors numpy
  done
fi

echo "tgc setup: packages and Python environments ready after $SECONDS s"
BUILD_DIR="${TGC_BUILD_DIR:-build}"
begin=$SECONDS
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C "$BUILD_DIR"
echo "tgc setup: the build took $((SECONDS - begin)) s"
