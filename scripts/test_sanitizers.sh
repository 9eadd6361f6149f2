#!/usr/bin/env bash
# Kiln's tests under sanitizers: part of ./scripts/test.sh (and so of CI).
#
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (with LeakSanitizer):
#         every CTest test (the unit tests of every layer, the corpus runs,
#         the C API tests, the command line's), against a plugin built the
#         same way; only the check of the plugin's exported symbols is
#         left out (a sanitized library imports the sanitizer's runtime).
#   tsan  ThreadSanitizer: the runtime's, the C API's and the client's
#         concurrency tests, the limits tests (runs cancelled from other
#         threads) and the stress test.
#
#   scripts/test_sanitizers.sh [asan|tsan|all|ci]     (default: all)
#
# ci (what ./scripts/test.sh runs): tsan, and asan over every test binary
# but the three that read no outside input and build the most code under
# the sanitizers: kiln_compile_tests, kiln_exec_tests and kiln_ir_tests
# (programs and arrays built in the tests' own code). What reads outside
# input stays covered: parsers, fuzz replays, the corpus through the C API,
# the C API, runtime, client and command line. The three took 780 of the
# ASan build's 5100 s of processor time on 2 cores, and CI's 90 minutes did
# not hold the whole run beside the rest.
#
# Builds go to build-asan/ and build-tsan/ (or $KILN_SANITIZER_BUILD_PREFIX-asan,
# -tsan). Every report fails the run: UBSan does not recover, ASan's and
# TSan's exit codes are non-zero. KILN_SANITIZER_BUILD_ONLY=1 builds and
# runs nothing (scripts/stress.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${KILN_SANITIZER_BUILD_PREFIX:-${KILN_BUILD_DIR:-$ROOT/build}}"
export KILN_SHARED_DIR="${KILN_SHARED_DIR:-$ROOT/../shared}"
JOBS="$(nproc)"
which="${1:-all}"
status=0

SKIPPED=""
if [ "$which" = ci ]; then
  SKIPPED="kiln_compile_tests;kiln_exec_tests;kiln_ir_tests"
fi

configure_and_build() {  # dir sanitizers targets...
  local dir="$1" sanitize="$2"
  shift 2
  # -O1 -g1: sanitized code runs a few times slower than optimized code,
  # builds much faster than -O3 with full debug information, and its
  # reports still name files and lines.
  cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" \
    -DKILN_SANITIZE="$sanitize" -DKILN_BUILD_BENCHMARKS=OFF \
    -DKILN_TESTS_SKIPPED="$SKIPPED" >/dev/null
  cmake --build "$dir" --target "$@"
}

run_ctest() {  # dir label ctest-args...
  local dir="$1" label="$2"
  shift 2
  local start=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" --timeout 900 "$@") || status=1
  echo "sanitizers: $label tests took $((SECONDS - start)) s"
}

if [ "$which" = asan ] || [ "$which" = all ] || [ "$which" = ci ]; then
  start=$SECONDS
  configure_and_build "$PREFIX-asan" "address;undefined" all
  echo "sanitizers: the ASan+UBSan build took $((SECONDS - start)) s"
  [ -z "${KILN_SANITIZER_BUILD_ONLY:-}" ] || exit 0
  # The plugin is dlopened by a sanitized test binary; the host process's
  # allocator is ASan's, so leaks in the plugin are found too.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    run_ctest "$PREFIX-asan" "ASan+UBSan" -E '^pjrt_plugin_exports$'
fi

if [ "$which" = tsan ] || [ "$which" = all ] || [ "$which" = ci ]; then
  start=$SECONDS
  configure_and_build "$PREFIX-tsan" "thread" \
    kiln_runtime_tests kiln_pjrt_tests kiln_client_tests pjrt_kiln
  echo "sanitizers: the TSan build took $((SECONDS - start)) s"
  [ -z "${KILN_SANITIZER_BUILD_ONLY:-}" ] || exit 0
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/tests/sanitizers/tsan.supp" \
    run_ctest "$PREFIX-tsan" "TSan" \
      -R 'Concurrency|Stress|Limits|WorkQueue|EventTest|CollectivesTest|SpmdTest|SlowProgram|BufferLifetime|ExecuteFourDevices'
fi
exit "$status"
