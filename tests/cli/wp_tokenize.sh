# CLI tests for wp_tokenize: options and exit codes, the default and a
# given vocabulary, tokens and --ids, --cased, empty lines, invalid UTF-8,
# atomic -o, and identical output for every -j.
. "$TESTS/cli/lib.sh"
WP=$BIN/wp_tokenize

run $WP --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: wp_tokenize" "$out"
ok "help names --vocab" grep -q -- "--vocab FILE" "$out"
run $WP -V
expect_rc "version" 0
ok "version line" grep -q "^wp_tokenize [0-9.]* (icu [0-9.]*, unicode [0-9.]*)" "$out"
run $WP --bogus
expect_rc "bad option" 2
expect_err "bad option message" "*unknown option '--bogus'*Try*"
run $WP -j 0 </dev/null
expect_rc "bad -j" 2
run $WP --vocab "$T/no-vocab.txt" </dev/null
expect_rc "missing vocab" 2
expect_err "missing vocab names the path" "*$T/no-vocab.txt: No such file or directory*"
printf 'a\nb\xff\n' >"$T/bad-vocab.txt"
run $WP --vocab "$T/bad-vocab.txt" </dev/null
expect_rc "invalid vocab" 1
expect_err "invalid vocab message" "*bad-vocab.txt:2: invalid UTF-8*"
run $WP "$T/nope.txt"
expect_rc "missing input file" 1
expect_err "missing input message" "*nope.txt: No such file or directory*"
run $WP </dev/null
expect_rc "empty input" 0
ok "empty input gives empty output" [ ! -s "$out" ]
ok "no summary by default" [ ! -s "$err" ]

# the default vocabulary is the shipped bert-base-uncased one
printf '%s\n' "Hello, [MASK] world!! [mask] don't" "" "Árvíztűrő tükörfúrógép." "The unaffable Johanson" >"$T/in.txt"
printf '\xe4\xb8\xad\xe6\x96\x87 x\xe2\x80\x8by caf\xc3\xa9\xff\n' >>"$T/in.txt"
cat >"$T/want.txt" <<'W'
hello , [MASK] world ! ! [ mask ] don ' t

ar ##vi ##z ##tur ##o tu ##kor ##fur ##oge ##p .
the una ##ffa ##ble johan ##son
中 文 x ##y cafe
W
run $WP -v "$T/in.txt"
expect_rc "tokens" 0
ok "tokens output" cmp -s "$out" "$T/want.txt"
expect_err "summary line" "*5 lines, 34 tokens, 0 \[UNK\]; 1 invalid UTF-8 replaced;*MB/s*"
run $WP -q <"$T/in.txt"
ok "stdin gives the same" cmp -s "$out" "$T/want.txt"
ok "-q is silent" [ ! -s "$err" ]
run $WP --vocab "$TESTS/../data/bert/vocab.txt" --ids "$T/in.txt"
expect_rc "ids" 0
ok "ids line 1" [ "$(sed -n 1p "$out")" = "7592 1010 103 2088 999 999 1031 7308 1033 2123 1005 1056" ]
ok "ids keep the empty line" [ "$(sed -n 2p "$out")" = "" ]
ok "ids: one line per line" [ "$(wc -l <"$out")" -eq 5 ]

# a small vocabulary: [UNK] words, --cased
printf '[UNK]\nhello\n##s\nHello\n,\n' >"$T/v.txt"
printf 'Hello, hellos worlds\n' >"$T/small.txt"
run $WP --vocab "$T/v.txt" "$T/small.txt"
ok "small vocab" [ "$(cat "$out")" = "hello , hello ##s [UNK]" ]
run $WP --vocab "$T/v.txt" --cased --ids -v "$T/small.txt"
ok "cased ids" [ "$(cat "$out")" = "3 4 1 2 0" ]
expect_err "cased summary counts [UNK]" "*1 lines, 5 tokens, 1 \[UNK\]*"
# case and accents apart (BertTokenizer's do_lower_case and strip_accents):
# Hungarian kor/kör/kór/kőr are four words; "Ő" lower-cases to "ő", and
# stripping accents (NFD, then Mn dropped) makes all four "kor"
printf '[UNK]\nkor\nkör\nkór\nkőr\nKor\nKőr\n##ő\n' >"$T/hu-v.txt"
printf 'kor kör kór KŐR Kőr\n' >"$T/hu.txt"
for c in "1 -:kor kor kor kor kor" "1 1:kor kor kor kor kor" "1 0:kor kör kór kőr kőr" \
  "0 0:kor kör kór [UNK] Kőr" "0 1:kor kor kor [UNK] Kor"; do
  set -- ${c%%:*}
  opts="--do-lower-case $1"
  [ "$2" = - ] || opts="$opts --strip-accents $2"
  run $WP --vocab "$T/hu-v.txt" $opts "$T/hu.txt"
  ok "$opts" [ "$(cat "$out")" = "${c#*:}" ]
done
run $WP --vocab "$T/hu-v.txt" --cased "$T/hu.txt"
ok "--cased is --do-lower-case 0 (accents kept)" [ "$(cat "$out")" = "kor kör kór [UNK] Kőr" ]
run $WP --vocab "$T/hu-v.txt" --strip-accents 2 "$T/hu.txt"
expect_rc "--strip-accents 2" 2
# a vocabulary without [UNK], or an empty one, would make unknown words
# tokens without an id (or every word [UNK]): a bad --vocab, exit 2
printf 'a\nhello\n' >"$T/nounk.txt"
for ids in "" --ids; do
  run $WP --vocab "$T/nounk.txt" $ids "$T/small.txt"
  expect_rc "no [UNK] in vocab $ids" 2
  expect_err "no [UNK] message $ids" "wp_tokenize: $T/nounk.txt: the vocabulary has no \[UNK\] line (--vocab)"
  ok "no [UNK] in vocab $ids: nothing written" [ ! -s "$out" ]
done
: >"$T/empty-vocab.txt"
run $WP --vocab "$T/empty-vocab.txt" "$T/small.txt"
expect_rc "empty vocab" 2
expect_err "empty vocab message" "wp_tokenize: $T/empty-vocab.txt: empty vocabulary (--vocab)"
run $WP --vocab "$T/empty-vocab.txt" -o "$T/empty-vocab.out" "$T/small.txt"
expect_rc "empty vocab with -o" 2
ok "empty vocab with -o: no output file" bash -c "! ls '$T'/empty-vocab.out* 2>/dev/null"

# -o is atomic and refuses to overwrite without -f; -j gives the same bytes
run $WP -o "$T/o.txt" "$T/in.txt"
ok "-o writes the file" cmp -s "$T/o.txt" "$T/want.txt"
run $WP -o "$T/o.txt" "$T/in.txt"
expect_rc "existing -o without -f" 1
run $WP -f -o "$T/o.txt" "$T/in.txt"
expect_rc "-f overwrites" 0
ok "no temp files left" [ -z "$(ls "$T" | grep tmp)" ]
for i in $(seq 300); do cat "$T/in.txt"; done >"$T/big.txt"
run $WP -j1 "$T/big.txt"
cp "$out" "$T/j1.txt"
ok "big input: one line per line" [ "$(wc -l <"$T/j1.txt")" -eq 1500 ]
for j in 2 3 8; do
  run $WP -j$j "$T/big.txt"
  ok "-j$j is byte-identical" cmp -s "$out" "$T/j1.txt"
done
done_testing
