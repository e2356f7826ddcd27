#!/usr/bin/env bash
# bench/train_cpu.sh - train_bert_cpu's speed against PyTorch on the CPU.
#
# Data: enwiki-206 through the prep stages and hdf5gen at 128 / 20 and at
# 512 / 80 (dupe 1), bert-base-uncased's vocabulary. Ours: train_bert_cpu,
# $STEPS optimizer steps of one micro-batch each, LAMB, the configs' dropout;
# the best seq/s of its per-step log after the first step. Peers:
# bench/train_cpu_ref.py, the same model in PyTorch (AdamW), on the same
# file's rows (exported once to an .npz with h5py), the best of $STEPS timed
# steps after one warm-up step:
#   - PyPI's torch: $WIKIBERT_PYTHON if it imports torch and h5py, else a
#     venv $W/venv-torch made on first use (pip install torch h5py numpy,
#     several GB with PyPI's CUDA libraries);
#   - Debian's python3-torch (/usr/bin/python3), where installed (DEBIAN_TORCH=0
#     leaves it out: it is 3-5x slower than the others).
# Rows: bert_tiny, bert_mini and bert_small (train/configs) with 1 thread and
# all cores, at 128 / 20 (micro-batch $BATCH) and 512 / 80 ($BATCH2; 4 for
# bert_small). Each row runs ours and the peers in turn, $ROUNDS times, so a
# busy machine slows all of them alike; the table has the medians and the
# ratios of the medians, and the rounds go to $W/train_cpu/rounds.tsv.
#   bash bench/train_cpu.sh            (ROUNDS=3 STEPS=4 BATCH=32 BATCH2=8)
#   CONFIGS="tiny" SHAPES=128 THREADS=1 bash bench/train_cpu.sh   (a subset)
. "$(dirname "$0")/lib.sh"
BATCH=${BATCH:-32} BATCH2=${BATCH2:-8} STEPS=${STEPS:-4} ROUNDS=${ROUNDS:-3}
CONFIGS=${CONFIGS:-tiny mini small} SHAPES=${SHAPES:-128 512}
D=$W/train_cpu
mkdir -p "$D"
ncpu=$(nproc)
THREADS=${THREADS:-1 $ncpu}

# ---- peers ----
PYPI=""
for p in ${WIKIBERT_PYTHON:-} "$W/venv-torch/bin/python"; do
  if [ -x "$(command -v "$p")" ] && "$p" -c "import torch, h5py, numpy" 2>/dev/null; then PYPI=$p; break; fi
done
if [ -z "$PYPI" ]; then
  echo "installing PyPI's torch into $W/venv-torch" >&2
  python3 -m venv "$W/venv-torch" && "$W/venv-torch/bin/pip" install -q torch h5py numpy >&2 &&
    PYPI=$W/venv-torch/bin/python || echo "bench: PyPI's torch could not be installed: that peer is not run" >&2
fi
DEB=""
[ "${DEBIAN_TORCH:-1}" = 0 ] || ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null || DEB=/usr/bin/python3
ver() { [ -n "$1" ] && "$1" -c "import torch; print(torch.__version__)" 2>/dev/null; }

# ---- data ----
[ -s "$D/en.txt" ] || "$BIN/wiki_dump" "$ROOT/tests/data/enwiki-206.xml.bz2" 2>/dev/null |
  "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" -l en 2>/dev/null >"$D/en.txt"
for S in $SHAPES; do
  P=$((S == 512 ? 80 : 20))
  mkdir -p "$D/h5_$S"
  [ -s "$D/h5_$S/en_training_0.hdf5" ] || "$BIN/hdf5gen" -q -f --vocab "$ROOT/data/bert/vocab.txt" \
    --dupe-factor 1 --max-seq-length "$S" --max-predictions-per-seq "$P" -o "$D/h5_$S/en_training_0.hdf5" "$D/en.txt"
  [ -z "$PYPI" ] || [ -s "$D/h5_$S.npz" ] || "$PYPI" -c 'import sys, h5py, numpy as np
h = h5py.File(sys.argv[1])
np.savez(sys.argv[2], **{k: h[k][:] for k in h.keys()})' "$D/h5_$S/en_training_0.hdf5" "$D/h5_$S.npz"
done

# ---- runs ----
ours() { # cfg S P batch threads -> seq/s
  "$BIN/train_bert_cpu" -q -j "$5" --input_dir "$D/h5_$2" --config_file "$ROOT/train/configs/bert_$1.json" \
    --output_dir "$D/out" --train_batch_size "$4" --max_steps "$STEPS" --max_predictions_per_seq "$3" \
    --skip_checkpoint --learning_rate 1e-4 | sed -n '2,$s/.*"seq_per_s": \([0-9.]*\).*/\1/p' | sort -g | tail -1
}
peer() { # python cfg S P batch threads -> seq/s
  [ -n "$1" ] || return 0
  # the thread count for the BLAS too: Debian's torch multiplies through the
  # system's OpenBLAS, whose own threads torch.set_num_threads does not set
  OMP_NUM_THREADS=$6 OPENBLAS_NUM_THREADS=$6 MKL_NUM_THREADS=$6 \
    "$1" "$ROOT/bench/train_cpu_ref.py" "$ROOT/train/configs/bert_$2.json" "$5" "$3" "$4" "$STEPS" "$6" \
    "$D/h5_$3.npz" 2>/dev/null | sed -n 's/.*: \([0-9.]*\) seq\/s/\1/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $ncpu cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F)"
echo "peers: PyPI torch $(ver "$PYPI" || echo '(none)'), Debian torch $(ver "$DEB" || echo '(none)'); rounds $ROUNDS, steps $STEPS"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| config | seq / pred | threads | batch | ours | PyPI torch | ratio | Debian torch | ratio |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
: >"$D/rounds.tsv"
for S in $SHAPES; do
  P=$((S == 512 ? 80 : 20))
  for cfg in $CONFIGS; do
    B=$BATCH
    [ "$S" = 512 ] && B=$BATCH2 && [ "$cfg" = small ] && [ "$B" -gt 4 ] && B=4
    for j in $THREADS; do
      for ((r = 0; r < ROUNDS; r++)); do
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$S" "$j" "$r" "$(ours "$cfg" "$S" "$P" "$B" "$j")" \
          "$(peer "$PYPI" "$cfg" "$S" "$P" "$B" "$j")" "$(peer "$DEB" "$cfg" "$S" "$P" "$B" "$j")" >>"$D/rounds.tsv"
      done
      col() { awk -F'\t' -v c="$cfg" -v s="$S" -v j="$j" -v k="$1" '$1 == c && $2 == s && $3 == j && $k != "" { print $k }' \
        "$D/rounds.tsv" | median; }
      o=$(col 5) p=$(col 6) d=$(col 7)
      printf '| bert_%s | %s / %s | %s | %s | %s | %s | %s | %s | %s |\n' "$cfg" "$S" "$P" "$j" "$B" "$o" "${p:--}" \
        "${p:+$(ratio "$o" "$p")×}" "${d:--}" "${d:+$(ratio "$o" "$d")×}"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
