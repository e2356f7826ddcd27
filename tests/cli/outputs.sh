# Outputs never clobber anything: a file that appears at -o OUT while a run
# writes it is kept without -f (the final rename refuses to replace, with
# renameat2 or its link(2) fallback), and of two runs with the same -o one
# wins and the other fails; shard_split's shards appear all or none; an
# output directory (shard_split, hdf5gen) takes one run at a time and a
# second is refused naming the first one's process; no program writes over
# one of its inputs, -f or not, by any name (symbolic or hard link, stdout
# appended to it); no two outputs of a run are one file; nameless outputs
# ('' and DIR/) and a symbolic link that leads nowhere are refused.
# No sleeps: a run waits on a FIFO input, opened by the test (bounded by
# timeouts) once the run is past its start, while the test does its part.
. "$TESTS/cli/lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
WD=$BIN/wiki_dump
V=$TESTS/../data/bert/vocab.txt
bzip2 -dc "$DATA/enwiki-3.xml.bz2" >"$T/d.xml"
bzip2 -dc "$DATA/huwiki-berlin.xml.bz2" >"$T/hu.xml"
$WD "$T/d.xml" >"$T/p.jsonl" 2>/dev/null
$WD "$T/hu.xml" >"$T/hu.jsonl" 2>/dev/null
$BIN/wiki_strip -q "$T/p.jsonl" >"$T/text.txt"
$BIN/sent_split -q -l en "$T/text.txt" >"$T/sent.txt"

# feed FIFO DATA CMD...: once a reader has opened FIFO (the run under test
# is past its start), run CMD, then write DATA into FIFO and close it
feed() {
  timeout 60 bash -c 'f=$1 d=$2; shift 2; exec 3>"$f"; "$@"; cat "$d" >&3' _ "$@"
}
# bg VAR CMD...: start CMD in the background, its pid in VAR
bg() {
  local var=$1
  shift
  "$@" &
  printf -v "$var" %s $!
}
# finish PID: its exit status into $rc (killed after 60 s: a hang fails)
finish() {
  timeout 60 tail --pid="$1" -f /dev/null || kill -9 "$1" 2>/dev/null
  rc=0
  wait "$1" || rc=$?
}

# ---- a file created at OUT during the run is kept ----
mkfifo "$T/in1"
bg pid $WD -o "$T/out.jsonl" "$T/in1" 2>"$err"
feed "$T/in1" "$T/d.xml" sh -c 'echo precious >"$0"' "$T/out.jsonl"
finish $pid
expect_rc "wiki_dump: OUT created during the run: exit 1" 1
expect_err "... says so" "*out.jsonl: created by another process while this run wrote it*-f*"
ok "... the file created meanwhile is kept" [ "$(cat "$T/out.jsonl")" = precious ]
ok "... no temp file left" bash -c "! ls '$T'/out.jsonl.tmp.* 2>/dev/null"
bg pid $WD -f -o "$T/out.jsonl" "$T/in1" 2>"$err"
feed "$T/in1" "$T/d.xml" sh -c 'echo precious >"$0"' "$T/out.jsonl"
finish $pid
expect_rc "... with -f: replaced" 0
ok "... by the pages" cmp -s "$T/out.jsonl" "$T/p.jsonl"
# a file system without RENAME_NOREPLACE: link(2) + unlink(2) refuse too
rm -f "$T/out.jsonl"
bg pid env WB_INJECT=renameat2 LD_PRELOAD="$INJECT" $WD -o "$T/out.jsonl" "$T/in1" 2>"$err"
feed "$T/in1" "$T/d.xml" sh -c 'echo precious >"$0"' "$T/out.jsonl"
finish $pid
expect_rc "without renameat2 (link fallback): exit 1" 1
ok "... the file created meanwhile is kept" [ "$(cat "$T/out.jsonl")" = precious ]
rm -f "$T/out.jsonl"
run env WB_INJECT=renameat2 LD_PRELOAD="$INJECT" $WD -o "$T/out.jsonl" "$T/d.xml"
expect_rc "without renameat2, nothing in the way: exit 0" 0
ok "... the output complete, no temp file" eval 'cmp -s "$T/out.jsonl" "$T/p.jsonl" && ! ls "$T"/out.jsonl.tmp.* 2>/dev/null'
# a filter (filter_run) and an HDF5 output (writer_open_name) too
bg pid $BIN/sent_split -q -l en -o "$T/s.txt" "$T/in1" 2>"$err"
feed "$T/in1" "$T/text.txt" sh -c 'echo precious >"$0"' "$T/s.txt"
finish $pid
expect_rc "sent_split: OUT created during the run: exit 1" 1
ok "... kept" [ "$(cat "$T/s.txt")" = precious ]
bg pid $BIN/hdf5gen -q --vocab "$V" --max-seq-length 64 --max-predictions-per-seq 10 -o "$T/x.hdf5" "$T/in1" 2>"$err"
feed "$T/in1" "$T/sent.txt" sh -c 'echo precious >"$0"' "$T/x.hdf5"
finish $pid
expect_rc "hdf5gen: OUT created during the run: exit 1" 1
ok "... kept" [ "$(cat "$T/x.hdf5")" = precious ]
ok "... no temp file left" bash -c "! ls '$T'/x.hdf5.tmp.* 2>/dev/null"

# ---- two runs, one -o: the first to finish wins, the other fails ----
mkfifo "$T/in2"
rm -f "$T/both.jsonl"
bg p1 $WD -o "$T/both.jsonl" "$T/in1" 2>"$T/err1"
bg p2 $WD -o "$T/both.jsonl" "$T/in2" 2>"$T/err2"
feed "$T/in1" "$T/d.xml" true
feed "$T/in2" "$T/hu.xml" true
finish $p1
ok "two runs, one -o: the one that ends first succeeds" [ "$rc" -eq 0 ]
finish $p2
ok "... the other fails (exit $rc)" [ "$rc" -eq 1 ]
ok "... saying why" grep -q "both.jsonl: created by another process while this run wrote it" "$T/err2"
ok "... the winner's output is whole" cmp -s "$T/both.jsonl" "$T/p.jsonl"
ok "... no temp file left" bash -c "! ls '$T'/both.jsonl.tmp.* 2>/dev/null"

# ---- output directories: one run at a time; shards all or none ----
bg pid $BIN/shard_split -q -n 1 -t 1 -o "$T/sh" "$T/in1" 2>"$T/err1"
feed "$T/in1" "$T/sent.txt" bash -c '"$0" -q -n 1 -t 1 -o "$1" "$2" 2>"$3"; echo $? >"$4"' \
  "$BIN/shard_split" "$T/sh" "$T/sent.txt" "$err" "$T/rc2"
finish $pid
ok "shard_split: a second run into the same DIR is refused (exit $(cat "$T/rc2"))" [ "$(cat "$T/rc2")" = 1 ]
expect_err "... naming DIR and the first run's process" "*sh: in use by another run (process $pid, still running)*"
ok "... the first run finishes (exit $rc)" eval '[ "$rc" = 0 ] && [ -s "$T/sh/wikicorpus_en_training_0.txt" ]'
bg pid $BIN/shard_split -q -n 1 -t 1 -o "$T/sh2" "$T/in1" 2>"$err"
feed "$T/in1" "$T/sent.txt" sh -c 'echo precious >"$0"' "$T/sh2/wikicorpus_en_test_0.txt"
finish $pid
expect_rc "shard_split: a shard file created during the run: exit 1" 1
expect_err "... says so" "*wikicorpus_en_test_0.txt: created by another process while this run wrote it*"
ok "... kept, and none of the run's shards in place, no temp file" \
  eval '[ "$(ls "$T/sh2")" = wikicorpus_en_test_0.txt ] && [ "$(cat "$T/sh2/wikicorpus_en_test_0.txt")" = precious ]'
run $BIN/shard_split -q -n 1 -t 1 -o "$T/sh3" "$T/missing.txt"
ok "shard_split: a failed run leaves no directory it created" [ ! -e "$T/sh3" ]
# hdf5gen -o DIR/: one run at a time, but the parts of one batch job share it
H5=(--vocab "$V" --max-seq-length 64 --max-predictions-per-seq 10 -q)
cp "$T/sent.txt" "$T/a.txt"
cp "$T/sent.txt" "$T/b.txt"
bg pid $BIN/hdf5gen "${H5[@]}" -o "$T/hd/" "$T/in1" 2>"$T/err1"
feed "$T/in1" "$T/sent.txt" bash -c '"$0" "${@:4}" -o "$1/" "$2" 2>"$3"; echo $? >"$1.rc"' \
  "$BIN/hdf5gen" "$T/hd" "$T/a.txt" "$err" "${H5[@]}"
finish $pid
ok "hdf5gen: a second run into the same -o DIR/ is refused (exit $(cat "$T/hd.rc"))" [ "$(cat "$T/hd.rc")" = 1 ]
expect_err "... naming the first run's process" "*hd: in use by another run (process $pid, still running)*"
ok "... the first run finishes" eval '[ "$rc" = 0 ] && [ -s "$T/hd/in1.hdf5" ] && [ ! -e "$T/hd/a.hdf5" ]'
bg pid $BIN/hdf5gen "${H5[@]}" --shard-index 0 --shard-count 2 -o "$T/hp/" "$T/in1" "$T/b.txt" 2>"$T/err1"
feed "$T/in1" "$T/sent.txt" bash -c '"$0" "${@:4}" --shard-index 1 --shard-count 2 -o "$1/" "$2" "$3" 2>/dev/null; echo $? >"$1.rc"' \
  "$BIN/hdf5gen" "$T/hp" "$T/in1" "$T/b.txt" "${H5[@]}"
finish $pid
ok "hdf5gen --shard-count: two parts share the directory" eval '[ "$rc" = 0 ] && [ "$(cat "$T/hp.rc")" = 0 ] && [ -s "$T/hp/in1.hdf5" ] && [ -s "$T/hp/b.hdf5" ]'

# ---- an output is never one of the run's inputs, -f or not ----
same_file() { # NAME IN CMD...: CMD (which reads IN and writes over it) exits non-zero, IN unchanged
  local name=$1 in=$2
  shift 2
  cp "$in" "$T/before"
  run "$@"
  ok "$name: refused (exit $rc)" [ "$rc" -ne 0 ]
  expect_err "$name: says why" "*the same file as *input*"
  ok "$name: the input is unchanged" cmp -s "$in" "$T/before"
}
cp "$DATA/enwiki-3.xml.bz2" "$T/d.xml.bz2"
same_file "wiki_dump -f -o D D" "$T/d.xml.bz2" $WD -f -o "$T/d.xml.bz2" "$T/d.xml.bz2"
ln -s d.xml.bz2 "$T/sym.bz2"
ln "$T/d.xml.bz2" "$T/hard.bz2"
same_file "wiki_dump -f -o SYMLINK-TO-D D" "$T/d.xml.bz2" $WD -f -o "$T/sym.bz2" "$T/d.xml.bz2"
same_file "wiki_dump -f -o HARDLINK-TO-D D" "$T/d.xml.bz2" $WD -f -o "$T/hard.bz2" "$T/d.xml.bz2"
same_file "wiki_dump D >> D" "$T/d.xml.bz2" bash -c "'$WD' '$T/d.xml.bz2' >>'$T/d.xml.bz2'"
cp "$T/p.jsonl" "$T/X"
same_file "wiki_strip -f -o X X" "$T/X" $BIN/wiki_strip -f -o "$T/X" "$T/X"
cp "$T/text.txt" "$T/X"
same_file "sent_split -f -o X X" "$T/X" $BIN/sent_split -l en -f -o "$T/X" "$T/X"
same_file "sent_split < X >> X" "$T/X" bash -c "'$BIN/sent_split' -l en <'$T/X' >>'$T/X'"
same_file "text_filter -f -o X X" "$T/X" $BIN/text_filter -l none -f -o "$T/X" "$T/X"
same_file "text_filter -o Y --rejected X X" "$T/X" $BIN/text_filter -l none -o "$T/Y" --rejected "$T/X" "$T/X"
same_file "wp_tokenize -f -o X X" "$T/X" $BIN/wp_tokenize -f -o "$T/X" "$T/X"
cp "$V" "$T/vocab.txt"
same_file "wp_tokenize --vocab X -f -o X" "$T/vocab.txt" $BIN/wp_tokenize --vocab "$T/vocab.txt" -f -o "$T/vocab.txt" "$T/sent.txt"
same_file "vocab_normalize -f -o X X" "$T/X" $BIN/vocab_normalize -f -o "$T/X" "$T/X"
printf '\xe2\x96\x81a\t0\nb\t-1\n' >"$T/sp.vocab"
same_file "vocab_convert -f -o X X" "$T/sp.vocab" $BIN/vocab_convert -f -o "$T/sp.vocab" "$T/sp.vocab"
cp "$T/sent.txt" "$T/v.model"
same_file "vocab_train -f -o v v.model" "$T/v.model" $BIN/vocab_train -f -o "$T/v" --vocab_size 100 "$T/v.model"
printf 'en\tsome text\n' >"$T/l.tsv"
same_file "langid_train -f -o X X" "$T/l.tsv" $BIN/langid_train -f -o "$T/l.tsv" "$T/l.tsv"
cp "$T/sent.txt" "$T/X"
same_file "hdf5gen -f -o X X" "$T/X" $BIN/hdf5gen "${H5[@]}" -f -o "$T/X" "$T/X"
mkdir "$T/shin"
cp "$T/sent.txt" "$T/shin/wikicorpus_en_training_0.txt"
same_file "shard_split -f -o DIR DIR/shard" "$T/shin/wikicorpus_en_training_0.txt" \
  $BIN/shard_split -q -n 1 -t 1 -f -o "$T/shin" "$T/shin/wikicorpus_en_training_0.txt"

# ---- no two outputs of one run are one file; nameless outputs ----
cd "$T" || exit 1
run $BIN/vocab_train -q -o w --vocab_size 100 --wordpiece w.vocab sent.txt
expect_rc "vocab_train -o w --wordpiece w.vocab: refused" 2
expect_err "... naming it" "*w.vocab: named twice as an output*"
ok "... before any output is written" bash -c "! ls w.model w.vocab w.vocab.tmp.* 2>/dev/null"
mkdir -p sub
run $BIN/vocab_train -q -o w --vocab_size 100 --wordpiece ./sub/../w.vocab sent.txt
expect_rc "... also when spelled otherwise (./sub/../w.vocab)" 2
expect_err "... naming both" "*./sub/../w.vocab: the same file as the output w.vocab*"
run $BIN/vocab_train -q --model wordpiece -o w --tokenizer-json w.txt sent.txt
expect_rc "vocab_train --model wordpiece -o w --tokenizer-json w.txt (PREFIX.txt): refused" 2
run $BIN/text_filter -l none -o same.txt --rejected ./same.txt sent.txt
expect_rc "text_filter -o X --rejected ./X: refused" 1
ok "... nothing written" bash -c "! ls same.txt* 2>/dev/null"
mkdir -p outdir
run $BIN/vocab_train -q -o '' --vocab_size 100 sent.txt
expect_rc "vocab_train -o '': refused" 2
run $BIN/vocab_train -q -o outdir/ --vocab_size 100 sent.txt
expect_rc "vocab_train -o DIR/: refused" 2
ok "... no hidden files written" bash -c "! ls .model .vocab outdir/.model outdir/.vocab 2>/dev/null"
run $WD -o '' "$T/d.xml"
expect_rc "wiki_dump -o '': refused" 1
run $WD -o newdir/ "$T/d.xml"
expect_rc "wiki_dump -o MISSINGDIR/: refused" 1
expect_err "... as a directory name" "*newdir/: a directory (it ends with '/'), not a file name*"
ok "... no hidden temp file" bash -c "! ls .tmp.* newdir 2>/dev/null"
ln -s nowhere dangling
run $WD -o dangling "$T/d.xml"
expect_rc "-o a symbolic link to a missing file: refused without -f" 1
expect_err "... says what it is" "*dangling: already exists (a symbolic link to a missing file; use -f*"
ok "... the link is kept" eval '[ -L dangling ] && [ "$(readlink dangling)" = nowhere ]'
ln -s loop loop
run $WD -o loop "$T/d.xml"
expect_rc "-o a symbolic link loop: refused without -f" 1
expect_err "... says what it is" "*loop: already exists (a symbolic link loop*"
run $WD -f -o dangling "$T/d.xml"
expect_rc "-f -o a dangling symbolic link: replaced" 0
ok "... by the output" eval '[ ! -L dangling ] && cmp -s dangling "$T/p.jsonl"'
done_testing
