#!/usr/bin/env bash
# Kiln's main job: set up, build, and run the example through the plugin.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
# A small MLP trained through Kiln's client and plugin: the loss falls, then
# the metrics of every crossing of the seam are printed.
exec "$BUILD/bin/train_mlp" --plugin "$BUILD/lib/libpjrt_kiln.so"
