# CLI tests for text_filter: the checks and statistics on real sentences,
# reading rules, -j determinism, dedup, --rejected, --identify, errors.
. "$TESTS/cli/lib.sh"
TF=$BIN/text_filter
CK=$DATA/filter/checks.txt
# every check as loose as it gets (documents pass unless a test says otherwise)
LOOSE="-l none -a 0 -s 1 -t 0 -n 1 -p 1 -u 1 -d 1 -F 1 -w 0"

run $TF --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: text_filter" "$out"
ok "help documents none" grep -q "'none' to switch it off" "$out"
run $TF --version
expect_rc "version" 0
ok "version line" grep -q "^text_filter [0-9.]* (icu [0-9.]*)" "$out"
run $TF --bogus
expect_rc "bad flag" 2
expect_err "bad flag message" "*unknown option '--bogus'*Try 'text_filter --help'*"
run $TF -a four "$CK"
expect_rc "bad number" 2
expect_err "bad number message" "*--avg-len: not a whole number: 'four'*Try 'text_filter --help'*"
for bad in "-n 1.5" "-n nan" "-p inf" "-d -0.1" "-F 0x1p-3" "-a -1" "-s 2.5" "-t nan" "-w -3" "-S 1e3"; do
  set -- $bad
  run $TF $1 $2 "$CK"
  expect_rc "bad value $bad" 2
  expect_err "bad value $bad: names the option" "text_filter: --*: *'$2'*"
  ok "bad value $bad: nothing written" [ ! -s "$out" ]
done
run $TF -l none -n 0 -p 1 -a 0 "$CK"
expect_rc "ratios 0 and 1, count 0" 0
run $TF --dedup lines "$CK"
expect_rc "bad dedup mode" 2
run $TF - - <"$CK"
expect_rc "stdin twice" 2
run $TF -l none "$T/nope.txt"
expect_rc "missing file" 1
expect_err "missing file message" "text_filter: */nope.txt: No such file or directory*"
run $TF --langid-model "$T/nope.model" "$CK"
expect_rc "missing model" 2
expect_err "missing model names the path" "*nope.model: No such file or directory*"

# the checks: checks.txt has one document per result under the defaults
head -4 "$CK" >"$T/pass.txt"; echo >>"$T/pass.txt"
run $TF -l none "$CK"
expect_rc "checks" 0
ok "only the passing document" cmp -s "$out" "$T/pass.txt"
cat >"$T/stats.want" <<'E'
checks.txt:	fail-avg-len	1 (10.0%)
checks.txt:	fail-digit-ratio	1 (10.0%)
checks.txt:	fail-foreign-ratio	1 (10.0%)
checks.txt:	fail-min-sents	1 (10.0%)
checks.txt:	fail-min-toks	1 (10.0%)
checks.txt:	fail-min-words	1 (10.0%)
checks.txt:	fail-no-word-ratio	1 (10.0%)
checks.txt:	fail-punct-ratio	1 (10.0%)
checks.txt:	fail-upper-ratio	1 (10.0%)
checks.txt:	pass-all	1 (10.0%)
checks.txt: output 1/10 documents (10.0%)
E
ok "statistics in filterdocs form" cmp -s <(grep -v '^text_filter: ' "$err") "$T/stats.want"
expect_err "summary line" "*text_filter: 10 documents in, 1 out, 9 failed the checks; *MB/s)*"
run $TF "$CK"
expect_rc "checks with language identification" 0
ok "the Hungarian document passes langdetect hu" cmp -s "$out" "$T/pass.txt"
run $TF -l en "$CK"
ok "and fails langdetect en" bash -c "[ ! -s '$out' ] && grep -q 'fail-langdetect	1 (10.0%)' '$err'"
run $TF -l xx "$CK"
expect_err "language missing from the model" "*has no 'xx': --langdetect is off*"
ok "check off when the model lacks the language" cmp -s "$out" "$T/pass.txt"
run $TF -l none -a none "$CK"
ok "-a none: the headings fail the next check" grep -q 'fail-min-toks	2 (20.0%)' "$err"
run $TF -l none -S 3 "$CK"
ok "-S 3: max-sents (4 and 5 sentences)" bash -c "[ ! -s '$out' ] && grep -q 'fail-max-sents	2 (20.0%)' '$err'"
run $TF -l none -T 62 "$CK"
ok "-T 62: max-toks (63 tokens)" grep -q 'fail-max-toks	1 (10.0%)' "$err"
run $TF -l none -T 63 "$CK"
ok "-T 63: a tie passes" cmp -s "$out" "$T/pass.txt"

run $TF -l none -i "$CK"
ok "--invert: the nine failing documents" [ "$(grep -c '^$' "$out")" -eq 9 ]
ok "--invert: not the passing one" bash -c "! grep -q '^A folyó kelet-nyugati irányban' '$out'"
expect_err "--invert counts output" "*checks.txt: output 9/10 documents (90.0%)*"

# several inputs: per-file blocks and TOTAL; --limit counts per input
cp "$CK" "$T/a.txt"; cp "$CK" "$T/b.txt"
run $TF -l none "$T/a.txt" "$T/b.txt"
ok "two inputs: output twice" [ "$(wc -l <"$out")" -eq 10 ]
expect_err "per-input and TOTAL blocks" "*a.txt: output 1/10 documents (10.0%)*b.txt: output 1/10 documents (10.0%)*TOTAL:	pass-all	2 (10.0%)*TOTAL: output 2/20 documents (10.0%)*"
run $TF -l none -L 3 "$T/a.txt" "$T/b.txt"
expect_err "--limit per input" "*a.txt: output 1/3 documents (33.3%)*b.txt: output 1/3 documents (33.3%)*TOTAL: output 2/6 documents (33.3%)*"

# reading: stdin, pipes in small pieces, CRLF / CR line ends, trailing spaces
run bash -c "cat '$CK' | $TF -l none"
ok "stdin identical to file" cmp -s "$out" "$T/pass.txt"
run bash -c "dd if='$CK' bs=7 status=none | dd bs=7 status=none | $TF -l none"
ok "pipe in 7-byte writes identical" cmp -s "$out" "$T/pass.txt"
sed 's/$/\r/' "$CK" >"$T/crlf.txt"
tr '\n' '\r' <"$CK" >"$T/cr.txt"
sed 's/$/ \t/' "$CK" >"$T/spaces.txt"
for f in crlf cr spaces; do
  run $TF -l none "$T/$f.txt"
  ok "$f input: same output" cmp -s "$out" "$T/pass.txt"
done
printf 'Berlin a vil\xe1g \xff.\n\n' >"$T/bad.txt"
run $TF $LOOSE "$T/bad.txt"
expect_rc "invalid UTF-8 is not fatal" 0
expect_err "invalid UTF-8 reported with file:line" "*bad.txt:1: invalid UTF-8 replaced by U+FFFD*2 invalid UTF-8 sequences replaced*"
ok "invalid UTF-8 replaced" grep -q $'vil\xef\xbf\xbdg \xef\xbf\xbd\\.$' "$out"
: >"$T/empty.txt"
run $TF -l none "$T/empty.txt"
expect_rc "empty input" 0
ok "empty input: empty output" [ ! -s "$out" ]
expect_err "empty input: zero report" "*empty.txt: output 0/0 documents (0.0%)*"
# documents in, none kept: an error with the rejection counts, no output
run $TF -q -l none -s 1000 -o "$T/none.txt" "$CK"
expect_rc "no document kept" 0
ok "... an empty output" [ -e "$T/none.txt" ] && [ ! -s "$T/none.txt" ]
run $TF -q --fail-if-none-kept -l none -s 1000 -o "$T/none2.txt" "$CK"
expect_rc "--fail-if-none-kept: no document kept" 1
expect_err "... says how many each check rejected (-q or not)" "text_filter: no document kept of [0-9]* (fail-*min-sents [0-9]*): nothing to write*"
ok "... and writes nothing" [ ! -e "$T/none2.txt" ]
run $TF -q --fail-if-none-kept -l none -s 1 "$T/empty.txt"
expect_rc "... an empty input is no error" 0
printf 'Ez egy magyar mondat, elég hosszú ahhoz, hogy a szűrő megnézze.\nMég egy mondat következik itt.\n' >"$T/hu1.txt"
run $TF -q --fail-if-none-kept --langdetect en ${LOOSE/-l none/-l en} "$T/hu1.txt"
expect_rc "... another language's text" 1
expect_err "... the language check named, and the hint" "*no document kept of 1 (fail-langdetect 1): nothing to write; is --language the text's?*"
run $TF -q -l none "$CK"
ok "-q: silent" [ ! -s "$err" ]
printf 'a\n\n' >"$T/-x.txt"
run $TF $LOOSE -- "$T/-x.txt"
ok "-- ends the options" [ "$(cat "$out")" = a ]

# a larger input from the samples: same output for every -j, all modes
$BIN/wiki_dump "$DATA/enwiki-206.xml.bz2" | $BIN/wiki_strip -F lines | sed 's/\. \([A-Z]\)/.\n\1/g' >"$T/en.txt"
$BIN/wiki_dump "$DATA/huwiki-berlin.xml.bz2" | $BIN/wiki_strip -F lines | sed 's/\. \([A-Z]\)/.\n\1/g' >"$T/hu.txt"
cat "$T/en.txt" "$T/hu.txt" "$T/en.txt" >"$T/big.txt"
for mode in "-l none" "-l en" "-l none --dedup sentences" "-l none -a 8 --dedup docs"; do
  run $TF -j1 $mode --rejected "$T/rej1" -f "$T/big.txt"
  cp "$out" "$T/out1"; grep -v 'MB/s' "$err" >"$T/err1"
  for j in 2 8; do
    run $TF -j$j $mode --rejected "$T/rej$j" -f "$T/big.txt"
    ok "$mode: -j$j output identical to -j1" cmp -s "$out" "$T/out1"
    ok "$mode: -j$j rejected identical to -j1" cmp -s "$T/rej$j" "$T/rej1"
    ok "$mode: -j$j statistics identical to -j1" cmp -s <(grep -v 'MB/s' "$err") "$T/err1"
  done
done
ok "English documents pass -l en" [ "$(grep -c '^$' "$T/out1")" -gt 20 ]

# dedup
printf 'a1\na2\n\na2\na3\n\na1\na2\n\na2\n\nb\nb\n\n' >"$T/dup.txt"
run $TF $LOOSE --dedup docs "$T/dup.txt"
ok "dedup docs" [ "$(cat "$out")" = $'a1\na2\n\na2\na3\n\na2\n\nb\nb' ]
expect_err "dedup docs count" "*; 1 duplicate documents dropped;*"
run $TF $LOOSE --dedup sentences --rejected "$T/dup.rej" "$T/dup.txt"
ok "dedup sentences" [ "$(cat "$out")" = $'a1\na2\n\na3\n\nb\nb' ]
expect_err "dedup sentences counts" "*1 duplicate documents dropped, 2 repeated sentences removed (1 documents left empty)*"
ok "duplicate in --rejected" [ "$(cat "$T/dup.rej")" = "# duplicate $T/dup.txt:7"$'\na1\na2' ]
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "s%d\n\n", i % 1500 }' >"$T/many.txt"
run $TF $LOOSE --dedup docs --dedup-memory 1K "$T/many.txt"
expect_err "full table warned" "*--dedup table full (96 texts)*"
ok "full table: remembered ones still dropped" [ "$(grep -c '^s1$' "$out")" -eq 1 ]
ok "full table: later ones pass" [ "$(grep -c '^s400$' "$out")" -eq 2 ]

# --rejected and -o
run $TF -l none -o "$T/o.txt" --rejected "$T/r.txt" "$CK"
expect_rc "-o and --rejected" 0
ok "-o output" cmp -s "$T/o.txt" "$T/pass.txt"
ok "rejected: nine documents" [ "$(grep -c '^# fail-' "$T/r.txt")" -eq 9 ]
ok "rejected: reason and position" grep -qx "# fail-avg-len $CK:6" "$T/r.txt"
ok "rejected: document follows" bash -c "grep -A1 -x '# fail-avg-len $CK:6' '$T/r.txt' | grep -qx 'Földrajz.'"
ok "no temp files left" bash -c "! ls '$T'/*.tmp.* 2>/dev/null"
run $TF -l none -o "$T/o.txt" "$CK"
expect_rc "-o refuses to overwrite" 1
run $TF -l none --rejected "$T/r.txt" "$CK"
expect_rc "--rejected refuses to overwrite" 1
ok "refused: nothing replaced" [ "$(grep -c '^# fail-' "$T/r.txt")" -eq 9 ]
run $TF -l none -o "$T/same" --rejected "$T/same" "$CK"
expect_rc "-o and --rejected the same file" 2
run $TF -l none -i --rejected "$T/ri.txt" "$CK"
ok "rejected with --invert: the passing one" [ "$(grep -c "^# pass-all $CK:1\$" "$T/ri.txt")" -eq 1 ]

# --identify
printf 'Berlin Németország fővárosa és legnépesebb városa.\n\nAnarchism is a political philosophy.\n' >"$T/id.txt"
run $TF --identify "$T/id.txt"
expect_rc "identify" 0
ok "identify: Hungarian" grep -qx $'hu\t[01]\\.[0-9][0-9][0-9]\tBerlin Németország fővárosa és legnépesebb városa\\.' "$out"
ok "identify: blank line" [ "$(sed -n 2p "$out")" = $'und\t0.000\t' ]
ok "identify: English" grep -q $'^en\t.*\tAnarchism is' "$out"

# patterns (PCRE2): real English and Hungarian Wikipedia text
$BIN/wiki_dump "$DATA/enwiki-206.xml.bz2" 2>/dev/null | $BIN/wiki_strip 2>/dev/null |
  $BIN/sent_split -l en 2>/dev/null >"$T/en.txt"
$BIN/wiki_dump "$DATA/huwiki-berlin.xml.bz2" 2>/dev/null | $BIN/wiki_strip 2>/dev/null |
  $BIN/sent_split -l hu 2>/dev/null >"$T/hu.txt"
run $TF $LOOSE --drop-lines '^[^ ]+$' "$T/en.txt"
expect_rc "drop-lines" 0
ok "drop-lines: no one-word line left" bash -c "! grep -qx '[^ ]\\+' '$out'"
want=$(grep -cx '[^ ]\+' "$T/en.txt")
expect_err "drop-lines: summary counts the lines" "*patterns dropped $want lines and *"
run $TF $LOOSE --drop-docs '(?i)\bdisambiguation\b' --rejected "$T/pr.txt" "$T/en.txt"
expect_rc "drop-docs" 0
ok "drop-docs: none left" bash -c "! grep -qi 'disambiguation' '$out'"
n=$(grep -c '^# drop-docs ' "$T/pr.txt")
ok "drop-docs: rejected with their reason ($n)" [ "$n" -ge 1 ]
expect_err "drop-docs: summary" "*and $n documents (0 left empty, $n by --drop-docs, 0 by --keep-docs)*"
# --keep-docs is repeatable: either pattern keeps a document
run $TF $LOOSE --keep-docs '^Berlin' --keep-docs 'főváros' "$T/hu.txt"
expect_rc "keep-docs" 0
ok "keep-docs: Hungarian UTF-8 pattern kept the Berlin article" grep -q 'Németország fővárosa' "$out"
run $TF $LOOSE --keep-docs 'nincs-ilyen-szó' "$T/hu.txt"
ok "keep-docs without a match: nothing out" [ ! -s "$out" ]
expect_err "keep-docs: counted" "* 0 out, 0 failed the checks; patterns dropped 0 lines and * by --keep-docs)*"
# a document whose lines are all dropped is dropped
printf 'egy ketto\nharom\n\nnegy ot\n\n' >"$T/e.txt"
run $TF $LOOSE --drop-lines ' ' "$T/e.txt"
ok "emptied document dropped" [ "$(cat "$out")" = "harom" ]
expect_err "emptied: counted" "*patterns dropped 2 lines and 1 documents (1 left empty,*"
# the same output for any -j
for j in 1 2 3; do
  $TF -j $j $LOOSE --drop-lines '^\S+$' --drop-docs '(?i)disambiguation' --keep-docs 'the' \
    --dedup sentences "$T/en.txt" 2>/dev/null | md5sum
done | sort -u >"$T/sums"
ok "patterns: identical output for -j 1, 2, 3" [ "$(wc -l <"$T/sums")" -eq 1 ]
# invalid UTF-8 in the input is repaired before matching: no crash
printf 'j\xc3\xb3 sz\xff\xfe\xc3\n\xc3\xa1rv\xc3\xadz\n\n' >"$T/bad.txt"
run $TF $LOOSE --drop-lines 'sz\x{FFFD}+$' --keep-docs 'árvíz' "$T/bad.txt"
expect_rc "invalid UTF-8 input with patterns" 0
ok "invalid UTF-8: the repaired line matched" [ "$(cat "$out")" = "árvíz" ]
# bad patterns are usage errors with PCRE2's message and offset
run $TF --drop-lines 'a(b' "$T/en.txt"
expect_rc "bad pattern" 2
expect_err "bad pattern message" "text_filter: --drop-lines: bad pattern 'a(b': missing closing parenthesis at offset 3*Try*"
run $TF --keep-docs $'\xff' "$T/en.txt"
expect_rc "pattern not UTF-8" 2
run $TF --identify --drop-docs x "$T/en.txt"
expect_rc "--identify with a pattern" 2

# write errors
[ -f "$INJECT" ] && for call in fwrite fclose; do
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
  run env WB_INJECT=$call LD_PRELOAD="$INJECT" $TF -l none -o "$T/FAILME-o.txt" "$CK"
  expect_rc "-o: $call fails" 1
  ok "-o: $call leaves no output" bash -c "! ls '$T'/FAILME-o.txt* 2>/dev/null"
  run env WB_INJECT=$call LD_PRELOAD="$INJECT" $TF -l none -o "$T/ok-$call.txt" --rejected "$T/FAILME-r.txt" "$CK"
  expect_rc "--rejected: $call fails" 1
  ok "--rejected: $call leaves neither file" bash -c "! ls '$T'/FAILME-r.txt* '$T'/ok-$call.txt* 2>/dev/null"
  run env WB_INJECT=$call LD_PRELOAD="$INJECT" $TF -l none -o "$T/FAILME-o2.txt" --rejected "$T/ok-r-$call.txt" "$CK"
  expect_rc "-o with --rejected: $call fails" 1
  ok "-o with --rejected: $call leaves neither file" bash -c "! ls '$T'/FAILME-o2.txt* '$T'/ok-r-$call.txt* 2>/dev/null"
done
run bash -c "$TF -l none '$CK' > /dev/full"
expect_rc "stdout on a full disk" 1
done_testing
