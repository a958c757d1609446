#!/usr/bin/env bash
# Sets up and builds tgc (scripts/setup.sh), then runs every test: the Catch2 unit
# tests and the lit suite (dialect, passes, readers, CLI, numerics against PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR="${TGC_BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2
