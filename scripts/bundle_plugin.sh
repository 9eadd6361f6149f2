#!/usr/bin/env bash
# Copies the built plugin into DIR/lib, stripped of debug information, with
# the shared libraries it needs beyond the C, C++ and OpenMP runtimes
# (oneDNN, Gloo, and what they need) beside it: the plugin and each of
# them find the others through RUNPATH $ORIGIN. Fails if the bundle would
# need a library from outside it. Each further FILE (a program staged
# beside the bundle) gets what it loads beyond the system's runtimes in
# DIR/lib too. Used by build_wheel.sh and stage_bench.sh.
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
SOURCES="$(mktemp)"  # each bundled library's name and where it came from
trap 'rm -f "$SOURCES"' EXIT
bundle_libraries() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if ! echo "$name" | grep -Eq "$SYSTEM" && [ ! -e "$OUT/lib/$name" ]; then
      echo "$name $path" >>"$SOURCES"
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
# The licences of everything the plugin carries: each bundled system
# library's Debian copyright file (its package found by dpkg), OpenBLAS's
# licence, and those of what is linked in statically (protobuf-lite,
# DUCC's FFT), in DIR/lib/THIRD_PARTY_NOTICES.txt beside Kiln's LICENSE.
NOTICES="$OUT/lib/THIRD_PARTY_NOTICES.txt"
DEPS="${KILN_DEPS_DIR:-$ROOT/.deps}"
{
  echo "Kiln (libpjrt_kiln.so) is under the Apache License 2.0 (LICENSE)."
  echo "It carries the following third-party code, each under its own licence."
  notice() {  # title, then the text on standard input
    printf '\n%s\n%s\n\n' "================================================================" "$1"
    cat
  }
  while read -r name path; do
    if [ "$name" = libscipy_openblas.so ]; then
      notice "$name: OpenBLAS (scipy-openblas32), BSD-3-Clause" <"$(ls -d "$DEPS"/scipy-openblas32-*/LICENSE.txt | tail -n1)"
      continue
    fi
    # Packages list /lib or /usr/lib paths, before or after the links.
    real="$(readlink -f "$path")"
    package="$( { dpkg -S "$path" || dpkg -S "$real" || dpkg -S "*/$(basename "$real")"; } 2>/dev/null |
      head -n1 | cut -d: -f1 || true)"
    if [ -n "$package" ] && [ -f "/usr/share/doc/$package/copyright" ]; then
      notice "$name: Debian package $package" <"/usr/share/doc/$package/copyright"
    else
      echo "bundle_plugin: no licence found for $name ($path)" >&2
      exit 1
    fi
  done <"$SOURCES"
  notice "protobuf-lite (linked in statically), BSD-3-Clause" </usr/share/doc/libprotobuf-dev/copyright
  ducc_header="$(ls -d "$DEPS"/ducc0-*/src/ducc0/fft/fft.h | tail -n1)"
  # DUCC's FFT files offer BSD-3-Clause or GPL-2.0+; Kiln takes BSD-3-Clause.
  # The notice is the header comment those files carry.
  awk 'NR > 1 && /^\*\// {exit} NR > 1 {print}' "$ducc_header" |
    notice "DUCC's FFT (ducc0, linked in statically), BSD-3-Clause"
} >"$NOTICES"
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
