#!/usr/bin/env bash
# tests/gpu/check.sh - `make gpu-check`: train_bert on this machine's GPU.
#
#   tests/gpu/check.sh BUILD/tests BIN
#
# 1. check_gpu: the CUDA backend against the PyTorch reference file, fp32
#    (1e-4) and bf16 (1e-2 on losses and weights).
# 2. train_bert against train_bert_cpu on real data (enwiki-3 through the
#    prep stages and hdf5gen, a tiny config with dropout, 2 micro-batches per
#    step): two LAMB steps in fp32 give the CPU's losses (1e-4) and weights
#    (1e-4 per tensor); bf16 within 1e-2 on the losses; a run stopped after
#    step 1 and resumed ends with the bytes of an uninterrupted one; the
#    Hugging Face export is written; --eval_file gives the CPU's loss.
# Without a GPU (nvidia-smi finds none) it says so and exits 0 counting
# nothing: the checks did not run.
set -u
TB=$1 BIN=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: not run: no GPU here (nvidia-smi finds none); train_bert was built: $([ -x "$BIN/train_bert" ] && echo yes || echo no)"
  exit 0
fi
[ -x "$BIN/train_bert" ] || { echo "gpu-check: bin/train_bert was not built (see mk/cuda.sh)"; exit 1; }
PASS=0 FAIL=0
ok() {
  local name=$1; shift
  if "$@"; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL $name"; fi
}
nvidia-smi -L
out=$(cd "$ROOT" && "$TB/check_gpu")
echo "$out"
p=$(echo "$out" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\1/p')
f=$(echo "$out" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\2/p')
PASS=$((PASS + ${p:-0})) FAIL=$((FAIL + ${f:-1}))

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
V=$ROOT/data/bert/vocab.txt
mkdir -p "$T/h5"
"$BIN/wiki_dump" "$ROOT/tests/data/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -l en 2>/dev/null >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 2 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
cat >"$T/tiny.json" <<'J'
{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
J
args() { echo --input_dir "$T/h5" --config_file "$T/tiny.json" --vocab_file "$V" --train_batch_size 16 \
  --gradient_accumulation_steps 2 --learning_rate 0.01 --warmup_proportion 0.5 --max_steps 2 \
  --max_predictions_per_seq 10 --num_steps_per_checkpoint 1 --seed 5 --output_dir "$@"; }
loss() { sed -n "s/^{\"step\": $2, \"loss\": \([0-9.]*\).*/\1/p" "$1"; }
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t * b) }'; }
"$BIN/train_bert_cpu" -q $(args "$T/cpu") >"$T/cpu.log"
"$BIN/train_bert" -q --precision fp32 $(args "$T/f32") >"$T/f32.log"
"$BIN/train_bert" -q --precision bf16 $(args "$T/b16") >"$T/b16.log"
for s in 1 2; do
  c=$(loss "$T/cpu.log" $s) f=$(loss "$T/f32.log" $s) b=$(loss "$T/b16.log" $s)
  echo "step $s loss: CPU $c, GPU fp32 $f, GPU bf16 $b"
  ok "step $s: fp32 loss = the CPU's within 1e-4" close "$f" "$c" 1e-4
  ok "step $s: bf16 loss = the CPU's within 1e-2" close "$b" "$c" 1e-2
done
ok "fp32 weights after 2 steps = the CPU's within 1e-4" \
  "$TB/check_gpu" ckpt "$T/tiny.json" "$T/f32/ckpt_2.wbckpt" "$T/cpu/ckpt_2.wbckpt" 1e-4
ok "bf16 weights after 2 steps = the CPU's within 1e-2" \
  "$TB/check_gpu" ckpt "$T/tiny.json" "$T/b16/ckpt_2.wbckpt" "$T/cpu/ckpt_2.wbckpt" 1e-2
ok "the Hugging Face export" test -s "$T/b16/hf/model.safetensors"
"$BIN/train_bert" -q $(args "$T/r") --stop_at_step 1 >/dev/null
"$BIN/train_bert" -q $(args "$T/r") --resume_from_checkpoint >/dev/null
ok "bf16: stopped after step 1 and resumed = uninterrupted, byte for byte" cmp -s "$T/r/ckpt_2.wbckpt" "$T/b16/ckpt_2.wbckpt"
"$BIN/train_bert" -q $(args "$T/b16") >"$T/b16b.log"
ok "bf16: a second run repeats the first's log losses exactly" \
  eval '[ "$(sed "s/, \"seq_per_s.*//" "$T/b16.log")" = "$(sed "s/, \"seq_per_s.*//" "$T/b16b.log")" ]'
ec=$("$BIN/train_bert_cpu" --eval_file "$T/h5/en_training_0.hdf5" --init_checkpoint "$T/cpu/ckpt_2.wbckpt" \
  --config_file "$T/tiny.json" --train_batch_size 16 --max_predictions_per_seq 10 | sed 's/.*"eval_loss": \([0-9.]*\).*/\1/')
eg=$("$BIN/train_bert" --precision fp32 --eval_file "$T/h5/en_training_0.hdf5" --init_checkpoint "$T/cpu/ckpt_2.wbckpt" \
  --config_file "$T/tiny.json" --train_batch_size 16 --max_predictions_per_seq 10 | sed 's/.*"eval_loss": \([0-9.]*\).*/\1/')
echo "eval loss: CPU $ec, GPU fp32 $eg"
ok "--eval_file: the CPU's loss within 1e-4" close "$eg" "$ec" 1e-4
echo "gpu-check: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
