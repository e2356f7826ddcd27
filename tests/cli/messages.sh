# Messages keep their reason: a path of over 500 bytes is shortened in its
# middle with "..." and the message still ends with why (missing input,
# existing output, an HDF5 file refused); data of another compressor is
# named as such by wiki_dump, whatever the file is called (gzip, xz, zstd,
# 7z, zip; plain XML named .bz2 is read, with a warning); a valid HDF5 file
# of 0 rows is no damaged file (hdf5_check: 0 instances; the trainer: no
# instances); --abbrev DIR says "Is a directory"; hdf5_check's write errors
# name their reason.
. "$TESTS/cli/lib.sh"
V=$TESTS/../data/bert/vocab.txt

# ---- long paths ----
long=$T
for c in a b c; do long=$long/$(printf "$c%.0s" $(seq 200)); done
mkdir -p "$long"
for p in wiki_dump wiki_strip sent_split text_filter wp_tokenize vocab_convert shard_split hdf5_check; do
  args=()
  [ "$p" = shard_split ] && args=(-o "$T/sd")
  run "$BIN/$p" "${args[@]}" "$long/missing.txt"
  g="$p: $T/aaa*...*ccc/missing.txt: No such file or directory"
  ok "$p, a missing input of $((${#long} + 12)) bytes: the reason kept" eval '[[ "$(head -1 "$err")" == $g ]]'
  ok "... one line of at most 530 bytes" [ "$(head -1 "$err" | wc -c)" -le 530 ]
done
echo text >"$long/in.txt"
run "$BIN/sent_split" -o "$long/in.txt" "$long/in.txt"
g="sent_split: $T/aaa*...*ccc/in.txt: already exists (use -f to overwrite)"
ok "an existing -o of a long path: the reason kept" eval '[[ "$(cat "$err")" == $g ]]'
rm -f "$long/in.txt"
# a multi-byte path is never cut inside a character
ulong=$T/$(printf 'é%.0s' $(seq 120))/$(printf 'ő%.0s' $(seq 120))
mkdir -p "$ulong"
run "$BIN/wiki_strip" "$ulong/missing.txt"
ok "a long UTF-8 path: still valid UTF-8 when shortened" eval 'iconv -f UTF-8 -t UTF-8 "$err" >/dev/null && grep -q "\.\.\..*missing.txt: No such file or directory" "$err"'

# ---- wiki_dump: what the data is, not what it is called ----
bzcat "$DATA/enwiki-3.xml.bz2" >"$T/d.xml"
gzip -c "$T/d.xml" >"$T/gz.xml.bz2"
printf '\3757zXZ\0\0\4\346\326\264F' >"$T/xz.xml.bz2"
printf '\050\265\057\375\044\0\0' >"$T/zst.xml.bz2"
printf '7z\274\257\047\034\0\4' >"$T/7z.xml.bz2"
printf 'PK\3\4\24\0\0\0' >"$T/zip.xml.bz2"
for k in gz:gzip:"gzip -dc" xz:xz:"xz -dc" zst:zstd:"zstd -dc" 7z:7z:"7z x -so" zip:zip:"unzip -p"; do
  IFS=: read -r f kind cmd <<<"$k"
  run "$BIN/wiki_dump" "$T/$f.xml.bz2"
  expect_rc "$kind data named .bz2: exit 1" 1
  expect_err "... named as $kind, with the command that reads it" \
    "wiki_dump: $T/$f.xml.bz2: $kind data, not bzip2 or XML (decompress it first: $cmd $T/$f.xml.bz2 | wiki_dump)"
done
run "$BIN/wiki_dump" <"$T/gz.xml.bz2"
expect_err "gzip on stdin: named too" "wiki_dump: -: gzip data, not bzip2 or XML (decompress it first: gzip -dc | wiki_dump)"
cp "$T/d.xml" "$T/plain.xml.bz2"
run "$BIN/wiki_dump" "$T/plain.xml.bz2"
expect_rc "plain XML named .bz2: read" 0
expect_err "... with a warning" "wiki_dump: $T/plain.xml.bz2: plain XML, not bzip2 (read as XML)*"
"$BIN/wiki_dump" "$T/d.xml" >"$T/d.jsonl" 2>/dev/null
ok "... the pages of the .xml" cmp -s "$out" "$T/d.jsonl"
head -c 300 /dev/zero | tr '\0' 'x' >"$T/junk.xml.bz2"
run "$BIN/wiki_dump" "$T/junk.xml.bz2"
expect_rc "neither bzip2 nor XML, named .bz2: exit 1" 1
expect_err "... said so" "wiki_dump: $T/junk.xml.bz2: not bzip2 data (no \"BZh\" signature) and not XML"

# ---- HDF5 of 0 rows; write errors; a directory as a word list ----
H=${TESTBIN:-}/h5craft
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -12 >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 -o "$T/good.hdf5" "$T/en.txt"
if [ -x "$H" ]; then
  "$H" empty "$T/good.hdf5" "$long/empty_training_0.hdf5"
  run "$BIN/hdf5_check" "$long/empty_training_0.hdf5"
  expect_rc "0 rows (chunked as h5py writes an empty array): valid" 0
  ok "... 0 instances" grep -q "empty_training_0.hdf5: 0 instances, L 64, P 20" "$out"
  cp "$long/empty_training_0.hdf5" "$T/empty.hdf5"
  "$H" filter "$T/good.hdf5" "$long/lzf.hdf5" 32000 lzf
  run "$BIN/hdf5_check" "$long/lzf.hdf5"
  g="hdf5_check: $T/aaa*...*ccc/lzf.hdf5: not a self-contained HDF5 file (input_ids: filter 32000 \"lzf\"; only deflate, shuffle and fletcher32 are read, no plugins)"
  ok "an HDF5 file refused under a long path: the reason kept" eval '[[ "$(head -1 "$err")" == $g ]]'
  cat >"$T/tiny.json" <<'JSON'
{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522}
JSON
  mkdir -p "$T/e"
  cp "$T/empty.hdf5" "$T/e/empty_training_0.hdf5"
  run "$BIN/train_bert_cpu" --input_dir "$T/e" --config_file "$T/tiny.json" --output_dir "$T/eo" --max_steps 1 -j1
  expect_rc "the trainer on a file of 0 rows: exit 1" 1
  expect_err "... no instances, not damaged" "train_bert_cpu: $T/e/empty_training_0.hdf5: no instances"
else
  echo "not run: HDF5 files of 0 rows and long paths (the test driver h5craft is not built; run through make test)"
fi
if [ -w /dev/full ]; then
  run sh -c '"$1" "$2" >/dev/full' sh "$BIN/hdf5_check" "$T/good.hdf5"
  expect_rc "hdf5_check >/dev/full: exit 1" 1
  expect_err "... the reason named" "hdf5_check: standard output: write error: No space left on device"
  run sh -c '"$1" --dump "$2" >/dev/full' sh "$BIN/hdf5_check" "$T/good.hdf5"
  expect_err "hdf5_check --dump >/dev/full: the reason named" "hdf5_check: standard output: write error: No space left on device"
else
  echo "not run: write errors (no /dev/full)"
fi
mkdir -p "$T/adir"
run "$BIN/sent_split" --abbrev "$T/adir" "$T/en.txt"
expect_rc "--abbrev DIR: exit 2, as for a missing one" 2
expect_err "... is a directory" "sent_split: $T/adir: Is a directory"
done_testing
