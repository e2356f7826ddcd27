#!/usr/bin/env bash
# bench/train_cpu.sh - train_bert_cpu's speed against PyTorch on the CPU.
#
# Data: enwiki-206 through the prep stages and hdf5gen (128 / 20, dupe 1),
# bert-base-uncased's vocabulary. Ours: train_bert_cpu, $STEPS optimizer
# steps of $BATCH sequences (one micro-batch each), LAMB; the best seq/s of
# its per-step log after the first step. The peer: bench/train_cpu_ref.py,
# the same model in PyTorch (Debian's python3-torch or any python3 with
# torch), forward + backward + AdamW on micro-batches of the same shape.
# Both with 1 thread and with all cores, configs tiny (2 x 128) and mini
# (4 x 256) of train/configs.
#   bash bench/train_cpu.sh            (BATCH=32 STEPS=4 by default)
. "$(dirname "$0")/lib.sh"
BATCH=${BATCH:-32}
STEPS=${STEPS:-4}
D=$W/train_cpu
mkdir -p "$D"
PY=""
for p in ${WIKIBERT_PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null && "$p" -c "import torch" 2>/dev/null; then PY=$p; break; fi
done
[ -s "$D/en.txt" ] || "$BIN/wiki_dump" "$ROOT/tests/data/enwiki-206.xml.bz2" 2>/dev/null |
  "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" -l en 2>/dev/null >"$D/en.txt"
mkdir -p "$D/h5"
[ -s "$D/h5/en_training_0.hdf5" ] || "$BIN/hdf5gen" -q -f --vocab "$ROOT/data/bert/vocab.txt" --dupe-factor 1 \
  -o "$D/h5/en_training_0.hdf5" "$D/en.txt"
ncpu=$(nproc)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); batch $BATCH, seq 128, 20 masked"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for cfg in tiny mini; do
  for j in 1 "$ncpu"; do
    ours=$("$BIN/train_bert_cpu" -q -j "$j" --input_dir "$D/h5" --config_file "$ROOT/train/configs/bert_$cfg.json" \
      --output_dir "$D/out" --train_batch_size "$BATCH" --max_steps "$STEPS" --max_predictions_per_seq 20 \
      --num_steps_per_checkpoint 100000 --learning_rate 1e-4 |
      sed -n '2,$s/.*"seq_per_s": \([0-9.]*\).*/\1/p' | sort -g | tail -1)
    if [ -n "$PY" ]; then
      ref=$("$PY" "$ROOT/bench/train_cpu_ref.py" "$ROOT/train/configs/bert_$cfg.json" "$BATCH" 128 20 "$STEPS" "$j" |
        sed -n 's/.*: \([0-9.]*\) seq\/s/\1/p')
      printf 'bert_%-5s %2d thread(s): ours %7.2f seq/s   PyTorch %7.2f seq/s   ratio %sx\n' "$cfg" "$j" "$ours" "$ref" \
        "$(ratio "$ours" "$ref")"
    else
      printf 'bert_%-5s %2d thread(s): ours %7.2f seq/s   (no python3 with torch: peer not run)\n' "$cfg" "$j" "$ours"
    fi
  done
done

# Phase 2 shapes (512 / 80) with and without length bins (--bin_size 64:
# batches cut to their bin's bound, less padding computed): bert_tiny on all
# cores, BATCH2 sequences per step, throughput = sequences / time over the
# steps after the first (a harmonic mean: steps differ in length with bins).
BATCH2=${BATCH2:-8} STEPS2=${STEPS2:-8}
mkdir -p "$D/h5_512"
[ -s "$D/h5_512/en_training_0.hdf5" ] || "$BIN/hdf5gen" -q -f --vocab "$ROOT/data/bert/vocab.txt" --dupe-factor 1 \
  --max-seq-length 512 --max-predictions-per-seq 80 -o "$D/h5_512/en_training_0.hdf5" "$D/en.txt"
p2() { # [options] -> seq/s
  "$BIN/train_bert_cpu" -q --input_dir "$D/h5_512" --config_file "$ROOT/train/configs/bert_tiny.json" \
    --output_dir "$D/out" --train_batch_size "$BATCH2" --max_steps "$STEPS2" --max_predictions_per_seq 80 \
    --num_steps_per_checkpoint 100000 --learning_rate 1e-4 "$@" |
    sed -n '2,$s/.*"seq_per_s": \([0-9.]*\).*/\1/p' | awk '{ t += 1 / $1; n++ } END { if (n) printf "%.2f", n / t }'
}
full=$(p2) binned=$(p2 --bin_size 64)
ref=""
[ -n "$PY" ] && ref=$("$PY" "$ROOT/bench/train_cpu_ref.py" "$ROOT/train/configs/bert_tiny.json" "$BATCH2" 512 80 "$STEPS2" \
  "$ncpu" | sed -n 's/.*: \([0-9.]*\) seq\/s/\1/p')
printf 'bert_tiny  512/80, %d threads: ours %s seq/s, with --bin_size 64 %s seq/s (%sx)%s\n' "$ncpu" "$full" "$binned" \
  "$(ratio "$binned" "$full")" "${ref:+; PyTorch $ref seq/s (ours $(ratio "$full" "$ref")x, binned $(ratio "$binned" "$ref")x)}"
