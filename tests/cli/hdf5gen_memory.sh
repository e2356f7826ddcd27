# CLI test: hdf5gen's peak memory as its shards grow and as one process
# makes many. The workflows run one hdf5gen over all shards, two (-j 2) at
# once here, at a fixed shard count, so a shard grows with the dump (make
# en's: 0.6 MB at x64, 10 MB at x1024). A shard's tokens and instances are
# kept in temporary files, not in memory, so the peak (tests/unit/maxrss.c)
# of two 10.4 MB shards (the 206-page enwiki sample's text, wiki_dump |
# wiki_strip | sent_split, 4 times over) may be at most 1.25 times that of
# two 0.65 MB shards (a quarter of it) and 3 MB (it was 1.9 times, 25 MB ->
# 49 MB), at the workflows' settings (dupe factor 5; 128/20 and 512/80);
# and one process over 24 shards of 2.6 MB may peak at most 4 MB above two
# of them (malloc's heap and HDF5's free lists grew with the shards made:
# 46 MB for 256 of them, 35 for two). The files equal those of -j 1, and the temporary files go
# where --tmp-dir or TMPDIR says (a full disk there is a clean error);
# --in-memory writes the same files from memory.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
VOCAB=$ROOT/data/bert/vocab.txt
need_maxrss hdf5gen

"$BIN/wiki_dump" -q "$TESTS/data/enwiki-206.xml.bz2" | "$BIN/wiki_strip" -q -F lines |
  "$BIN/sent_split" -q -l en >"$T/one.txt"
ok "the sample's text (2.6 MB)" [ "$(stat -c %s "$T/one.txt")" -gt 2000000 ]
# a quarter of the text, cut at a document boundary
awk -v lim=$(($(stat -c %s "$T/one.txt") / 4)) '{ n += length($0) + 1; print } !NF && n >= lim { exit }' \
  "$T/one.txt" >"$T/quarter.txt"
mkdir "$T/small" "$T/big" "$T/two" "$T/many"
cp "$T/quarter.txt" "$T/small/a.txt" && cp "$T/quarter.txt" "$T/small/b.txt"
for i in 1 2 3 4; do cat "$T/one.txt"; done >"$T/big/a.txt"
cp "$T/big/a.txt" "$T/big/b.txt"
for i in $(seq 0 23); do cp "$T/one.txt" "$T/many/s$i.txt"; done
cp "$T/one.txt" "$T/two/s0.txt" && cp "$T/one.txt" "$T/two/s1.txt"
ok "the big shards are 16 times the small ones" \
  [ $(($(stat -c %s "$T/big/a.txt") / $(stat -c %s "$T/small/a.txt"))) -ge 15 ]

# peak OUT DIR ARGS...: run hdf5gen over DIR's shards into OUT/, the peak in KiB in $peak
peak() {
  local dst=$1 dir=$2
  shift 2
  rm -rf "$dst"
  run timeout 600 "$RSS" "$T/rss" "$BIN/hdf5gen" "${opts[@]}" "$@" -o "$dst/" "$dir"
  peak=$(cat "$T/rss")
}
for sp in "128 20" "512 80"; do
  set -- $sp
  opts=(-q --vocab "$VOCAB" --do-lower-case 1 --max-seq-length "$1" --max-predictions-per-seq "$2"
    --masked-lm-prob 0.15 --random-seed 12345 --dupe-factor 5 --tmp-dir "$T")
  peak "$T/o1" "$T/small" -j 2
  expect_rc "$1/$2: two 0.65 MB shards" 0
  small=$peak
  peak "$T/o2" "$T/big" -j 2
  expect_rc "$1/$2: two 10.4 MB shards" 0
  big=$peak
  mem_ok "$1/$2: peak $small KiB -> $big KiB for 16 times the text: at most 1.25 times + 3 MB" \
    [ $((big * 4)) -le $((small * 5 + 4 * 3072)) ]
  peak "$T/o4" "$T/two" -j 2
  expect_rc "$1/$2: two 2.6 MB shards" 0
  two=$peak
  peak "$T/o5" "$T/many" -j 2
  expect_rc "$1/$2: 24 2.6 MB shards" 0
  mem_ok "$1/$2: peak $two KiB for 2 shards, $peak KiB for 24: at most 4 MB more" \
    [ "$peak" -le $((two + 4096)) ]
  ok "$1/$2: 24 shards, the files of 2" cmp -s "$T/o4/s0.hdf5" "$T/o5/s23.hdf5"
  rm -rf "$T/o3"
  run timeout 600 "$BIN/hdf5gen" "${opts[@]}" -j 1 -o "$T/o3/" "$T/big"
  ok "$1/$2: the same files with -j 1" cmp -s "$T/o2/a.hdf5" "$T/o3/a.hdf5"
  ok "$1/$2: both shards, the same bytes" cmp -s "$T/o2/a.hdf5" "$T/o2/b.hdf5"
  # --in-memory: no temporary files, the same bytes, the memory they saved
  peak "$T/o6" "$T/big" -j 2 --in-memory
  expect_rc "$1/$2: --in-memory" 0
  ok "$1/$2: --in-memory, the same files" cmp -s "$T/o2/a.hdf5" "$T/o6/a.hdf5"
  mem_ok "$1/$2: --in-memory holds the shards: $peak KiB against $big KiB" \
    [ "$peak" -ge $((big + 8192)) ]
done
rm -rf "$T"/o[1-6] "$T/many"

# the temporary files: nothing is left of them, a bad --tmp-dir is refused,
# and a full disk there (the injector fails writes to files under a FAILME
# directory) fails the shard with one line naming the output and the
# directory, leaving no output
opts=(-q --vocab "$VOCAB" --dupe-factor 2)
run "$BIN/hdf5gen" "${opts[@]}" --tmp-dir "$T/nowhere" -o "$T/x.hdf5" "$T/small/a.txt"
expect_rc "--tmp-dir that is not a directory" 2
expect_err "... named" "*--tmp-dir $T/nowhere: not a directory*"
ok "... no output" [ ! -e "$T/x.hdf5" ]
mkdir "$T/FAILME" "$T/o6"
INJ=${TESTBIN:-}/inject.so
if [ -f "$INJ" ]; then
  for at in 1 3 8; do
    run env WB_INJECT=pwrite WB_INJECT_AT=$at LD_PRELOAD="$INJ" \
      "$BIN/hdf5gen" "${opts[@]}" --tmp-dir "$T/FAILME" -o "$T/o6/" "$T/small/a.txt"
    expect_rc "temporary files on a full disk (after $at writes)" 1
    expect_err "... one line naming the output and the directory ($at)" \
      "hdf5gen: $T/o6/a.hdf5: temporary file in $T/FAILME: No space left on device*"
    ok "... no output ($at)" [ -z "$(ls "$T/o6")" ]
  done
  run env TMPDIR="$T/FAILME" WB_INJECT=pwrite WB_INJECT_AT=3 LD_PRELOAD="$INJ" \
    "$BIN/hdf5gen" "${opts[@]}" -o "$T/y.hdf5" "$T/small/a.txt"
  expect_rc "TMPDIR is where they go (a full disk there)" 1
  expect_err "... named" "hdf5gen: $T/y.hdf5: temporary file in $T/FAILME: No space left on device*"
  ok "... no output" [ ! -e "$T/y.hdf5" ]
else
  echo "not run: temporary files on a full disk (the injector is not built; run through make test)"
fi
run "$BIN/hdf5gen" "${opts[@]}" --tmp-dir "$T/FAILME" -o "$T/o7/" "$T/small"
expect_rc "--tmp-dir" 0
ok "... nothing left there" [ -z "$(ls -A "$T/FAILME")" ]
done_testing
