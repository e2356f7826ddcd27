# CLI tests for sent_split: options and exit codes, input layouts, output
# formats, invalid UTF-8, atomic -o, identical output for every -j and for
# every way the input arrives (file, pipe, byte-sized writes, split files).
. "$TESTS/cli/lib.sh"
SS=$BIN/sent_split

run $SS --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: sent_split" "$out"
ok "help names --keep-paragraphs" grep -q -- "--keep-paragraphs" "$out"
run $SS -V
expect_rc "version" 0
ok "version line" grep -q "^sent_split [0-9.]* (icu [0-9.]*)" "$out"
run $SS --bogus
expect_rc "bad option" 2
expect_err "bad option message" "*unknown option '--bogus'*Try*"
run $SS -F xml
expect_rc "bad --format" 2
expect_err "bad --format message" "*--format: expected text or doc, got 'xml'*"
run $SS -I yaml
expect_rc "bad --input-format" 2
run $SS -l ../etc </dev/null
expect_rc "bad language code" 2
run $SS --abbrev "$T/no-such-list.txt" </dev/null
expect_rc "missing --abbrev file" 2
expect_err "missing --abbrev file names the path" "*$T/no-such-list.txt: No such file or directory*"
run $SS "$T/nope.txt"
expect_rc "missing input file" 1
expect_err "missing input message" "*nope.txt: No such file or directory*"
run $SS </dev/null
expect_rc "empty input" 0
ok "empty input gives empty output" [ ! -s "$out" ]
ok "no summary by default" [ ! -s "$err" ]

# plain text: one paragraph per line, a blank line between documents
printf '%s\n' "Első mondat. Dr. Kiss 1848. március 15-én jött, a II. világháború előtt." \
  "Második bekezdés! Ez a www.pelda.hu címen van." "" \
  "Új dokumentum? Igen, 3.14 és 1.000.000 között." >"$T/hu.txt"
cat >"$T/hu.want" <<'EOF'
Első mondat.
Dr. Kiss 1848. március 15-én jött, a II. világháború előtt.
Második bekezdés!
Ez a www.pelda.hu címen van.

Új dokumentum?
Igen, 3.14 és 1.000.000 között.

EOF
run $SS -l hu "$T/hu.txt"
expect_rc "hu text" 0
ok "hu text: exact output" cmp -s "$out" "$T/hu.want"
run $SS -l hu --keep-paragraphs "$T/hu.txt"
ok "--keep-paragraphs: blank line between paragraphs" \
  [ "$(cat "$out")" = "$(printf 'Első mondat.\nDr. Kiss 1848. március 15-én jött, a II. világháború előtt.\n\nMásodik bekezdés!\nEz a www.pelda.hu címen van.\n\nÚj dokumentum?\nIgen, 3.14 és 1.000.000 között.')" ]
run $SS -l hu -v "$T/hu.txt"
expect_err "-v summary" "*2 documents (0 without sentences), 3 paragraphs, 6 sentences; 0 invalid UTF-8 replaced*MB/s)*"
run $SS -l en "$T/hu.txt"
ok "English rules split after the Roman numeral's period" bash -c "[ \$(grep -c . '$out') -ge 6 ]"
# English informal text: lower-case sentence starts split, abbreviations
# before a lower-case word do not; Hungarian keeps lower case together
printf '%s\n' "the inside is too bad. too many bugs, e.g. this one. did it work? is it worth it" >"$T/en-informal.txt"
run $SS -l en "$T/en-informal.txt"
ok "en: lower-case sentence starts" \
  [ "$(cat "$out")" = "$(printf 'the inside is too bad.\ntoo many bugs, e.g. this one.\ndid it work?\nis it worth it')" ]
run $SS -l hu "$T/en-informal.txt"
ok "hu: no cut before a lower-case word" [ "$(grep -c . "$out")" -eq 1 ]
run $SS -l hu --abbrev <(echo "# nothing") "$T/hu.txt"
ok "--abbrev with a comment-only list changes nothing" cmp -s "$out" "$T/hu.want"
printf 'Ez az Izé. Alma jön.\n' >"$T/ize.txt"
run $SS -l hu "$T/ize.txt"
ok "without the entry: two sentences" [ "$(wc -l <"$out")" -eq 3 ]
printf 'izé.\n' >"$T/extra.txt"
run $SS -l hu --abbrev "$T/extra.txt" "$T/ize.txt"
ok "--abbrev entry keeps the sentence together" [ "$(head -1 "$out")" = "Ez az Izé. Alma jön." ]
printf 'izé. =bogus\n' >"$T/bad.txt"
run $SS -l hu --abbrev "$T/bad.txt" "$T/ize.txt"
expect_rc "malformed --abbrev list" 1
expect_err "malformed list: file and line" "*bad.txt:1: unknown flag '=bogus'*"

# invalid UTF-8 is replaced and counted
printf 'Rossz \xff bájt. Jó mondat.\n' >"$T/bad-utf8.txt"
run $SS -v -l hu "$T/bad-utf8.txt"
expect_rc "invalid UTF-8" 0
ok "invalid UTF-8 replaced by U+FFFD" grep -q "^Rossz $(printf '\xef\xbf\xbd') bájt\.$" "$out"
expect_err "invalid UTF-8 counted" "*1 invalid UTF-8 replaced*"

# -o is atomic: written on success, refused over an existing file without -f,
# nothing left behind on an error
run $SS -l hu -o "$T/o.txt" "$T/hu.txt"
expect_rc "-o" 0
ok "-o content" cmp -s "$T/o.txt" "$T/hu.want"
run $SS -l hu -o "$T/o.txt" "$T/hu.txt"
expect_rc "-o refuses to overwrite" 1
run $SS -l hu -f -o "$T/o.txt" "$T/ize.txt"
expect_rc "-o -f overwrites" 0
ok "-o -f content" [ "$(head -1 "$T/o.txt")" = "Ez az Izé." ]
run $SS -l hu -o "$T/o2.txt" "$T/hu.txt" "$T/nope.txt"
expect_rc "-o with a missing input" 1
ok "-o: no output or temp file after an error" bash -c "! ls '$T'/o2.txt* 2>/dev/null"

# real articles in every layout wiki_strip writes
$BIN/wiki_dump "$DATA/enwiki-206.xml.bz2" >"$T/en.jsonl"
$BIN/wiki_dump "$DATA/huwiki-berlin.xml.bz2" >"$T/huw.jsonl"
for src in en huw; do
  for fmt in doc json lines; do $BIN/wiki_strip -F $fmt -o "$T/$src.$fmt" "$T/$src.jsonl"; done
done
ndocs=$(grep -c '^<doc id=' "$T/en.doc")
run $SS -j1 "$T/en.doc"
expect_rc "doc input" 0
cp "$out" "$T/en.doc.out"
ok "doc input: one blank line per document" [ "$(grep -c '^$' "$T/en.doc.out")" -le "$ndocs" ]
ok "doc input: sentences" grep -qx "Anarchism is a political philosophy that advocates self-governed societies based on voluntary institutions." "$T/en.doc.out"
ok "doc input: no <doc> lines in text output" bash -c "! grep -q '^<doc ' '$T/en.doc.out'"
run $SS -j1 "$T/en.json"
ok "json input gives the same sentences as doc input" cmp -s "$out" "$T/en.doc.out"
run $SS -j1 -I doc "$T/en.doc"
ok "-I doc equals auto-detection" cmp -s "$out" "$T/en.doc.out"
run $SS -j1 "$T/en.lines"
ok "lines input: one document per article" [ "$(grep -c '^$' "$out")" -eq "$(grep -c '^$' "$T/en.doc.out")" ]
run $SS -j1 -I text "$T/en.doc"
ok "-I text reads <doc> lines as text" grep -q '^<doc id=' "$out"

run $SS -j1 -F doc "$T/en.doc"
expect_rc "--format doc" 0
cp "$out" "$T/en.doc.doc"
ok "--format doc: one <doc> per document" [ "$(grep -c '^<doc id=' "$T/en.doc.doc")" -eq "$ndocs" ]
ok "--format doc: one </doc> per document" [ "$(grep -c '^</doc>$' "$T/en.doc.doc")" -eq "$ndocs" ]
ok "--format doc: header kept" grep -qx '<doc id="12" url="https://en.wikipedia.org/wiki?curid=12" title="Anarchism">' "$T/en.doc.doc"
ok "--format doc: same sentences" cmp -s <(awk '/^<doc id=/{skip=1; next} skip{skip=0; next} /^<\/doc>$/||/^$/{next} {print}' "$T/en.doc.doc") <(grep -v '^$' "$T/en.doc.out")
run $SS -j1 "$T/en.doc.doc"
ok "splitting the split text again changes nothing" cmp -s "$out" "$T/en.doc.out"

# identical output for every -j
for src in en huw; do
  for fmt in doc lines; do
    lang=en; [ $src = huw ] && lang=hu
    run $SS -l $lang -j1 "$T/$src.$fmt"
    cp "$out" "$T/$src.$fmt.j1"
    for j in 2 8; do
      run $SS -l $lang -j$j "$T/$src.$fmt"
      ok "$src $fmt: -j$j identical to -j1" cmp -s "$out" "$T/$src.$fmt.j1"
    done
  done
done
ok "hu: Roman numeral kept in its sentence" grep -q "a II. világháborús törmelékek" "$T/huw.doc.j1"
ok "hu: ún. kept in its sentence" grep -q "az ún. Varsó-Berlin-ősfolyamvölgyben" "$T/huw.doc.j1"

# identical output whatever the input chunking
run bash -c "cat '$T/en.doc' | $SS -j2"
ok "stdin pipe identical to file" cmp -s "$out" "$T/en.doc.out"
run bash -c "dd if='$T/huw.lines' bs=1 status=none | $SS -l hu -j2"
ok "one-byte writes identical to file" cmp -s "$out" "$T/huw.lines.j1"
run bash -c "dd if='$T/en.doc' bs=4093 status=none | $SS -j3 -"
ok "4093-byte writes identical to file" cmp -s "$out" "$T/en.doc.out"
half=$(grep -n '^</doc>$' "$T/en.doc" | sed -n "$((ndocs / 2))p" | cut -d: -f1)
head -n "$half" "$T/en.doc" >"$T/part1.doc"
tail -n +"$((half + 1))" "$T/en.doc" >"$T/part2.doc"
run $SS -j2 "$T/part1.doc" "$T/part2.doc"
ok "two files identical to one" cmp -s "$out" "$T/en.doc.out"
run bash -c "cat '$T/part2.doc' | $SS -j2 '$T/part1.doc' -"
ok "file then stdin identical to one file" cmp -s "$out" "$T/en.doc.out"

done_testing
