#!/usr/bin/env bash
# The second example: a small MLP built with Kiln's C++ StableHLO builder and
# trained through Kiln's C++ client and plugin (no Python); the loss falls,
# then the metrics of every crossing of the seam are printed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
exec "$BUILD/bin/train_mlp" --plugin "$BUILD/lib/libpjrt_kiln.so"
