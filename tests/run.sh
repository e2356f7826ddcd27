#!/usr/bin/env bash
# tests/run.sh - run every unit test program and every CLI test script, add
# up their "N passed, N failed" lines, and end with the total in that form.
#
#   tests/run.sh build/tests bin
# A suite that crashes or prints no summary counts as one failure, and so
# does one still running after WB_SUITE_TIMEOUT seconds (default 3600; no
# suite comes near it, even under ASan on two cores): a hang must end the
# run with a failure, never stall it.
set -u
testdir=$1
export BIN=$(cd "$2" && pwd)
export TESTS=$(cd "$(dirname "$0")" && pwd)
export INJECT=$(cd "$testdir" && pwd)/inject.so
export TESTBIN=$(cd "$testdir" && pwd) # test drivers such as inst_dump
suite_timeout=${WB_SUITE_TIMEOUT:-3600}
passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_suite() { # name command...
  local name=$1; shift
  local rc=0
  timeout -k 10 "$suite_timeout" "$@" >"$log" 2>&1 </dev/null || rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL $name: still running after ${suite_timeout}s (a hang?)"; tail -20 "$log"
    failed=$((failed + 1)); return
  fi
  local line
  line=$(grep -E '^([A-Za-z0-9_./-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL $name: no summary (exit $rc)"; tail -20 "$log"
    failed=$((failed + 1)); return
  fi
  local p f
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | cut -d' ' -f1)
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | cut -d' ' -f1)
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "FAIL $name: exit $rc"; fi
  [ "$f" -gt 0 ] && grep -E '^(FAIL|  )' "$log" | head -40
  printf '%-28s %s passed, %s failed\n' "$name" "$p" "$f"
  passed=$((passed + p)); failed=$((failed + f))
}

for t in "$testdir"/test_*; do
  [ -x "$t" ] && [ -f "$t" ] || continue
  run_suite "$(basename "$t")" "$t"
done
for s in "$TESTS"/cli/*.sh; do
  [ "$(basename "$s")" = lib.sh ] && continue
  run_suite "cli/$(basename "$s" .sh)" bash "$s"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
