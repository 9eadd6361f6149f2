#!/usr/bin/env bash
# PyTorch/XLA on Kiln: installs the pinned torch==2.9.0 and torch_xla==2.9.0
# into the repository's virtual environment (.venv/, or $KILN_VENV; several
# GB, torch's CUDA libraries included), builds and installs the kiln-pjrt
# wheel, and runs python/tests/test_torch.py (docs/torch.md). Not part of
# .ci/run: the download and install alone take a large part of CI's budget.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${KILN_VENV:-$ROOT/.venv}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/setup_python.sh"
if ! "$VENV/bin/python" -c 'import torch_xla' 2>/dev/null; then
  echo "test_torch: installing torch==2.9.0 torch_xla==2.9.0 into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    torch==2.9.0 torch_xla==2.9.0
fi
"$ROOT/scripts/build_wheel.sh" >/dev/null
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall \
  --no-deps "${KILN_DIST_DIR:-$ROOT/dist}"/kiln_pjrt-*.whl
unset KILN_PLUGIN_LIBRARY
cd "$ROOT/python/tests"
exec "$VENV/bin/python" -m pytest -q -s -p no:cacheprovider test_torch.py "$@"
