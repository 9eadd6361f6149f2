#!/usr/bin/env bash
# Runs `kiln conform` and compares what it says with an expected outcome
# file: one "STATUS check-name" line per check (details are not compared),
# plus the exit status.
#   expect_conform.sh KILN EXPECTED_FILE EXPECTED_EXIT PLUGIN [FLAGS...]
set -uo pipefail
kiln="$1"; expected="$2"; expected_exit="$3"; shift 3
output="$("$kiln" conform "$@")"
status=$?
echo "$output"
actual="$(printf '%s\n' "$output" | sed -n -E 's/^(PASS|FAIL|UNSUPPORTED) ([^:]+):.*/\1 \2/p')"
if ! printf '%s\n' "$output" | grep -q -E '^summary: [0-9]+ checks: '; then
  echo "expect_conform: no summary line" >&2
  exit 1
fi
if ! diff -u "$expected" <(printf '%s\n' "$actual"); then
  echo "expect_conform: the outcomes differ from $expected (- expected, + actual)" >&2
  exit 1
fi
if [ "$status" != "$expected_exit" ]; then
  echo "expect_conform: kiln conform exited with $status, expected $expected_exit" >&2
  exit 1
fi
echo "expect_conform: outcomes and exit status $status as expected"
