# CLI tests for vocab_convert: options and exit codes, file vs stdin, atomic
# -o, --size in both directions with its warnings, malformed input.
. "$TESTS/cli/lib.sh"
VC=$BIN/vocab_convert

run $VC --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: vocab_convert" "$out"
ok "help documents --size" grep -q -- "--size N" "$out"
run $VC -V
expect_rc "version" 0
ok "version line" grep -q "^vocab_convert [0-9.]*" "$out"
run $VC --bogus
expect_rc "bad option" 2
expect_err "bad option message" "*unknown option '--bogus'*Try*"
run $VC -u x
expect_rc "bad -u" 2
run $VC --size -3
expect_rc "bad --size" 2
for v in 0 -3; do
  echo "▁a -1" >"$T/z.vocab"
  run $VC --size $v -o "$T/z.txt" "$T/z.vocab"
  expect_rc "--size $v: a usage error" 2
  expect_err "... naming the option" "vocab_convert: --size: '$v' is out of range [[]1, 100000000[]]*Try*"
  ok "... nothing written" [ ! -e "$T/z.txt" ]
done
run $VC a b
expect_rc "two inputs" 2
run $VC "$T/nope.vocab"
expect_rc "missing input file" 1
expect_err "missing input message" "vocab_convert: */nope.vocab: No such file or directory*"

B=$'\xe2\x96\x81'
printf '<unk>\t0\n<s>\t0\n</s>\t0\n%st\t-0\n%sa\t-1\nen\t-2\n%s\t-3\ne\t-4\nn\t-5\n' "$B" "$B" "$B" >"$T/m.vocab"
run $VC "$T/m.vocab"
expect_rc "convert" 0
ok "convert: 105 + 5 lines" [ "$(wc -l <"$out")" -eq 110 ]
ok "convert: specials" cmp -s <(sed -n '1p;2p;101,105p' "$out") <(printf '[PAD]\n[unused0]\n[unused99]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n')
ok "convert: pieces" cmp -s <(tail -n +106 "$out") <(printf 't\na\n##en\n##e\n##n\n')
ok "convert: quiet by default" [ ! -s "$err" ]
cp "$out" "$T/want"
run bash -c "$VC <'$T/m.vocab'"
ok "stdin same as file" cmp -s "$out" "$T/want"
run bash -c "$VC - <'$T/m.vocab'"
ok "- same as file" cmp -s "$out" "$T/want"
run $VC -n -k "$T/m.vocab"
ok "-n -k" cmp -s "$out" <(printf '##<unk>\n##<s>\n##</s>\nt\na\n##en\n##e\n##n\n')
run $VC -v -u 0 "$T/m.vocab"
expect_err "-v: counts" "*read 9 pieces from */m.vocab; 6 after dropping <unk> <s> </s>; 5 converted; 10 with the BERT special tokens*; 10 written*"

run $VC -u 0 --size 8 "$T/m.vocab"
expect_rc "--size smaller" 0
ok "--size smaller: 8 lines" [ "$(wc -l <"$out")" -eq 8 ]
ok "--size smaller: the end is dropped" cmp -s <(tail -3 "$out") <(printf 't\na\n##en\n')
expect_err "--size smaller warns" "*--size 8: dropped the last 2 of 10 tokens, from \"##e\" (*m.vocab:8) on*"
run $VC -q -u 0 --size 8 "$T/m.vocab"
ok "-q silences the warning" [ ! -s "$err" ]
run $VC --size 112 "$T/m.vocab"
expect_rc "--size larger" 0
ok "--size larger: padded with [unused100] [unused101]" cmp -s <(tail -3 "$out") <(printf '##n\n[unused100]\n[unused101]\n')
expect_err "--size larger warns" "*--size 112: padded 110 tokens with 2 \\[unusedK\\] tokens*"
run $VC --size 110 "$T/m.vocab"
ok "--size equal: no warning" [ ! -s "$err" ]
ok "--size equal: same output" cmp -s "$out" "$T/want"

printf '%sa\t-0\na\t-1\n%s##a\t-2\n' "$B" "$B" >"$T/dup.vocab"
run $VC -n "$T/dup.vocab"
expect_rc "duplicate tokens after conversion" 0
ok "duplicate tokens kept" cmp -s "$out" <(printf 'a\n##a\n##a\n')
expect_err "duplicate tokens warned" "*1 output tokens repeat an earlier one (first: \"##a\")*"

printf 'a\t0\nb\t-1\nc\t1e-05\n' >"$T/bad.vocab"
run $VC -o "$T/bad.txt" "$T/bad.vocab"
expect_rc "malformed line" 1
expect_err "malformed line message" "vocab_convert: */bad.vocab:3: not PIECE<TAB>SCORE*\"c	1e-05\"*"
ok "malformed: no output file" [ ! -e "$T/bad.txt" ]
ok "malformed: no temp file left" [ -z "$(ls "$T" | grep tmp)" ]
printf 'a\t0\nb\t-1\na\t-2\n' >"$T/dup2.vocab"
run $VC "$T/dup2.vocab"
expect_rc "repeated piece" 1
expect_err "repeated piece message" "*dup2.vocab:3: duplicate piece \"a\" (first on line 1)*"

: >"$T/empty.vocab"
run $VC -u 0 "$T/empty.vocab"
expect_rc "empty input" 1
expect_err "empty input: no pieces" "vocab_convert: $T/empty.vocab: no pieces"
ok "empty input: no vocabulary written" [ ! -s "$out" ]
printf '<unk>\t0\n<s>\t0\n</s>\t0\n' >"$T/specials.vocab"
run $VC "$T/specials.vocab"
expect_rc "SentencePiece specials only" 1
expect_err "SentencePiece specials only: no pieces" "*specials.vocab: no pieces"
printf '\033[2Jbad line\n' >"$T/esc.vocab"
run $VC "$T/esc.vocab"
expect_rc "malformed line with ESC" 1
expect_err "malformed line: file and line" "*esc.vocab:1: not PIECE<TAB>SCORE*"
ok "malformed line: ESC shown as \\x1B" grep -qF '"\x1B[2Jbad line"' "$err"
ok "malformed line: no raw ESC in the message" bash -c "! grep -q \$'\\033' '$err'"

run $VC -o "$T/o.txt" "$T/m.vocab"
expect_rc "-o" 0
ok "-o output" cmp -s "$T/o.txt" "$T/want"
ok "-o: stdout empty" [ ! -s "$out" ]
run $VC -o "$T/o.txt" "$T/m.vocab"
expect_rc "-o refuses overwrite" 1
run $VC -f -u 0 -o "$T/o.txt" "$T/m.vocab"
expect_rc "-f overwrites" 0
ok "-f: new content" [ "$(wc -l <"$T/o.txt")" -eq 10 ]

# -b: every character of the pieces both word-initial and ## (not those of
# the special tokens); what exists already is not repeated
printf '<unk>\t0\n<s>\t0\n</s>\t0\n\xe2\x96\x81a\t-1\n,\t-2\nb\t-3\n\xe2\x96\x81ab\t-4\n' >"$T/b.vocab"
run $VC -b -u 1 "$T/b.vocab"
expect_rc "-b" 0
ok "-b: the pieces, then , ##a b in code-point order" \
  [ "$(tr '\n' ' ' <"$out")" = "[PAD] [unused0] [UNK] [CLS] [SEP] [MASK] a ##, ##b ab , ##a b " ]
done_testing
