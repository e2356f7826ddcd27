# CLI test: one line, or one document, far longer than any real one (a
# 16 MiB line without a newline, /dev/zero). Every program that reads lines
# stops at --max-line-bytes (64 MiB by default; lowered to 1 MiB here, so the
# inputs stay small) with "FILE:LINE: line longer than N (--max-line-bytes
# raises the limit)", exit 1 and no output file, and its peak memory
# (tests/unit/maxrss.c) grows by less than half the line over the same run
# on a short input: the line is never held whole. wiki_dump's limit is on XML
# markup (1 MiB by default), and --max-page-bytes on titles and <siteinfo>.
# Two runs keep the default limit on a 200 MB stream of zero bytes.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
VOCAB=$ROOT/data/bert/vocab.txt
MSG="line longer than 1 MiB (--max-line-bytes raises the limit)"
# peak memory checks do not run under AddressSanitizer (the messages, exit
# codes and outputs are checked all the same)
need_maxrss sent_split

L=$T/long.txt # 16 MiB, no newline
head -c 16777216 /dev/zero | tr '\0' 'a' >"$L"
printf 'hu\tEz egy rövid sor.\nen\tThis is a short line.\n' >"$T/short.txt"
O=$T/outputs # where -o writes
rss() { cat "$T/rss"; }
# bounded NAME ARGS...: ARGS on the long line, then on a short file; the
# first exits 1 naming the line and the option, its peak memory grows by
# less than 8 MiB over the second's (the line is 16 MiB)
bounded() {
  local name=$1
  shift
  local args=("$@") short=("${@//"$L"/$T/short.txt}")
  rm -rf "$O" && mkdir "$O"
  run "$RSS" "$T/rss" "$BIN/$name" --max-line-bytes 1M "${short[@]}"
  local base
  base=$(rss)
  rm -rf "$O" && mkdir "$O"
  run "$RSS" "$T/rss" "$BIN/$name" --max-line-bytes 1M "${args[@]}"
  expect_rc "$name on a 16 MiB line" 1
  expect_err "... names the file, the line and the option" "*$L:1: $MSG*"
  mem_ok "... peak memory $(rss) KiB, $base KiB on a short line: less than 8 MiB more" \
    [ "$(($(rss) - base))" -lt 8192 ]
  ok "... no output left" eval '[ -z "$(ls -A "$O")" ]'
}
bounded wiki_strip -o "$O/o" "$L"
bounded sent_split -j2 -o "$O/o" "$L"
bounded text_filter -j2 -o "$O/o" "$L"
bounded wp_tokenize -j2 -o "$O/o" "$L"
bounded vocab_normalize -o "$O/o" "$L"
bounded langid_train -o "$O/o" "$L"
bounded vocab_train --vocab-size 30 -o "$O/o" "$L"
bounded vocab_convert -o "$O/o" "$L"
bounded hdf5gen -j1 --vocab "$VOCAB" -o "$O/o" "$L"
bounded shard_split --train 1 --test 0 -o "$O/o" "$L"

# ---- one document of short lines, held whole by sent_split and text_filter ----
yes "This is a sentence. Here is another one." | head -c 3000000 >"$T/doc.txt"
for p in sent_split text_filter; do
  rm -rf "$O" && mkdir "$O"
  run "$RSS" "$T/rss" "$BIN/$p" --max-line-bytes 1M -o "$O/o" "$T/doc.txt"
  expect_rc "$p: a 3 MB document without a blank line" 1
  expect_err "... names its first line and the option" \
    "*$T/doc.txt:1: document (lines up to a blank line) longer than 1 MiB (--max-line-bytes raises the limit)*"
  ok "... no output left" eval '[ -z "$(ls -A "$O")" ]'
  run "$BIN/$p" --max-line-bytes 4M "$T/doc.txt"
  expect_rc "... whole with --max-line-bytes 4M" 0
done
{ printf '<doc id="1" url="u" title="t">\nt\n\n'; cat "$T/doc.txt"; } >"$T/block.txt"
run "$BIN/sent_split" --max-line-bytes 1M "$T/block.txt"
expect_rc "sent_split: a 3 MB <doc> block" 1
expect_err "... named" "*$T/block.txt:1: document (a <doc> block) longer than 1 MiB*"

# ---- whole files: vocabularies, configs, models ----
run "$BIN/wp_tokenize" --max-line-bytes 1M --vocab "$L" "$T/short.txt"
expect_rc "wp_tokenize --vocab LONG" 1
expect_err "... the vocabulary's line" "*$L:1: $MSG*"
run "$BIN/hdf5_check" --max-line-bytes 1M --vocab "$L" "$T/short.txt"
expect_err "hdf5_check --vocab LONG: the vocabulary's line" "*$L:1: $MSG*"
run "$BIN/text_filter" --max-line-bytes 1M --langid-model "$L" "$T/short.txt"
expect_err "text_filter --langid-model LONG: the model's line" "*$L:1: $MSG*"
run "$BIN/train_bert_cpu" --max-line-bytes 1M --input_dir "$T" --config_file "$L" --output_dir "$T/tr"
expect_err "train_bert_cpu --config_file LONG: the config's line" "*$L:1: $MSG*"
run "$RSS" "$T/rss" "$BIN/vocab_normalize" --model <(head -c 300000000 /dev/zero) "$T/short.txt"
ok "vocab_normalize --model /dev/zero: refused (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... as too large for a SentencePiece model" "*larger than 256 MiB, too large for a SentencePiece model*"
mem_ok "... having read no more than that ($(rss) KiB)" [ "$(rss)" -lt 300000 ]

# ---- the default limit, 64 MiB, on 200 MB of zero bytes ----
for p in sent_split vocab_convert; do
  run "$RSS" "$T/rss" "$BIN/$p" < <(head -c 200000000 /dev/zero)
  expect_rc "$p < 200 MB of zero bytes" 1
  expect_err "... stops at 64 MiB" "*-:1: line longer than 64 MiB (--max-line-bytes raises the limit)*"
  mem_ok "... peak memory $(rss) KiB: under 120 MiB" [ "$(rss)" -lt 122880 ]
done

# ---- wiki_dump: XML markup, titles, <siteinfo> ----
{ printf '<mediawiki><!-- '; cat "$L"; } >"$T/comment.xml"
run "$RSS" "$T/rss" "$BIN/wiki_dump" "$T/comment.xml"
expect_rc "wiki_dump: a comment never closed (16 MiB)" 1
expect_err "... stops at 1 MiB of markup, naming the byte and the option" \
  "*$T/comment.xml: XML byte 11: markup (a tag, comment or declaration) longer than 1 MiB (--max-line-bytes raises the limit)*"
mem_ok "... peak memory $(rss) KiB: under 16 MiB" [ "$(rss)" -lt 16384 ]
{ printf '<mediawiki><page><title>x</title><ns>0</ns><id>1</id><revision><id>2</id><text a'; cat "$L"; } >"$T/attr.xml"
run "$BIN/wiki_dump" --max-line-bytes 4M "$T/attr.xml"
expect_err "wiki_dump --max-line-bytes 4M: a tag never closed" "*XML byte 73: markup * longer than 4 MiB*"
PAGE='<ns>0</ns><id>1</id><revision><id>2</id><text>Some text.</text></revision></page>'
{ printf '<mediawiki><page><title>'; head -c 3000000 "$L"; printf '</title>%s\n' "$PAGE"
  printf '<page><title>Short</title>%s</mediawiki>\n' "$PAGE"; } >"$T/title.xml"
run "$BIN/wiki_dump" --max-page-bytes 1M "$T/title.xml"
expect_rc "wiki_dump: a 3 MB title, --max-page-bytes 1M" 0
expect_err "... that page skipped, warned" "*$T/title.xml:1: page 'aaa*' skipped: title longer than 1048576 bytes*"
ok "... the other page kept" eval '[ "$(grep -c "\"title\"" "$out")" = 1 ] && grep -q "\"Short\"" "$out"'
{ printf '<mediawiki><siteinfo><sitename>'; head -c 3000000 "$L"; printf '</sitename></siteinfo></mediawiki>\n'; } >"$T/site.xml"
run "$BIN/wiki_dump" --max-page-bytes 1M "$T/site.xml"
expect_rc "wiki_dump: a 3 MB <sitename>" 1
expect_err "... refused, naming the option" "*a <siteinfo> field longer than 1048576 bytes (--max-page-bytes raises the limit)*"
done_testing
