#!/usr/bin/env bash
# Every test under AddressSanitizer and UndefinedBehaviorSanitizer (docs/fuzzing.md): the
# sanitizer build ($TGC_FUZZ_BUILD_DIR, default build-fuzz/, which also holds the fuzz
# harnesses), then ctest there: the Catch2 tests, and the lit suite with Python preloading
# the sanitizers' runtime for model.so and libtgc_runner.so. A report is a failure.
# Needs what scripts/setup.sh --with-torch --with-pythons installs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${TGC_FUZZ_BUILD_DIR:-build-fuzz}"
begin=$SECONDS
bash scripts/configure-sanitize.sh "$BUILD"
ninja -C "$BUILD"
echo "tgc test: the sanitizer build took $((SECONDS - begin)) s"
begin=$SECONDS
ctest --test-dir "$BUILD" --output-on-failure -j2
echo "tgc test: the tests under the sanitizers took $((SECONDS - begin)) s"
