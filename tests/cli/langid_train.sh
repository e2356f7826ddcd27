# CLI tests for langid_train: training determinism on a small real input,
# --select split, --eval, usage and file errors, and (with the shared data
# present) a rebuild of the shipped model from its sources.
. "$TESTS/cli/lib.sh"
LT=$BIN/langid_train
MODEL=$TESTS/../data/langid/model.txt

run $LT --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: langid_train" "$out"
run $LT --order 9
expect_rc "bad --order" 2
expect_err "bad --order message" "*--order*"
run $LT --select nope
expect_rc "bad --select" 2
run $LT "$T/nope.tsv"
expect_rc "missing input" 2
expect_err "missing input names the file" "langid_train: */nope.tsv: No such file or directory*"
run $LT --eval "$T/nope.txt" "$T/nope.tsv"
expect_rc "missing input for --eval" 2

# a small training set from the Wikipedia samples in tests/data: one
# labelled line per article paragraph
$BIN/wiki_dump -q "$DATA/huwiki-berlin.xml.bz2" | $BIN/wiki_strip -q -F lines | awk 'NF { print "hu\t" $0 }' >"$T/train.tsv"
$BIN/wiki_dump -q "$DATA/enwiki-3.xml.bz2" | $BIN/wiki_strip -q -F lines | awk 'NF { print "en\t" $0 }' >>"$T/train.tsv"
$BIN/wiki_dump -q "$DATA/elwikivoyage-17.xml.bz2" | $BIN/wiki_strip -q -F lines | awk 'NF { print "el\t" $0 }' >>"$T/train.tsv"
ok "training input has three languages" [ "$(cut -f1 "$T/train.tsv" | sort -u | wc -l)" -eq 3 ]

run $LT -o "$T/m1.txt" "$T/train.tsv"
expect_rc "train" 0
expect_err "summary line" "*3 languages*"
run bash -c "tac '$T/train.tsv' | $LT"
expect_rc "train from stdin" 0
ok "same lines in another order -> byte-identical model" cmp -s "$out" "$T/m1.txt"
run $LT -o "$T/m1.txt" "$T/train.tsv"
expect_rc "existing output without -f" 1
run $LT -f -o "$T/m1.txt" "$T/train.tsv"
expect_rc "existing output with -f" 0
run $LT --top 10 "$T/train.tsv"
ok "--top changes the model" bash -c "! cmp -s '$out' '$T/m1.txt'"
langs=$(sed '/^grams/q' "$T/m1.txt" | awk -F'\t' '$1 == "lang" { printf "%s ", $2 }')
ok "languages sorted by code ($langs)" [ "$langs" = "el en hu " ]

printf 'hu\tA vonat holnap reggel indul Budapestre, és este érkezik vissza.\n' >"$T/test.tsv"
printf 'en\tThe train leaves for London tomorrow morning and comes back in the evening.\n' >>"$T/test.tsv"
printf 'el\tΤο τρένο φεύγει αύριο το πρωί για την Αθήνα και επιστρέφει το βράδυ.\n' >>"$T/test.tsv"
printf 'en\t12345\n' >>"$T/test.tsv"
run $LT --eval "$T/m1.txt" "$T/test.tsv"
expect_rc "eval" 0
ok "eval: hu en el right, digits und" bash -c "[ \"\$(cut -f1,2 '$out' | tr '\t\n' ':,')\" = 'hu:hu,en:en,el:el,en:und,' ]"
expect_err "eval summary" "*4 texts, 3 right*"
run $LT --eval "$T/m1.txt" --min-chars 20 "$T/test.tsv"
ok "eval --min-chars skips short texts" [ "$(wc -l <"$out")" -eq 3 ]

printf 'no tab here\n' >"$T/bad.tsv"
run $LT "$T/bad.tsv"
expect_rc "line without a tab" 1
expect_err "bad line names file:line" "*bad.tsv:1: expected*"
printf 'hu\tszöveg\n' >"$T/dev-only.tsv"
run $LT --dev "$T/dev-only.tsv" "$T/train.tsv"
expect_rc "held-out text of a known language" 0
printf 'fi\tteksti\n' >"$T/dev-fi.tsv"
run $LT --dev "$T/dev-fi.tsv" "$T/train.tsv"
expect_rc "held-out language without training text" 1
printf 'wikibert-langid\t1\norder\t3\n' >"$T/broken.txt"
run $LT --eval "$T/broken.txt" "$T/test.tsv"
expect_rc "malformed model" 1
expect_err "malformed model names file:line" "*broken.txt:3: malformed langid model*"

# --select: the three parts partition the input
cat "$T/train.tsv" "$T/test.tsv" >"$T/all.tsv"
for p in train dev test; do $LT -q --select $p "$T/all.tsv" >"$T/part.$p"; done
ok "split parts partition the input" bash -c "cat '$T'/part.* | sort | cmp -s - <(grep -v '^\$' '$T/all.tsv' | sort)"

# Rebuild the shipped model from its sources (needs the shared data)
SHARED=${WIKIBERT_SHARED:-$TESTS/../../shared}
if [ -d "$SHARED/data/langid/tatoeba-manythings" ] && [ -d "$SHARED/data/wiki-multilang/minidumps" ]; then
  BENCH=$TESTS/../bench
  run bash "$BENCH/langid_data.sh" "$T/data" "$SHARED"
  expect_rc "langid_data.sh" 0
  ok "no test sentence in train" bash -c "! cut -f2 '$T/data/test-tatoeba.tsv' | sort -u | comm -12 - <(cut -f2 '$T/data/train.tsv' | sort -u) | grep -q ."
  run $LT --dev "$T/data/dev.tsv" -o "$T/rebuilt.txt" "$T/data/train.tsv"
  expect_rc "rebuild the shipped model" 0
  ok "rebuilt model is byte-identical to data/langid/model.txt" cmp -s "$T/rebuilt.txt" "$MODEL"
else
  echo "skipped: rebuild of the shipped model (no $SHARED/data)"
fi
done_testing
