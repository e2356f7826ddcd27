# tests/cli/lib.sh - helpers for CLI transcript tests (sourced).
#
#   run CMD...              run a command; sets $out $err $rc (stdout/stderr
#                           files and exit code) in a fresh temp dir $T
#   ok NAME COND...         count a check: COND is a shell test command
#   expect_rc NAME N        exit code was N
#   expect_err NAME GLOB    stderr matches the shell glob
#   done_testing            print "N passed, N failed"
#   py_with MODULE          print a Python that imports MODULE ($WIKIBERT_PYTHON,
#                           python3, /usr/bin/python3 (Debian packages) or
#                           the benchmark venv), or nothing
#   need_maxrss PROG        $RSS: the peak-memory driver (tests/unit/maxrss.c;
#                           one failed check and exit 1 when it is not built);
#                           $SAN: 1 when $BIN/PROG is an AddressSanitizer build
#   mem_ok NAME COND...     a peak-memory check, counted only without $SAN
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
DATA=$TESTS/data
PASS=0 FAIL=0
out=$T/out err=$T/err rc=0

run() {
  rc=0
  "$@" >"$out" 2>"$err" || rc=$?
}

ok() {
  local name=$1; shift
  if "$@"; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL $name"; echo "  stderr: $(head -c 400 "$err")"; fi
}

expect_rc() { ok "$1 (exit $rc, want $2)" [ "$rc" -eq "$2" ]; }

expect_err() {
  local name=$1 glob=$2
  # shellcheck disable=SC2053
  ok "$name (stderr '$(head -c 300 "$err")' !~ '$glob')" eval '[[ "$(cat "$err")" == $glob ]]'
}

done_testing() { echo "$PASS passed, $FAIL failed"; }

py_with() {
  local p
  for p in ${WIKIBERT_PYTHON:-} python3 /usr/bin/python3 "${BENCH_TMP:-/tmp/wikibert-bench}/venv3/bin/python"; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import $1" >/dev/null 2>&1; then echo "$p"; return 0; fi
  done
  return 0
}

need_maxrss() {
  RSS=${TESTBIN:-}/maxrss
  if [ ! -x "$RSS" ]; then
    ok "the maxrss driver is built ($RSS)" false
    done_testing
    exit 1
  fi
  # under make asan the sanitizer's shadow memory and quarantine make peak
  # memory say nothing about the program's own
  SAN=
  grep -qa __asan_init "$BIN/$1" && SAN=1
  [ -z "$SAN" ] || echo "not run: peak memory checks (AddressSanitizer build)"
}

mem_ok() { [ -n "$SAN" ] || ok "$@"; }
