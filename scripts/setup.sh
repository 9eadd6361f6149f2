#!/usr/bin/env bash
# Installs what Kiln needs to build and test on Debian (bookworm or later).
# Idempotent and quiet when everything is already there.
#
#   Debian packages   compiler, CMake, Ninja, GoogleTest, Google Benchmark,
#                     protobuf headers and protoc, Gloo (collectives between
#                     processes), oneDNN (dense math), patchelf (the wheel's
#                     bundled libraries).
#   .deps/protobuf    protobuf-lite built from Debian's own source package as
#                     position-independent static code. Debian ships
#                     libprotobuf-lite.a without -fPIC, and the plugin must link
#                     protobuf statically (hidden) so that a host process with
#                     another protobuf cannot clash with it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="${KILN_DEPS_DIR:-$ROOT/.deps}"

PACKAGES=(build-essential cmake ninja-build pkg-config python3
          libgtest-dev libgmock-dev libbenchmark-dev
          libprotobuf-dev protobuf-compiler dpkg-dev libgloo-dev
          libdnnl-dev patchelf)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# protobuf-lite, PIC, from the source of the installed Debian version.
PB_VERSION="$(dpkg-query -W -f='${Version}' libprotobuf-dev)"
PB_UPSTREAM="${PB_VERSION%%-*}"
PB_PREFIX="$DEPS/protobuf-lite-$PB_UPSTREAM"
if [ ! -f "$PB_PREFIX/lib/libprotobuf-lite.a" ]; then
  echo "setup: building protobuf-lite $PB_UPSTREAM (PIC) into $PB_PREFIX"
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  SOURCES=/etc/apt/sources.list.d/kiln-deb-src.sources
  if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    as_root tee "$SOURCES" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    as_root apt-get update -qq
  fi
  (cd "$WORK" && apt-get source -qq --download-only "protobuf=$PB_VERSION" >/dev/null 2>&1 \
     || apt-get source -qq --download-only protobuf >/dev/null 2>&1)
  tar -xzf "$WORK"/protobuf_"$PB_UPSTREAM".orig.tar.gz -C "$WORK"
  SRC_DIR="$(find "$WORK" -maxdepth 1 -type d -name 'protobuf-*' | head -n1)"
  cmake -S "$SRC_DIR" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_WITH_ZLIB=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_CXX_VISIBILITY_PRESET=hidden -DCMAKE_VISIBILITY_INLINES_HIDDEN=ON >/dev/null
  cmake --build "$WORK/build" --target libprotobuf-lite >/dev/null
  mkdir -p "$PB_PREFIX/lib"
  cp "$WORK/build/libprotobuf-lite.a" "$PB_PREFIX/lib/"
  cp -r "$SRC_DIR/src" "$PB_PREFIX/include"
  find "$PB_PREFIX/include" -type f ! -name '*.h' ! -name '*.inc' -delete
fi

# pypi_download DIR ARGS...: fetches a pinned package from the Python package
# index into DIR with pip (installed from Debian where the system's Python
# has none), without installing it: only its files are used.
pypi_download() {
  local dir="$1"
  shift
  if ! python3 -m pip --version >/dev/null 2>&1; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  fi
  python3 -m pip download -q --disable-pip-version-check --no-deps -d "$dir" "$@"
}

# OpenBLAS with LAPACK: the scipy-openblas32 wheel from the Python package
# index, the build NumPy and SciPy ship (and so the LAPACK jaxlib calls).
# One self-contained library, built for manylinux (glibc 2.27) with every
# CPU's kernels chosen at run time, its symbols prefixed `scipy_` so that it
# cannot clash with another BLAS in the host process. Unpacked, not
# installed: only its headers and library are used.
OPENBLAS_VERSION="0.3.34.481.3"
OPENBLAS_PREFIX="$DEPS/scipy-openblas32-$OPENBLAS_VERSION"
if [ ! -f "$OPENBLAS_PREFIX/lib/libscipy_openblas.so" ]; then
  echo "setup: fetching scipy-openblas32 $OPENBLAS_VERSION into $OPENBLAS_PREFIX"
  WHEEL_DIR="$(mktemp -d)"
  pypi_download "$WHEEL_DIR" --only-binary=:all: --platform manylinux_2_28_x86_64 \
    "scipy-openblas32==$OPENBLAS_VERSION"
  python3 -m zipfile -e "$WHEEL_DIR"/scipy_openblas32-*.whl "$WHEEL_DIR/unpacked"
  mkdir -p "$OPENBLAS_PREFIX"
  cp -r "$WHEEL_DIR/unpacked/scipy_openblas32/include" "$WHEEL_DIR/unpacked/scipy_openblas32/lib" \
    "$OPENBLAS_PREFIX/"
  cp "$WHEEL_DIR"/unpacked/scipy_openblas32-*.dist-info/licenses/LICENSE.txt "$OPENBLAS_PREFIX/LICENSE.txt"
  rm -rf "$WHEEL_DIR"
fi

# DUCC's FFT (the FFT XLA:CPU runs; NumPy and SciPy run its predecessor,
# pocketfft): C++ sources from the ducc0 source distribution on the Python
# package index, compiled into the plugin by CMake (cmake/KilnDeps.cmake).
# Only the FFT and the infrastructure it includes are kept; those files are
# BSD-3-Clause (each says "BSD-3-Clause OR GPL-2.0-or-later"; Kiln takes
# them under BSD-3-Clause, as XLA does).
DUCC_VERSION="0.42.0"
DUCC_PREFIX="$DEPS/ducc0-$DUCC_VERSION"
if [ ! -f "$DUCC_PREFIX/src/ducc0/fft/fft.h" ]; then
  echo "setup: fetching the ducc0 $DUCC_VERSION sources into $DUCC_PREFIX"
  SDIST_DIR="$(mktemp -d)"
  pypi_download "$SDIST_DIR" --no-binary ducc0 "ducc0==$DUCC_VERSION"
  tar -xzf "$SDIST_DIR/ducc0-$DUCC_VERSION.tar.gz" -C "$SDIST_DIR"
  mkdir -p "$DUCC_PREFIX/src/ducc0"
  for part in fft infra math; do
    cp -r "$SDIST_DIR/ducc0-$DUCC_VERSION/src/ducc0/$part" "$DUCC_PREFIX/src/ducc0/"
  done
  rm -rf "$SDIST_DIR"
fi
