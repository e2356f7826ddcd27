#!/usr/bin/env bash
# bench/wp_tokenize.sh - wp_tokenize against Hugging Face's BERT tokenizers.
#
# Agreement: token for token with transformers' pure-Python BERT tokenizer
# (the BasicTokenizer + WordpieceTokenizer steps of tokenization.py, see
# wp_compare.py), do_lower_case=True, the shipped bert-base-uncased vocab,
# on real text:
#   sample   google-research/bert's sample_text.txt
#   tatoeba  Tatoeba sentences in 22 languages (WP_TATOEBA_LINES per language)
#   wiki     Wikipedia articles of tests/data made by our prep stage
#            (wiki_dump | wiki_strip -F lines)
# and, for information, with BertTokenizerFast (Rust) on the same lines.
# Speed: tokens/s on one core (taskset -c 0, -j1) against BertTokenizerFast
# encode_batch with one thread, on the wiki + tatoeba text repeated
# WP_COPIES times; then ours with -j2.
#   bash bench/wp_tokenize.sh
. "$(dirname "$0")/lib.sh"
WP_TATOEBA_LINES=${WP_TATOEBA_LINES:-3000}
WP_COPIES=${WP_COPIES:-8}
WP=$BIN/wp_tokenize
VOCAB=$ROOT/data/bert/vocab.txt
PY=$W/venv3/bin/python
export PYTHONUTF8=1 TRANSFORMERS_VERBOSITY=error
[ -x "$PY" ] || python3 -m venv "$W/venv3"
"$PY" -c 'import transformers, tokenizers' 2>/dev/null || "$W/venv3/bin/pip" install -q transformers tokenizers
"$PY" -c 'import transformers, tokenizers; print("transformers", transformers.__version__, "tokenizers", tokenizers.__version__)' 2>/dev/null
[ -x "$WP" ] || { echo "bench: $WP is not built" >&2; exit 1; }

D=$W/wp
mkdir -p "$D"
cp "$DATA/bert/sample_text.txt" "$D/sample.txt"
: >"$D/tatoeba.txt"
for f in "$DATA"/langid/tatoeba-manythings/*.txt; do head -n "$WP_TATOEBA_LINES" "$f" >>"$D/tatoeba.txt"; done
: >"$D/wiki.txt"
for x in "$ROOT"/tests/data/*wiki*.xml.bz2; do
  "$BIN/wiki_dump" "$x" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null >>"$D/wiki.txt" || true
done

echo "== agreement (transformers' Python BERT tokenizer = tokenization.py's steps)"
for s in sample tatoeba wiki; do
  "$WP" -j2 "$D/$s.txt" >"$D/$s.ours"
  printf '%-8s %s lines, %s bytes: ' "$s" "$(wc -l <"$D/$s.txt")" "$(wc -c <"$D/$s.txt")"
  "$PY" "$ROOT/bench/wp_compare.py" compare "$VOCAB" "$D/$s.txt" "$D/$s.ours" 2>/dev/null
done
echo "== agreement with BertTokenizerFast (for information)"
for s in sample tatoeba wiki; do
  printf '%-8s ' "$s"
  "$PY" "$ROOT/bench/wp_compare.py" compare "$VOCAB" "$D/$s.txt" "$D/$s.ours" --fast 2>/dev/null | head -5
done

echo "== speed, one core"
: >"$D/speed.txt"
for ((i = 0; i < WP_COPIES; i++)); do cat "$D/wiki.txt" "$D/tatoeba.txt" >>"$D/speed.txt"; done
bytes=$(wc -c <"$D/speed.txt")
ntok=$("$WP" -j1 "$D/speed.txt" | wc -w)
t_ours=$(wall $CORE1 "$WP" -j1 "$D/speed.txt")
read -r _ ftok _ t_fast < <($CORE1 "$PY" "$ROOT/bench/wp_compare.py" speed "$VOCAB" "$D/speed.txt" 2>/dev/null)
t_ours2=$(wall "$WP" -j2 "$D/speed.txt")
echo "input: $bytes bytes, $ntok tokens (BertTokenizerFast: $ftok)"
printf 'wp_tokenize -j1        %8.3f s  %10.0f tokens/s  %7.2f MB/s\n' "$t_ours" "$(echo "$ntok / $t_ours" | bc -l)" "$(mbps "$bytes" "$t_ours")"
printf 'BertTokenizerFast 1thr %8.3f s  %10.0f tokens/s  %7.2f MB/s\n' "$t_fast" "$(echo "$ftok / $t_fast" | bc -l)" "$(mbps "$bytes" "$t_fast")"
echo "ratio (fast / ours, one core): $(ratio "$t_fast" "$t_ours")x"
printf 'wp_tokenize -j2        %8.3f s  %10.0f tokens/s\n' "$t_ours2" "$(echo "$ntok / $t_ours2" | bc -l)"
