#!/usr/bin/env bash
# bench/vocab_unk.sh - how much of unseen Hungarian text a trained vocabulary
# turns into [UNK], for the original workflow's way, ours, and Hugging
# Face's WordPiece trainer.
#
# Text: huwiki's Berlin article (tests/data) through our prep stage
# (wiki_dump | wiki_strip -F lines | sent_split -l hu); every 5th sentence
# is held out, the rest is the training text. A second held-out set from
# another domain: the input sentences of quntoken's Hungarian test files
# (GPL, read from the shared data folder at bench time only, never copied).
# Vocabularies of VOCAB (default 1000) BPE pieces / WordPiece tokens:
#   original  spm_train BPE (vocab_train without --bert, the same pieces)
#             + sent2wordpiece (vocab_convert), tokenized as
#             create_pretraining_data.py does (lower-case, strip accents)
#   ours      vocab_train --bert --strip-accents 0, tokenized the same way
#             (wp_tokenize --strip-accents 0): lower-case, accents kept
#   HF        tokenizers' BertWordPieceTokenizer.train (lowercase=True,
#             strip_accents=False), tokenized by tokenizers itself
# Printed: the [UNK] share of the tokens of each held-out set, per way.
#   bash bench/vocab_unk.sh            VOCAB=N, DATA=/path/to/shared/data
. "$(dirname "$0")/lib.sh"
DATA=${DATA:-/work/shared/data}
VOCAB=${VOCAB:-1000}
D=$W/vocab_unk
mkdir -p "$D"
PY=$W/venv3/bin/python
export PYTHONUTF8=1
[ -x "$PY" ] || python3 -m venv "$W/venv3"
"$PY" -c 'import tokenizers' 2>/dev/null || "$W/venv3/bin/pip" install -q tokenizers
[ -x "$BIN/vocab_train" ] || make -C "$ROOT" -s all >/dev/null

"$BIN/wiki_dump" -q "$ROOT/tests/data/huwiki-berlin.xml.bz2" | "$BIN/wiki_strip" -q -F lines |
  "$BIN/sent_split" -q -l hu | grep . >"$D/all.txt"
awk 'NR % 5 != 0' "$D/all.txt" >"$D/train.txt"
awk 'NR % 5 == 0' "$D/all.txt" >"$D/held-wiki.txt"
cat "$DATA"/sentseg-hu/test_*.txt 2>/dev/null | sed -n 's/^IN *: //p' >"$D/held-quntoken.txt" || true
echo "train: $(wc -l <"$D/train.txt") sentences; held out: $(wc -l <"$D/held-wiki.txt") (same article)," \
  "$(wc -l <"$D/held-quntoken.txt") (quntoken's test sentences); vocabulary $VOCAB"

"$BIN/vocab_train" -q -f -o "$D/orig" --vocab-size "$VOCAB" --character-coverage 0.9999 \
  --wordpiece "$D/orig.txt" "$D/train.txt"
"$BIN/vocab_train" -q -f -o "$D/ours" --vocab-size "$VOCAB" --character-coverage 0.9999 --bert \
  --strip-accents 0 --held-out 0 --wordpiece "$D/ours.txt" "$D/train.txt"
"$PY" - "$D/train.txt" "$D" "$VOCAB" <<'EOF'
import sys
from tokenizers import BertWordPieceTokenizer
t = BertWordPieceTokenizer(lowercase=True, strip_accents=False)
t.train([sys.argv[1]], vocab_size=int(sys.argv[3]), show_progress=False)
t.save_model(sys.argv[2], "hf")
EOF

unk() { # TOKENS_FILE -> "x.xx % of N"
  tr ' ' '\n' <"$1" | grep . | awk '{ n++; u += $0 == "[UNK]" } END { printf "%.2f %% of %d", n ? 100 * u / n : 0, n }'
}
printf '%-10s %-28s %-28s %s\n' way "held out (same article)" "held out (quntoken's)" "vocab.txt lines"
for way in orig ours hf; do
  row=
  for set in wiki quntoken; do
    in=$D/held-$set.txt
    case $way in
    orig) "$BIN/wp_tokenize" -q --vocab "$D/orig.txt" "$in" >"$D/$way-$set.tok" ;;
    ours) "$BIN/wp_tokenize" -q --vocab "$D/ours.txt" --strip-accents 0 "$in" >"$D/$way-$set.tok" ;;
    hf)
      "$PY" -c 'import sys
from tokenizers import BertWordPieceTokenizer
t = BertWordPieceTokenizer(sys.argv[1], lowercase=True, strip_accents=False)
for line in open(sys.argv[2], encoding="utf-8"):
    print(" ".join(t.encode(line.rstrip("\n"), add_special_tokens=False).tokens))' \
        "$D/hf-vocab.txt" "$in" >"$D/$way-$set.tok"
      ;;
    esac
    row="$row$(printf '%-29s' "$(unk "$D/$way-$set.tok")")"
  done
  v=$D/$way.txt
  [ $way = hf ] && v=$D/hf-vocab.txt
  printf '%-10s %s%s\n' "$way" "$row" "$(wc -l <"$v")"
done
