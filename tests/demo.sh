#!/usr/bin/env bash
# tests/demo.sh - the main job on the samples shipped in tests/data: the prep
# stage (wiki_dump | wiki_strip) for English and Hungarian Wikipedia pages,
# in WikiExtractor's doc layout and one article per line, then the tokenize
# stage: sentences (sent_split) and the filtered corpus (text_filter); the
# vocab stage (a SentencePiece BPE model with its WordPiece vocab.txt, and a
# WordPiece vocabulary trained directly), WordPiece tokens of the first
# sentences, and NVIDIA-layout shards of the English corpus.
#
#   tests/demo.sh bin          outputs go to out/demo/
set -eu -o pipefail
BIN=${1:-bin}
DATA=$(dirname "$0")/data
OUT=out/demo
mkdir -p "$OUT"
for src in enwiki-206 huwiki-berlin elwikivoyage-17.multistream; do
  "$BIN/wiki_dump" -v -f -o "$OUT/$src.jsonl" "$DATA/$src.xml.bz2"
  "$BIN/wiki_strip" -v -f -o "$OUT/$src.doc.txt" "$OUT/$src.jsonl"
  "$BIN/wiki_strip" -f --format lines -o "$OUT/$src.lines.txt" "$OUT/$src.jsonl"
done
# tokenize: BERT's one sentence per line, then filterdocs' checks (Hungarian
# defaults for the Hungarian page; English alphabet and language for English)
"$BIN/sent_split" -v -f -l hu -o "$OUT/huwiki-berlin.sentences.txt" "$OUT/huwiki-berlin.doc.txt"
"$BIN/sent_split" -v -f -l en -o "$OUT/enwiki-206.sentences.txt" "$OUT/enwiki-206.doc.txt"
"$BIN/text_filter" -f -o "$OUT/huwiki-berlin.filtered.txt" "$OUT/huwiki-berlin.sentences.txt"
"$BIN/text_filter" -f -l en -W abcdefghijklmnopqrstuvwxyz --dedup docs \
  --rejected "$OUT/enwiki-206.rejected.txt" -o "$OUT/enwiki-206.filtered.txt" "$OUT/enwiki-206.sentences.txt"
# vocab: BPE as spm_train (+ vocab.txt), and WordPiece as Hugging Face's trainer
"$BIN/vocab_train" -f -o "$OUT/enwiki-206.bpe" --vocab-size 4000 --character-coverage 0.9999 \
  --wordpiece "$OUT/enwiki-206.bpe-vocab.txt" "$OUT/enwiki-206.filtered.txt"
"$BIN/vocab_train" --model wordpiece -f -o "$OUT/enwiki-206.wordpiece" --vocab-size 4000 "$OUT/enwiki-206.filtered.txt"
head -3 "$OUT/enwiki-206.filtered.txt" |
  "$BIN/wp_tokenize" --vocab "$OUT/enwiki-206.wordpiece.txt" -f -o "$OUT/enwiki-206.tokens.txt"
# shard: NVIDIA's training/test layout (4 + 2 shards here)
"$BIN/shard_split" -v -f -L nvidia --train 4 --test 2 -o "$OUT/shards" "$OUT/enwiki-206.filtered.txt"
echo
echo "demo: outputs in $OUT/:"
ls -l "$OUT"
echo
echo "demo: first article of $OUT/enwiki-206.doc.txt:"
sed -n '1,/<\/doc>/p' "$OUT/enwiki-206.doc.txt" | cut -c1-200 | sed -n 1,12p
echo
echo "demo: first sentences of $OUT/huwiki-berlin.filtered.txt:"
head -5 "$OUT/huwiki-berlin.filtered.txt"
echo
echo "demo: WordPiece tokens of the first English sentences ($OUT/enwiki-206.tokens.txt):"
cut -c1-200 "$OUT/enwiki-206.tokens.txt"
