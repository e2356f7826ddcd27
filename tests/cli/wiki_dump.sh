# CLI tests for wiki_dump: formats, -j determinism, bad input, atomic -o.
. "$TESTS/cli/lib.sh"
WD=$BIN/wiki_dump

run $WD --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: wiki_dump" "$out"

run $WD --bogus
expect_rc "bad flag" 2
expect_err "bad flag hint" "*Try 'wiki_dump --help'*"

run $WD "$T/nope.xml.bz2"
expect_rc "missing file" 1
expect_err "missing file message" "wiki_dump: */nope.xml.bz2: No such file or directory*"

# --- the 206-page English sample ---
run $WD -j1 "$DATA/enwiki-206.xml.bz2"
expect_rc "enwiki j1" 0
cp "$out" "$T/j1"
ok "siteinfo line first" grep -q '^{"siteinfo":{"sitename":"Wikipedia","dbname":"enwiki"' <(head -1 "$T/j1")
ok "namespaces in siteinfo" grep -q '{"key":6,"name":"File","canonical":"File","case":"first-letter"}' <(head -1 "$T/j1")
npages=$(($(wc -l <"$T/j1") - 1))
ok "pages kept ($npages)" [ "$npages" -gt 100 ]
ok "first page record" grep -q '^{"id":12,"revid":[0-9]*,"title":"Anarchism","ns":0,"url":"https://en.wikipedia.org/wiki?curid=12","text":"' <(sed -n 2p "$T/j1")
ok "no redirects by default" bash -c "! grep -q '\"redirect\":' '$T/j1'"
ok "only namespace 0" bash -c "! grep -q '\"ns\":[1-9]' '$T/j1'"
for j in 2 3 8; do
  run $WD -j$j "$DATA/enwiki-206.xml.bz2"
  ok "enwiki -j$j identical to -j1" cmp -s "$out" "$T/j1"
done
run bash -c "$WD -j2 < '$DATA/enwiki-206.xml.bz2'"
ok "bz2 on stdin identical" cmp -s "$out" "$T/j1"
bzip2 -dc "$DATA/enwiki-206.xml.bz2" >"$T/en.xml"
run $WD "$T/en.xml"
ok "plain XML identical" cmp -s "$out" "$T/j1"
run bash -c "cat '$T/en.xml' | $WD -"
ok "plain XML on stdin identical" cmp -s "$out" "$T/j1"

run $WD --keep-redirects --ns all "$DATA/enwiki-206.xml.bz2"
ok "--ns all --keep-redirects keeps more" [ "$(wc -l <"$out")" -gt "$(wc -l <"$T/j1")" ]
run $WD --keep-redirects "$DATA/enwiki-3.xml.bz2"
ok "redirect field" grep -q '"title":"AccessibleComputing","ns":0,"url":"[^"]*","redirect":"Computer accessibility","text":"#REDIRECT' "$out"
run $WD --ns File,14 "$DATA/enwiki-206.xml.bz2"
expect_rc "--ns by name" 0
run $WD --ns Nonexistent "$DATA/enwiki-206.xml.bz2"
expect_rc "--ns unknown name" 2
run $WD -v "$DATA/enwiki-206.xml.bz2"
expect_err "summary with -v" "*wiki_dump: 206 pages read, * kept; skipped: * redirect, * namespace, 0 too-large*"

# progress on a terminal only (script(1) gives the program a pty; the pause
# in the input makes the meter's throttle let a line through)
if command -v script >/dev/null; then
  bzip2 -dc "$DATA/enwiki-206.xml.bz2" >"$T/p.xml"
  script -qec "{ head -c 2000000 '$T/p.xml'; sleep 0.5; tail -c +2000001 '$T/p.xml'; } | $WD - > '$T/tty.out'" "$T/typescript" >/dev/null 2>&1 || true
  ok "progress line on a terminal" grep -qa 'wiki_dump: [0-9]* pages, [0-9.]* MB, [0-9.]* MB/s' "$T/typescript"
  ok "output under a terminal is complete" [ "$(wc -l <"$T/tty.out")" -gt 100 ]
fi
run $WD "$DATA/enwiki-206.xml.bz2"
ok "no progress when stderr is not a terminal" [ ! -s "$err" ]

# --- multistream: same pages as the single-stream file ---
run $WD "$DATA/elwikivoyage-17.xml.bz2"
cp "$out" "$T/el"
ok "elwikivoyage pages" [ "$(wc -l <"$T/el")" -gt 5 ]
for j in 1 2 4; do
  run $WD -j$j "$DATA/elwikivoyage-17.multistream.xml.bz2"
  ok "multistream -j$j equals single stream" cmp -s "$out" "$T/el"
  run $WD -j$j --index "$DATA/elwikivoyage-17.multistream-index.txt.bz2" "$DATA/elwikivoyage-17.multistream.xml.bz2"
  ok "multistream with index -j$j equals single stream" cmp -s "$out" "$T/el"
done
run $WD "$DATA/elwikivoyage-17.multistream-noheader.xml.bz2"
expect_rc "headerless stream accepted" 0
ok "headerless stream pages" [ "$(wc -l <"$out")" -eq "$(($(wc -l <"$T/el") - 1))" ]
run $WD "$DATA/elwikivoyage-17.multistream-nofooter.xml.bz2"
expect_rc "missing footer" 1
expect_err "missing footer message" "*dump ends without </mediawiki> (truncated?)*"
ok "missing footer keeps pages" [ "$(wc -l <"$out")" -eq "$(wc -l <"$T/el")" ]

# --- bad input ---
size=$(stat -c %s "$DATA/enwiki-206.xml.bz2")
head -c $((size / 2)) "$DATA/enwiki-206.xml.bz2" >"$T/trunc.bz2"
run $WD -j2 "$T/trunc.bz2"
expect_rc "truncated bz2" 1
expect_err "truncated bz2 message" "*trunc.bz2: byte *unexpected end of bz2 data*"
ok "truncated bz2 keeps complete pages" [ "$(wc -l <"$out")" -gt 20 ]
ok "truncated bz2 output lines are complete" bash -c "tail -c 2 '$out' | grep -q '}'"

cp "$DATA/enwiki-206.xml.bz2" "$T/corrupt.bz2"
printf '\x55\xaa\x55\xaa' | dd of="$T/corrupt.bz2" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
run $WD -j2 "$T/corrupt.bz2"
expect_rc "corrupt bz2 block" 1
expect_err "corrupt bz2 message names byte offset" "*corrupt.bz2: byte [0-9]*"
ok "corrupt bz2 keeps earlier pages" [ "$(wc -l <"$out")" -gt 10 ]

printf '<mediawiki>\n<siteinfo><base>https://x.org/wiki/M</base></siteinfo>\n<page><title>A</title><ns>0</ns><id>1</id><revision><id>2</id><text>ok</text></revision></page>\n<page><title>B</title></oops>\n' >"$T/bad.xml"
run $WD "$T/bad.xml"
expect_rc "malformed XML" 1
expect_err "malformed XML position" "*bad.xml: line 4, column 25 (XML byte *): malformed XML: mismatched tag*"
ok "malformed XML keeps the page before" grep -q '"title":"A"' "$out"

printf '<?xml version="1.0"?>\n<html><body>hi</body></html>\n' >"$T/notwiki.xml"
run $WD "$T/notwiki.xml"
expect_rc "not a MediaWiki dump" 1
expect_err "not a MediaWiki dump message" "*notwiki.xml: line 2: not a MediaWiki XML dump (root element <html>*"

run $WD "$DATA/bgwiki-utf16.xml.bz2"
expect_rc "UTF-16 dump" 1
expect_err "UTF-16 message" "wiki_dump: $DATA/bgwiki-utf16.xml.bz2: UTF-16 text (convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"

printf '<mediawiki><page><title>Bad \xff byte</title><ns>0</ns><id>5</id><revision><id>6</id><text>a\xc3(b\xe2\x82</text></revision></page></mediawiki>\n' >"$T/badutf8.xml"
run $WD "$T/badutf8.xml"
expect_rc "invalid UTF-8 is not fatal" 0
expect_err "invalid UTF-8 counted" "*3 invalid UTF-8 sequences replaced by U+FFFD*"
ok "invalid UTF-8 replaced" grep -q '"title":"Bad � byte".*"text":"a�(b�"' "$out"
run $WD --strict "$T/badutf8.xml"
expect_rc "invalid UTF-8 with --strict" 1

# a page <id> beyond int64 (or not a number) is skipped with a warning that
# names the line, counted in the summary; --strict makes it an error
bzcat "$DATA/enwiki-3.xml.bz2" | sed '45s|<id>10</id>|<id>99999999999999999999</id>|' >"$T/bigid.xml"
$WD "$DATA/enwiki-3.xml.bz2" >"$T/3.jsonl"
run $WD -v "$T/bigid.xml"
expect_rc "out-of-range <id>" 0
expect_err "out-of-range <id> warned with its line" \
  "wiki_dump: $T/bigid.xml:45: page 'AccessibleComputing' skipped: <id> '99999999999999999999' is not a whole number in range*"
expect_err "out-of-range <id> counted" "*skipped: * too-large, 1 bad-number;*"
ok "out-of-range <id>: the other pages written" cmp -s "$out" <(grep -v '"title":"AccessibleComputing"' "$T/3.jsonl")
ok "out-of-range <id>: no id 0" bash -c "! grep -q '\"id\":0,' '$out'"
run $WD --strict "$T/bigid.xml"
expect_rc "out-of-range <id> with --strict" 1
expect_err "out-of-range <id> with --strict: the line, then the count" \
  "*bigid.xml:45: page*skipped*wiki_dump: $T/bigid.xml: --strict: 0 pages too large, 1 with a bad <id> or <ns>*"
bzcat "$DATA/enwiki-3.xml.bz2" | sed '66s|<ns>0</ns>|<ns>0x</ns>|' >"$T/badns.xml"
run $WD "$T/badns.xml"
expect_rc "bad <ns>" 0
expect_err "bad <ns> warned" "*badns.xml:66: page 'Computer accessibility' skipped: <ns> '0x' is not*"

: >"$T/empty.xml"
run $WD "$T/empty.xml"
expect_rc "empty input" 1
expect_err "empty input message" "*empty.xml: empty input*"
run bash -c "$WD < /dev/null"
expect_rc "empty stdin" 1

{ printf '<mediawiki><page><title>Huge</title><ns>0</ns><id>1</id><revision><id>1</id><text>'
  head -c 100000000 /dev/zero | tr '\0' 'a'
  printf '</text></revision></page><page><title>Small</title><ns>0</ns><id>2</id><revision><id>3</id><text>x</text></revision></page></mediawiki>\n'; } >"$T/huge.xml"
run $WD "$T/huge.xml"
expect_rc "100 MB page skipped" 0
expect_err "100 MB page warning" "*huge.xml:1: page 'Huge' skipped: text longer than 33554432 bytes*"
ok "100 MB page: next page kept" grep -q '"title":"Small"' "$out"
run $WD --max-page-bytes 128M -o "$T/huge.jsonl" "$T/huge.xml"
expect_rc "100 MB page kept with a higher limit" 0
ok "100 MB page written" [ "$(stat -c %s "$T/huge.jsonl")" -gt 100000000 ]
rm -f "$T/huge.xml" "$T/huge.jsonl"

# --- atomic -o ---
run $WD -o "$T/o.jsonl" "$DATA/enwiki-3.xml.bz2"
expect_rc "-o" 0
ok "-o wrote the file" [ -s "$T/o.jsonl" ]
ok "-o left no temp file" bash -c "! ls '$T'/o.jsonl.tmp.* 2>/dev/null"
run $WD -o "$T/o.jsonl" "$DATA/enwiki-3.xml.bz2"
expect_rc "-o refuses to overwrite" 1
expect_err "-o overwrite message" "*o.jsonl: already exists (use -f to overwrite)*"
run $WD -f -o "$T/o.jsonl" "$DATA/enwiki-3.xml.bz2"
expect_rc "-f overwrites" 0
run $WD -o "$T/t.jsonl" "$T/trunc.bz2"
expect_rc "-o on a failing input" 1
ok "-o failure leaves no complete-looking file" [ ! -e "$T/t.jsonl" ]
ok "-o failure keeps completed pages as .partial" [ -s "$T/t.jsonl.partial" ]
ok "-o failure leaves no temp file" bash -c "! ls '$T'/t.jsonl.tmp.* 2>/dev/null"

# the fast decoder and libbz2 alone give the same pages, single and multistream
for f in enwiki-206.xml.bz2 elwikivoyage-17.multistream.xml.bz2; do
  $WD -j2 --no-siteinfo "$DATA/$f" >"$T/fast.jsonl"
  WIKIBERT_BZ2=libbz2 $WD -j2 --no-siteinfo "$DATA/$f" >"$T/lib.jsonl"
  ok "$f: fast decoder = libbz2" cmp -s "$T/fast.jsonl" "$T/lib.jsonl"
  ok "$f: output not empty" [ -s "$T/fast.jsonl" ]
done

done_testing
