#!/usr/bin/env bash
# Kiln's main job: set up, build, and run the example through the plugin.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
if [ -x "$BUILD/bin/train_mlp" ]; then
  exec "$BUILD/bin/train_mlp" --plugin "$BUILD/lib/libpjrt_kiln.so"
fi
exec "$BUILD/bin/kiln" info --plugin "$BUILD/lib/libpjrt_kiln.so" --devices 4
