# Bad input that every program must refuse instead of turning it into
# output: UTF-16 and UTF-32 text (made from real text with iconv), input
# quoted raw in messages (control bytes), numeric options that are not
# numbers of the kind meant (fractions, nan, inf, negative counts), and the
# files left behind when a run fails (no empty FILE.partial).
. "$TESTS/cli/lib.sh"
VOCAB=$TESTS/../data/bert/vocab.txt

# real text: pages, articles and sentences from enwiki-3
$BIN/wiki_dump -q "$DATA/enwiki-3.xml.bz2" >"$T/pages.jsonl"
$BIN/wiki_strip -q "$T/pages.jsonl" >"$T/text.txt"
$BIN/sent_split -q -l en "$T/text.txt" >"$T/sent.txt"
head -c 20000 "$T/sent.txt" >"$T/small.txt"
for f in pages.jsonl text.txt small.txt; do
  iconv -f UTF-8 -t UTF-16 "$T/$f" >"$T/${f%.*}-16.${f#*.}"     # with a BOM
  iconv -f UTF-8 -t UTF-16LE "$T/$f" >"$T/${f%.*}-16le.${f#*.}" # without
done
iconv -f UTF-8 -t UTF-32 "$T/small.txt" >"$T/small-32.txt"

# refused NAME FILE CMD...: CMD exits 1, and its first message is the
# UTF-16 line for FILE (hdf5gen adds its summary lines)
refused() {
  local name=$1 file=$2; shift 2
  run "$@"
  expect_rc "$name: UTF-16 refused" 1
  ok "$name: UTF-16 message" [ "$(head -1 "$err")" = "$(basename "$1"): $file: UTF-16 text (convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)" ]
  ok "$name: nothing written" [ ! -s "$out" ]
}
refused "wiki_strip" "$T/pages-16.jsonl" $BIN/wiki_strip "$T/pages-16.jsonl"
refused "wiki_strip (no BOM)" "$T/pages-16le.jsonl" $BIN/wiki_strip "$T/pages-16le.jsonl"
refused "sent_split" "$T/text-16.txt" $BIN/sent_split -l en "$T/text-16.txt"
refused "sent_split (no BOM)" "$T/text-16le.txt" $BIN/sent_split -l en "$T/text-16le.txt"
refused "sent_split, second input" "$T/text-16.txt" $BIN/sent_split -l en "$T/text.txt" "$T/text-16.txt"
refused "text_filter" "$T/small-16.txt" $BIN/text_filter -l none "$T/small-16.txt"
refused "text_filter (no BOM)" "$T/small-16le.txt" $BIN/text_filter -l none "$T/small-16le.txt"
refused "wp_tokenize" "$T/small-16.txt" $BIN/wp_tokenize --vocab "$VOCAB" "$T/small-16.txt"
refused "wp_tokenize (no BOM)" "$T/small-16le.txt" $BIN/wp_tokenize --vocab "$VOCAB" "$T/small-16le.txt"
refused "vocab_train" "$T/small-16.txt" $BIN/vocab_train --model wordpiece --vocab-size 200 -o "$T/wp" "$T/small-16.txt"
ok "vocab_train: no model left" bash -c "! ls '$T'/wp* 2>/dev/null"
refused "shard_split" "$T/small-16.txt" $BIN/shard_split -n 1 -t 0 -o "$T/shards16" "$T/small-16.txt"
mkdir -p "$T/h5"
refused "hdf5gen" "$T/small-16.txt" $BIN/hdf5gen --vocab "$VOCAB" --max-seq-length 64 \
  --max-predictions-per-seq 10 -o "$T/h5/x.hdf5" "$T/small-16.txt"
ok "hdf5gen: no HDF5 file left" [ -z "$(ls "$T/h5")" ]
run $BIN/sent_split -l en - <"$T/text-16.txt"
expect_rc "sent_split stdin: UTF-16 refused" 1
expect_err "sent_split stdin: message" "sent_split: -: UTF-16 text*"
run $BIN/sent_split -l en "$T/small-32.txt"
expect_rc "UTF-32 refused" 1
expect_err "UTF-32 message" "sent_split: $T/small-32.txt: UTF-32 text (convert it to UTF-8, e.g. iconv -f UTF-32 -t UTF-8)"
# UTF-8 with a BOM is UTF-8, and the UTF-16 text converted back is accepted
printf '\xef\xbb\xbf' | cat - "$T/small.txt" >"$T/bom8.txt"
run $BIN/sent_split -l en "$T/bom8.txt"
expect_rc "UTF-8 with BOM accepted" 0
iconv -f UTF-16 -t UTF-8 "$T/small-16.txt" >"$T/back.txt"
$BIN/wp_tokenize --vocab "$VOCAB" "$T/small.txt" >"$T/small.tok"
run $BIN/wp_tokenize --vocab "$VOCAB" "$T/back.txt"
expect_rc "converted back: accepted" 0
ok "converted back: the same tokens" cmp -s "$out" "$T/small.tok"

# messages quoting input escape control bytes: an --abbrev line with ESC
printf 'izé. =\033[31mred\033[0m\n' >"$T/esc-abbrev.txt"
run $BIN/sent_split -l hu --abbrev "$T/esc-abbrev.txt" "$T/small.txt"
expect_rc "--abbrev with ESC" 1
expect_err "--abbrev with ESC: file and line" "sent_split: $T/esc-abbrev.txt:1: unknown flag*"
ok "--abbrev with ESC: shown as \\x1B" grep -qF "'=\\x1B[31mred\\x1B[0m'" "$err"
ok "--abbrev with ESC: no raw ESC" bash -c "! grep -q \$'\\033' '$err'"
ok "--abbrev with ESC: one line" [ "$(wc -l <"$err")" -eq 1 ]
{ printf 'izé. ='; head -c 3000 /dev/zero | tr '\0' x; printf '\n'; } >"$T/long-abbrev.txt"
run $BIN/sent_split -l hu --abbrev "$T/long-abbrev.txt" "$T/small.txt"
expect_rc "--abbrev with a long flag" 1
ok "--abbrev with a long flag: quote cut" bash -c "[ \$(wc -c <'$err') -lt 300 ] && grep -q \"xxx\\.\\.\\.'\" '$err'"

# numeric options: nan, inf, fractions for whole numbers and negative counts
# are usage errors naming the option, for every program (shared parsers)
while read -r prog opt val; do
  run $BIN/$prog $opt "$val" "$T/small.txt"
  expect_rc "$prog $opt $val" 2
  expect_err "$prog $opt $val: names the option" "$prog: $opt: *'$val'*Try '$prog --help'*"
done <<'E'
text_filter --no-word-ratio 1.5
text_filter --punct-ratio nan
text_filter --avg-len -1
text_filter --min-sents 2.5
train_bert_cpu --learning_rate nan
train_bert_cpu --weight_decay inf
langid_train --mu inf
hdf5gen --masked-lm-prob nan
hdf5gen --short-seq-prob inf
hdf5gen --dupe-factor 1.5
shard_split --test-fraction nan
shard_split --train 0.5
vocab_convert --unused -1
vocab_convert --size 1e3
wiki_dump --ns 99999999999999999999
wiki_dump -j 1.5
E

# a failed run leaves no FILE.partial when nothing was written: a missing,
# unreadable or empty input (the missing one is found before -o is opened)
: >"$T/empty.in"
printf 'x\n' >"$T/locked.in"; chmod 000 "$T/locked.in"
for prog in wiki_dump wiki_strip; do
  for in in missing.in locked.in empty.in; do
    [ "$in" = locked.in ] && [ -r "$T/locked.in" ] && continue # root reads it anyway
    [ "$prog.$in" = wiki_strip.empty.in ] && continue # no pages in, none out: exit 0
    run $BIN/$prog -o "$T/$prog-$in.out" "$T/$in"
    expect_rc "$prog, $in input, -o" 1
    ok "$prog, $in input: no output, no .partial, no temp file" bash -c "! ls '$T/$prog-$in.out'* 2>/dev/null"
  done
  run $BIN/$prog -o "$T/$prog-missing.out" "$T/missing.in"
  expect_err "$prog, missing input: one line naming it" "$prog: $T/missing.in: No such file or directory"
done
# a data error after complete pages still keeps them in FILE.partial
bzcat "$DATA/enwiki-3.xml.bz2" | head -n -2 >"$T/cut.xml"
run $BIN/wiki_dump -o "$T/cut.jsonl" "$T/cut.xml"
expect_rc "dump cut short" 1
ok "dump cut short: pages kept in .partial" [ -s "$T/cut.jsonl.partial" ]

done_testing
