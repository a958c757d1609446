#!/usr/bin/env bash
# Builds the libFuzzer harnesses (an instrumented build in $TGC_FUZZ_BUILD_DIR, default
# build-fuzz/) and runs each for SECONDS (default 30) from a corpus made of the test
# fixtures and tgc-fuzz-seeds' seeds; a crash, a sanitizer report, a leak or a hang
# (an input over 20 s) fails the run and leaves the input under <build>/fuzz/artifacts/.
# The mutations follow TGC_FUZZ_SEED (default 1), so a run is repeatable on one machine.
# Usage: fuzz/run.sh [SECONDS] [HARNESS...]   (docs/fuzzing.md)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-30}"
shift || true
BUILD="${TGC_FUZZ_BUILD_DIR:-build-fuzz}"
HARNESSES=("$@")
if [ "${#HARNESSES[@]}" -eq 0 ]; then
  HARNESSES=(pt2 trace compile safetensors signature program-json model-run compiled-run)
fi

bash scripts/configure-sanitize.sh "$BUILD"
ninja -C "$BUILD" tgc-fuzzers

# Corpora: the fixtures of each format (small ones), and the generated seeds.
corpus="$BUILD/fuzz/corpus"
mkdir -p "$corpus" "$BUILD/fuzz/artifacts"
seed() { # seed HARNESS EXTENSION MAX_KIB
  mkdir -p "$corpus/$1"
  find test/fixtures -name "*.$2" -size "-$3k" -print0 |
    while IFS= read -r -d '' f; do cp "$f" "$corpus/$1/$(echo "$f" | tr / _)"; done
}
seed pt2 pt2 256
seed trace trace 64
seed safetensors safetensors 16
seed compile pt2 64 # compiled whole: the small archives
mkdir -p "$corpus/signature" "$corpus/program-json" "$corpus/model-run" "$corpus/compiled-run"
ASAN_OPTIONS=detect_leaks=0 "$BUILD/fuzz/tgc-fuzz-seeds" "$BUILD/fuzz/tiny/tiny.json" \
  "$corpus/signature" "$corpus/program-json"

status=0
for harness in "${HARNESSES[@]}"; do
  log="$BUILD/fuzz/$harness.log"
  echo "fuzz: $harness for ${SECONDS_EACH}s"
  if ! "$BUILD/fuzz/tgc-fuzz-$harness" "$corpus/$harness" -max_total_time="$SECONDS_EACH" \
      -seed="${TGC_FUZZ_SEED:-1}" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$BUILD/fuzz/artifacts/$harness-" > "$log" 2>&1; then
    echo "fuzz: $harness FAILED (log: $log)"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -20 || true
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/  $harness /" || true
done
exit $status
