# I/O error tests: a full disk (injected ENOSPC on fwrite/fflush/fclose of
# the -o file) must give exit 1, a clear message, and no output file; a run
# killed with -9 leaves only its temp file, which the next run removes.
. "$TESTS/cli/lib.sh"
WD=$BIN/wiki_dump
WS=$BIN/wiki_strip
# under make asan the shim is preloaded ahead of the ASan runtime
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
[ -f "$INJECT" ] || { echo "FAIL inject.so missing"; echo "0 passed, 1 failed"; exit 1; }
$WD "$DATA/enwiki-3.xml.bz2" >"$T/p.jsonl"
for call in fwrite fflush fclose; do
  run env WB_INJECT=$call LD_PRELOAD="$INJECT" $WD -o "$T/FAILME-d.jsonl" "$DATA/enwiki-3.xml.bz2"
  expect_rc "wiki_dump: $call fails" 1
  expect_err "wiki_dump: $call message" "wiki_dump: $T/FAILME-d.jsonl: write error: No space left on device*"
  ok "wiki_dump: $call leaves no output" bash -c "! ls '$T'/FAILME-d.jsonl* 2>/dev/null"
  run env WB_INJECT=$call LD_PRELOAD="$INJECT" $WS -o "$T/FAILME-s.txt" "$T/p.jsonl"
  expect_rc "wiki_strip: $call fails" 1
  expect_err "wiki_strip: $call message" "wiki_strip: $T/FAILME-s.txt: write error: No space left on device*"
  ok "wiki_strip: $call leaves no output" bash -c "! ls '$T'/FAILME-s.txt* 2>/dev/null"
done
# stdout on a full disk: /dev/full
run bash -c "$WD '$DATA/enwiki-3.xml.bz2' > /dev/full"
expect_rc "wiki_dump to /dev/full" 1
expect_err "wiki_dump to /dev/full message" "wiki_dump: standard output: write error: No space left on device*"
run bash -c "$WS '$T/p.jsonl' > /dev/full"
expect_rc "wiki_strip to /dev/full" 1
# the other filters name the output too
$WS -q "$T/p.jsonl" >"$T/text.txt"
$BIN/sent_split -q -l en "$T/text.txt" >"$T/sent.txt"
for prog in "sent_split -l en" "wp_tokenize" "text_filter -l none -a 0 -s 1 -t 0 -n 1 -p 1 -u 1 -d 1 -F 1 -w 0"; do
  set -- $prog
  name=$1; shift
  in=$T/sent.txt; [ "$name" = sent_split ] && in=$T/text.txt
  run env WB_INJECT=fwrite LD_PRELOAD="$INJECT" $BIN/$name "$@" -o "$T/FAILME-$name.txt" "$in"
  expect_rc "$name: fwrite fails" 1
  expect_err "$name: message names the output" "$name: $T/FAILME-$name.txt: write error: No space left on device*"
  ok "$name: leaves no output" bash -c "! ls '$T'/FAILME-$name.txt* 2>/dev/null"
  run bash -c "$BIN/$name $* '$in' > /dev/full"
  expect_rc "$name to /dev/full" 1
  expect_err "$name to /dev/full message" "*$name: standard output: write error: No space left on device*"
done
# -o onto a device or FIFO writes to it and never replaces it
run $WD -o /dev/null "$DATA/enwiki-3.xml.bz2"
expect_rc "-o /dev/null" 0
ok "/dev/null is still a character device" [ -c /dev/null ]
run $WD -f -o /dev/null "$DATA/enwiki-3.xml.bz2"
expect_rc "-f -o /dev/null" 0
ok "/dev/null is still a character device after -f" [ -c /dev/null ]
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
run $WD -o "$T/fifo" "$DATA/enwiki-3.xml.bz2"
wait
expect_rc "-o FIFO" 0
ok "-o FIFO: the reader got the pages" cmp -s "$T/from-fifo" "$T/p.jsonl"
ok "-o FIFO: still a FIFO" [ -p "$T/fifo" ]
run $WD -o "$T" "$DATA/enwiki-3.xml.bz2"
expect_rc "-o DIRECTORY" 1
expect_err "-o DIRECTORY message" "*is a directory*"
# kill -9 while writing leaves OUT.tmp.PID (never OUT); the next run of the
# same output removes it, and keeps the temp file of a process still alive
mkfifo "$T/slow"
$WD -o "$T/k.jsonl" "$T/slow" 2>/dev/null &
victim=$!
exec 3>"$T/slow"
bzip2 -dc "$DATA/enwiki-3.xml.bz2" | head -c 3000 >&3
for _ in $(seq 3000); do [ -e "$T/k.jsonl.tmp.$victim" ] && break; sleep 0.1; done
exec 4>&2 2>/dev/null # not bash's "Killed" line
kill -9 $victim
wait $victim
exec 2>&4 4>&-
exec 3>&-
ok "kill -9: the temp file is left" [ -e "$T/k.jsonl.tmp.$victim" ]
ok "kill -9: no output" [ ! -e "$T/k.jsonl" ]
sleep 1000 &
alive=$!
: >"$T/k.jsonl.tmp.$alive"
: >"$T/k.jsonl.tmp.x$victim" # not a temp name of ours
run $WD -v -v -o "$T/k.jsonl" "$DATA/enwiki-3.xml.bz2"
expect_rc "rerun after kill -9" 0
ok "rerun: the dead run's temp file is removed" [ ! -e "$T/k.jsonl.tmp.$victim" ]
expect_err "rerun: says so at -vv" "*removed $T/k.jsonl.tmp.$victim, left by process $victim*"
ok "rerun: a live process's temp file is kept" [ -e "$T/k.jsonl.tmp.$alive" ]
ok "rerun: other names are kept" [ -e "$T/k.jsonl.tmp.x$victim" ]
ok "rerun: the output is complete" cmp -s "$T/k.jsonl" "$T/p.jsonl"
kill $alive
wait $alive 2>/dev/null
# shard_split names its temp files the same way, one per shard
$WS -q "$T/p.jsonl" | $BIN/sent_split -q -l en >"$T/k.txt"
$BIN/shard_split -q -n 1 -t 1 -o "$T/sh" "$T/k.txt"
shard=$(ls "$T/sh" | head -1)
: >"$T/sh/$shard.tmp.$victim"
run $BIN/shard_split -q -f -n 1 -t 1 -o "$T/sh" "$T/k.txt"
expect_rc "shard_split rerun" 0
ok "shard_split: the dead run's temp file is removed" [ ! -e "$T/sh/$shard.tmp.$victim" ]

# the injector itself works: without the marker nothing fails
run env WB_INJECT=fwrite LD_PRELOAD="$INJECT" $WD -o "$T/ok.jsonl" "$DATA/enwiki-3.xml.bz2"
expect_rc "unmarked file unaffected" 0
done_testing
