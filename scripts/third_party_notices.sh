#!/usr/bin/env bash
# Writes THIRD_PARTY_NOTICES.txt for a built plugin: the licence of every
# shared library it loads beyond glibc's own (each Debian package's
# copyright file, found by dpkg; OpenBLAS's from its wheel), and of what is
# linked into it statically (protobuf-lite, DUCC's FFT, the C++ library).
# Fails on a library whose licence it cannot find, so that nothing ships
# without its notice. Used by the wheel (cmake/KilnInstall.cmake) and by
# scripts/bundle_plugin.sh.
#   scripts/third_party_notices.sh PLUGIN OUT_FILE
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PLUGIN="${1:?usage: third_party_notices.sh PLUGIN OUT_FILE}"
OUT_FILE="${2:?usage: third_party_notices.sh PLUGIN OUT_FILE}"
DEPS="${KILN_DEPS_DIR:-$ROOT/.deps}"
# glibc's libraries: every system has them, and they carry no notice duty.
GLIBC='^(linux-vdso|ld-linux-[^ ]*|libc|libm|libdl|libpthread|librt)\.so'

notice() {  # title, then the text on standard input
  printf '\n%s\n%s\n\n' "================================================================" "$1"
  cat
}

{
  echo "Kiln (libpjrt_kiln.so) is under the Apache License 2.0 (LICENSE)."
  echo "It carries or loads the following third-party code, each under its own licence."
  env -u LD_LIBRARY_PATH ldd "$PLUGIN" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
    while read -r name path; do
      if echo "$name" | grep -Eq "$GLIBC"; then
        continue
      fi
      if [ "$name" = libscipy_openblas.so ]; then
        notice "$name: OpenBLAS with LAPACK (scipy-openblas32), BSD-3-Clause" \
          <"$(ls -d "$DEPS"/scipy-openblas32-*/LICENSE.txt | tail -n1)"
        continue
      fi
      # Packages list /lib or /usr/lib paths, before or after the links.
      real="$(readlink -f "$path")"
      package="$( { dpkg -S "$path" || dpkg -S "$real" || dpkg -S "*/$(basename "$real")"; } 2>/dev/null |
        head -n1 | cut -d: -f1 || true)"
      if [ -n "$package" ] && [ -f "/usr/share/doc/$package/copyright" ]; then
        notice "$name: Debian package $package" <"/usr/share/doc/$package/copyright"
      else
        echo "third_party_notices: no licence found for $name ($path)" >&2
        exit 1
      fi
    done
  notice "protobuf-lite (linked in statically), BSD-3-Clause" </usr/share/doc/libprotobuf-dev/copyright
  ducc_header="$(ls -d "$DEPS"/ducc0-*/src/ducc0/fft/fft.h | tail -n1)"
  # DUCC's FFT files offer BSD-3-Clause or GPL-2.0+; Kiln takes BSD-3-Clause.
  # The notice is the header comment those files carry.
  awk 'NR > 1 && /^\*\// {exit} NR > 1 {print}' "$ducc_header" |
    notice "DUCC's FFT (ducc0, linked in statically), BSD-3-Clause"
  gcc_package="$(dpkg -S "$(readlink -f "$(g++ -print-file-name=libstdc++.a)")" 2>/dev/null |
    head -n1 | cut -d: -f1 || true)"
  if [ -n "$gcc_package" ] && [ -f "/usr/share/doc/$gcc_package/copyright" ]; then
    notice "The GNU C++ library (linked in statically), GPL-3.0+ with the GCC Runtime Library Exception" \
      <"/usr/share/doc/$gcc_package/copyright"
  fi
} >"$OUT_FILE"
