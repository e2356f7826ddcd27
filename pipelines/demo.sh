#!/usr/bin/env bash
# pipelines/demo.sh - `make demo`: both workflows on the samples shipped in
# tests/data (the Hungarian one on huwiki's Berlin article, the English one
# on 206 enwiki pages), every stage's output listed, a glimpse of the text
# stages, hdf5_check's statistics for every HDF5 directory, and a short
# pretraining run of a tiny BERT on the Hungarian files.
#
#   pipelines/demo.sh MAKE [MAKE ARGS...]     (the Makefile passes its own
#                                             make and the demo variables)
set -eu -o pipefail
"$@" hu en
"$@" -s print-demo-dirs >/dev/null # fails early if the variables are off
eval "$("$@" -s print-demo-dirs)"
echo
echo "demo: every stage's output (Hungarian under $HU_DIR, English under $EN_DIR):"
for f in "$HU_DIR"/text/*.txt "$HU_DIR"/sentences/*.txt "$HU_DIR"/filtered/*.txt "$HU_DIR"/vocab/* \
  "$HU_DIR"/formatted_text/*.txt "$EN_DIR"/formatted_one_article_per_line/*.txt "$EN_DIR"/sentences/*.txt \
  "$EN_DIR"/sharded_*/*/*.txt "$HU_DIR"/hdf5_*/*/*.hdf5 "$EN_DIR"/hdf5_*/*/*.hdf5; do
  printf '  %10d bytes  %s\n' "$(wc -c <"$f")" "$f"
done
echo
echo "demo: the first sentences of the filtered Hungarian corpus ($HU_DIR/filtered/wikicorpus_hu.txt):"
head -4 "$HU_DIR/filtered/wikicorpus_hu.txt" | cut -c1-160
echo
echo "demo: the first sentences of the English corpus ($EN_DIR/sentences/wikicorpus_en.txt):"
head -4 "$EN_DIR/sentences/wikicorpus_en.txt" | cut -c1-160
echo
echo "demo: hdf5_check on every HDF5 file (phase 1 = 128/20, phase 2 = 512/80):"
"$@" -s hu-check en-check

# a short pretraining run: BERT-Tiny's shape (train/configs/bert_tiny.json)
# with the Hungarian vocabulary's size, on the Hungarian phase-1 files
T=$(dirname "$HU_DIR")/train
mkdir -p "$T"
words=$(wc -l <"$HU_DIR/vocab/vocab.txt")
sed "s/\"vocab_size\": [0-9]*/\"vocab_size\": $words/" train/configs/bert_tiny.json >"$T/bert_config.json"
echo
echo "demo: train_bert_cpu, BERT-Tiny (2 layers, hidden 128, vocab $words), 200 LAMB steps of 16 sequences:"
bin=$("$@" -s print-bin)
"$bin/train_bert_cpu" -q --input_dir "$HU_H5_1/textcorpus" --config_file "$T/bert_config.json" \
  --vocab_file "$HU_DIR/vocab/vocab.txt" --output_dir "$T/out" --train_batch_size 16 --learning_rate 5e-3 \
  --warmup_proportion 0.1 --max_steps 200 --max_predictions_per_seq 20 --num_steps_per_checkpoint 200 \
  --log_freq 10 --do_lower_case "$HU_LOWER" --strip_accents "$HU_STRIP_ACCENTS" >"$T/log.jsonl"
echo "  first: $(head -1 "$T/log.jsonl")"
echo "  last:  $(tail -1 "$T/log.jsonl")"
echo "  the whole curve: $T/log.jsonl; checkpoint and Hugging Face export: $T/out"
echo "  the page of it all: make report RUN=$(dirname "$HU_DIR") (report/README.md)"
