#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit tests, ABI check, corpus runs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
export KILN_SHARED_DIR="${KILN_SHARED_DIR:-$ROOT/../shared}"
cd "$BUILD"
ctest --output-on-failure -j "$(nproc)" ${KILN_CTEST_ARGS:-}
