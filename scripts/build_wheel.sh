#!/usr/bin/env bash
# Builds the plugin and the kiln-pjrt wheel into dist/ (or $KILN_DIST_DIR).
# The wheel's library is the build's with the shared libraries it needs
# beyond the C, C++ and OpenMP runtimes beside it (scripts/bundle_plugin.sh).
#   ./scripts/build_wheel.sh && pip install dist/kiln_pjrt-*.whl
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
DIST="${KILN_DIST_DIR:-$ROOT/dist}"
VENV="${KILN_VENV:-$ROOT/.venv}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/setup_python.sh"
"$ROOT/scripts/build.sh" --target pjrt_kiln
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
"$ROOT/scripts/bundle_plugin.sh" "$STAGE"
PLUGIN="$STAGE/lib/libpjrt_kiln.so"
# setuptools writes its build/ and egg-info beside the sources: build from a copy.
cp -r "$ROOT/python" "$STAGE/src"
rm -rf "$DIST" && mkdir -p "$DIST"
KILN_PLUGIN_LIBRARY="$PLUGIN" KILN_PLUGIN_BUNDLE="$STAGE/lib" "$VENV/bin/python" -m pip wheel -q \
  --disable-pip-version-check --no-deps --no-build-isolation -w "$DIST" "$STAGE/src"
ls "$DIST"/kiln_pjrt-*.whl
