#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds the outside
# project against it with find_package(Kiln), and runs it.
#   run.sh BUILD_DIR CMAKE GENERATOR SANITIZE_FLAGS
set -euo pipefail
BUILD="$1"
CMAKE="$2"
GENERATOR="$3"
SANITIZE="${4:-}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d "$BUILD/install_test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
"$CMAKE" --install "$BUILD" --prefix "$WORK/prefix" > "$WORK/install.log"
FLAGS=()
if [ -n "$SANITIZE" ]; then
  # A sanitizer build installs sanitized archives: link the same runtime.
  FLAGS=("-DCMAKE_CXX_FLAGS=-fsanitize=$SANITIZE"
         "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$SANITIZE")
fi
"$CMAKE" -S "$HERE" -B "$WORK/build" -G "$GENERATOR" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" "${FLAGS[@]}" > "$WORK/configure.log"
"$CMAKE" --build "$WORK/build" > "$WORK/build.log"
"$WORK/build/outside"
