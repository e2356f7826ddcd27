#!/usr/bin/env bash
# tests/fuzz/run.sh - run fuzz targets for a while each (make fuzz).
#
#   tests/fuzz/run.sh ENGINE PREFIX SECONDS TARGET...
#
# ENGINE is libfuzzer (programs PREFIX<target> linked with -fsanitize=fuzzer)
# or driver (PREFIX<target> built with tests/fuzz/driver.c). Each target
# starts from build-fuzz/seeds/<target> (tests/fuzz/seeds.sh),
# tests/fuzz/corpus/<target> and tests/fuzz/crashes/<target>; libFuzzer adds
# what it finds to build-fuzz/corpus/<target>, kept between runs. Programs
# run under nice -n 10. Prints per target "fuzz TARGET: N runs, 0 crashes"
# or "fuzz TARGET: CRASH PATH" with the head of the report (the whole of it
# in build-fuzz/logs/TARGET.log); exits 1 when a target crashed.
# FUZZ_SEED sets the plain driver's PRNG seed (default: from the clock,
# printed so that a run can be repeated).
set -u
engine=$1 prefix=$2 seconds=$3
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$ROOT/build-fuzz
seed=${FUZZ_SEED:-$(($(date +%s) % 100000))}
FUZZ_DIR=$ROOT/tests/fuzz
. "$FUZZ_DIR/san.sh"
mkdir -p "$W/logs"
# the targets' scratch files (fuzz.h): a crashed target leaves its own behind
export TMPDIR=$W/tmp
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
[ "$engine" = driver ] && echo "fuzz: plain driver, seed $seed (FUZZ_SEED=$seed repeats this run)"
crashes=0
for t in "$@"; do
  art=$W/crashes/$t work=$W/corpus/$t log=$W/logs/$t.log
  mkdir -p "$art" "$work"
  dirs=("$W/seeds/$t")
  for d in "$ROOT/tests/fuzz/corpus/$t" "$ROOT/tests/fuzz/crashes/$t"; do [ -d "$d" ] && dirs+=("$d"); done
  before=$(ls "$art")
  rc=0
  if [ "$engine" = libfuzzer ]; then
    dict=()
    [ -f "$ROOT/tests/fuzz/dict/$t.dict" ] && dict=("-dict=$ROOT/tests/fuzz/dict/$t.dict")
    nice -n 10 "$prefix$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$art/" "${dict[@]}" "$work" "${dirs[@]}" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  else
    nice -n 10 "$prefix$t" -t "$seconds" -s "$seed" -T 25 -o "$art" "${dirs[@]}" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^.*: \([0-9]*\) runs, 0 crashes$/\1/p' "$log" | tail -1)
  fi
  if [ "$rc" -eq 0 ]; then
    echo "fuzz $t: ${runs:-?} runs, 0 crashes"
    continue
  fi
  crashes=$((crashes + 1))
  found=$(comm -13 <(echo "$before") <(ls "$art") | head -1)
  found=${found:+$art/$found}
  [ -n "$found" ] || found=$(sed -n 's/^.*\(Test unit written to\|fuzz: [a-z]* input:\) //p' "$log" | tail -1)
  echo "fuzz $t: CRASH ${found:-(no input saved)} (exit $rc; report in $log)"
  grep -E 'ERROR: |runtime error|^fuzz: |SUMMARY' "$log" | head -5 | sed 's/^/    /'
  # the top of the stack, then the first frames in wikibert's own code
  { grep -E '^ +#[0-9]+ ' "$log" | head -4
    grep -E '^ +#[0-9]+ .* in [^ ]+ ('"$ROOT"'/)?(common|prep|tokenize|vocab|shard|hdf5gen|train|tests)/' "$log" |
      head -4; } | awk '!seen[$0]++' | sed 's/ (BuildId: [0-9a-f]*)//; s/^/    /'
done
echo "fuzz: $# targets, $crashes with crashes"
[ "$crashes" -eq 0 ]
