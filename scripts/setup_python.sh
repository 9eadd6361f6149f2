#!/usr/bin/env bash
# Creates the repository's virtual environment (.venv/, or $KILN_VENV) with the
# pinned JAX and what Kiln's Python tests and JAX's own tests need.
# Idempotent: a second run only checks that the pins are installed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${KILN_VENV:-$ROOT/.venv}"
PYTHON="${KILN_PYTHON:-python3}"

if ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
  # Debian's python3 keeps venv and ensurepip in a package of their own.
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.kiln-requirements"
if ! cmp -s "$ROOT/python/requirements.txt" "$STAMP"; then
  echo "setup: installing python/requirements.txt into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$ROOT/python/requirements.txt"
  cp "$ROOT/python/requirements.txt" "$STAMP"
fi
