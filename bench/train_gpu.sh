#!/usr/bin/env bash
# bench/train_gpu.sh - train_bert against Hugging Face transformers'
# BertForPreTraining in PyTorch (bf16 autocast, SDPA attention, fused
# AdamW; bench/train_gpu_ref.py) on this machine's GPU, same micro-batch,
# in the same run: seq/s and model FLOPs utilisation for BERT-base and
# BERT-large, phase 1 (128/20) and phase 2 (512/80).
#
# Data for train_bert: enwiki-206 through the prep stages and hdf5gen (dupe
# 5) at both lengths, bert-base-uncased's vocabulary. Ours: train_bert
# --precision bf16, LAMB (NVIDIA's recipe), one micro-batch per step,
# median seq/s of its per-step log after WARMUP steps. MFU = model FLOPs
# per second / the GPU's dense bf16 peak, with model FLOPs per sequence =
# 3 x forward: per layer 2S(4H^2 + 2HI) + 4S^2H, plus the MLM head at the
# masked tokens P(2H^2 + 2HV) and the pooler/NSP 2H^2 + 4H (the same count
# for both programs, although the peer's head runs at all S positions).
#
#   bash bench/train_gpu.sh [--write BENCHMARKS.md]
#   B1=64 B2=16 STEPS=30 WARMUP=5 BINS=64 ACCUM=8 PEAK_TFLOPS=989 (defaults: peak from the GPU's name)
#
# A row repeats BERT-large phase 1 with ACCUM micro-batches per
# optimizer step on both sides (ACCUM=1 skips it): NVIDIA's recipe
# accumulates (128 micro-batches of 64 per step on 8 GPUs), where the
# optimizer's share of a step is small; the other rows step every micro-batch.
#
# BERT-large rows are repeated with --attention fused (the tensor-core
# kernels that keep no sequence x sequence matrix, the default being the
# scores through cuBLAS): the same work, less memory.
#
# Phase 2 also runs with --bin_size BINS (length bins: each batch cut to its
# bin's bound; BINS=0 skips it): the same rows, less padding computed, so
# its ratio is a training-side gain, not the same work as the peer's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/gpu_lib.sh"
WRITE=""
[ "${1:-}" = --write ] && WRITE=${2:?--write FILE}
B1=${B1:-64} B2=${B2:-16} STEPS=${STEPS:-30} WARMUP=${WARMUP:-5} BINS=${BINS:-64} ACCUM=${ACCUM:-8}
D=$W/train_gpu
mkdir -p "$D"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "bench/train_gpu.sh: no GPU here"; exit 1; }
[ -x "$BIN/train_bert" ] || { echo "bench/train_gpu.sh: bin/train_bert not built (nvcc missing?)"; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
[ -n "${PEAK_TFLOPS:-}" ] || PEAK_TFLOPS=$(gpu_peak_tflops "$gpu")
PY=""
for p in ${WIKIBERT_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import torch, transformers; assert torch.cuda.is_available()" 2>/dev/null; then
    PY=$p
    break
  fi
done

[ -s "$D/en.txt" ] || "$BIN/wiki_dump" "$ROOT/tests/data/enwiki-206.xml.bz2" 2>/dev/null |
  "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" -l en 2>/dev/null >"$D/en.txt"
for sp in 128:20 512:80; do
  s=${sp%:*} p=${sp#*:}
  mkdir -p "$D/h5_$s"
  [ -s "$D/h5_$s/en_training_0.hdf5" ] || "$BIN/hdf5gen" -q -f --vocab "$ROOT/data/bert/vocab.txt" --dupe-factor 5 \
    --max-seq-length "$s" --max-predictions-per-seq "$p" -o "$D/h5_$s/en_training_0.hdf5" "$D/en.txt"
done

flops() { gpu_flops "$@"; }

run_ours() { # config seq pred batch [options] -> median seq/s after WARMUP steps
  local conf=$1 s=$2 p=$3 b=$4
  shift 4
  rm -rf "$D/out"
  "$BIN/train_bert" -q --input_dir "$D/h5_$s" --config_file "$conf" --output_dir "$D/out" \
    --train_batch_size "$b" --max_steps $((STEPS + WARMUP)) --max_predictions_per_seq "$p" --learning_rate 1e-4 \
    --skip_checkpoint --precision bf16 "$@" >"$D/ours.log"
  gpu_median_seqs "$D/ours.log" "$WARMUP"
  rm -rf "$D/out"
}

peer() { # config batch seq pred accum -> the peer's median seq/s (nothing without PyTorch)
  [ -n "$PY" ] || return 0
  "$PY" "$ROOT/bench/train_gpu_ref.py" "$1" "$2" "$3" "$4" "$STEPS" "$WARMUP" "$5" |
    sed -n 's/.*: \([0-9.]*\) seq\/s.*/\1/p'
}
mfu() { gpu_mfu "$1" "$2" "$PEAK_TFLOPS"; } # seq/s, FLOPs per sequence (either empty: -)
write_table() { # the rows so far into WRITE (after each row: a run cut short keeps what it measured)
  [ -n "$WRITE" ] || return 0
  {
    echo "<!-- train_gpu:begin -->"
    echo "### \`bash bench/train_gpu.sh\` — $(date -u +%Y-%m-%d), $gpu"
    echo
    echo "train_bert --precision bf16 (LAMB) against transformers' BertForPreTraining (bf16 autocast, SDPA, fused"
    echo "AdamW), the same micro-batch, median seq/s over $STEPS steps after $WARMUP; MFU against ${PEAK_TFLOPS} TFLOPS."
    echo "Rows with --attention fused: the fused attention kernels, less memory (default: the scores through cuBLAS)."
    echo "Rows with --bin_size: length bins, less padding computed than the peer (not the same work). The row"
    echo "with $ACCUM micro-batches per step accumulates on both sides (the others step every micro-batch)."
    echo
    echo "| config | phase (seq/pred) | micro-batch | train_bert seq/s | MFU | PyTorch seq/s | MFU | ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo "<!-- train_gpu:end -->"
  } >"$D/table.md"
  if grep -q '<!-- train_gpu:begin -->' "$WRITE"; then
    awk -v t="$D/table.md" '/<!-- train_gpu:begin -->/ { while ((getline l < t) > 0) print l; skip = 1; next }
      /<!-- train_gpu:end -->/ { skip = 0; next } !skip' "$WRITE" >"$WRITE.tmp" && mv "$WRITE.tmp" "$WRITE"
  else
    cat "$D/table.md" >>"$WRITE"
  fi
}
rows=()
add_row() { # config, phase, micro-batch, ours, peer's, FLOPs per sequence (empty: no MFU, not the same work)
  local row
  row=$(printf '| %s | %s | %d | %s | %s | %s | %s | %s |' "$1" "$2" "$3" "${4:--}" "$(mfu "$4" "$6")" "${5:-not run}" \
    "$(mfu "$5" "$6")" "$([ -n "$4" ] && [ -n "$5" ] && echo "$(ratio "$4" "$5")x" || echo -)")
  echo "$row"
  rows+=("$row")
  write_table
}
echo "GPU: $gpu (dense bf16 peak ${PEAK_TFLOPS} TFLOPS); train_bert --precision bf16, LAMB; peer: ${PY:+$("$PY" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)')}"
for cfg in large base; do # BERT-large phase 1 (the goal's row) first
  for ph in 1 2; do
    if [ $ph = 1 ]; then s=128 p=20 b=$B1; else s=512 p=80 b=$B2; fi
    conf=$ROOT/train/configs/bert_$cfg.json
    ours=$(run_ours "$conf" $s $p $b)
    ref=$(peer "$conf" $b $s $p 1)
    add_row "bert_$cfg" "$ph ($s/$p)" $b "$ours" "$ref" "$(flops "$conf" $s $p)"
    if [ $cfg = large ]; then # the fused attention kernels instead of cuBLAS and a softmax kernel
      add_row "bert_$cfg" "$ph ($s/$p), --attention fused" $b "$(run_ours "$conf" $s $p $b --attention fused)" "$ref" \
        "$(flops "$conf" $s $p)"
    fi
    if [ $cfg = large ] && [ $ph = 1 ] && [ "$ACCUM" != 1 ]; then # the recipe's regime: LAMB once per ACCUM micro-batches
      add_row bert_large "1 (128/20), $ACCUM micro-batches per step" $B1 \
        "$(run_ours "$conf" 128 20 $((B1 * ACCUM)) --gradient_accumulation_steps "$ACCUM")" \
        "$(peer "$conf" $B1 128 20 "$ACCUM")" "$(flops "$conf" 128 20)"
    fi
    if [ $ph = 2 ] && [ "$BINS" != 0 ]; then # length bins: less padding computed, not the same work
      add_row "bert_$cfg" "2 ($s/$p), --bin_size $BINS" $b "$(run_ours "$conf" $s $p $b --bin_size "$BINS")" "$ref" ""
    fi
  done
done
if [ -n "$WRITE" ]; then echo "table written into $WRITE"; fi
