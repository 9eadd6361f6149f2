#!/usr/bin/env bash
# Soaks the plugin: the stress test (tests/pjrt/stress_test.cc: 8 threads,
# 4 devices, random uploads, executes with donation, copies, reads and
# deletes, every value checked) for a given time, under ThreadSanitizer
# (LeakSanitizer is ASan's; `KILN_STRESS_SANITIZER=asan` soaks under
# ASan+UBSan+LSan instead).
#
#   scripts/stress.sh DURATION [SEED]     DURATION: 90, 90s, 30m, 2h
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DURATION="${1:?usage: scripts/stress.sh DURATION [SEED]}"
case "$DURATION" in
  *h) seconds=$(( ${DURATION%h} * 3600 )) ;;
  *m) seconds=$(( ${DURATION%m} * 60 )) ;;
  *s) seconds=${DURATION%s} ;;
  *) seconds=$DURATION ;;
esac
SANITIZER="${KILN_STRESS_SANITIZER:-tsan}"
PREFIX="${KILN_SANITIZER_BUILD_PREFIX:-${KILN_BUILD_DIR:-$ROOT/build}}"
"$ROOT/scripts/setup.sh"
KILN_SANITIZER_BUILD_ONLY=1 "$ROOT/scripts/test_sanitizers.sh" "$SANITIZER"
export KILN_STRESS_SECONDS="$seconds"
[ -z "${2:-}" ] || export KILN_STRESS_SEED="$2"
export TSAN_OPTIONS="halt_on_error=1:suppressions=$ROOT/tests/sanitizers/tsan.supp"
export ASAN_OPTIONS="detect_leaks=1"
export KILN_BUILD_DIR="$PREFIX-$SANITIZER"
exec "$PREFIX-$SANITIZER/bin/kiln_pjrt_tests" --gtest_filter='StressTest.*'
