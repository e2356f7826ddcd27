# CLI-level tests of the WordPiece trainer (vocab/wptrain.h) through its test
# driver (build/tests/test_wptrain train|counts|merges): outputs and exit
# codes, stdin, several inputs, atomic outputs, -j, --cased; then, when
# Python's `tokenizers` is importable, agreement with Hugging Face's
# WordPieceTrainer (BertWordPieceTokenizer.train) on real text, and
# tokenizers loading our tokenizer.json and tokenizing held-out text as
# wp_tokenize does with our vocab.txt. HF numbers the "##c" tokens (and
# breaks ties at the limit_alphabet cut) in the random order of its hash
# maps, so two HF runs on the same text give different vocab.txt files;
# ours numbers them in code point order. The comparison therefore checks
# (a) the parts that do not depend on that order and the share of common
# tokens, and (b) byte identity when our trainer is given HF's numbering
# (WpTrainOpts.initial). See tests/cli/wptrain_hf.py.
. "$TESTS/cli/lib.sh"
DRV=${INJECT:+$(dirname "$INJECT")/test_wptrain}
[ -x "${DRV:-}" ] || DRV=$TESTS/../build/tests/test_wptrain
HFPY=$TESTS/cli/wptrain_hf.py
SHARED=${WIKIBERT_SHARED:-$TESTS/../../shared}

wiki_sents() { # dump.xml.bz2 lang -> sentences on stdout
  "$BIN/wiki_dump" "$1" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" -l "$2" 2>/dev/null
}
lines() { wc -l <"$1" | tr -d ' '; }

# Real text from the repository's samples (English, Hungarian, Greek)
wiki_sents "$DATA/enwiki-206.xml.bz2" en >"$T/en.txt"
wiki_sents "$DATA/huwiki-berlin.xml.bz2" hu >"$T/hu.txt"
wiki_sents "$DATA/elwikivoyage-17.xml.bz2" el >"$T/el.txt"
cat "$T/en.txt" "$T/hu.txt" "$T/el.txt" >"$T/wiki.txt"
ok "sample corpus built" [ "$(lines "$T/wiki.txt")" -gt 15000 ]

run "$DRV" train -o "$T/v" --vocab-size 5000 "$T/wiki.txt"
expect_rc "train" 0
ok "vocab.txt has exactly --vocab-size lines" [ "$(lines "$T/v.txt")" -eq 5000 ]
ok "special tokens first" [ "$(head -1 "$T/v.txt")" = "[PAD]" ] && [ "$(sed -n 102p "$T/v.txt")" = "[UNK]" ] \
  && [ "$(sed -n 105p "$T/v.txt")" = "[MASK]" ]
ok "no duplicate tokens" [ "$(sort -u "$T/v.txt" | wc -l)" -eq 5000 ]
ok "tokens have no whitespace" [ "$(grep -c '[[:space:]]' "$T/v.txt")" -eq 0 ]
ok "uncased: no upper-case ASCII letter" [ "$(grep -c '[A-Z]' <(sed 1,105d "$T/v.txt"))" -eq 0 ]
ok "tokenizer.json written" grep -q '"type": "WordPiece"' "$T/v.json"
expect_err "summary line" "*5000 tokens (105 special, * characters, * ##characters, * merged) from * words*"
run "$DRV" train -o "$T/v" --vocab-size 5000 "$T/wiki.txt"
expect_rc "existing output without -f" 1
run "$DRV" train -f -q -o "$T/stdin" --vocab-size 5000 <"$T/wiki.txt"
expect_rc "stdin" 0
ok "stdin gives the same vocab.txt" cmp -s "$T/stdin.txt" "$T/v.txt"
ok "-q is silent" [ ! -s "$err" ]
run "$DRV" train -q -o "$T/multi" --vocab-size 5000 "$T/en.txt" "$T/hu.txt" - <"$T/el.txt"
ok "several inputs = their concatenation" cmp -s "$T/multi.txt" "$T/v.txt"
ok "same tokenizer.json" cmp -s "$T/multi.json" "$T/v.json"
for j in 1 3; do
  run "$DRV" train -q -j$j -o "$T/j$j" --vocab-size 5000 "$T/wiki.txt"
  ok "-j$j is byte-identical" cmp -s "$T/j$j.txt" "$T/v.txt"
done
run "$DRV" train -q --cased -o "$T/cased" --vocab-size 5000 "$T/wiki.txt"
ok "--cased keeps capitals" [ "$(grep -c '^[A-Z]' "$T/cased.txt")" -gt 100 ]
ok "--cased tokenizer.json" grep -q '"lowercase": false' "$T/cased.json"
run "$DRV" train -q --unused 7 -o "$T/u7" --vocab-size 600 "$T/wiki.txt"
ok "--unused 7" [ "$(sed -n 8p "$T/u7.txt")" = "[unused6]" ] && [ "$(sed -n 9p "$T/u7.txt")" = "[UNK]" ]
: >"$T/empty.txt"
run "$DRV" train -o "$T/e" "$T/empty.txt"
expect_rc "empty input" 1
expect_err "empty input message" "*no words in the input*"
ok "no output after an error" [ ! -e "$T/e.txt" ] && [ ! -e "$T/e.json" ] && [ -z "$(ls "$T" | grep tmp)" ]
run "$DRV" train -o "$T/small" --vocab-size 200 "$T/wiki.txt"
expect_rc "too small a vocabulary" 1
expect_err "too small message" "*vocabulary size 200 is too small*"
run "$DRV" train -o "$T/m" "$T/missing.txt"
expect_rc "missing input" 1
expect_err "missing input message" "*missing.txt: No such file or directory*"

# ---- against Hugging Face tokenizers ----
PY=$(py_with tokenizers)
if [ -z "$PY" ]; then
  echo "not run: comparison with Hugging Face tokenizers (no Python with the tokenizers module)"
  done_testing
  exit 0
fi
measure() { grep "^$1 " "$T/cmp" | cut -d' ' -f2; }
at_least() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x + 0 >= y + 0) }'; }

# compare NAME CORPUS SIZE cased|uncased LIMIT: train both and compare; then
# train again numbering the alphabet and "##c" as HF's file does: identical
compare() {
  local name=$1 corpus=$2 size=$3 cased=$4 limit=$5 flag=
  [ "$cased" = cased ] && flag=--cased
  "$DRV" merges -q $flag --vocab-size "$size" --limit-alphabet "$limit" "$corpus" >"$T/$name.merges"
  "$DRV" counts -q $flag "$corpus" >"$T/$name.counts"
  "$PY" "$HFPY" train "$corpus" "$T/$name.hf" "$size" "$cased" "$limit"
  "$PY" "$HFPY" compare "$T/$name.merges" "$T/$name.hf" "$T/$name.counts" "$limit" >"$T/cmp"
  echo "$name: $(tr '\n' ' ' <"$T/cmp")"
  ok "$name: same size as HF" [ "$(lines "$T/$name.merges")" -eq "$(lines "$T/$name.hf")" ]
  ok "$name: special tokens" [ "$(measure specials)" = 1 ]
  ok "$name: alphabet" [ "$(measure alphabet)" = 1 ]
  [ "$limit" -ge 5000 ] && ok "$name: ##c set" [ "$(measure cont_set)" = 1 ]
  ok "$name: >= 99% of our tokens in HF's vocab" at_least "$(measure common)" 99
  "$DRV" train -q -f $flag --vocab-size "$size" --limit-alphabet "$limit" --initial "$T/$name.hf" \
    -o "$T/$name.same" "$corpus"
  ok "$name: with HF's numbering of the characters, vocab.txt is identical" cmp -s "$T/$name.same.txt" "$T/$name.hf"
}

compare wiki-uncased "$T/wiki.txt" 8000 uncased 5000
compare wiki-cased "$T/wiki.txt" 8000 cased 5000
if [ -d "$SHARED/data/langid/tatoeba-manythings" ]; then
  for f in "$SHARED"/data/langid/tatoeba-manythings/*.txt; do head -n 3000 "$f" | cut -f2; done >"$T/tatoeba.txt"
  compare tatoeba "$T/tatoeba.txt" 12000 uncased 5000
  # 122 languages: the alphabet is cut to 1000 characters, and HF breaks the
  # ties at the cut at random, so only the tied characters may differ (and
  # with them their ##c forms and the merges that use them)
  for d in "$SHARED"/data/wiki-multilang/minidumps/*/; do wiki_sents "$d/wiki.xml.bz2" xx; done >"$T/multilang.txt"
  compare multilang "$T/multilang.txt" 8000 uncased 1000
  ok "multilang: the alphabet was cut at a tie" grep -q '^alphabet_ties_at_cut [1-9]' "$T/cmp"
else
  echo "skipped: Tatoeba and multilingual comparisons (no $SHARED/data)"
fi

# exact vocab.txt identity where HF's random "##c" numbering happens to be ours
"$PY" "$HFPY" tiny "$DRV" 7 200 "$T" >"$T/cmp"
echo "tiny: $(tr '\n' ' ' <"$T/cmp")"
ok "tiny corpora compared" [ "$(measure tiny_compared)" -ge 20 ]
ok "tiny corpora: vocab.txt identical to HF's" [ "$(measure tiny_identical)" = "$(measure tiny_compared)" ]

# tokenizer.json: loads, is laid out as tokenizers writes it, tokenizes
# held-out text as wp_tokenize does with the same vocab.txt
if [ -f "$SHARED/data/bert/sample_text.txt" ] && [ -d "$SHARED/data/langid/tatoeba-manythings" ]; then
  cp "$SHARED/data/bert/sample_text.txt" "$T/held.txt"
  for f in "$SHARED"/data/langid/tatoeba-manythings/*.txt; do tail -n 300 "$f" | cut -f2; done >>"$T/held.txt"
else
  wiki_sents "$DATA/enwiki-tables.xml.bz2" en >"$T/held.txt"
  wiki_sents "$DATA/enwiki-3.xml.bz2" en >>"$T/held.txt"
fi
for cased in uncased cased; do
  flag=
  [ "$cased" = cased ] && flag=--cased
  "$DRV" train -q -f $flag --vocab-size 8000 -o "$T/tj" "$T/wiki.txt"
  "$PY" "$HFPY" roundtrip "$T/tj.json" >"$T/cmp"
  ok "$cased: tokenizers reads tokenizer.json and writes the same bytes" [ "$(measure roundtrip)" = 1 ]
  "$PY" "$HFPY" encode "$T/tj.json" "$T/held.txt" >"$T/held.hf"
  "$BIN/wp_tokenize" $flag --vocab "$T/tj.txt" "$T/held.txt" >"$T/held.ours"
  ok "$cased: held-out text tokenized" [ "$(lines "$T/held.ours")" -eq "$(lines "$T/held.txt")" ] \
    && [ "$(wc -w <"$T/held.ours")" -gt 1000 ]
  ok "$cased: tokenizers with our tokenizer.json = wp_tokenize with our vocab.txt" cmp -s "$T/held.hf" "$T/held.ours"
done
done_testing
