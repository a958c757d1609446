#!/usr/bin/env bash
# Configures the sanitizer build (docs/fuzzing.md) in $1 (default build-fuzz/) unless it
# is configured: clang-22 at -O1 with assertions, AddressSanitizer and
# UndefinedBehaviorSanitizer on tgc, its libraries and the model runtime, and the
# libFuzzer harnesses (TGC_FUZZ=ON, which implies TGC_SANITIZE=address,undefined).
# scripts/test-sanitize.sh builds all of it and runs every test there; fuzz/run.sh builds
# and runs the harnesses.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-fuzz}"
if [ ! -f "$BUILD/build.ninja" ]; then
  # -O1 with assertions: a quicker build, and a failed assertion is a finding too.
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DTGC_FUZZ=ON
fi
