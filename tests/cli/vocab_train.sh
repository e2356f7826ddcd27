# CLI tests for vocab_train: usage and exit codes, the outputs and their
# atomic writing, determinism across -j, stdin vs files, spm_train's option
# spellings, --wordpiece against vocab_convert, I/O errors; and, when a
# Python with sentencepiece is found, the .vocab and .model against
# spm_train's on real text (Wikipedia samples through our prep stage), and
# SentencePiece encoding held-out text with our model.
. "$TESTS/cli/lib.sh"
VT=$BIN/vocab_train
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

run $VT --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: vocab_train" "$out"
ok "help lists spm_train's spellings" grep -q -- "--model_prefix=PREFIX" "$out"
run $VT -V
expect_rc "version" 0
ok "version line" grep -q "^vocab_train [0-9.]* icu=" "$out"
run $VT --bogus
expect_rc "bad option" 2
expect_err "bad option message" "*unknown option '--bogus'*Try*"
run $VT --identity x
expect_rc "unknown option" 2
run $VT --vocab-size x -o "$T/m"
expect_rc "bad --vocab-size" 2
expect_err "bad --vocab-size message" "*--vocab-size: expected a whole number*'x'*"
run $VT --character-coverage 1.5 -o "$T/m"
expect_rc "bad --character-coverage" 2
run $VT --shuffle_input_sentence=maybe -o "$T/m"
expect_rc "bad --shuffle_input_sentence" 2
run $VT --model foo -o "$T/m"
expect_rc "bad --model" 2
run $VT --model_type=unigram -o "$T/m"
expect_rc "--model_type=unigram refused" 2
run $VT --model wordpiece "$T/nope.txt"
expect_rc "wordpiece: -o missing" 2
expect_err "wordpiece: -o missing message" "*-o PREFIX is required (vocab.txt goes to PREFIX.txt*"
run $VT --model wordpiece --character-coverage 0.9 -o "$T/m"
expect_rc "wordpiece: a bpe-only option" 2
expect_err "wordpiece: a bpe-only option message" "*--character-coverage: only with --model bpe*"
run $VT --cased -o "$T/m"
expect_rc "bpe: a wordpiece-only option" 2
expect_err "bpe: a wordpiece-only option message" "*--cased: only with --model wordpiece*"
run $VT --model wordpiece -o "$T/m" "$T/nope.txt"
expect_rc "wordpiece: missing input" 2
ok "wordpiece: missing input leaves nothing" bash -c "! ls '$T'/m.* 2>/dev/null"
run $VT --normalization identity "$T/nope.txt"
expect_rc "-o missing" 2
expect_err "-o missing message" "*-o PREFIX is required*"
run $VT --normalization identity -o "$T/m" "$T/nope.txt"
expect_rc "missing input" 2
expect_err "missing input message" "vocab_train: */nope.txt: No such file or directory*"
ok "missing input: no output" bash -c "! ls '$T'/m.* 2>/dev/null"
run $VT --normalization identity -o "$T/m" "$T"
expect_rc "directory as input" 2
run $VT --normalizer-model "$T/nope.model" -o "$T/m" /dev/null
expect_rc "missing --normalizer-model" 2
printf 'not a model' >"$T/bad.model"
run $VT --normalizer-model "$T/bad.model" -o "$T/m" /dev/null
expect_rc "bad --normalizer-model" 2

# a small corpus from our own samples
$BIN/wiki_dump "$DATA/enwiki-206.xml.bz2" | $BIN/wiki_strip -F lines | $BIN/sent_split -j1 -l en >"$T/en.txt"
$BIN/wiki_dump "$DATA/huwiki-berlin.xml.bz2" | $BIN/wiki_strip -F lines | $BIN/sent_split -j1 -l hu >"$T/hu.txt"
cat "$T/en.txt" "$T/hu.txt" >"$T/c.txt"
ok "corpus" [ "$(wc -l <"$T/c.txt")" -gt 1000 ]
ID="--normalization identity"

run $VT $ID -o "$T/m" --vocab-size 1000 "$T/c.txt"
expect_rc "train" 0
ok "PREFIX.model written" [ -s "$T/m.model" ]
ok "PREFIX.vocab: 1000 lines" [ "$(wc -l <"$T/m.vocab")" -eq 1000 ]
ok ".vocab starts with the meta pieces" cmp -s <(head -3 "$T/m.vocab") <(printf '<unk>\t0\n<s>\t0\n</s>\t0\n')
ok ".vocab scores count down from -0" bash -c "sed -n '4p;1000p' '$T/m.vocab' | cut -f2 | tr '\n' ' ' | grep -qx -- '-0 -996 '"
ok ".vocab: no repeated piece" [ "$(cut -f1 "$T/m.vocab" | sort | uniq -d | wc -l)" -eq 0 ]
ok ".vocab: U+2581 only at the start of a piece" bash -c "! cut -f1 '$T/m.vocab' | grep -q '.▁'"
ok "no temp files left" bash -c "! ls '$T'/m.*tmp* 2>/dev/null"
expect_err "summary line" "vocab_train: * sentences, * words, 0 lines skipped, alphabet *, 1000 pieces, * s*"
run $VT -q $ID -o "$T/m" --vocab-size 1000 "$T/c.txt"
expect_rc "existing output without -f" 1
expect_err "existing output message" "*m.model: already exists (use -f to overwrite)*"
cp "$T/m.model" "$T/keep.model"
run $VT -q -f $ID -o "$T/m" --vocab-size 1000 "$T/c.txt"
expect_rc "-f overwrites" 0
ok "-q: silent" [ ! -s "$err" ]
ok "same input, same model" cmp -s "$T/m.model" "$T/keep.model"
run $VT $ID -o "$T/v" -v --vocab-size 1000 "$T/c.txt"
expect_err "-v: detail lines" "*read * lines: * sentences*seconds: reading*"
run $VT -q -o "$T/nfkc" --vocab-size 1000 "$T/c.txt"
expect_rc "default normalization (built-in nmt_nfkc)" 0
ok "the .model names nmt_nfkc and carries a table" bash -c "grep -aq nmt_nfkc '$T/nfkc.model' && [ \$(stat -c %s '$T/nfkc.model') -gt 100000 ]"
ok "nmt_nfkc: ﬁ (U+FB01) is normalized to fi, so no piece holds it" bash -c "! grep -q \$'\\xef\\xac\\x81' '$T/nfkc.vocab'"

# determinism: threads, stdin, spm_train's spellings
mkdir -p "$T/a" "$T/b"
run bash -c "cd '$T/a' && $VT -q $ID -j1 -o m --vocab-size 1500 ../c.txt"
run bash -c "cd '$T/b' && $VT -q $ID -j2 -o m --vocab-size 1500 ../c.txt"
ok "-j1 and -j2: the same .model" cmp -s "$T/a/m.model" "$T/b/m.model"
ok "-j1 and -j2: the same .vocab" cmp -s "$T/a/m.vocab" "$T/b/m.vocab"
cp "$T/a/m.vocab" "$T/j1.vocab"
run bash -c "$VT -q $ID -o '$T/in' --vocab-size 1500 < '$T/c.txt'"
ok "stdin gives the same pieces" cmp -s "$T/in.vocab" "$T/j1.vocab"
run $VT -q $ID -o "$T/two" --vocab-size 1500 "$T/en.txt" - <"$T/hu.txt"
ok "FILE - reads both" cmp -s "$T/two.vocab" "$T/j1.vocab"
run $VT -q --input="$T/en.txt,$T/hu.txt" --model_prefix="$T/spm" --vocab_size=1500 --character_coverage=0.9995 \
  --model_type=bpe --normalization_rule_name=identity --num_threads=2
expect_rc "spm_train's spellings" 0
ok "spm_train's spellings: the same pieces" cmp -s "$T/spm.vocab" "$T/j1.vocab"

# sampling: the first N, or a seeded random N, from a file or a pipe
run $VT -q $ID -o "$T/first" --vocab-size 500 --input-sentence-size 2000 --no-shuffle "$T/c.txt"
run $VT -q $ID -o "$T/s1" --vocab-size 500 --input-sentence-size 2000 "$T/c.txt"
expect_rc "sample" 0
run bash -c "cat '$T/c.txt' | $VT -q $ID -o '$T/s2' --vocab-size 500 --input-sentence-size 2000"
ok "a sample from a pipe equals the one from the file" cmp -s "$T/s1.vocab" "$T/s2.vocab"
run $VT -q $ID -o "$T/s3" --vocab-size 500 --input-sentence-size 2000 --seed 7 "$T/c.txt"
ok "another seed, another sample" bash -c "! cmp -s '$T/s1.vocab' '$T/s3.vocab'"
ok "a sample differs from the first N" bash -c "! cmp -s '$T/s1.vocab' '$T/first.vocab'"
# N above the line count: every line, as without a sample (a file's two
# passes, the first drawing and the second counting, and a pipe's)
run $VT -q $ID -j1 -o "$T/big" --vocab-size 1500 --input-sentence-size 100000000 "$T/c.txt"
ok "a sample larger than the file: the same pieces as all of it" cmp -s "$T/big.vocab" "$T/j1.vocab"
run bash -c "$VT -q $ID -o '$T/bigp' --vocab-size 1500 --input-sentence-size 100000000 < '$T/c.txt'"
ok "... and from a pipe" cmp -s "$T/bigp.vocab" "$T/j1.vocab"

# the sample is the one spm_train draws (std::mt19937 as in releases up to
# 0.2.1; Debian ships 0.1.97). On text without doubled characters, where
# 0.1.97's older pair counting cannot differ, the models must be identical.
SPMV=$(spm_train --version 2>/dev/null | awk '{print $2}')
case "$SPMV" in
0.1.9[0-9] | 0.2.0 | 0.2.1)
  awk '{ o = ""; p = ""; n = split($0, c, ""); for (i = 1; i <= n; i++) if (c[i] != p) { o = o c[i]; p = c[i] }; print o }' \
    "$T/c.txt" >"$T/nodup.txt"
  (cd "$T" && spm_train --input=nodup.txt --model_prefix=deb --vocab_size=800 --model_type=bpe \
    --input_sentence_size=2000 --shuffle_input_sentence=true --normalization_rule_name=identity --minloglevel=2 >/dev/null 2>&1)
  run $VT -q $ID -o "$T/samp" --vocab-size 800 --input-sentence-size 2000 "$T/nodup.txt"
  ok "the same sample as spm_train $SPMV" cmp -s "$T/samp.vocab" "$T/deb.vocab"
  ;;
*) echo "not run: the sample against spm_train (no spm_train 0.1.9x-0.2.1 here)" ;;
esac

# errors that depend on the text
: >"$T/empty.txt"
run $VT $ID -o "$T/e" "$T/empty.txt"
expect_rc "empty corpus" 1
expect_err "empty corpus message" "*no text to train on (0 lines read*"
ok "empty corpus: no output" bash -c "! ls '$T'/e.* 2>/dev/null"
run $VT $ID -o "$T/e" --vocab-size 20 "$T/c.txt"
expect_rc "vocabulary too small" 1
expect_err "vocabulary too small message" "*vocabulary size 20 is too small*it must be at least *"
printf 'hello world\nhello there\n' >"$T/tiny.txt"
run $VT $ID -o "$T/e" --vocab-size 100 "$T/tiny.txt"
expect_rc "vocabulary too large" 1
expect_err "vocabulary too large message" "*vocabulary size 100 is too high for this text: it gives at most 42 pieces*"
ok "failed training: no output" bash -c "! ls '$T'/e.* 2>/dev/null"
run $VT $ID -q -o "$T/soft" --vocab-size 100 --hard-vocab-limit false "$T/tiny.txt"
expect_rc "--hard-vocab-limit false: the pieces the text gives" 0
expect_err "... said in one line, even with -q" "*the text gives 42 pieces, fewer than --vocab-size 100: a vocabulary of 42 (--hard-vocab-limit false)*"
ok "... a model of 42 pieces" eval '[ "$(wc -l <"$T/soft.vocab")" = 42 ]'
mkdir -p "$T/soft2" "$T/hard2" # the same prefix and input names: the model records them
(cd "$T/soft2" && run $VT $ID -q -o m --vocab-size 30 --hard-vocab-limit false ../tiny.txt)
(cd "$T/hard2" && run $VT $ID -q -o m --vocab-size 30 ../tiny.txt)
ok "... a text that gives enough: the bytes of the hard limit, nothing said" \
  eval '[ ! -s "$err" ] && cmp -s "$T/soft2/m.model" "$T/hard2/m.model" && cmp -s "$T/soft2/m.vocab" "$T/hard2/m.vocab"'

# --wordpiece: vocab_convert's output on PREFIX.vocab
run $VT -q $ID -o "$T/w" --vocab-size 1500 --wordpiece "$T/w.txt" "$T/c.txt"
expect_rc "--wordpiece" 0
ok "--wordpiece equals vocab_convert" cmp -s "$T/w.txt" <($BIN/vocab_convert "$T/w.vocab" 2>/dev/null)
run $VT -q $ID -f -o "$T/w" --vocab-size 1500 --wordpiece "$T/w.txt" --wordpiece-size 1500 "$T/c.txt"
ok "--wordpiece-size equals vocab_convert --size" cmp -s "$T/w.txt" <($BIN/vocab_convert --size 1500 "$T/w.vocab" 2>/dev/null)
ok "--wordpiece-size: 1500 lines" [ "$(wc -l <"$T/w.txt")" -eq 1500 ]
run $VT $ID -o "$T/w2" --wordpiece-size 10 "$T/c.txt"
expect_rc "--wordpiece-size without --wordpiece" 2

# a full disk: exit 1, a message, no output
if [ -f "${INJECT:-}" ]; then
  for call in fwrite fclose; do
    run env WB_INJECT=$call LD_PRELOAD="$INJECT" $VT -q $ID -o "$T/FAILME" --vocab-size 500 "$T/c.txt"
    expect_rc "$call fails" 1
    expect_err "$call message" "*No space left on device*"
    ok "$call: no output" bash -c "! ls '$T'/FAILME* 2>/dev/null"
  done
fi

# against SentencePiece itself: a release from 0.1.99 on must give the same
# .vocab and .model; an older one (Debian's python3-sentencepiece is 0.1.97)
# counts pairs that overlap themselves ("00" in "000") once per run, so
# there only >= 99 % identical pieces are required, and the first place
# where the piece orders part must hold such a repeat (vocab/NOTES-bpe.md).
PY= SPV= OLDPY= OLDV=
for p in ${WIKIBERT_PYTHON:-} python3 /usr/bin/python3 "${BENCH_TMP:-/tmp/wikibert-bench}/venv3/bin/python"; do
  v=$("$p" -c 'import sentencepiece as s; print(s.__version__)' 2>/dev/null) || continue
  if [ "$(printf '%s\n0.1.99\n' "$v" | sort -V | head -1)" = 0.1.99 ]; then PY=$p SPV=$v; break; fi
  [ -n "$OLDPY" ] || OLDPY=$p OLDV=$v
done
EXACT=1
if [ -z "$PY" ] && [ -n "$OLDPY" ]; then PY=$OLDPY SPV=$OLDV EXACT=0; fi
SHARED=${WIKIBERT_SHARED:-$TESTS/../../shared}
if [ -z "$PY" ]; then
  echo "not run: comparison with spm_train (no Python with the sentencepiece package)"
else
  echo "comparing with sentencepiece $SPV ($PY)"
  if [ -f "$SHARED/data/wiki-en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2" ]; then
    $BIN/wiki_dump "$SHARED/data/wiki-en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2" |
      $BIN/wiki_strip -F lines | $BIN/sent_split -l en >"$T/real.txt"
    $BIN/wiki_dump "$SHARED/data/wiki-hu/wiki.xml.bz2" | $BIN/wiki_strip -F lines | $BIN/sent_split -l hu >>"$T/real.txt"
  else
    echo "note: $SHARED/data absent, comparing on tests/data only"
    cp "$T/c.txt" "$T/real.txt"
  fi
  mkdir -p "$T/ref" "$T/ours" "$T/builtin"
  # every 20th line is held out for encoding
  awk 'NR % 20 == 0' "$T/real.txt" >"$T/held.txt"
  awk 'NR % 20 != 0' "$T/real.txt" >"$T/ref/train.txt"
  cp "$T/ref/train.txt" "$T/ours/train.txt"
  cp "$T/ref/train.txt" "$T/builtin/train.txt"
  for v in 2000 8000; do
    opts="--input=train.txt --model_prefix=m$v --vocab_size=$v --character_coverage=0.9999 --model_type=bpe"
    (cd "$T/ref" && "$PY" -c "import sentencepiece as s; s.SentencePieceTrainer.Train('$opts --minloglevel=2')" 2>/dev/null)
    ok "spm_train $v" [ -s "$T/ref/m$v.vocab" ]
    run bash -c "cd '$T/ours' && $VT -q $opts --normalizer-model ../ref/m$v.model"
    expect_rc "vocab_train $v" 0
    same=$(comm -12 <(cut -f1 "$T/ours/m$v.vocab" | sort) <(cut -f1 "$T/ref/m$v.vocab" | sort) | wc -l)
    if [ "$EXACT" = 1 ]; then
      ok "vocab $v: the .vocab is sentencepiece $SPV's" cmp -s "$T/ours/m$v.vocab" "$T/ref/m$v.vocab"
      cmp -s "$T/ours/m$v.vocab" "$T/ref/m$v.vocab" || echo "  identical pieces: $same of $v"
      ok "vocab $v: the .model is sentencepiece $SPV's byte for byte" cmp -s "$T/ours/m$v.model" "$T/ref/m$v.model"
      run "$PY" -c "
import sentencepiece as s
a = s.SentencePieceProcessor(model_file='$T/ref/m$v.model')
b = s.SentencePieceProcessor(model_file='$T/ours/m$v.model')
lines = [l.rstrip('\n') for l in open('$T/held.txt', encoding='utf-8')]
assert b.get_piece_size() == $v
assert len(lines) > 100
assert a.encode(lines) == b.encode(lines)
assert b.decode(b.encode(lines[7])) == ' '.join(lines[7].split())
"
      expect_rc "vocab $v: SentencePiece encodes held-out text with our model as with its own" 0
    else
      echo "  sentencepiece $SPV: $same of $v pieces identical"
      ok "vocab $v: >= 99% of the pieces are sentencepiece $SPV's" [ $((same * 100)) -ge $((v * 99)) ]
      first=$(paste <(cut -f1 "$T/ours/m$v.vocab") <(cut -f1 "$T/ref/m$v.vocab") | awk -F'\t' '$1 != $2 { print $1 "\t" $2; exit }')
      echo "  first difference (ours, theirs): $first"
      ok "vocab $v: the orders part at a repeat (aa, 00, ...)" bash -c "
        printf '%s\n' '$first' | tr '\t' '\n' | grep -q -P '^(?:▁)?(.+?)\1+\$'"
      run "$PY" -c "
import sentencepiece as s
b = s.SentencePieceProcessor(model_file='$T/ours/m$v.model')
lines = [l.rstrip('\n') for l in open('$T/held.txt', encoding='utf-8')]
assert b.get_piece_size() == $v and len(lines) > 100
assert b.decode(b.encode(lines[7])) == ' '.join(lines[7].split())
assert sum(map(len, b.encode(lines))) > 0
"
      expect_rc "vocab $v: SentencePiece $SPV loads our model and encodes held-out text" 0
    fi
  done
  # the built-in nmt_nfkc table (charsmap.c) gives the same pieces as the
  # table taken from the reference model (its bytes differ, so the .model does)
  run bash -c "cd '$T/builtin' && $VT -q --input=train.txt --model_prefix=m8000 --vocab_size=8000 --character_coverage=0.9999 --model_type=bpe"
  expect_rc "built-in nmt_nfkc" 0
  ok "built-in nmt_nfkc: the same .vocab as with the reference model's table" cmp -s "$T/builtin/m8000.vocab" "$T/ours/m8000.vocab"
fi
# --model wordpiece: the WordPiece trainer (wptrain) behind the same CLI
WDRV=${INJECT:+$(dirname "$INJECT")/test_wptrain}
[ -x "${WDRV:-}" ] || WDRV=$TESTS/../build/tests/test_wptrain
mkdir -p "$T/wp"
"$BIN/wiki_dump" "$DATA/enwiki-206.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -l en 2>/dev/null >"$T/wp/en.txt"
run $VT --model wordpiece --vocab-size 6000 -o "$T/wp/a" "$T/wp/en.txt"
expect_rc "wordpiece: train" 0
ok "wordpiece: PREFIX.txt has --vocab-size lines" [ "$(wc -l <"$T/wp/a.txt")" -eq 6000 ]
ok "wordpiece: [PAD] [unused0..99] [UNK] [CLS] [SEP] [MASK] first" \
  bash -c "[ \"\$(sed -n '1p;2p;101p;102p;103p;104p;105p' '$T/wp/a.txt' | tr '\n' ' ')\" = '[PAD] [unused0] [unused99] [UNK] [CLS] [SEP] [MASK] ' ]"
ok "wordpiece: PREFIX.json is a WordPiece tokenizer.json" grep -q '"type": "WordPiece"' "$T/wp/a.json"
expect_err "wordpiece: summary line" "*6000 tokens (105 special,*"
if [ -x "$WDRV" ]; then
  run "$WDRV" train -q -o "$T/wp/lib" --vocab-size 6000 "$T/wp/en.txt"
  ok "wordpiece: the same files as the library's driver" bash -c "cmp -s '$T/wp/a.txt' '$T/wp/lib.txt' && cmp -s '$T/wp/a.json' '$T/wp/lib.json'"
fi
run $VT --model wordpiece --vocab-size 6000 -o "$T/wp/a" "$T/wp/en.txt"
expect_rc "wordpiece: existing outputs without -f" 1
run $VT --model wordpiece --vocab-size 3000 --unused 10 --cased --min-frequency 3 --limit-alphabet 300 -j1 \
  --wordpiece "$T/wp/v1.txt" --tokenizer-json "$T/wp/t1.json" "$T/wp/en.txt"
expect_rc "wordpiece: explicit paths, no -o" 0
run $VT --model wordpiece --vocab-size 3000 --unused 10 --cased --min-frequency 3 --limit-alphabet 300 -j2 \
  --wordpiece "$T/wp/v2.txt" --tokenizer-json "$T/wp/t2.json" - <"$T/wp/en.txt"
ok "wordpiece: -j1 file and -j2 stdin identical" bash -c "cmp -s '$T/wp/v1.txt' '$T/wp/v2.txt' && cmp -s '$T/wp/t1.json' '$T/wp/t2.json'"
ok "wordpiece: --unused 10 puts [UNK] on line 12" [ "$(sed -n 12p "$T/wp/v1.txt")" = "[UNK]" ]
ok "wordpiece: --cased keeps capitals" grep -q '^[A-Z][a-z]' "$T/wp/v1.txt"
ok "wordpiece: --cased in tokenizer.json" grep -q '"lowercase": false' "$T/wp/t1.json"
PYT=$(py_with tokenizers)
if [ -z "$PYT" ]; then
  echo "not run: tokenizers loading vocab_train's tokenizer.json (no Python with tokenizers)"
else
  sed -n '1~50p' "$T/wp/en.txt" >"$T/wp/held.txt"
  "$PYT" -c 'import sys, tokenizers
t = tokenizers.Tokenizer.from_file(sys.argv[1])
for line in open(sys.argv[2], encoding="utf-8"):
    print(" ".join(t.encode(line.rstrip("\n"), add_special_tokens=False).tokens))' "$T/wp/a.json" "$T/wp/held.txt" >"$T/wp/hf.tok" 2>"$err"
  "$BIN/wp_tokenize" --vocab "$T/wp/a.txt" "$T/wp/held.txt" >"$T/wp/ours.tok" 2>/dev/null
  ok "wordpiece: tokenizers loads tokenizer.json and encodes $(wc -l <"$T/wp/held.txt") lines as wp_tokenize does" \
    bash -c "[ -s '$T/wp/hf.tok' ] && cmp -s '$T/wp/hf.tok' '$T/wp/ours.tok'"
fi
# ---- --bert: one normalization from training to tokenization ----
mkdir -p "$T/bert"
$BIN/wiki_dump "$DATA/huwiki-berlin.xml.bz2" 2>/dev/null | $BIN/wiki_strip -F lines 2>/dev/null |
  $BIN/sent_split -l hu 2>/dev/null >"$T/bert/hu.txt"
HU=$T/bert/hu.txt
run $VT -v -o "$T/bert/spm" --vocab-size 1500 --held-out 0.2 --wordpiece "$T/bert/spm.txt" "$HU"
expect_rc "--held-out without --bert (spm_train's pieces)" 0
ok "... reports the [UNK] share on the held-out sentences" grep -q "held out [0-9]* sentences, [0-9]* tokens, \[UNK\] [0-9.]* %" "$err"
unk_of() { sed -n 's/.*\[UNK\] \([0-9.]*\) %.*/\1/p' "$err" | tail -1; }
spm_unk=$(unk_of)
ok "... which is above 1 % for Hungarian (commas and periods), with a warning" \
  eval 'awk "BEGIN{exit !($spm_unk > 1)}" && grep -q "more than 1 %" "$err"'
run $VT -v -j1 -o "$T/bert/b1" --vocab-size 1500 --bert --strip-accents 0 --wordpiece "$T/bert/b1.txt" "$HU"
expect_rc "--bert --strip-accents 0" 0
bert_unk=$(unk_of)
ok "... held out 1 % by default, [UNK] below 0.5 % (spm_train's way: $spm_unk %)" \
  eval 'grep -q "held out [1-9][0-9]* sentences" "$err" && awk "BEGIN{exit !($bert_unk < 0.5)}"'
ok "... reports the alphabet's coverage" grep -q "alphabet [0-9]* (coverage [0-9.]* %)" "$err"
ok "... punctuation pieces are word-initial" eval 'grep -qx "," "$T/bert/b1.txt" && grep -qx "\." "$T/bert/b1.txt"'
ok "... no piece with a capital; accents kept" \
  eval '! sed 1,105d "$T/bert/b1.txt" | grep -q "[A-ZÁÉÍÓÖŐÚÜŰ]" && grep -q "ő" "$T/bert/b1.txt"'
ok "... every character both as c and ##c" \
  eval '[ -z "$(sed 1,105d "$T/bert/b1.txt" | sed "s/^##//" | grep -x "." | sort -u | while read -r c; do grep -qxF "$c" "$T/bert/b1.txt" && grep -qxF "##$c" "$T/bert/b1.txt" || echo "$c"; done)" ]'
ok "... normalization identity in the model" grep -aq identity "$T/bert/b1.model"
# an alphabet of every character: a rare one (a snowman, once in the
# text) still gets its c and ##c, where coverage 0.9999 drops it
{ cat "$HU"; echo "hó ☃ ember"; } >"$T/bert/rare.txt"
run $VT -q -o "$T/bert/r1" --vocab-size 1500 --bert --held-out 0 --wordpiece "$T/bert/r1.txt" "$T/bert/rare.txt"
ok "--bert: a character seen once is in vocab.txt as c and ##c" \
  eval 'grep -qx ☃ "$T/bert/r1.txt" && grep -qx "##☃" "$T/bert/r1.txt"'
run $VT -q -o "$T/bert/r2" --vocab-size 1500 --bert --character-coverage 0.9999 --held-out 0 --wordpiece "$T/bert/r2.txt" "$T/bert/rare.txt"
ok "... --character-coverage 0.9999 drops it" eval '[ -s "$T/bert/r2.txt" ] && ! grep -q ☃ "$T/bert/r2.txt"'
run $VT -q -o "$T/bert/r3" --vocab-size 1500 --bert --limit-alphabet 40 --held-out 0 --wordpiece "$T/bert/r3.txt" "$T/bert/rare.txt"
ok "... --limit-alphabet 40: the 40 most frequent characters" \
  eval '[ "$(LC_ALL=C.UTF-8 grep -c "^.$(printf "\t")" "$T/bert/r3.vocab")" = 40 ] && ! grep -q ☃ "$T/bert/r3.txt" && grep -qx "##a" "$T/bert/r3.txt"'
run $VT -q -o "$T/bert/r4" --vocab-size 1500 --limit-alphabet 40 "$T/bert/rare.txt"
expect_rc "--limit-alphabet with --model bpe" 0
run $VT -q -j2 -o "$T/bert/b2" --vocab-size 1500 --bert --strip-accents 0 --wordpiece "$T/bert/b2.txt" - <"$HU"
ok "... -j2 from stdin: the same files" eval 'cmp -s "$T/bert/b1.vocab" "$T/bert/b2.vocab" && cmp -s "$T/bert/b1.txt" "$T/bert/b2.txt"'
run $VT -q -o "$T/bert/b3" --vocab-size 1500 --bert --held-out 0 --wordpiece "$T/bert/b3.txt" "$HU"
ok "--bert (strip accents as lower-casing): pieces without accents" eval '! sed 1,105d "$T/bert/b3.txt" | grep -q "[áéíóöőúüű]"'
run $VT -q -o "$T/bert/b4" --vocab-size 1500 --bert --do-lower-case 0 --held-out 0 --wordpiece "$T/bert/b4.txt" "$HU"
ok "--bert --do-lower-case 0: cased pieces" eval 'sed 1,105d "$T/bert/b4.txt" | grep -q "^[A-Z]"'
run $VT -o "$T/bert/x" --do-lower-case 0 "$HU"
expect_rc "--do-lower-case without --bert (BPE)" 2
run $VT -o "$T/bert/x" --held-out 0.1 "$HU"
expect_rc "--held-out without --wordpiece" 2
run $VT -o "$T/bert/x" --held-out 0.9 --wordpiece "$T/bert/x.txt" "$HU"
expect_rc "--held-out above 0.5" 2
run $VT --model wordpiece --vocab-size 1000 --strip-accents 0 -o "$T/bert/wp" "$HU"
expect_rc "--model wordpiece --strip-accents 0" 0
ok "... recorded in tokenizer.json" grep -q '"strip_accents": false' "$T/bert/wp.json"
ok "... accents kept in vocab.txt" grep -q "ő" "$T/bert/wp.txt"
done_testing
