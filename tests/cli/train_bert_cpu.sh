# CLI tests of train_bert_cpu on hdf5gen's files of a real shard (enwiki-3,
# bert-base-uncased's vocab) with a tiny config: the JSON log, loss going
# down, checkpoints (last 3 kept) and the Hugging Face export (safetensors
# header: names, shapes, offsets); a run stopped at step 3 and resumed ends
# with the bytes of an uninterrupted run; 1 and 2 threads give the same
# bytes; dynamic masking of --no-mask files; and the errors: missing or
# malformed config, a vocabulary that does not fit the config, an empty
# input directory, files of another length, a checkpoint of another model, a
# damaged checkpoint. Dropout changes the loss; phase 2 continues from phase
# 1's last checkpoint as NVIDIA's --phase2 does (moments kept, step count,
# schedule and data new, checkpoints named phase1_end_step + step) and
# resumes exactly. Length bins (--bin_size) compute less, repeat for any
# thread count and resume exactly. Refused: sequences longer than
# max_position_embeddings, batches the model cannot take, options and
# config fields out of range, a vocabulary that is empty, binary or lacks
# a special token; a diverging run stops at its first non-finite step with
# the log still JSON; damaged checkpoints are named when skipped, and with
# only damaged ones a resume stops unless --start_fresh_if_damaged.
. "$TESTS/cli/lib.sh"
TR=$BIN/train_bert_cpu
V=$TESTS/../data/bert/vocab.txt
not() { ! "$@"; }
mkdir -p "$T/h5" "$T/plain" "$T/empty"
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 2 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 --max-predictions-per-seq 10 --random-seed 7 \
  -o "$T/h5/en_training_1.hdf5" "$T/en.txt"
cp "$T/h5/en_training_1.hdf5" "$T/h5/en_test_0.hdf5" # not a training file: must be ignored
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 --max-predictions-per-seq 10 --no-mask \
  -o "$T/plain/plain_training_0.hdf5" "$T/en.txt"
cat >"$T/tiny.json" <<'EOF'
{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
EOF
tr_args() { # OUT [more]
  local out=$1
  shift
  echo --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$out" --vocab_file "$V" --train_batch_size 8 \
    --gradient_accumulation_steps 2 --learning_rate 0.01 --warmup_proportion 0.2 --max_steps 6 \
    --max_predictions_per_seq 10 --num_steps_per_checkpoint 1 --seed 3 "$@"
}

# ---- a run ----
run "$TR" $(tr_args "$T/a") -j2
expect_rc "6 steps" 0
ok "one JSON line per step" eval '[ "$(grep -c "^{\"step\": [0-9]*, \"loss\": " "$out")" = 6 ]'
ok "every field in the log" grep -q '"mlm_loss": .*"nsp_loss": .*"mlm_acc": .*"nsp_acc": .*"lr": .*"grad_norm": .*"seq_per_s": ' "$out"
ok "learning rate warms up then decays (PolyWarmUp)" eval 'grep -q "\"step\": 1, .*\"lr\": 0.00833333" "$out" && grep -q "\"step\": 6, .*\"lr\": 0," "$out"'
first=$(sed -n 's/^{"step": 1, "loss": \([0-9.]*\).*/\1/p' "$out")
last=$(sed -n 's/^{"step": 6, "loss": \([0-9.]*\).*/\1/p' "$out")
ok "the loss goes down ($first -> $last)" eval '[ "$(echo "$last < $first" | bc)" = 1 ]'
ok "MLM loss starts near ln(30528) = 10.3" eval 'grep -q "\"step\": 1, .*\"mlm_loss\": 10\.[0-9]" "$out"'
# the run directory holds its own log: log.jsonl, a {"run": ...} line first
L=$T/a/log.jsonl
ok "log.jsonl in --output_dir: the run line, then stdout's lines" \
  eval '[ "$(head -1 "$L" | grep -c "^{\"run\": {\"program\": \"train_bert_cpu\", \"command\": \".*train_bert_cpu --input_dir ")" = 1 ] &&
  [ "$(tail -n +2 "$L" | sed "s/, \"seq_per_s.*//")" = "$(sed "s/, \"seq_per_s.*//" "$out")" ]'
ok "... the run line holds the resolved config (vocab_size rounded) and the start" \
  eval 'head -1 "$L" | grep -q "\"start_step\": 0, \"from\": null, .*\"config\": {.*\"vocab_size\": 30528 }}}$"'
ok "the last 3 checkpoints kept" eval '[ "$(ls "$T/a" | grep -c wbckpt)" = 3 ] && [ -s "$T/a/ckpt_6.wbckpt" ] && [ ! -e "$T/a/ckpt_3.wbckpt" ]'
ok "Hugging Face export" eval '[ -s "$T/a/hf/config.json" ] && [ -s "$T/a/hf/model.safetensors" ] && cmp -s "$T/a/hf/vocab.txt" "$V"'
ok "config.json: BertForPreTraining, vocab rounded to 30528" eval 'grep -q "BertForPreTraining" "$T/a/hf/config.json" && grep -q "\"vocab_size\": 30528" "$T/a/hf/config.json"'
ok "tokenizer_config.json: BertTokenizer, uncased, strip_accents None" \
  eval 'grep -q "\"tokenizer_class\": \"BertTokenizer\"" "$T/a/hf/tokenizer_config.json" && grep -q "\"do_lower_case\": true" "$T/a/hf/tokenizer_config.json" && grep -q "\"strip_accents\": null" "$T/a/hf/tokenizer_config.json"'
ok "... model_max_length is max_position_embeddings" \
  grep -q "\"model_max_length\": $(sed -n 's/.*"max_position_embeddings": *\([0-9]*\).*/\1/p' "$T/tiny.json")," "$T/a/hf/tokenizer_config.json"
run "$TR" $(tr_args "$T/acc" --max_steps 1 --do_lower_case 1 --strip_accents 0) -j2
expect_rc "--do_lower_case 1 --strip_accents 0" 0
ok "... recorded for the export's tokenizer" \
  eval 'grep -q "\"do_lower_case\": true" "$T/acc/hf/tokenizer_config.json" && grep -q "\"strip_accents\": false" "$T/acc/hf/tokenizer_config.json"'
PYX=$(py_with transformers)
if [ -z "$PYX" ]; then
  echo "not run: transformers' AutoTokenizer on the export (no Python with transformers)"
else
  printf 'Kör, kor és KŐR: Árvíztűrő tükörfúrógép!\n' >"$T/acc/hu.txt"
  "$PYX" -c 'import sys
from transformers import AutoTokenizer
t = AutoTokenizer.from_pretrained(sys.argv[1])
for line in open(sys.argv[2], encoding="utf-8"):
    print(" ".join(t.tokenize(line.rstrip("\n"))))' "$T/acc/hf" "$T/acc/hu.txt" >"$T/acc/hf.tok" 2>/dev/null
  "$BIN/wp_tokenize" --vocab "$V" --strip-accents 0 "$T/acc/hu.txt" >"$T/acc/ours.tok" 2>/dev/null
  ok "AutoTokenizer on the export tokenizes as wp_tokenize --strip-accents 0" \
    eval '[ -s "$T/acc/hf.tok" ] && cmp -s "$T/acc/hf.tok" "$T/acc/ours.tok"'
fi
PY=$(py_with json)
if [ -n "$PY" ]; then
  run "$PY" - "$T/a/hf/model.safetensors" <<'EOF'
import json, struct, sys, os
p = sys.argv[1]
with open(p, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n))
h.pop("__metadata__")
off = 0
for name, t in sorted(h.items(), key=lambda kv: kv[1]["data_offsets"][0]):
    a, b = t["data_offsets"]
    size = 4
    for d in t["shape"]:
        size *= d
    assert t["dtype"] == "F32" and a == off and b - a == size, name
    off = b
assert os.path.getsize(p) == 8 + n + off
need = ["bert.embeddings.word_embeddings.weight", "bert.encoder.layer.1.output.LayerNorm.bias",
        "cls.predictions.transform.dense.weight", "cls.predictions.bias", "cls.seq_relationship.weight"]
assert all(k in h for k in need)
assert h["bert.embeddings.word_embeddings.weight"]["shape"] == [30528, 32]
print("tensors", len(h))
EOF
  ok "safetensors: contiguous F32 tensors with Hugging Face names and shapes" grep -q "^tensors 46$" "$out"
else
  echo "not run: safetensors header check (no python3)"
fi

# ---- the export through transformers ----
run "$TR" --eval_file "$T/h5/en_training_0.hdf5" --config_file "$T/tiny.json" --init_checkpoint "$T/a/ckpt_6.wbckpt" \
  --train_batch_size 4 --max_predictions_per_seq 10
expect_rc "--eval_file on the last checkpoint" 0
ok "... one JSON line" grep -q '^{"eval_loss": [0-9.]*, "mlm_loss": ' "$out"
acc=$(sed -n 's/.*"mlm_acc": \([0-9.]*\), "nsp_acc": \([0-9.]*\), "rows": 4, "masked": \([0-9]*\)}$/\1 \2 \3/p' "$out")
ok "... with the MLM and NSP accuracies of its 4 rows ($acc)" \
  awk -v a="$acc" 'BEGIN { n = split(a, f, " "); exit !(n == 3 && f[1] >= 0 && f[1] <= 1 && f[2] >= 0 && f[2] <= 1 && f[3] > 0 && f[2] * 4 == int(f[2] * 4 + 0.5)) }'
ours=$(sed -n 's/^{"eval_loss": \([0-9.]*\).*/\1/p' "$out")
HPY=$(py_with "transformers, h5py, torch")
if [ -n "$HPY" ]; then
  run "$HPY" "$TESTS/cli/hf_check.py" "$T/a/hf" "$T/h5/en_training_0.hdf5" 4
  ok "transformers loads the export: no missing or unexpected keys" grep -q "^missing \[\] unexpected \[\]$" "$out"
  theirs=$(sed -n 's/^loss \([0-9.]*\) .*/\1/p' "$out")
  ok "transformers' BertForPreTraining gives our loss ($theirs vs $ours)" \
    eval '[ -n "$theirs" ] && [ "$(echo "d = $theirs - $ours; if (d < 0) d = -d; d <= 0.0001 * $ours" | bc -l)" = 1 ]'
else
  echo "not run: the export through transformers (no python3 with transformers, h5py and torch)"
fi

# ---- resume gives the bytes of an uninterrupted run ----
run "$TR" $(tr_args "$T/b") -j2 --stop_at_step 3 --num_steps_per_checkpoint 100
expect_rc "stop at step 3" 0
ok "... with a checkpoint of step 3 only, its log and no export" eval '[ "$(ls "$T/b" | tr "\n" " ")" = "ckpt_3.wbckpt log.jsonl " ]'
printf '{"step": 4, "loss": 1' >>"$T/b/log.jsonl" # a line cut by a kill
run "$TR" $(tr_args "$T/b") -j2 --resume_from_checkpoint --num_steps_per_checkpoint 100
expect_rc "resume to 6" 0
ok "resumed: logs steps 4..6 only" eval '[ "$(grep -c "^{\"step\"" "$out")" = 3 ] && grep -q "^{\"step\": 4," "$out"'
ok "... appended to log.jsonl after a second run line, a cut line ended first" \
  eval '[ "$(grep -c "^{\"run\": " "$T/b/log.jsonl")" = 2 ] && [ "$(grep -c "^{\"step\": [0-9]*, \"loss\": [0-9.]*, " "$T/b/log.jsonl")" = 6 ] &&
  grep -q "\"start_step\": 3, \"from\": \"[^\"]*/b/ckpt_3.wbckpt\"" "$T/b/log.jsonl" && [ "$(wc -l <"$T/b/log.jsonl")" = 9 ]'
ok "resumed run ends with the bytes of the uninterrupted one" cmp -s "$T/a/ckpt_6.wbckpt" "$T/b/ckpt_6.wbckpt"
run "$TR" $(tr_args "$T/c") -j1
ok "one thread writes the bytes of two" cmp -s "$T/a/ckpt_6.wbckpt" "$T/c/ckpt_6.wbckpt"

# ---- dynamic masking ----
run "$TR" --input_dir "$T/plain" --config_file "$T/tiny.json" --output_dir "$T/d" --train_batch_size 4 --max_steps 2 \
  --max_predictions_per_seq 10
expect_rc "a --no-mask file trains with dynamic masking" 0
ok "... and has an MLM loss" grep -q '"mlm_loss": [1-9]' "$out"
run "$TR" --input_dir "$T/plain" --config_file "$T/tiny.json" --output_dir "$T/d2" --max_steps 1 --no_dynamic_mask
expect_rc "without dynamic masking it is refused" 1
expect_err "... naming the file" "*plain_training_0.hdf5: no masked positions*"

# ---- errors ----
H5PY=$(py_with h5py)
if [ -n "$H5PY" ]; then
  mkdir -p "$T/dup"
  cp "$T/h5/en_training_1.hdf5" "$T/dup/dup_training_0.hdf5"
  "$H5PY" -c 'import h5py, sys
f = h5py.File(sys.argv[1], "r+", libver=("earliest", "v110")); p = f["masked_lm_positions"]; r = p[3]; r[1] = r[0]; p[3] = r; f.close()' \
    "$T/dup/dup_training_0.hdf5"
  run "$TR" --input_dir "$T/dup" --config_file "$T/tiny.json" --output_dir "$T/dupo" --max_steps 1
  expect_rc "a masked position listed twice in a row" 1
  expect_err "... named with the file and instance" "*dup_training_0.hdf5: instance 3: masked position * listed twice*"
else
  echo "not run: a file with a masked position listed twice (no python3 with h5py to write it)"
fi
run "$TR" $(tr_args "$T/e") --config_file "$T/none.json"
expect_rc "missing config" 2
expect_err "... named" "*none.json: No such file or directory*"
printf '{"hidden_size": 32,, }' >"$T/bad.json"
run "$TR" $(tr_args "$T/e") --config_file "$T/bad.json"
expect_rc "malformed config" 2
expect_err "... with its line and byte offset" "*bad.json:1: * (byte *)"
# a config of another vocabulary: the vocabulary's size, said with both numbers
sed 's/"vocab_size": 30522/"vocab_size": 30000/' "$T/tiny.json" >"$T/small.json"
run "$TR" $(tr_args "$T/vs") --config_file "$T/small.json" --max_steps 1
expect_rc "vocab.txt larger than the config's vocab_size" 0
expect_err "... adopted, both sizes named" "*vocab.txt has 30522 tokens, *small.json says vocab_size 30000: the model takes the vocabulary's size, 30528 (30522 rounded up to a multiple of 8)*"
ok "... which the export holds" grep -q '"vocab_size": 30528' "$T/vs/hf/config.json"
sed 's/"vocab_size": 30522/"vocab_size": 50000/' "$T/tiny.json" >"$T/big.json"
run "$TR" $(tr_args "$T/vb") --config_file "$T/big.json" --max_steps 1
expect_err "a config's larger vocab_size: the vocabulary's too" "*says vocab_size 50000: the model takes the vocabulary's size, 30528*"
ok "... in the export" grep -q '"vocab_size": 30528' "$T/vb/hf/config.json"
run "$TR" $(tr_args "$T/vq") --max_steps 1
ok "a config that fits (30522 -> 30528): nothing said" not grep -q "the model takes" "$err"
run "$TR" $(tr_args "$T/e") --input_dir "$T/empty"
expect_rc "no training files" 1
expect_err "... said so" "*empty: no file with 'training' in its name*"
run "$TR" $(tr_args "$T/e") --max_seq_length 128
expect_rc "files of another sequence length" 1
expect_err "... named" "*sequences of 64 tokens, --max_seq_length is 128*"
sed 's/"hidden_size": 32/"hidden_size": 48/' "$T/tiny.json" >"$T/wide.json"
run "$TR" $(tr_args "$T/a") --config_file "$T/wide.json" --resume_from_checkpoint
expect_rc "a checkpoint of another model" 1
expect_err "... names the difference" "*a checkpoint of another model: hidden_size 32, the config says 48*"
head -c 5000 "$T/a/ckpt_6.wbckpt" >"$T/cut.wbckpt"
run "$TR" $(tr_args "$T/e") --init_checkpoint "$T/cut.wbckpt"
expect_rc "a cut checkpoint" 1
expect_err "... refused" "*cut.wbckpt: * (no completion marker*"
mkdir -p "$T/f"
cp "$T/a/ckpt_5.wbckpt" "$T/f/"
cp "$T/cut.wbckpt" "$T/f/ckpt_9.wbckpt"
run "$TR" $(tr_args "$T/f") --resume_from_checkpoint --max_steps 6 -v
expect_rc "resume skips an incomplete newer checkpoint" 0
expect_err "... and takes the newest complete one" "*resumed from *ckpt_5.wbckpt at step 5*"
expect_err "... saying which file it skipped and why" \
  "*train_bert_cpu: $T/f/ckpt_9.wbckpt: incomplete or damaged (no completion marker*; skipped*"
mkdir -p "$T/g"
cp "$T/cut.wbckpt" "$T/g/ckpt_4.wbckpt"
run "$TR" $(tr_args "$T/g") --resume_from_checkpoint --max_steps 2
expect_rc "resume with only a damaged checkpoint" 1
expect_err "... names it and stops" "*ckpt_4.wbckpt: incomplete or damaged*; skipped*$T/g: no usable checkpoint (1 damaged*--start_fresh_if_damaged*"
ok "... without training" eval '[ ! -s "$out" ] && [ "$(ls "$T/g")" = ckpt_4.wbckpt ]'
run "$TR" $(tr_args "$T/g") --resume_from_checkpoint --max_steps 2 --start_fresh_if_damaged
expect_rc "--start_fresh_if_damaged" 0
expect_err "... starts from step 0, saying why" "*ckpt_4.wbckpt: incomplete or damaged*no usable checkpoint in $T/g: starting from step 0*"
ok "... and trains steps 1..2" eval '[ "$(grep -c "^{\"step\"" "$out")" = 2 ] && [ -s "$T/g/ckpt_2.wbckpt" ]'
run "$TR" $(tr_args "$T/g") --start_fresh_if_damaged
expect_rc "--start_fresh_if_damaged without --resume_from_checkpoint" 2
run "$TR" --help
ok "--help documents --start_fresh_if_damaged" grep -q "^  --start_fresh_if_damaged  *with --resume_from_checkpoint" "$out"
run "$TR" --input_dir "$T/h5"
expect_rc "missing required options" 2

# ---- dropout: training mode differs from a run without it ----
sed 's/"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1/"hidden_dropout_prob": 0, "attention_probs_dropout_prob": 0/' \
  "$T/tiny.json" >"$T/nodrop.json"
run "$TR" $(tr_args "$T/nd" --config_file "$T/nodrop.json" --max_steps 1)
ok "dropout 0.1 gives another step-1 loss than dropout 0" eval \
  '[ "$(sed -n "s/^{\"step\": 1, \"loss\": \([0-9.]*\).*/\1/p" "$out")" != "$first" ]'

# ---- phase 2 (NVIDIA's --phase2 --resume_from_checkpoint --phase1_end_step) ----
mkdir -p "$T/p2"
cp "$T/a/ckpt_6.wbckpt" "$T/p2/"
p2_args() { tr_args "$T/p2" --phase2 --resume_from_checkpoint --phase1_end_step 6 --max_steps 4 --warmup_proportion 0.5 "$@"; }
run "$TR" $(p2_args) -v
expect_rc "phase 2 from phase 1's last checkpoint" 0
expect_err "... weights and moments, step 0" "*weights and optimizer moments from *ckpt_6.wbckpt; phase 2 starts at step 0*"
ok "... logs its steps 1..4 with a new warm-up (lr 0.01 * 0.25 / 0.5)" eval \
  '[ "$(grep -c "^{\"step\"" "$out")" = 4 ] && grep -q "^{\"step\": 1, .*\"lr\": 0.005," "$out"'
ok "... checkpoints named phase1_end_step + step, phase 1's kept" eval \
  '[ "$(ls "$T/p2" | tr "\n" " ")" = "ckpt_10.wbckpt ckpt_6.wbckpt ckpt_8.wbckpt ckpt_9.wbckpt hf log.jsonl " ]'
mkdir -p "$T/p2b"
cp "$T/a/ckpt_6.wbckpt" "$T/p2b/"
run "$TR" $(tr_args "$T/p2b" --phase2 --resume_from_checkpoint --phase1_end_step 6 --max_steps 4 --warmup_proportion 0.5 --stop_at_step 2)
run "$TR" $(tr_args "$T/p2b" --phase2 --resume_from_checkpoint --phase1_end_step 6 --max_steps 4 --warmup_proportion 0.5) -v
expect_err "a stopped phase 2 resumes in phase 2" "*resumed from *ckpt_8.wbckpt at step 2 of phase 2*"
ok "... and ends with the bytes of the uninterrupted phase 2" cmp -s "$T/p2/ckpt_10.wbckpt" "$T/p2b/ckpt_10.wbckpt"
mkdir -p "$T/p2c"
cp "$T/a/ckpt_5.wbckpt" "$T/p2c/"
run "$TR" $(tr_args "$T/p2c" --phase2 --resume_from_checkpoint --phase1_end_step 6)
expect_rc "phase 2 from a checkpoint before phase1_end_step" 1
expect_err "... says phase 1 has not finished" "*ckpt_5.wbckpt: step 5 is before --phase1_end_step 6*"
run "$TR" $(tr_args "$T/p2d" --phase2)
expect_rc "--phase2 without --resume_from_checkpoint" 2
mkdir -p "$T/p2e"
run "$TR" $(tr_args "$T/p2e" --phase2 --resume_from_checkpoint)
expect_rc "--phase2 with no checkpoint at all" 1
run "$TR" $(tr_args "$T/ic" --resume_from_checkpoint --init_checkpoint "$T/a/ckpt_6.wbckpt" --max_steps 2) -v
expect_err "--init_checkpoint with --resume_from_checkpoint: weights and moments, step 0" \
  "*weights and optimizer moments from *ckpt_6.wbckpt; training starts at step 0*"
ok "... and writes its own checkpoints from 1" eval '[ -s "$T/ic/ckpt_2.wbckpt" ]'

# ---- --skip_checkpoint (benchmarks) ----
run "$TR" $(tr_args "$T/sk") -j2 --skip_checkpoint --max_steps 2
expect_rc "--skip_checkpoint" 0
ok "... writes no checkpoint and no export (its log only)" eval '[ -d "$T/sk" ] && [ "$(ls -A "$T/sk")" = log.jsonl ]'
run "$TR" $(tr_args "$T/sk") --skip_checkpoint --stop_at_step 1
expect_rc "--skip_checkpoint with --stop_at_step" 2

# ---- length bins (--bin_size): one-sentence documents, so rows of many lengths ----
mkdir -p "$T/hs"
awk 'NF { print; print "" }' "$T/en.txt" >"$T/short.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 2 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/hs/s_training_0.hdf5" "$T/short.txt"
bargs() { echo --input_dir "$T/hs" --config_file "$T/tiny.json" --vocab_file "$V" --train_batch_size 4 --max_steps 6 \
  --learning_rate 0.01 --max_predictions_per_seq 10 --num_steps_per_checkpoint 2 --bin_size 16 --output_dir "$@"; }
run "$TR" $(bargs "$T/bin") -j2
expect_rc "--bin_size 16" 0
share=$(sed -n 's/.*--bin_size 16: batches held \([0-9.]*\) %.*/\1/p' "$err")
ok "... computes fewer token positions than full-length batches ($share %)" \
  awk -v s="$share" 'BEGIN { exit !(s != "" && s > 20 && s < 95) }'
ok "... and trains (6 steps logged)" eval '[ "$(grep -c "^{\"step\"" "$out")" = 6 ]'
run "$TR" $(bargs "$T/bin1") -j1
ok "... one thread writes the bytes of two" cmp -s "$T/bin/ckpt_6.wbckpt" "$T/bin1/ckpt_6.wbckpt"
run "$TR" $(bargs "$T/binr") -j2 --stop_at_step 3
run "$TR" $(bargs "$T/binr") -j2 --resume_from_checkpoint
ok "... stopped at step 3 and resumed = uninterrupted" cmp -s "$T/bin/ckpt_6.wbckpt" "$T/binr/ckpt_6.wbckpt"
run "$TR" $(bargs "$T/bin0") -j2 --bin_size 0
ok "... and not the bytes of a run without bins" not cmp -s "$T/bin/ckpt_6.wbckpt" "$T/bin0/ckpt_6.wbckpt"
# ---- data the model cannot take, refused before training ----
sed 's/"max_position_embeddings": 64/"max_position_embeddings": 32/' "$T/tiny.json" >"$T/pos32.json"
run "$TR" $(tr_args "$T/pos") --config_file "$T/pos32.json"
expect_rc "sequences longer than max_position_embeddings" 1
expect_err "... refused naming the file" \
  "train_bert_cpu: $T/h5/en_training_?.hdf5: sequences of 64 tokens, more than the config's max_position_embeddings 32"
ok "... before any step" eval '[ ! -s "$out" ] && [ ! -e "$T/pos/ckpt_1.wbckpt" ]'
sed 's/"type_vocab_size": 2/"type_vocab_size": 1/' "$T/tiny.json" >"$T/type1.json"
run "$TR" $(tr_args "$T/ty") --config_file "$T/type1.json"
expect_rc "every batch is checked against the model: segment id 1 with type_vocab_size 1" 1
expect_err "... naming the file and the row" "train_bert_cpu: $T/h5/en_training_?.hdf5: row *: segment id 1"

# ---- a run that diverges stops at the first step that is not finite ----
run "$TR" $(tr_args "$T/nan") --learning_rate 1e30
expect_rc "--learning_rate 1e30: the loss becomes nan" 1
expect_err "... the step, the value and the cure" \
  "train_bert_cpu: step 2: loss is nan (grad_norm nan, *): training diverged; lower --learning_rate; *"
ok "... the log has only the good step, no nan or inf" eval '[ "$(grep -c "^{\"step\": 1, " "$out")" = 1 ] &&
  [ "$(wc -l <"$out")" = 1 ] && ! grep -qi "nan\|inf" "$out"'
ok "... the last good checkpoint kept, none of the bad state, no export" eval '[ "$(ls "$T/nan" | tr "\n" " ")" = "ckpt_1.wbckpt log.jsonl " ]'
ok "... log.jsonl as stdout: the good step, no nan or inf" eval '[ "$(grep -c "^{\"step\": " "$T/nan/log.jsonl")" = 1 ] &&
  ! grep -v "^{\"run\": " "$T/nan/log.jsonl" | grep -qi "nan\|inf"'
run "$TR" $(tr_args "$T/nan2") --optimizer adamw --learning_rate 1e38 --weight_decay 1e10
expect_rc "weights that overflow in the update (the step's loss finite)" 1
expect_err "... stop before the checkpoint" "train_bert_cpu: step 1: a weight is *after the update *"
ok "... which is not written" eval '[ "$(ls -A "$T/nan2")" = log.jsonl ]'

# ---- options and config fields out of range: exit 2 naming them ----
for v in nan -1 inf 0 1e39; do
  run "$TR" $(tr_args "$T/o") --learning_rate "$v"
  expect_rc "--learning_rate $v" 2
  expect_err "... named" "train_bert_cpu: --learning_rate*$v*"
done
for a in "--weight_decay -1" "--weight_decay nan" "--warmup_proportion nan" "--warmup_proportion 1.5"; do
  run "$TR" $(tr_args "$T/o") $a
  expect_rc "$a" 2
  expect_err "... named" "train_bert_cpu: ${a% *}*${a#* }*"
done
run "$TR" $(tr_args "$T/o") --train_batch_size 16777216 --gradient_accumulation_steps 1 --max_predictions_per_seq 65536
expect_rc "a micro-batch of 2^24 rows of 65536 masked slots" 2
expect_err "... named" "train_bert_cpu: a micro-batch of 16777216 rows * more than 2^31 - 1*"
field() { # NAME VALUE: tiny.json with NAME set to VALUE
  sed -E "s/\"$1\": [^,}]*/\"$1\": $2/" "$T/tiny.json" >"$T/field.json"
}
for fv in "hidden_dropout_prob 1" "attention_probs_dropout_prob 1.5" "hidden_dropout_prob -0.1" \
  "num_hidden_layers 1e9" "vocab_size 1000000000" "intermediate_size 0" "max_position_embeddings 200000000"; do
  set -- $fv
  field "$1" "$2"
  run "$TR" $(tr_args "$T/o") --config_file "$T/field.json"
  expect_rc "config $1 $2" 2
  expect_err "... names the field, once" "train_bert_cpu: $T/field.json*: *$1*"
  ok "... on one line" [ "$(wc -l <"$err")" = 1 ]
done

# ---- the vocabulary: read once, checked ----
: >"$T/v_empty.txt"
printf '[PAD]\n[CLS]\0\n[SEP]\n[MASK]\n' >"$T/v_nul.txt"
printf '[PAD]\n[CLS]\n[SEP]\n[MASK]\n\377x\n' >"$T/v_latin1.txt"
grep -v '^\[MASK\]$' "$V" >"$T/v_nomask.txt"
for c in "v_empty:empty" "v_nul:byte 11: a NUL byte" "v_latin1:byte 25: not UTF-8" "v_nomask:no \[MASK\] line"; do
  run "$TR" $(tr_args "$T/o") --vocab_file "$T/${c%%:*}.txt"
  expect_rc "--vocab_file ${c%%:*}" 2
  expect_err "... named, with the reason" "train_bert_cpu: $T/${c%%:*}.txt: ${c#*:}*"
  ok "... nothing written" eval '[ ! -e "$T/o" ]'
done
# [CLS], [SEP] and [MASK] of the vocabulary mask the --no-mask files (BERT's ids without one)
awk 'NR == 104 { print "[unused99]"; next } NR == 201 { print "[MASK]"; next } { print }' "$V" >"$T/v_moved.txt"
dm() { run "$TR" --input_dir "$T/plain" --config_file "$T/tiny.json" --train_batch_size 4 --max_steps 1 \
  --max_predictions_per_seq 10 --output_dir "$@"; }
dm "$T/dm0"
dm "$T/dm1" --vocab_file "$V"
dm "$T/dm2" --vocab_file "$T/v_moved.txt"
expect_rc "a vocabulary with [MASK] on line 201" 0
ok "... BERT's vocabulary masks as no vocabulary does (101-103)" cmp -s "$T/dm0/ckpt_1.wbckpt" "$T/dm1/ckpt_1.wbckpt"
ok "... the moved [MASK] masks with its own id" not cmp -s "$T/dm1/ckpt_1.wbckpt" "$T/dm2/ckpt_1.wbckpt"
ok "... and is what the export holds" cmp -s "$T/dm2/hf/vocab.txt" "$T/v_moved.txt"
done_testing
