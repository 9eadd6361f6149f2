#!/usr/bin/env bash
# Configures and builds Kiln into build/ (or $KILN_BUILD_DIR).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
cmake -S "$ROOT" -B "$BUILD" -G Ninja ${KILN_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" "$@"
