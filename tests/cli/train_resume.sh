# Resuming: a checkpoint at or past --max_steps trains nothing, writes
# nothing (no checkpoint, the export left as it is) and says so in one line,
# exit 0; a resume whose batch size, accumulation, seed, bin size, masked
# positions or dynamic masking differ from the checkpoint's is refused,
# naming both values (the run would not be the uninterrupted one); the same
# options resume.
. "$TESTS/cli/lib.sh"
TR=$BIN/train_bert_cpu
V=$TESTS/../data/bert/vocab.txt
cat >"$T/tiny.json" <<'JSON'
{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522}
JSON
mkdir -p "$T/h5"
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -40 >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 2 --max-seq-length 64 -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
tr_args() { # OUT [more]
  local o=$1
  shift
  echo --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$o" --vocab_file "$V" \
    --train_batch_size 4 --max_predictions_per_seq 20 --num_steps_per_checkpoint 1 --seed 3 -j1 "$@"
}
run "$TR" $(tr_args "$T/a") --max_steps 3
expect_rc "a run of 3 steps" 0
ok "... its export" [ -f "$T/a/hf/model.safetensors" ]
printf ' ' >>"$T/a/hf/config.json" # a mark a rewritten export would lose
cp "$T/a/hf/config.json" "$T/config.marked"
ls "$T/a" >"$T/before"
for m in 3 2; do
  run "$TR" $(tr_args "$T/a") --max_steps $m --resume_from_checkpoint
  expect_rc "resume at step 3 with --max_steps $m: exit 0" 0
  expect_err "... nothing to train, said in one line" \
    "train_bert_cpu: $T/a/ckpt_3.wbckpt: checkpoint at step 3 >= --max_steps $m: nothing to train (the export in $T/a/hf is left as it is)"
  ok "... no step logged" eval '! grep -q "\"step\"" "$out"'
  ok "... the export not rewritten" cmp -s "$T/a/hf/config.json" "$T/config.marked"
  ok "... no file added or removed" eval 'ls "$T/a" | cmp -s - "$T/before"'
done
mv "$T/a/hf" "$T/a-hf"
run "$TR" $(tr_args "$T/a") --max_steps 3 --resume_from_checkpoint
expect_rc "at step 3 without an export: exit 0" 0
expect_err "... writes the missing export from the checkpoint, said in one line" \
  "train_bert_cpu: $T/a/ckpt_3.wbckpt: checkpoint at step 3 >= --max_steps 3: nothing to train; its Hugging Face export, missing, written in $T/a/hf"
ok "... the same weights as the run's own export" cmp -s "$T/a/hf/model.safetensors" "$T/a-hf/model.safetensors"
ok "... its model card points at the log for the losses" grep -q "the losses are in the run's .log.jsonl." "$T/a/hf/README.md"
ok "... no step logged" eval '! grep -q "\"step\"" "$out"'
run "$TR" $(tr_args "$T/a") --max_steps 3 --resume_from_checkpoint
ok "... and a rerun leaves it as it is" cmp -s "$T/a/hf/model.safetensors" "$T/a-hf/model.safetensors"

# the options the batches depend on: refused when they differ
while read -r opt val was; do
  run "$TR" $(tr_args "$T/a") --max_steps 5 --resume_from_checkpoint $opt $val
  expect_rc "resume with $opt $val: refused" 1
  expect_err "... both values named" \
    "train_bert_cpu: $T/a/ckpt_3.wbckpt: written with $opt $was; this run has $opt $val (resume with the same, or train into another --output_dir: the resumed run would not be the uninterrupted one)"
  ok "... nothing trained" [ ! -e "$T/a/ckpt_4.wbckpt" ]
done <<'LIST'
--train_batch_size 8 4
--gradient_accumulation_steps 2 1
--seed 4 3
--bin_size 16 0
--max_predictions_per_seq 10 20
LIST
run "$TR" $(tr_args "$T/a") --max_steps 5 --resume_from_checkpoint --no_dynamic_mask
expect_err "resume with --no_dynamic_mask: refused" "*: written with --dynamic_mask 1; this run has --dynamic_mask 0 *"
run "$TR" $(tr_args "$T/a") --max_steps 5 --resume_from_checkpoint
expect_rc "the same options resume" 0
ok "... to step 5" [ -f "$T/a/ckpt_5.wbckpt" ]
done_testing
