#!/usr/bin/env bash
# bench/vocab_train.sh - vocab_train --model bpe against spm_train and Hugging
# Face tokenizers' BPE trainer, on the same corpus with the same settings.
#
# Corpus: the Wikipedia samples of the shared data (English excerpt, the
# Hungarian article, 122 DBpedia minidumps) through wiki_dump | wiki_strip
# -F lines | sent_split, plus the Tatoeba sentences of 23 languages; every
# 50th line is held out, the rest is repeated up to BPE_MB megabytes (the
# merge work depends on the distinct words, the reading on the size).
# Settings: HILBERT's spmtrain.py call (--vocab_size=32000
# --character_coverage=0.9999 --input_sentence_size=100000000
# --shuffle_input_sentence=true --model_type=bpe).
# Peers: sentencepiece 0.2.3 from PyPI (Python API), Debian's spm_train when
# installed (0.1.97 there), tokenizers' SentencePieceBPETokenizer.
# Reported: wall time and peak RSS (/usr/bin/time), the share of our pieces
# that each peer also has, tokens per word on the held-out lines, ratios.
# vocab_train uses its built-in nmt_nfkc table (charsmap.c, built from ICU
# at start-up; the same rules as sentencepiece's table).
#   bash bench/vocab_train.sh            (BPE_MB=60 BPE_VOCAB=32000)
. "$(dirname "$0")/lib.sh"
BPE_MB=${BPE_MB:-60}
BPE_VOCAB=${BPE_VOCAB:-32000}
VT=$BIN/vocab_train
PY=$W/venv3/bin/python
CMP=$ROOT/bench/bpe_compare.py
export PYTHONUTF8=1
[ -x "$VT" ] || { echo "bench: $VT is not built" >&2; exit 1; }
[ -x "$PY" ] || python3 -m venv "$W/venv3"
"$PY" -c 'import sentencepiece, tokenizers' 2>/dev/null || "$W/venv3/bin/pip" install -q sentencepiece tokenizers
"$PY" -c 'import sentencepiece, tokenizers; print("sentencepiece", sentencepiece.__version__, "tokenizers", tokenizers.__version__)'
command -v /usr/bin/time >/dev/null || { echo "bench: needs /usr/bin/time" >&2; exit 1; }

D=$W/bpe-bench
mkdir -p "$D"
if [ ! -s "$D/corpus.txt" ] || [ "$(cat "$D/corpus.mb" 2>/dev/null)" != "$BPE_MB" ]; then
  echo "== building the corpus under $D"
  {
    "$BIN/wiki_dump" "$DATA/wiki-en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2" |
      "$BIN/wiki_strip" -F lines | "$BIN/sent_split" -l en
    "$BIN/wiki_dump" "$DATA/wiki-hu/wiki.xml.bz2" | "$BIN/wiki_strip" -F lines | "$BIN/sent_split" -l hu
    for f in "$DATA"/wiki-multilang/minidumps/*/wiki.xml.bz2; do
      "$BIN/wiki_dump" "$f" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" -l en 2>/dev/null || true
    done
    for f in "$DATA"/langid/tatoeba-manythings/*.txt; do cut -f2 "$f"; done
    cut -f1 "$DATA/langid/tatoeba-manythings/hun.txt"
  } >"$D/base.txt"
  awk 'NR % 50 == 0' "$D/base.txt" >"$D/held.txt"
  awk 'NR % 50 != 0' "$D/base.txt" >"$D/train.txt"
  : >"$D/corpus.txt"
  while [ "$(stat -c %s "$D/corpus.txt")" -lt $((BPE_MB * 1000000)) ]; do cat "$D/train.txt" >>"$D/corpus.txt"; done
  echo "$BPE_MB" >"$D/corpus.mb"
fi
echo "corpus: $(wc -l <"$D/corpus.txt") lines, $(stat -c %s "$D/corpus.txt") bytes ($(wc -l <"$D/train.txt") distinct lines repeated); held out: $(wc -l <"$D/held.txt") lines"
OPTS="--vocab_size=$BPE_VOCAB --character_coverage=0.9999 --input_sentence_size=100000000 --shuffle_input_sentence=true --model_type=bpe"
echo "settings: $OPTS"

# measure NAME DIR CMD...: wall seconds and peak RSS (MB) into T_NAME, M_NAME
measure() {
  local name=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  (cd "$dir" && /usr/bin/time -f "%e %M" -o "$D/time.$name" "$@" >"$D/log.$name" 2>&1) ||
    { echo "bench: $name failed:"; tail -5 "$D/log.$name"; return 1; }
  local w r
  read -r w r <"$D/time.$name"
  printf -v "T_$name" '%s' "$w"
  printf -v "M_$name" '%s' "$(echo "$r / 1024" | bc)"
}

echo "== training (one run each; the machine is shared, so the times are indicative)"
measure spm "$D/spm" "$PY" "$CMP" spm --input=../corpus.txt --model_prefix=spm $OPTS --minloglevel=2
measure ours "$D/ours" "$VT" -f -q --input=../corpus.txt --model_prefix=ours $OPTS
measure ours1 "$D/ours1" "$VT" -f -q -j1 --input=../corpus.txt --model_prefix=ours $OPTS
HAVE_DEB=0
if command -v spm_train >/dev/null; then
  measure deb "$D/deb" spm_train --input=../corpus.txt --model_prefix=deb $OPTS --minloglevel=2 && HAVE_DEB=1
fi
measure hf "$D/hf" "$PY" "$CMP" hf ../corpus.txt hf "$BPE_VOCAB"

same() { "$PY" "$CMP" same "$1" "$2" | awk '{printf "%d of %d (%.2f%%)", $1, $2, 100 * $1 / $2}'; }
tpw() { "$PY" "$CMP" tpw "$D/held.txt" "$1" | awk '{printf "%.4f", $4}'; }
TPW_SPM=$(tpw "$D/spm/spm.model")
TPW_OURS=$(tpw "$D/ours/ours.model")
TPW_HF=$(tpw "$D/hf/hf.json")

printf '\n%-36s %8s %9s  %-14s %s\n' tool "wall s" "RSS MB" "tokens/word" "pieces also in vocab_train's"
printf '%-36s %8s %9s  %-14s %s\n' "vocab_train -j$(nproc)" "$T_ours" "$M_ours" "$TPW_OURS" "-"
printf '%-36s %8s %9s  %-14s %s\n' "vocab_train -j1" "$T_ours1" "$M_ours1" "$TPW_OURS" \
  "$(cmp -s "$D/ours/ours.vocab" "$D/ours1/ours.vocab" && echo "identical .vocab" || echo "DIFFERENT .vocab")"
printf '%-36s %8s %9s  %-14s %s\n' "spm_train $("$PY" -c 'import sentencepiece; print(sentencepiece.__version__)') (PyPI, Python API)" \
  "$T_spm" "$M_spm" "$TPW_SPM" "$(same "$D/spm/spm.vocab" "$D/ours/ours.vocab")"
if [ "$HAVE_DEB" = 1 ]; then
  TPW_DEB=$(tpw "$D/deb/deb.model")
  printf '%-36s %8s %9s  %-14s %s\n' "spm_train (Debian $(dpkg-query -W -f '${Version}' sentencepiece 2>/dev/null))" \
    "$T_deb" "$M_deb" "$TPW_DEB" "$(same "$D/deb/deb.vocab" "$D/ours/ours.vocab")"
fi
printf '%-36s %8s %9s  %-14s %s\n' "tokenizers SentencePieceBPETokenizer" "$T_hf" "$M_hf" "$TPW_HF" \
  "$(same "$D/hf/hf.vocab" "$D/ours/ours.vocab")"

echo
echo "vocab_train vs spm_train (PyPI):"
echo "  speed:  $(ratio "$T_spm" "$T_ours")x faster (goal >= 3x); -j1: $(ratio "$T_spm" "$T_ours1")x"
echo "  memory: $(ratio "$M_ours" "$M_spm") of its peak RSS (goal <= 0.5)"
echo "  pieces: $(same "$D/spm/spm.vocab" "$D/ours/ours.vocab") identical (goal >= 90%);" \
  "$(cmp -s "$D/spm/spm.vocab" "$D/ours/ours.vocab" && echo "the .vocab files are byte-identical" || echo "the .vocab files differ")"
echo "  tokens/word on held-out text: $TPW_OURS vs $TPW_SPM ($(echo "($TPW_OURS - $TPW_SPM) * 100 / $TPW_SPM" | bc -l | xargs printf '%+.2f')%, goal within 1%)"
if [ "$HAVE_DEB" = 1 ]; then
  echo "vocab_train vs Debian's spm_train: $(ratio "$T_deb" "$T_ours")x faster, $(ratio "$M_ours" "$M_deb") of its peak RSS"
fi
echo "vocab_train vs tokenizers: $(ratio "$T_hf" "$T_ours")x faster, $(ratio "$M_ours" "$M_hf") of its peak RSS"
