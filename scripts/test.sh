#!/usr/bin/env bash
# Sets up and builds tgc (scripts/setup.sh), then runs every test: the Catch2 unit
# tests and the lit suite (dialect, passes, readers, CLI, numerics against PyTorch,
# tgc.load and the capture tests against live PyTorch in .venv), in the normal build and
# again in the sanitizer build, then the fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every test includes those that call PyTorch: the setup makes .venv with it.
# The conformance suite runs again on each other Python version (3.11, 3.13) the machine
# has: --with-pythons makes a venv with torch for each.
bash scripts/setup.sh --with-torch --with-pythons
BUILD_DIR="${TGC_BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2
# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer (docs/fuzzing.md):
# the instrumented build (build-fuzz/) and ctest there.
bash scripts/test-sanitize.sh
# The libFuzzer harnesses of that build: 30 s each from the fixtures' corpus; a crash or
# sanitizer report fails the run.
bash fuzz/run.sh 30
