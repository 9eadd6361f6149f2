#!/usr/bin/env bash
# Stages what the benchmark suite needs from this build into DIR, so that
# the suite runs on another machine that has Python, jax and jaxlib but no
# build of Kiln (a bigger machine lent for measurements):
#   DIR/lib     the plugin and the libraries it loads (bundle_plugin.sh)
#   DIR/bin     the native peers (memcpy_peer, sgemm_peer,
#               pjrt_execute_bench; with --dense-bench also dense_bench, the
#               kernel benchmarks, 10 MB more), RUNPATH $ORIGIN/../lib, with
#               what they load beyond the system's runtimes in DIR/lib
#   DIR/shared  the corpus models the suite reads ($KILN_SHARED_DIR there)
# Then, from a checkout on that machine:
#   KILN_SHARED_DIR=DIR/shared python3 bench/suite/run.py --build-dir DIR
#
# The folder is about 55 MB, oneDNN most of it.
#
#   scripts/stage_bench.sh DIR [--dense-bench]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
SHARED="${KILN_SHARED_DIR:-$ROOT/../shared}"
OUT="$(mkdir -p "${1:?usage: stage_bench.sh DIR}" && cd "$1" && pwd)"
PEERS=(memcpy_peer sgemm_peer pjrt_execute_bench)
[ "${2:-}" = "--dense-bench" ] && PEERS+=(dense_bench)
"$ROOT/scripts/build.sh" --target pjrt_kiln "${PEERS[@]}"
rm -rf "$OUT/lib" "$OUT/bin" "$OUT/shared"
mkdir -p "$OUT/bin"
for peer in "${PEERS[@]}"; do
  cp "$BUILD/bin/$peer" "$OUT/bin/$peer"
  strip --strip-debug "$OUT/bin/$peer"
  patchelf --set-rpath '$ORIGIN/../lib' "$OUT/bin/$peer"
done
"$ROOT/scripts/bundle_plugin.sh" "$OUT" "${PEERS[@]/#/$BUILD/bin/}"
if [ -d "$SHARED/corpus/models" ]; then
  mkdir -p "$OUT/shared/corpus"
  cp -r "$SHARED/corpus/models" "$OUT/shared/corpus/"
fi
du -sh "$OUT"
