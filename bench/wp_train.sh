#!/usr/bin/env bash
# bench/wp_train.sh - WordPiece vocabulary training against Hugging Face's
# WordPieceTrainer (BertWordPieceTokenizer.train, tokenizers from PyPI).
#
# Corpus: every Wikipedia sample of the shared data folder (English,
# Hungarian, 122 DBpedia minidumps, the multistream sample) through our prep
# stage (wiki_dump | wiki_strip -F lines | sent_split), repeated until it
# holds WPT_MB (default 50) MB of sentences, under $BENCH_TMP/wptrain.
# Both trainers: vocab size WPT_VOCAB (default 30000) including [PAD],
# 100 [unusedN], [UNK] [CLS] [SEP] [MASK]; min_frequency 2; limit_alphabet
# 1000; lower-casing. Ours runs as `vocab_train --model wordpiece` when that
# program knows the model, else through the test driver
# build/tests/test_wptrain (make test builds it).
# Printed: wall seconds and peak RSS (best of REPS, default 1, via
# /usr/bin/time), their ratios, the share of our tokens that HF's vocab.txt
# holds, and whether the files are identical once our trainer is given HF's
# (random) numbering of the characters.
#   bash bench/wp_train.sh
. "$(dirname "$0")/lib.sh"
REPS=${REPS:-1}
WPT_MB=${WPT_MB:-50}
WPT_VOCAB=${WPT_VOCAB:-30000}
PY=$W/venv3/bin/python
HFPY=$ROOT/tests/cli/wptrain_hf.py
DRV=$ROOT/build/tests/test_wptrain
export PYTHONUTF8=1
[ -x "$PY" ] || python3 -m venv "$W/venv3"
"$PY" -c 'import tokenizers' 2>/dev/null || "$W/venv3/bin/pip" install -q tokenizers
"$PY" -c 'import tokenizers; print("tokenizers", tokenizers.__version__)'
[ -x "$DRV" ] || { echo "bench: $DRV is not built (make test builds it)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench: /usr/bin/time is needed for peak RSS" >&2; exit 1; }

D=$W/wptrain
mkdir -p "$D"
C=$D/corpus.txt
if [ ! -s "$C" ] || [ "$(wc -c <"$C")" -lt $((WPT_MB * 1000000)) ]; then
  : >"$D/unique.txt"
  for x in "$DATA"/wiki-en/*.bz2 "$DATA"/wiki-hu/wiki.xml.bz2 "$DATA"/wiki-multistream/sample-pages-articles.xml.bz2 \
           "$DATA"/wiki-multilang/minidumps/*/wiki.xml.bz2; do
    "$BIN/wiki_dump" "$x" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" 2>/dev/null >>"$D/unique.txt" || true
  done
  : >"$C"
  while [ "$(wc -c <"$C")" -lt $((WPT_MB * 1000000)) ]; do cat "$D/unique.txt" >>"$C"; done
fi
echo "corpus: $(wc -l <"$C") lines, $(wc -c <"$C") bytes ($(wc -c <"$D/unique.txt") bytes of distinct text, repeated)"

# measure NAME CMD...: best wall seconds and the largest peak RSS (MB)
measure() {
  local name=$1 best= rss=0 i t m
  shift
  for ((i = 0; i < REPS; i++)); do
    /usr/bin/time -f '%e %M' -o "$D/time" "$@" >/dev/null 2>"$D/$name.err" || { cat "$D/$name.err" >&2; return 1; }
    read -r t m <"$D/time"
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  eval "T_$name=$best; M_$name=$((rss / 1024))"
}

if "$BIN/vocab_train" --help 2>/dev/null | grep -q wordpiece; then
  OURS=("$BIN/vocab_train" --model wordpiece -f -q --vocab-size "$WPT_VOCAB" --unused 100 -o "$D/ours")
else
  OURS=("$DRV" train -f -q --vocab-size "$WPT_VOCAB" --unused 100 -o "$D/ours")
fi
echo "ours: ${OURS[*]} CORPUS"
measure ours "${OURS[@]}" "$C"
measure ours1 "${OURS[@]}" -j1 "$C"
measure hf "$PY" "$HFPY" train "$C" "$D/hf.txt" "$WPT_VOCAB" uncased 1000
OUT=$D/ours.txt
[ -f "$OUT" ] || OUT=$D/ours

"$DRV" merges -q --vocab-size "$WPT_VOCAB" "$C" >"$D/ours.merges"
"$DRV" counts -q "$C" >"$D/counts.txt"
"$PY" "$HFPY" compare "$D/ours.merges" "$D/hf.txt" "$D/counts.txt" 1000 >"$D/cmp"
"$DRV" train -f -q --vocab-size "$WPT_VOCAB" --initial "$D/hf.txt" -o "$D/same" "$C"
same=no
cmp -s "$D/same.txt" "$D/hf.txt" && same=yes

printf '%-34s %8s %10s\n' "command (vocab $WPT_VOCAB)" "wall s" "peak MB"
printf '%-34s %8.2f %10d\n' "ours, all cores ($(nproc))" "$T_ours" "$M_ours"
printf '%-34s %8.2f %10d\n' "ours, -j1" "$T_ours1" "$M_ours1"
printf '%-34s %8.2f %10d\n' "HF BertWordPieceTokenizer.train" "$T_hf" "$M_hf"
echo "ratio HF / ours: time $(ratio "$T_hf" "$T_ours")x (ours -j1: $(ratio "$T_hf" "$T_ours1")x), peak RSS $(ratio "$M_hf" "$M_ours")x"
echo "lines: ours $(wc -l <"$OUT"), HF $(wc -l <"$D/hf.txt"); $(tr '\n' ' ' <"$D/cmp")"
echo "identical pieces: $(grep '^common ' "$D/cmp" | cut -d' ' -f2) % of ours are in HF's vocab.txt"
echo "vocab.txt byte-identical to HF's when given HF's numbering of the characters: $same"
