#!/usr/bin/env bash
# Kiln's main job: set up, build the plugin and its Python package, install it
# into the repository's virtual environment, and train a small network with
# JAX on Kiln on scikit-learn's handwritten digits. It prints the loss falling,
# the test accuracy, milliseconds per step on Kiln and on JAX's CPU backend
# side by side, and what crossed the PJRT boundary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${KILN_VENV:-$ROOT/.venv}"
"$ROOT/scripts/build_wheel.sh" >/dev/null
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall \
  --no-deps "${KILN_DIST_DIR:-$ROOT/dist}"/kiln_pjrt-*.whl
unset KILN_PLUGIN_LIBRARY
export JAX_PLATFORMS="${JAX_PLATFORMS:-kiln,cpu}"
exec "$VENV/bin/python" "$ROOT/examples/jax_digits/train.py" "$@"
