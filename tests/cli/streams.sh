# Signals and the standard streams, for every program: a signal inherited
# as ignored stays ignored while -o OUT is written (nohup's SIGHUP, SIGINT
# in a script's background job) and the run ends with exit 0; output that
# cannot be written, stdout included (a full disk, a closed stdout), gives
# a message and a non-zero exit, never 0 (prog | head: SIGPIPE ends it
# quietly, or, ignored, one message); with stderr closed no -o file
# gets fd 2 (so no warning lands in it): the closed fds 0-2 hold /dev/null.
# No sleeps: a run waits on a FIFO input while the test signals or looks.
. "$TESTS/cli/lib.sh"
WD=$BIN/wiki_dump
V=$TESTS/../data/bert/vocab.txt
bzip2 -dc "$DATA/enwiki-3.xml.bz2" >"$T/d.xml"
$WD "$T/d.xml" >"$T/p.jsonl" 2>/dev/null
$BIN/wiki_strip -q "$T/p.jsonl" >"$T/text.txt"
$BIN/sent_split -q -l en "$T/text.txt" >"$T/sent.txt"
mkfifo "$T/in"

# feed FIFO DATA CMD...: once a reader has opened FIFO, run CMD, then write
# DATA into FIFO and close it (bounded)
feed() {
  timeout 60 bash -c 'f=$1 d=$2; shift 2; exec 3>"$f"; "$@"; cat "$d" >&3' _ "$@"
}
# reap PID: its exit status into $rc (killed after 60 s: a hang fails)
reap() {
  timeout 60 tail --pid="$1" -f /dev/null || kill -9 "$1" 2>/dev/null
  rc=0
  wait "$1" || rc=$?
}

# ---- signals inherited as ignored stay ignored ----
# program, its input, its output's name, its options
progs_fifo=(
  "wiki_dump|$T/d.xml|"
  "wiki_strip|$T/p.jsonl|"
  "sent_split|$T/text.txt|-l en"
  "text_filter|$T/sent.txt|-l none"
  "wp_tokenize|$T/sent.txt|"
)
for entry in "${progs_fifo[@]}"; do
  IFS='|' read -r prog data opts <<<"$entry"
  for sig in HUP INT; do
    rm -f "$T/o.out"
    # shellcheck disable=SC2086
    (trap '' "$sig" && exec "$BIN/$prog" -q $opts -o "$T/o.out" "$T/in") &
    pid=$!
    feed "$T/in" "$data" kill -s "$sig" "$pid"
    reap $pid
    ok "$prog -o OUT with SIG$sig ignored (nohup, a background job): SIG$sig ignored, exit 0 (got $rc)" [ "$rc" -eq 0 ]
    ok "... and OUT written" [ -s "$T/o.out" ]
  done
done
# and a signal not ignored still stops the run and removes the temp file
rm -f "$T/o.out"
$WD -q -o "$T/o.out" "$T/in" &
pid=$!
exec 4>&2 2>/dev/null # not bash's "Hangup" line
feed "$T/in" "$T/d.xml" kill -s HUP "$pid"
reap $pid
exec 2>&4 4>&-
ok "SIGHUP not ignored: the run stops with it (exit $rc)" [ "$rc" -eq 129 ]
ok "... leaving no output and no temp file" bash -c "! ls '$T'/o.out* 2>/dev/null"

# ---- every program: stdout that cannot be written is an error ----
for p in "$BIN"/*; do
  name=$(basename "$p")
  run bash -c "'$p' --help >/dev/full"
  ok "$name --help >/dev/full: exit 1 (got $rc)" [ "$rc" -eq 1 ]
  expect_err "$name --help >/dev/full: says so" "$name: standard output: write error: No space left on device*"
  run bash -c "'$p' --version >&-"
  ok "$name --version with stdout closed: exit 1 (got $rc)" [ "$rc" -eq 1 ]
  expect_err "$name --version, stdout closed: says so" "$name: standard output: write error: Bad file descriptor*"
  run bash -c "'$p' --version 2>&- >'$T/v.out'"
  ok "$name --version with stderr closed: exit 0 (got $rc)" [ "$rc" -eq 0 ]
done
# the data each program writes to stdout
"$BIN/vocab_train" -q -o "$T/v" --vocab_size 200 "$T/sent.txt"
mkdir -p "$T/h5"
"$BIN/hdf5gen" -q --vocab "$V" --max-seq-length 64 --max-predictions-per-seq 10 -o "$T/h5/en_training_0.hdf5" "$T/sent.txt"
printf 'en\tsome english text here\nhu\tegy kis magyar sz\xc3\xb6veg\n' >"$T/l.tsv"
cat >"$T/tiny.json" <<'EOF'
{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522}
EOF
stdout_cmds=(
  "wiki_dump '$T/d.xml'"
  "wiki_strip '$T/p.jsonl'"
  "sent_split -l en '$T/text.txt'"
  "text_filter -l none '$T/sent.txt'"
  "wp_tokenize '$T/sent.txt'"
  "vocab_normalize '$T/sent.txt'"
  "vocab_convert '$T/v.vocab'"
  "langid_train --min-count 1 '$T/l.tsv'"
  "hdf5_check '$T/h5/en_training_0.hdf5'"
  "train_bert_cpu --input_dir '$T/h5' --config_file '$T/tiny.json' --output_dir '$T/tr' --train_batch_size 4 --max_steps 2 --max_predictions_per_seq 10 --skip_checkpoint -j1"
)
for c in "${stdout_cmds[@]}"; do
  name=${c%% *}
  why="$name: standard output: write error"
  [ "$name" = hdf5_check ] && why="$name: *standard output" # its own message
  run bash -c "'$BIN/'$c >'$T/ok.out'"
  ok "$name to a file: exit 0 (got $rc)" [ "$rc" -eq 0 ]
  run bash -c "'$BIN/'$c >/dev/full"
  ok "$name >/dev/full: exit 1 (got $rc)" [ "$rc" -eq 1 ]
  expect_err "$name >/dev/full: names standard output" "*$why*"
  run bash -c "'$BIN/'$c >&-"
  ok "$name with stdout closed: exit 1 (got $rc)" [ "$rc" -eq 1 ]
  expect_err "$name, stdout closed: names standard output" "*$why*"
done

# a reader that stops early (prog | head): SIGPIPE ends the run quietly; with
# SIGPIPE ignored, one message and exit 1, not one per write
bzip2 -dc "$DATA/enwiki-206.xml.bz2" >"$T/big.xml"
run bash -c "'$WD' '$T/big.xml' | head -c 10 >/dev/null; exit \${PIPESTATUS[0]}"
ok "wiki_dump | head: ended by SIGPIPE (exit $rc), no message" eval '[ "$rc" = 141 ] && [ ! -s "$err" ]'
run bash -c "trap '' PIPE; '$WD' '$T/big.xml' | head -c 10 >/dev/null; exit \${PIPESTATUS[0]}"
ok "... SIGPIPE ignored: exit 1 (got $rc)" [ "$rc" -eq 1 ]
ok "... and one line: $(head -c 200 "$err")" eval '[ "$(wc -l <"$err")" = 1 ] && grep -q "wiki_dump: standard output: write error: Broken pipe" "$err"'

# ---- stderr closed: the -o file never gets fd 2 ----
sed 's/the /th\xff /' "$T/d.xml" >"$T/bad.xml" # warns: invalid UTF-8 replaced
run bash -c "'$WD' -o '$T/w.jsonl' '$T/bad.xml' 2>&-"
expect_rc "wiki_dump -o OUT with stderr closed: exit 0" 0
ok "... OUT holds only the pages (the warning went nowhere)" eval 'head -c 1 "$T/w.jsonl" | grep -q "{" && ! grep -q "invalid UTF-8" "$T/w.jsonl"'
# every filter: fds 0-2 hold /dev/null when they were closed
progs_o=(
  "wiki_dump|$T/d.xml|"
  "wiki_strip|$T/p.jsonl|"
  "sent_split|$T/text.txt|-l en"
  "text_filter|$T/sent.txt|-l none"
  "wp_tokenize|$T/sent.txt|"
  "vocab_normalize|$T/sent.txt|"
  "vocab_convert|$T/v.vocab|"
  "langid_train|$T/l.tsv|--min-count 1"
  "vocab_train|$T/sent.txt|--vocab_size 200"
  "shard_split|$T/sent.txt|-n 1 -t 1"
  "hdf5gen|$T/sent.txt|--vocab $V --max-seq-length 64 --max-predictions-per-seq 10"
)
for entry in "${progs_o[@]}"; do
  IFS='|' read -r prog data opts <<<"$entry"
  rm -rf "$T/o2"
  # shellcheck disable=SC2086
  "$BIN/$prog" -q $opts -o "$T/o2" "$T/in" 0<&- 1>&- 2>&- &
  pid=$!
  feed "$T/in" "$data" bash -c 'for fd in 0 1 2; do readlink /proc/$0/fd/$fd; done >"$1"' "$pid" "$T/fds"
  reap $pid
  ok "$prog started with fds 0-2 closed: they hold /dev/null ($(tr '\n' ' ' <"$T/fds"))" \
    [ "$(cat "$T/fds")" = "$(printf '/dev/null\n/dev/null\n/dev/null')" ]
  ok "... and it ran (exit $rc)" [ "$rc" -eq 0 ]
done
done_testing
