# Inputs that are not regular files: a named pipe (mkfifo), /dev/stdin and
# bash's <(process substitution), for every program and every option that
# takes a file. Each must be opened exactly once: a probe that opens and
# closes a FIFO before the real read loses the writer (SIGPIPE) and then waits
# forever for another. The output must equal the regular file's. Every run
# is bounded by `timeout` (a hang fails the check instead of the suite), and
# every background writer is killed before the next check.
. "$TESTS/cli/lib.sh"
LIMIT=${WB_SPECIAL_LIMIT:-300} # seconds; a correct run takes well under one

# A pipeline of real data to feed the programs: pages, text, sentences,
# a vocabulary, shards and HDF5 files from enwiki-3 and huwiki-berlin.
$BIN/wiki_dump -q "$DATA/enwiki-3.xml.bz2" >"$T/pages.jsonl"
$BIN/wiki_strip -q "$T/pages.jsonl" >"$T/text.txt"
$BIN/sent_split -q -l en "$T/text.txt" >"$T/sent.txt"
$BIN/wp_tokenize -q --vocab "$TESTS/../data/bert/vocab.txt" "$T/sent.txt" >"$T/tok.txt"
awk 'NF { print "en\t" $0 }' "$T/sent.txt" >"$T/lang.tsv"
$BIN/vocab_train -q --model bpe --vocab-size 300 -o "$T/bpe" "$T/sent.txt" >/dev/null
mkdir -p "$T/shards" "$T/h5"
$BIN/shard_split -q -n 1 -t 0 -o "$T/shards" "$T/sent.txt" >/dev/null
VOCAB=$TESTS/../data/bert/vocab.txt
$BIN/hdf5gen -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h5/" "$T/shards"/*training*.txt >/dev/null

# feed KIND FILE CMD... : run CMD with @IN@ replaced by a KIND path that
# carries FILE's bytes (fifo, devstdin, procsub); sets $out $err $rc.
feed() {
  local kind=$1 file=$2; shift 2
  local args=() a writer=
  case $kind in
  fifo)
    rm -f "$T/in.fifo"; mkfifo "$T/in.fifo"
    cat "$file" >"$T/in.fifo" 2>/dev/null &
    writer=$!
    for a in "$@"; do args+=("${a//@IN@/$T/in.fifo}"); done
    run timeout "$LIMIT" "${args[@]}"
    ;;
  devstdin)
    for a in "$@"; do args+=("${a//@IN@//dev/stdin}"); done
    rc=0
    timeout "$LIMIT" "${args[@]}" <"$file" >"$out" 2>"$err" || rc=$?
    ;;
  procsub)
    # the command line is built as a string so that <(...) is bash's own
    local cmd=
    for a in "$@"; do
      if [ "$a" = "@IN@" ]; then cmd+=" <(cat $(printf %q "$file"))"; else
        a=${a//@IN@/PROCSUB}; cmd+=" $(printf %q "$a")"; fi
    done
    rc=0
    eval "timeout $LIMIT $cmd" >"$out" 2>"$err" || rc=$?
    ;;
  esac
  if [ -n "$writer" ]; then kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null; fi
  return 0
}

# same NAME REFFILE FILE CMD... : for each kind, the command's stdout (or
# REFFILE's replacement, when CMD writes a file named by @OUT@) equals what
# it gives on the regular FILE.
same() {
  local name=$1 file=$2; shift 2
  local args=() a
  for a in "$@"; do args+=("${a//@IN@/$file}"); done
  run timeout "$LIMIT" "${args[@]}"
  cp "$out" "$T/want"
  ok "$name: regular file (exit $rc)" [ "$rc" -eq 0 ]
  local kind
  for kind in fifo devstdin procsub; do
    feed "$kind" "$file" "$@"
    ok "$name: $kind exits 0 (exit $rc)" [ "$rc" -eq 0 ]
    ok "$name: $kind gives the regular file's output" cmp -s "$out" "$T/want"
  done
}

same "wiki_dump" "$DATA/enwiki-3.xml.bz2" $BIN/wiki_dump -q @IN@
same "wiki_strip" "$T/pages.jsonl" $BIN/wiki_strip -q @IN@
same "sent_split" "$T/text.txt" $BIN/sent_split -q -l en @IN@
same "sent_split --abbrev" "$DATA/../../data/abbrev/en.txt" $BIN/sent_split -q -l en --abbrev @IN@ "$T/text.txt"
same "text_filter" "$T/sent.txt" $BIN/text_filter -q @IN@
same "text_filter (two inputs)" "$T/sent.txt" $BIN/text_filter -q "$T/sent.txt" @IN@
same "wp_tokenize" "$T/sent.txt" $BIN/wp_tokenize -q --vocab "$VOCAB" @IN@
same "wp_tokenize --vocab" "$VOCAB" $BIN/wp_tokenize -q --vocab @IN@ "$T/sent.txt"
same "vocab_normalize" "$T/sent.txt" $BIN/vocab_normalize -q @IN@
same "langid_train" "$T/lang.tsv" $BIN/langid_train -q @IN@
same "vocab_convert" "$T/bpe.vocab" $BIN/vocab_convert -q @IN@
# vocab_train writes files: compare the vocabulary it writes
same "vocab_train bpe" "$T/sent.txt" bash -c '"$0" -q -f --model bpe --vocab-size 300 -o "$1" "$2" >/dev/null && cat "$1.vocab"' \
  $BIN/vocab_train "$T/vb" @IN@
same "vocab_train bpe, sampled" "$T/sent.txt" bash -c '"$0" -q -f --model bpe --vocab-size 300 --input-sentence-size 50 --shuffle -o "$1" "$2" >/dev/null && cat "$1.vocab"' \
  $BIN/vocab_train "$T/vs" @IN@
same "vocab_train wordpiece" "$T/sent.txt" bash -c '"$0" -q -f --model wordpiece --vocab-size 300 -o "$1" "$2" >/dev/null && cat "$1.txt"' \
  $BIN/vocab_train "$T/vw" @IN@
same "shard_split" "$T/sent.txt" bash -c 'rm -rf "$1"; "$0" -q -n 1 -t 1 -o "$1" "$2" >/dev/null && cat "$1"/*' \
  $BIN/shard_split "$T/sh" @IN@
same "hdf5gen --vocab" "$VOCAB" bash -c 'rm -rf "$1"; "$0" -q --vocab "$2" --max-seq-length 64 --max-predictions-per-seq 10 -o "$1/" "$3" >/dev/null && h5dump -d input_ids "$1"/*.hdf5 | tail -n +2' \
  $BIN/hdf5gen "$T/hv" @IN@ "$(ls "$T/shards"/*training*.txt)"

# options that name a file
EL=$DATA/elwikivoyage-17
same "wiki_dump --index" "$EL.multistream-index.txt.bz2" $BIN/wiki_dump -q -j2 --index @IN@ "$EL.multistream.xml.bz2"
same "wiki_dump, multistream" "$EL.multistream.xml.bz2" $BIN/wiki_dump -q -j2 @IN@
$BIN/langid_train -q -o "$T/lid.txt" "$T/lang.tsv"
head -5 "$T/lang.tsv" >"$T/dev.tsv"
same "langid_train --dev" "$T/dev.tsv" $BIN/langid_train -q --dev @IN@ "$T/lang.tsv"
same "langid_train --eval" "$T/lid.txt" $BIN/langid_train -q --eval @IN@ "$T/lang.tsv"
same "vocab_normalize --model" "$T/bpe.model" $BIN/vocab_normalize -q --model @IN@ "$T/sent.txt"
same "vocab_train --normalizer-model" "$T/bpe.model" bash -c '"$0" -q -f --model bpe --vocab-size 300 --normalizer-model "$2" -o "$1" "$3" >/dev/null && cat "$1.vocab"' \
  $BIN/vocab_train "$T/vn" @IN@ "$T/sent.txt"
same "hdf5gen --input-file" "$(ls "$T/shards"/*training*.txt)" bash -c 'rm -rf "$1"; "$0" -q --vocab "$2" --max-seq-length 64 --max-predictions-per-seq 10 --input-file "$3" -o "$1" >/dev/null && h5dump -d input_ids "$1" | tail -n +2' \
  $BIN/hdf5gen "$T/hi.hdf5" "$VOCAB" @IN@
same "hdf5_check --vocab" "$VOCAB" $BIN/hdf5_check --vocab @IN@ "$(ls "$T/h5"/*.hdf5)"
# train_bert_cpu reads --config_file and --vocab_file once: compare the
# checkpoint and the export's vocabulary (the log has a timing field)
cat >"$T/tiny.json" <<'EOF'
{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "vocab_size": 30522, "hidden_act": "gelu"}
EOF
TRAIN='rm -rf "$1"; "$0" -q -j1 --input_dir "$2" --config_file "$3" --vocab_file "$4" --output_dir "$1" \
  --train_batch_size 4 --max_steps 2 --max_predictions_per_seq 10 >/dev/null && cat "$1/ckpt_2.wbckpt" "$1/hf/vocab.txt"'
same "train_bert_cpu --config_file" "$T/tiny.json" bash -c "$TRAIN" $BIN/train_bert_cpu "$T/tc" "$T/h5" @IN@ "$VOCAB"
same "train_bert_cpu --vocab_file" "$VOCAB" bash -c "$TRAIN" $BIN/train_bert_cpu "$T/tv" "$T/h5" "$T/tiny.json" @IN@
# Programs that need a seekable file refuse a pipe with one line, at once.
for kind in fifo procsub; do
  feed "$kind" "$(ls "$T/h5"/*.hdf5)" $BIN/hdf5_check @IN@
  ok "hdf5_check: $kind refused (exit $rc)" [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
  ok "hdf5_check: $kind message names the file" grep -q "^hdf5_check: [^ ]*: not a regular file" "$err"
done
done_testing
