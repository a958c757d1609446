#!/usr/bin/env bash
# Installs tgc's build dependencies from Debian's packages (only the missing ones) and
# builds tgc with CMake + Ninja into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build pkg-config python3
  clang-22 clang-format-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
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

BUILD_DIR="${TGC_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C "$BUILD_DIR"
