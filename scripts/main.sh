#!/usr/bin/env bash
# Kiln's main job: set up, build, and run the example through the plugin.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
if [ -x "$BUILD/bin/train_mlp" ]; then
  status=0
  "$BUILD/bin/train_mlp" --plugin "$BUILD/lib/libpjrt_kiln.so" || status=$?
  # Exit code 3: the plugin cannot compile yet (its PJRT_Client_Compile is
  # UNIMPLEMENTED); show what it can do instead.
  if [ "$status" -ne 3 ]; then exit "$status"; fi
  echo "main: the plugin cannot compile programs yet; listing its devices"
fi
exec "$BUILD/bin/kiln" info --plugin "$BUILD/lib/libpjrt_kiln.so" --devices 4
