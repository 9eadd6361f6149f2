#!/usr/bin/env bash
# Builds the plugin and the kiln-pjrt wheel into dist/ (or $KILN_DIST_DIR).
# The wheel's library is the build's, stripped of debug information, with
# the shared libraries it needs beyond the C, C++ and OpenMP runtimes
# (oneDNN, Gloo, and what they need) beside it: the plugin and each of
# them find the others through RUNPATH $ORIGIN.
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
PLUGIN="$STAGE/lib/libpjrt_kiln.so"
mkdir -p "$STAGE/lib"
strip --strip-debug -o "$PLUGIN" "$BUILD/lib/libpjrt_kiln.so"
# What every Linux system (with a C++ toolchain's runtimes) has.
SYSTEM='^(linux-vdso|ld-linux-[^ ]*|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libgomp)\.so'
ldd "$PLUGIN" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
  if ! echo "$name" | grep -Eq "$SYSTEM"; then
    cp -L "$path" "$STAGE/lib/$name"
    chmod u+w "$STAGE/lib/$name"
    patchelf --set-rpath '$ORIGIN' "$STAGE/lib/$name"
  fi
done
# Self-contained: everything beyond the system's runtimes resolves inside
# the bundle.
if ! readelf -d "$PLUGIN" | grep -q 'R.*PATH.*\[\$ORIGIN\]'; then
  echo "build_wheel: $PLUGIN has no RUNPATH \$ORIGIN" >&2
  exit 1
fi
outside="$(env -u LD_LIBRARY_PATH ldd "$PLUGIN" | awk '$2 == "=>" {print $1, $3}' |
  grep -Ev "$SYSTEM" | grep -v " $STAGE/lib/" || true)"
if [ -n "$outside" ]; then
  echo "build_wheel: the plugin needs libraries outside the wheel:" >&2
  echo "$outside" >&2
  exit 1
fi
# setuptools writes its build/ and egg-info beside the sources: build from a copy.
cp -r "$ROOT/python" "$STAGE/src"
rm -rf "$DIST" && mkdir -p "$DIST"
KILN_PLUGIN_LIBRARY="$PLUGIN" KILN_PLUGIN_BUNDLE="$STAGE/lib" "$VENV/bin/python" -m pip wheel -q \
  --disable-pip-version-check --no-deps --no-build-isolation -w "$DIST" "$STAGE/src"
ls "$DIST"/kiln_pjrt-*.whl
