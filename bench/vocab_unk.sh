#!/usr/bin/env bash
# bench/vocab_unk.sh - how much of unseen Hungarian text a trained vocabulary
# turns into [UNK], for the original workflow's way, ours, and Hugging
# Face's WordPiece trainer.
#
# Two experiments, each with a training text and two held-out sets:
#   1. huwiki's Berlin article (tests/data) through our prep stage
#      (wiki_dump | wiki_strip -F lines | sent_split -l hu): every 5th
#      sentence held out, the rest trains a vocabulary of VOCAB (default
#      1000); a second held-out set from another domain: the input sentences
#      of quntoken's Hungarian test files (GPL, read from the shared data
#      folder at bench time only, never copied).
#   2. Tatoeba's Hungarian sentences (the shared langid data, CC BY 2.0 FR,
#      read at bench time): every 5th held out, the rest (about 53,000
#      sentences) trains a vocabulary of VOCAB2 (default 3000); the other
#      held-out set is the whole Berlin article (encyclopedic, against the
#      conversational training text).
# Vocabularies of BPE pieces / WordPiece tokens, three ways:
#   original  spm_train BPE (vocab_train without --bert, the same pieces)
#             + sent2wordpiece (vocab_convert), tokenized as
#             create_pretraining_data.py does (lower-case, strip accents)
#   ours      vocab_train --bert --strip-accents 0, tokenized the same way
#             (wp_tokenize --strip-accents 0): lower-case, accents kept
#   HF        tokenizers' BertWordPieceTokenizer.train (lowercase=True,
#             strip_accents=False), tokenized by tokenizers itself
# Printed: the [UNK] share of the tokens of each held-out set, per way.
#   bash bench/vocab_unk.sh            VOCAB=N VOCAB2=N, DATA=/path/to/shared/data
. "$(dirname "$0")/lib.sh"
DATA=${DATA:-/work/shared/data}
VOCAB=${VOCAB:-1000}
VOCAB2=${VOCAB2:-3000}
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
TAT=$DATA/langid/tatoeba-manythings/hun.txt
if [ -f "$TAT" ]; then
  cut -f2 "$TAT" | grep . >"$D/tat-all.txt"
  awk 'NR % 5 != 0' "$D/tat-all.txt" >"$D/tat-train.txt"
  awk 'NR % 5 == 0' "$D/tat-all.txt" >"$D/held-tatoeba.txt"
fi

unk() { # TOKENS_FILE -> "x.xx % of N"
  tr ' ' '\n' <"$1" | grep . | awk '{ n++; u += $0 == "[UNK]" } END { printf "%.2f %% of %d", n ? 100 * u / n : 0, n }'
}

experiment() { # NAME TRAIN VOCAB SET1 LABEL1 SET2 LABEL2
  local name=$1 train=$2 size=$3 sets="$4 $6" way set row v in
  echo
  echo "== $name: train $(wc -l <"$train") sentences, vocabulary $size;" \
    "held out: $(wc -l <"$D/held-$4.txt") ($5), $(wc -l <"$D/held-$6.txt") ($7)"
  "$BIN/vocab_train" -q -f -o "$D/$name-orig" --vocab-size "$size" --character-coverage 0.9999 \
    --wordpiece "$D/$name-orig.txt" "$train"
  "$BIN/vocab_train" -q -f -o "$D/$name-ours" --vocab-size "$size" --bert \
    --strip-accents 0 --held-out 0 --wordpiece "$D/$name-ours.txt" "$train"
  "$PY" - "$train" "$D" "$size" "$name-hf" <<'EOF'
import sys
from tokenizers import BertWordPieceTokenizer
t = BertWordPieceTokenizer(lowercase=True, strip_accents=False)
t.train([sys.argv[1]], vocab_size=int(sys.argv[3]), show_progress=False)
t.save_model(sys.argv[2], sys.argv[4])
EOF
  printf '%-10s %-28s %-28s %s\n' way "held out ($5)" "held out ($7)" "vocab.txt lines"
  for way in orig ours hf; do
    row=
    for set in $sets; do
      in=$D/held-$set.txt
      case $way in
      orig) "$BIN/wp_tokenize" -q --vocab "$D/$name-orig.txt" "$in" >"$D/$name-$way-$set.tok" ;;
      ours) "$BIN/wp_tokenize" -q --vocab "$D/$name-ours.txt" --strip-accents 0 "$in" >"$D/$name-$way-$set.tok" ;;
      hf)
        "$PY" -c 'import sys
from tokenizers import BertWordPieceTokenizer
t = BertWordPieceTokenizer(sys.argv[1], lowercase=True, strip_accents=False)
for line in open(sys.argv[2], encoding="utf-8"):
    print(" ".join(t.encode(line.rstrip("\n"), add_special_tokens=False).tokens))' \
          "$D/$name-hf-vocab.txt" "$in" >"$D/$name-$way-$set.tok"
        ;;
      esac
      row="$row$(printf '%-29s' "$(unk "$D/$name-$way-$set.tok")")"
    done
    v=$D/$name-$way.txt
    [ $way = hf ] && v=$D/$name-hf-vocab.txt
    printf '%-10s %s%s\n' "$way" "$row" "$(wc -l <"$v")"
  done
}

experiment berlin "$D/train.txt" "$VOCAB" wiki "same article" quntoken "quntoken's"
if [ -f "$D/tat-train.txt" ]; then
  cp "$D/all.txt" "$D/held-berlin.txt"
  experiment tatoeba "$D/tat-train.txt" "$VOCAB2" tatoeba "Tatoeba" berlin "Berlin article"
else
  echo "vocab_unk: $TAT missing, the Tatoeba experiment skipped"
fi
