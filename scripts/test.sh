#!/usr/bin/env bash
# Sets up and builds tgc (scripts/setup.sh), then runs every test: the Catch2 unit
# tests and the lit suite (dialect, passes, readers, CLI, numerics against PyTorch,
# tgc.load and the capture tests against live PyTorch in .venv), in the normal build and
# again in the sanitizer build, then the fuzzers. Each stage prints its duration, and the
# end a summary (CI's limit is 90 minutes: docs/design.md, "Building").
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
summary=()
stage() { # stage NAME COMMAND...: runs COMMAND and records how long it took
  local name="$1" begin=$SECONDS
  shift
  echo "tgc test: $name"
  "$@"
  summary+=("$(printf '%6d s  %s' $((SECONDS - begin)) "$name")")
  echo "tgc test: $name took $((SECONDS - begin)) s"
}
report() {
  echo "tgc test: stage times"
  printf '%s\n' "${summary[@]}"
  echo "tgc test: $((SECONDS - started)) s in all"
}
trap report EXIT
# Every test includes those that call PyTorch: the setup makes .venv with it.
# The conformance suite runs again on each other Python version (3.11, 3.13) the machine
# has: --with-pythons makes a venv with torch for each.
stage "setup and build" bash scripts/setup.sh --with-torch --with-pythons
BUILD_DIR="${TGC_BUILD_DIR:-build}"
stage "tests" ctest --test-dir "$BUILD_DIR" --output-on-failure -j2
# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer (docs/fuzzing.md):
# the instrumented build (build-fuzz/) and ctest there.
stage "sanitizer build and tests" bash scripts/test-sanitize.sh
# The libFuzzer harnesses of that build: 30 s each from the fixtures' corpus; a crash or
# sanitizer report fails the run.
stage "fuzzers" bash fuzz/run.sh 30
