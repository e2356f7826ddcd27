# CLI test: hdf5gen's peak memory as its shards grow. The workflows run
# one hdf5gen over all shards, two (-j 2) at once here, at a fixed shard
# count, so a shard grows with the dump. Two shards of the 206-page enwiki
# sample's text (2.6 MB each: wiki_dump | wiki_strip | sent_split) and two of
# that text 8 times over (21 MB each) are made into HDF5 files at the
# workflows' settings (dupe factor 5; 128/20 and 512/80); the bigger run's
# peak memory (tests/unit/maxrss.c) may grow by at most 1.6 bytes per byte of
# added text (the tokens and instances of every shard being made; 3.1 with
# int32 ids and 8-byte masks, 1.2 now), and its files equal those of -j 1.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
VOCAB=$ROOT/data/bert/vocab.txt
need_maxrss hdf5gen

"$BIN/wiki_dump" -q "$TESTS/data/enwiki-206.xml.bz2" | "$BIN/wiki_strip" -q -F lines |
  "$BIN/sent_split" -q -l en >"$T/one.txt"
ok "the sample's text (2.6 MB)" [ "$(stat -c %s "$T/one.txt")" -gt 2000000 ]
mkdir "$T/small" "$T/big"
cp "$T/one.txt" "$T/small/a.txt" && cp "$T/one.txt" "$T/small/b.txt"
for i in 1 2 3 4 5 6 7 8; do cat "$T/one.txt"; done >"$T/big/a.txt"
cp "$T/big/a.txt" "$T/big/b.txt"
size() { cat "$1"/*.txt | wc -c; }
added=$(($(size "$T/big") - $(size "$T/small")))

for sp in "128 20" "512 80"; do
  set -- $sp
  opts=(-q --vocab "$VOCAB" --do-lower-case 1 --max-seq-length "$1" --max-predictions-per-seq "$2"
    --masked-lm-prob 0.15 --random-seed 12345 --dupe-factor 5)
  rm -rf "$T/o1" "$T/o2" "$T/o3"
  run timeout 600 "$RSS" "$T/rss" "$BIN/hdf5gen" "${opts[@]}" -j 2 -o "$T/o1/" "$T/small"
  expect_rc "$1/$2: two 2.6 MB shards" 0
  small=$(cat "$T/rss")
  run timeout 600 "$RSS" "$T/rss" "$BIN/hdf5gen" "${opts[@]}" -j 2 -o "$T/o2/" "$T/big"
  expect_rc "$1/$2: two 21 MB shards" 0
  big=$(cat "$T/rss")
  # KiB of peak memory per MB of added text, and the bound: 1.6 bytes per byte
  mem_ok "$1/$2: peak memory $small KiB -> $big KiB for $added more bytes of text: at most 1.6 bytes per byte" \
    [ $(((big - small) * 1024 * 10)) -le $((added * 16)) ]
  run timeout 600 "$BIN/hdf5gen" "${opts[@]}" -j 1 -o "$T/o3/" "$T/big"
  ok "$1/$2: the same files with -j 1" cmp -s "$T/o2/a.hdf5" "$T/o3/a.hdf5"
  ok "$1/$2: both shards, the same bytes" cmp -s "$T/o2/a.hdf5" "$T/o2/b.hdf5"
done
done_testing
