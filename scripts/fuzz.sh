#!/usr/bin/env bash
# Builds Kiln's libFuzzer targets (clang, with ASan and UBSan) and runs each
# for a given time, seeded from tests/fuzz/seeds and ../shared/corpus.
#
#   scripts/fuzz.sh SECONDS [TARGET...]      (default: every target)
#
# Targets: text_parser_fuzzer bytecode_fuzzer hlo_reader_fuzzer
# compile_fuzzer compile_options_fuzzer executable_fuzzer npy_fuzzer
# capi_fuzzer. $KILN_FUZZ_JOBS targets run at once (default: the cores).
# An input running longer than $KILN_FUZZ_TIMEOUT seconds (default 30) is
# reported as a hang; raise it when the machine is busy with other work,
# which can starve a low-priority fuzzer for minutes.
# Each target's corpus grows in build-fuzz/corpus/<target>/ and is kept
# between runs; a crash is written to build-fuzz/crashes/<target>/. Once
# fixed, copy the input to tests/fuzz/regressions/<target>/: the replay
# tests run it from then on. The last lines give per target the executions,
# the coverage (libFuzzer's cov and ft) and the crashes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
SHARED="${KILN_SHARED_DIR:-$ROOT/../shared}"
SECONDS_EACH="${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}"
shift
ALL=(text_parser_fuzzer bytecode_fuzzer hlo_reader_fuzzer compile_fuzzer
     compile_options_fuzzer executable_fuzzer npy_fuzzer capi_fuzzer)
TARGETS=("$@")
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=("${ALL[@]}")

"$ROOT/scripts/setup.sh"
if ! command -v clang++ >/dev/null || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, long) { return 0; }' \
    | clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
  major="$(clang++ -dumpversion | cut -d. -f1)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    "libclang-rt-$major-dev" >/dev/null || true
fi
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_BUILD_FUZZERS=ON \
  -DKILN_SANITIZE="address;undefined" -DKILN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$BUILD" --target "${TARGETS[@]}"

# The corpus's .mlir files hold many programs each, separated by
# `// -----`: the text fuzzers start from the parts (up to 16 KB each).
split_parts() {  # out_dir dirs...
  local out="$1"
  shift
  [ -d "$out" ] && return 0
  mkdir -p "$out"
  for dir in "$@"; do
    [ -d "$dir" ] || continue
    find "$dir" -name '*.mlir' -print0 | xargs -0 awk -v out="$out" '
      FNR == 1 { part++ }
      /^\/\/ -----/ { part++; next }
      { file = out "/" part ".mlir"; print >> file; close(file) }'
  done
  find "$out" -type f -size +16k -delete
}
# Seeds beyond the target's own (tests/fuzz/seeds/<target>).
seeds_of() {
  case "$1" in
    text_parser_fuzzer)
      split_parts "$BUILD/seeds/text" "$SHARED/corpus/stablehlo/syntax" "$SHARED/corpus/stablehlo/testdata"
      echo "$BUILD/seeds/text" ;;
    bytecode_fuzzer) echo "$SHARED/corpus/stablehlo/vhlo" ;;
    compile_fuzzer)
      split_parts "$BUILD/seeds/compile" "$SHARED/corpus/stablehlo/testdata" \
        "$SHARED/corpus/stablehlo/interpret" "$SHARED/corpus/stablehlo/math"
      echo "$BUILD/seeds/compile" ;;
  esac
}
options_of() {
  case "$1" in
    text_parser_fuzzer|compile_fuzzer)
      echo "-max_len=16384 -dict=$ROOT/tests/fuzz/text_parser.dict" ;;
    bytecode_fuzzer|hlo_reader_fuzzer|executable_fuzzer) echo "-max_len=65536" ;;
    *) echo "-max_len=4096" ;;
  esac
}

run_one() {
  local target="$1"
  local corpus="$BUILD/corpus/$target" crashes="$BUILD/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  local seeds=()
  for dir in "$ROOT/tests/fuzz/seeds/$target" "$ROOT/tests/fuzz/regressions/$target" \
             $(seeds_of "$target"); do
    [ -d "$dir" ] && seeds+=("$dir")
  done
  # -timeout: one input taking longer is a hang, reported as a crash.
  ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$BUILD/bin/$target" -max_total_time="$SECONDS_EACH" \
      -timeout="${KILN_FUZZ_TIMEOUT:-30}" \
      -rss_limit_mb=6144 -print_final_stats=1 $(options_of "$target") \
      -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" \
      > "$BUILD/$target.log" 2>&1 || true
}

JOBS="${KILN_FUZZ_JOBS:-$(nproc)}"
running=0
for target in "${TARGETS[@]}"; do
  run_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
done
wait || true

status=0
echo "--- fuzzing, $SECONDS_EACH s per target"
for target in "${TARGETS[@]}"; do
  log="$BUILD/$target.log"
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1 || true)"
  found="$(find "$BUILD/crashes/$target" -type f | wc -l)"
  echo "$target: ${runs} executions, ${cov:-no coverage line}, corpus $(ls "$BUILD/corpus/$target" | wc -l) inputs, $found crashes"
  [ "$found" -eq 0 ] || status=1
done
exit "$status"
