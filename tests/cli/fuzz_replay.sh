# CLI test: the regression replay of the fuzz targets (tests/fuzz/). Every
# file of tests/fuzz/corpus/ and tests/fuzz/crashes/ (inputs that once
# crashed a target) runs once through every entry point, with the plain
# driver of this build (build/tests/fuzz_<target>; under make asan, with
# the sanitizers). One check per target and file: the target returned.
. "$TESTS/cli/lib.sh"
FUZZ=$TESTS/fuzz
FUZZ_DIR=$FUZZ
. "$FUZZ/san.sh" # under make asan: the settings make fuzz runs with
export TMPDIR=$T # the targets' scratch files go with the test's temp dir
mapfile -t files < <(find "$FUZZ/corpus" "$FUZZ/crashes" -type f ! -name '.*' ! -name '*.md' 2>/dev/null | sort)
ok "inputs to replay (${#files[@]})" [ "${#files[@]}" -gt 0 ]
for src in "$FUZZ"/fuzz_*.c; do
  t=$(basename "$src" .c)
  drv=${TESTBIN:-}/$t
  if [ ! -x "$drv" ]; then
    ok "$t: driver $drv built" false
    continue
  fi
  run "$drv" -o "$T" "${files[@]}"
  if [ "$rc" -eq 0 ]; then
    PASS=$((PASS + ${#files[@]}))
    continue
  fi
  for f in "${files[@]}"; do # which of them: one at a time
    run "$drv" -o "$T" "$f"
    ok "$t: ${f#"$FUZZ"/} (exit $rc: $(grep -m1 -E 'ERROR|runtime error|^fuzz:' "$err"))" [ "$rc" -eq 0 ]
  done
done
done_testing
