#!/usr/bin/env bash
# Sets up, builds, and runs every test: the C++ tests (unit, ABI check, corpus
# runs) with CTest, then JAX on Kiln: Kiln's own JAX suite (python/tests,
# every result compared with JAX's CPU backend in the same process) and JAX's
# own test modules of the CI set on kiln, against cpu's recorded results.
# In between, the C++ tests again under ASan+UBSan and TSan
# (scripts/test_sanitizers.sh ci: what reads outside input, and the
# concurrency tests).
#   KILN_SKIP_PYTHON=1      only the C++ tests (no virtual environment)
#   KILN_SKIP_SANITIZERS=1  not the sanitizer runs
set -euo pipefail
# Each stage says how long it took, so that a slow CI run names its slow stage.
stage_start=$SECONDS
stage() { echo "--- [$((SECONDS - stage_start)) s so far] $*"; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
VENV="${KILN_VENV:-$ROOT/.venv}"
stage "setup"
"$ROOT/scripts/setup.sh"
[ -n "${KILN_SKIP_PYTHON:-}" ] || "$ROOT/scripts/setup_python.sh"
stage "build"
"$ROOT/scripts/build.sh"
export KILN_SHARED_DIR="${KILN_SHARED_DIR:-$ROOT/../shared}"
status=0
stage "ctest"
(cd "$BUILD" && ctest --output-on-failure -j "$(nproc)" ${KILN_CTEST_ARGS:-}) || status=$?
# What the corpus and ABI tests counted (CTest keeps their output in its log).
stage "corpus and ABI counts"
grep -hE '^(\[ corpus +\] |ABI |PJRT slots|vhlo golden|rejected [0-9]|text fuzz|[A-Za-z/ ()]+: [0-9]+ passed)' \
  "$BUILD/Testing/Temporary/LastTest.log" | sort -u || true
if [ -z "${KILN_SKIP_SANITIZERS:-}" ]; then
  stage "the C++ tests under sanitizers"
  "$ROOT/scripts/test_sanitizers.sh" ci || status=$?
fi
if [ -n "${KILN_SKIP_PYTHON:-}" ]; then
  stage "done, status $status"
  exit "$status"
fi

stage "JAX on Kiln (wheel, then python/tests)"
"$ROOT/scripts/build_wheel.sh" >/dev/null
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall \
  --no-deps "${KILN_DIST_DIR:-$ROOT/dist}"/kiln_pjrt-*.whl
# The installed wheel is what runs, not a library from the build tree.
unset KILN_PLUGIN_LIBRARY
export KILN_BUILD_DIR="$BUILD"
# From the tests' folder: python/ itself holds the package's sources, which
# would shadow the installed wheel (and its library) on sys.path.
(cd "$ROOT/python/tests" && "$VENV/bin/python" -m pytest -q -p no:cacheprovider) || status=$?
stage "JAX's own test modules (CI set) on kiln, against cpu"
# XLA:CPU's results come from python/jax_tests_cpu_ci.json where it holds
# them for this JAX and these test files (else cpu runs here too): they
# depend on nothing of Kiln's (docs/jax.md, "the cpu baseline").
CPU_BASELINE="$ROOT/python/jax_tests_cpu_ci.json"
"$VENV/bin/python" "$ROOT/python/tools/run_jax_tests.py" --set ci --cases 3 \
  --cpu-baseline "$CPU_BASELINE" \
  --min-ratio 0.99 --record "$BUILD/jax-tests-ci.json" || status=$?
stage "JAX's multi-device modules of the CI set on 8 kiln devices, against cpu's 8"
"$VENV/bin/python" "$ROOT/python/tools/run_jax_tests.py" --devices 8 --cases 1 \
  pmap_test multi_device_test pjit_test shard_map_test --min-multi-ratio 0.95 \
  --cpu-baseline "$CPU_BASELINE" \
  --record "$BUILD/jax-tests-ci-multi.json" || status=$?
stage "done, status $status"
exit "$status"
