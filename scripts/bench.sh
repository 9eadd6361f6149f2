#!/usr/bin/env bash
# Kiln's benchmark suite: sets up and builds what it needs, then runs
# bench/suite/run.py, which prints a table of Kiln beside its peers (XLA:CPU,
# PyTorch, memcpy, oneDNN), writes it as JSON and draws it as a PNG
# (build/bench/bench.json and bench.png unless --out says otherwise).
#
#   ./scripts/bench.sh                     every row (minutes on 2 cores)
#   ./scripts/bench.sh --quick --rows 1,5  fewer repeats, smaller sizes
#   ./scripts/bench.sh --with-torch        install PyTorch first (torch==2.9.0
#                                          from PyPI, several GB) so the model
#                                          rows have their PyTorch peer
#
# Every other argument goes to run.py (--rows, --out, --no-torch, --quick).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
VENV="${KILN_VENV:-$ROOT/.venv}"
TORCH_PIN="torch==2.9.0"

with_torch=
args=()
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    *) args+=("$arg") ;;
  esac
done

"$ROOT/scripts/setup.sh"
# oneDNN, for the sgemm peer of the matmul rows (bench/peers/sgemm_peer.cc).
if ! dpkg-query -W -f='${Status}' libdnnl-dev 2>/dev/null | grep -q "ok installed"; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  echo "bench: installing libdnnl-dev"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libdnnl-dev >/dev/null
fi
"$ROOT/scripts/setup_python.sh"
if ! "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null; then
  echo "bench: installing bench/suite/requirements.txt into $VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$ROOT/bench/suite/requirements.txt"
fi
if [ -n "$with_torch" ] && ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
  echo "bench: installing $TORCH_PIN into $VENV (several GB)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$TORCH_PIN"
fi

"$ROOT/scripts/build.sh" --target pjrt_kiln pjrt_execute_bench memcpy_peer
# sgemm_peer exists only where CMake found oneDNN.
if cmake --build "$BUILD" --target help | grep -q '^sgemm_peer:'; then
  cmake --build "$BUILD" --target sgemm_peer
fi

export KILN_SHARED_DIR="${KILN_SHARED_DIR:-$ROOT/../shared}"
exec "$VENV/bin/python" "$ROOT/bench/suite/run.py" --build-dir "$BUILD" ${args[@]+"${args[@]}"}
