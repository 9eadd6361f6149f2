#!/usr/bin/env bash
# Copies the built plugin into DIR/lib, stripped of debug information, with
# the shared libraries it needs beyond the C, C++ and OpenMP runtimes
# (oneDNN, Gloo, and what they need) beside it: the plugin and each of
# them find the others through RUNPATH $ORIGIN. Fails if the bundle would
# need a library from outside it. Each further FILE (a program staged
# beside the bundle) gets what it loads beyond the system's runtimes in
# DIR/lib too. Used by stage_bench.sh (the wheel has auditwheel do this,
# scripts/build_wheel.sh).
#   scripts/bundle_plugin.sh DIR [FILE...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
OUT="$(mkdir -p "${1:?usage: bundle_plugin.sh DIR [FILE...]}" && cd "$1" && pwd)"
shift
PLUGIN="$OUT/lib/libpjrt_kiln.so"
mkdir -p "$OUT/lib"
strip --strip-debug -o "$PLUGIN" "$BUILD/lib/libpjrt_kiln.so"
# What every Linux system (with a C++ toolchain's runtimes) has.
SYSTEM='^(linux-vdso|ld-linux-[^ ]*|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libgomp)\.so'
# bundle_libraries FILE: copies what FILE loads from outside the system's
# runtimes into $OUT/lib.
bundle_libraries() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if ! echo "$name" | grep -Eq "$SYSTEM" && [ ! -e "$OUT/lib/$name" ]; then
      cp -L "$path" "$OUT/lib/$name"
      chmod u+w "$OUT/lib/$name"
      patchelf --set-rpath '$ORIGIN' "$OUT/lib/$name"
    fi
  done
}
# What the build's plugin loads: OpenBLAS, which is not the system's, is
# found beside it in the build tree (RUNPATH $ORIGIN), not beside the copy.
bundle_libraries "$BUILD/lib/libpjrt_kiln.so"
for file in "$@"; do bundle_libraries "$file"; done
# The licences of everything the plugin carries, beside Kiln's LICENSE.
"$ROOT/scripts/third_party_notices.sh" "$BUILD/lib/libpjrt_kiln.so" "$OUT/lib/THIRD_PARTY_NOTICES.txt"
cp "$ROOT/LICENSE" "$OUT/lib/LICENSE"
# Self-contained: everything beyond the system's runtimes resolves inside
# the bundle.
if ! readelf -d "$PLUGIN" | grep -q 'R.*PATH.*\[\$ORIGIN\]'; then
  echo "bundle_plugin: $PLUGIN has no RUNPATH \$ORIGIN" >&2
  exit 1
fi
outside="$(env -u LD_LIBRARY_PATH ldd "$PLUGIN" | awk '$2 == "=>" {print $1, $3}' |
  grep -Ev "$SYSTEM" | grep -v " $OUT/lib/" || true)"
if [ -n "$outside" ]; then
  echo "bundle_plugin: the plugin needs libraries outside the bundle:" >&2
  echo "$outside" >&2
  exit 1
fi
