#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit tests, ABI check, corpus runs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
export KILN_SHARED_DIR="${KILN_SHARED_DIR:-$ROOT/../shared}"
cd "$BUILD"
status=0
ctest --output-on-failure -j "$(nproc)" ${KILN_CTEST_ARGS:-} || status=$?
# What the corpus and ABI tests counted (CTest keeps their output in its log).
echo "--- corpus and ABI counts"
grep -hE '^(\[ corpus +\] |ABI |PJRT slots|vhlo golden|rejected [0-9]|text fuzz|[A-Za-z/ ()]+: [0-9]+ passed)' \
  Testing/Temporary/LastTest.log | sort -u || true
exit "$status"
