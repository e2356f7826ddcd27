# CLI tests for vocab_normalize: options and exit codes, stdin vs files, -o,
# hand-checked lines; with the sentencepiece package, real text through our
# table and through SentencePiece's nmt_nfkc, and --model with models that
# spm_train wrote (default switches, no dummy prefix, identity rule).
. "$TESTS/cli/lib.sh"
SN=$BIN/vocab_normalize
B=$'\xe2\x96\x81'

run $SN --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: vocab_normalize" "$out"
ok "help documents --model" grep -q -- "--model FILE" "$out"
run $SN -V
expect_rc "version" 0
ok "version names ICU" grep -q "^vocab_normalize [0-9.]* (icu [0-9.]*, unicode [0-9.]*)" "$out"
run $SN --bogus
expect_rc "bad option" 2
expect_err "bad option message" "*unknown option '--bogus'*Try*"
run $SN "$T/nope.txt"
expect_rc "missing input" 1
expect_err "missing input message" "vocab_normalize: */nope.txt: No such file or directory*"
run $SN --model "$T/nope.model" /dev/null
expect_rc "missing model" 1
printf 'not a model' >"$T/bad.model"
run $SN --model "$T/bad.model" /dev/null
expect_rc "malformed model" 1
expect_err "malformed model message" "vocab_normalize: */bad.model: not a SentencePiece model*"

# fullwidth letters, ligature, Roman numeral, circled digit, ideographic
# space, ZWSP, TAB, a control, e + combining acute, an invalid byte, a
# whitespace-only line, an empty line, a last line without LF
printf '\xef\xbc\xa1\xef\xbc\xa2 \xef\xac\x81 \xe2\x85\xab\xe2\x91\xa0\n  x\xe3\x80\x80y\xe2\x80\x8bz\tw\x01v  \nPe\xcc\x81cs \xff!\n \t \n\nend' >"$T/in.txt"
printf '%sAB%sfi%sXII1\n%sx%sy%sz%swv\n%sP\xc3\xa9cs%s\xef\xbf\xbd!\n\n\n%send\n' \
  "$B" "$B" "$B" "$B" "$B" "$B" "$B" "$B" "$B" "$B" >"$T/want.txt"
run $SN "$T/in.txt"
expect_rc "normalize" 0
ok "normalize: hand-checked lines" cmp -s "$out" "$T/want.txt"
ok "normalize: quiet" [ ! -s "$err" ]
run bash -c "$SN <'$T/in.txt'"
ok "stdin same as file" cmp -s "$out" "$T/want.txt"
run bash -c "$SN - '$T/in.txt' </dev/null"
ok "- (empty stdin) then a file" cmp -s "$out" "$T/want.txt"
run $SN "$T/in.txt" "$T/in.txt"
ok "two files: one after the other" cmp -s "$out" <(cat "$T/want.txt" "$T/want.txt")
run $SN -o "$T/o.txt" "$T/in.txt"
ok "-o writes the file" cmp -s "$T/o.txt" "$T/want.txt"
run $SN -o "$T/o.txt" "$T/in.txt"
expect_rc "-o refuses an existing file" 1
run $SN -f -o "$T/o.txt" /dev/null
ok "-f overwrites" [ "$rc" -eq 0 ] && [ ! -s "$T/o.txt" ]
run $SN -v </dev/null
ok "empty input: empty output" [ ! -s "$out" ]
expect_err "-v: counts" "*0 lines, 0 bytes in, 0 bytes out*"
printf ' \xef\xbc\xa1  b \n' >"$T/sp.txt"
run $SN -n "$T/sp.txt"
ok "--map-only: spaces kept, no prefix" cmp -s "$out" <(printf ' A  b \n')

# a full disk: exit 1, a message, no output file
run bash -c "$SN '$T/in.txt' >/dev/full"
expect_rc "stdout on a full disk" 1
expect_err "full disk message" "*No space left on device*"
if [ -f "${INJECT:-}" ]; then
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
  for call in fwrite fclose; do
    run env WB_INJECT=$call LD_PRELOAD="$INJECT" $SN -o "$T/FAILME.txt" "$T/in.txt"
    expect_rc "-o: $call fails" 1
    ok "-o: $call leaves no output" bash -c "! ls '$T'/FAILME.txt* 2>/dev/null"
  done
fi

# SentencePieceNormalizer exists from sentencepiece 0.2.0 on (Debian 12 has 0.1.97)
PY=$(py_with "sentencepiece; sentencepiece.SentencePieceNormalizer")
if [ -z "$PY" ]; then
  echo "not run: the comparisons with SentencePiece (no Python with sentencepiece >= 0.2)"
else
  D=${WIKIBERT_SHARED:-$TESTS/../../shared}/data
  if [ -d "$D/langid" ]; then
    { cat "$D/bert/sample_text.txt"
      for f in "$D"/langid/tatoeba-manythings/{hun,ell,bul,vie}.txt; do head -n 3000 "$f"; done
      "$BIN/wiki_dump" "$D/wiki-hu/wiki.xml.bz2" | "$BIN/wiki_strip" -F lines | "$BIN/sent_split" -j1 -l hu
    } >"$T/text.txt"
  else
    "$BIN/wiki_dump" "$DATA/huwiki-berlin.xml.bz2" | "$BIN/wiki_strip" -F lines | "$BIN/sent_split" -j1 -l hu >"$T/text.txt"
  fi
  cat "$T/in.txt" >>"$T/text.txt"
  # SentencePiece's normalizer, line by line (bytes, so invalid UTF-8 too)
  cat >"$T/norm.py" <<'EOF'
import sentencepiece as s, sys
kw = {'model_file': sys.argv[1]} if len(sys.argv) > 1 else {'rule_name': 'nmt_nfkc'}
n = s.SentencePieceNormalizer(**kw)
lines = sys.stdin.buffer.read().split(b'\n')
if lines and lines[-1] == b'': lines.pop()
sys.stdout.buffer.write(b''.join(x + b'\n' for x in n.normalize(lines)))
EOF
  run $SN "$T/text.txt"
  "$PY" "$T/norm.py" <"$T/text.txt" >"$T/ref.txt"
  ok "real text ($(wc -l <"$T/text.txt") lines): as SentencePiece's nmt_nfkc" eval '[ -s "$out" ] && cmp -s "$out" "$T/ref.txt"'
  n=0
  for opts in "" "--add_dummy_prefix=false --remove_extra_whitespaces=false" "--normalization_rule_name=identity"; do
    n=$((n + 1))
    (cd "$T" && "$PY" -c "import sentencepiece as s; s.SentencePieceTrainer.Train('--input=text.txt --model_prefix=m$n --vocab_size=800 --character_coverage=0.995 --model_type=bpe --minloglevel=2${opts:+ $opts}')" 2>/dev/null)
    ok "spm_train ${opts:-with defaults} wrote a model" [ -s "$T/m$n.model" ]
    "$PY" "$T/norm.py" "$T/m$n.model" <"$T/text.txt" >"$T/ref$n.txt"
    run $SN --model "$T/m$n.model" "$T/text.txt"
    ok "--model (spm_train ${opts:-defaults}): as SentencePiece" eval '[ "$rc" -eq 0 ] && [ -s "$out" ] && cmp -s "$out" "$T/ref$n.txt"'
  done
  ok "the three models normalize differently" eval '! cmp -s "$T/ref1.txt" "$T/ref2.txt" && ! cmp -s "$T/ref1.txt" "$T/ref3.txt" && ! cmp -s "$T/ref2.txt" "$T/ref3.txt"'
fi
done_testing
