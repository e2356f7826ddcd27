#!/usr/bin/env bash
# pipelines/demo.sh - `make demo`: both workflows on the samples shipped in
# tests/data (the Hungarian one on huwiki's Berlin article, the English one
# on 206 enwiki pages), every stage's output listed, a glimpse of the text
# stages, hdf5_check's statistics for every HDF5 directory, and a short
# pretraining run of a tiny BERT on the Hungarian files: make hu-pretrain
# (phase 1 and phase 2, a Hugging Face model after each, the report page)
# with the Makefile's DEMO_VARS (MODEL=tiny, 160 + 40 steps).
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

# pretraining: BERT-Tiny's shape with the Hungarian vocabulary's size,
# phase 1 (128/20) for 160 steps of 16 sequences, phase 2 (512/80) for 40
# steps of 8, from phase 1's last checkpoint
echo
echo "demo: make hu-pretrain (BERT-Tiny: 2 layers, hidden 128), phase 1 then phase 2:"
"$@" hu-pretrain
echo "  the run (logs, checkpoints, Hugging Face models): $HU_RUN/phase1, $HU_RUN/phase2"
echo "  the page of it all: $HU_RUN/report.html; with both workflows: make report RUN=$(dirname "$HU_DIR") (report/README.md)"
