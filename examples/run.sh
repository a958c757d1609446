#!/usr/bin/env bash
# The bundled example: compiles an MLP exported with torch.export (the mlp fixture,
# test/fixtures/mlp/core.pt2, made by test/fixtures/export_fixtures.py) into model.so +
# model.h, builds the C program examples/mlp/main.c against it and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${TGC_BUILD_DIR:-build}"
OUT="$BUILD_DIR/examples/mlp"
mkdir -p "$OUT"
"$BUILD_DIR/bin/tgc" compile test/fixtures/mlp/core.pt2 -o "$OUT/model.so"
clang-22 -std=c11 -Wall -I "$OUT" examples/mlp/main.c "$OUT/model.so" -Wl,-rpath,'$ORIGIN' -o "$OUT/mlp"
"$OUT/mlp"
