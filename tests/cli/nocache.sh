# CLI tests of --nocache (common/pagecache.h): sent_split, text_filter and
# hdf5gen write the same bytes with it and leave the file they read out of
# the page cache; shard_split writes the same shards and leaves them out of
# it, and so does hdf5gen with its HDF5 files (-j2: two at once); a pipe or stdin still works; the workflows pass it, and NOCACHE=0
# does not. The page-cache checks need a file system that drops pages on
# POSIX_FADV_DONTNEED (not tmpfs): elsewhere they say they did not run.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
R=$TESTBIN/resident
not() { ! "$@"; }
if [ ! -x "$R" ]; then
  ok "the resident driver is built ($R)" false
  done_testing
  exit 1
fi
drops=1
"$R" --probe "$T" || drops=0
[ "$drops" = 1 ] || echo "not run: the page-cache checks (the file system of $T keeps pages on POSIX_FADV_DONTNEED)"

# pages FILE...: how many of their pages are in the page cache
pages() { "$R" "$@" | awk '{ s += $1 } END { print s + 0 }'; }
# gone NAME FILE... / kept NAME FILE...: none / some of their pages cached
gone() { local n=$1; shift; [ "$drops" = 0 ] || ok "$n" [ "$(pages "$@")" -eq 0 ]; }
kept() { local n=$1; shift; [ "$drops" = 0 ] || ok "$n" [ "$(pages "$@")" -gt 0 ]; }

"$BIN/wiki_dump" "$DATA/enwiki-206.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null >"$T/text.txt"
ok "the text (6 MB of XML)" [ "$(wc -c <"$T/text.txt")" -gt 1000000 ]
# an input is dropped as far as it is on disk (a reader never waits for
# the writeback of what the stage before just wrote): each is synced first
sync "$T/text.txt"

# ---- sent_split ----
run "$BIN/sent_split" -j2 -l en -o "$T/s0.txt" "$T/text.txt"
expect_rc "sent_split" 0
kept "... the text it read stays cached" "$T/text.txt"
run "$BIN/sent_split" -j2 -l en --nocache -o "$T/s1.txt" "$T/text.txt"
expect_rc "sent_split --nocache" 0
gone "... the text it read left the page cache" "$T/text.txt"
kept "... its output is cached (for the next stage)" "$T/s1.txt"
ok "... the same sentences" cmp -s "$T/s0.txt" "$T/s1.txt"
run "$BIN/sent_split" -j1 -l en --nocache <"$T/text.txt"
ok "... stdin redirected from the file: the same sentences" cmp -s "$T/s0.txt" "$out"
run sh -c "cat '$T/text.txt' | '$BIN/sent_split' -j1 -l en --nocache"
ok "... from a pipe: the same sentences" cmp -s "$T/s0.txt" "$out"

# ---- text_filter ----
sync "$T/s0.txt"
TF=("$BIN/text_filter" -q --langdetect none)
run "${TF[@]}" -o "$T/f0.txt" "$T/s0.txt"
expect_rc "text_filter" 0
kept "... the sentences it read stay cached" "$T/s0.txt"
run "${TF[@]}" --nocache -o "$T/f1.txt" "$T/s0.txt"
expect_rc "text_filter --nocache" 0
ok "... the same documents kept" cmp -s "$T/f0.txt" "$T/f1.txt"
ok "... some were" [ -s "$T/f1.txt" ]
gone "... the sentences it read left the page cache" "$T/s0.txt"

# ---- shard_split ----
run "$BIN/shard_split" -q -L nvidia --train 5 --test 2 -o "$T/sh0" "$T/s1.txt"
expect_rc "shard_split" 0
kept "... its shards are cached" "$T"/sh0/*.txt
run "$BIN/shard_split" -q -L nvidia --train 5 --test 2 --nocache -o "$T/sh1" "$T/s1.txt"
expect_rc "shard_split --nocache" 0
gone "... none of its shards in the page cache" "$T"/sh1/*.txt
ok "... the same 7 shards" eval '[ "$(ls "$T/sh1" | wc -l)" = 7 ] && diff -r "$T/sh0" "$T/sh1" >/dev/null'
run sh -c "cat '$T/s1.txt' | '$BIN/shard_split' -q -L hu --train 3 --nocache -o '$T/sh2'"
expect_rc "... from a pipe" 0
gone "... none of its shards in the page cache" "$T"/sh2/*.txt
run "$BIN/shard_split" -q -L hu --train 3 -o "$T/sh3" "$T/s1.txt"
ok "... the same shards" diff -r "$T/sh2" "$T/sh3"

# ---- hdf5gen ----
sync "$T"/sh0/*.txt
V=$ROOT/data/bert/vocab.txt
G=("$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 2 -j2)
run "${G[@]}" -o "$T/h0/" "$T"/sh0/wikicorpus_en_training_*.txt
expect_rc "hdf5gen" 0
run "${G[@]}" --nocache -o "$T/h1/" "$T"/sh0/wikicorpus_en_training_*.txt
expect_rc "hdf5gen --nocache" 0
gone "... the HDF5 files it wrote are not in the page cache" "$T"/h1/*.hdf5
kept "... without, they are" "$T"/h0/*.hdf5
ok "... the same 5 HDF5 files" eval '[ "$(ls "$T/h1" | wc -l)" = 5 ] && diff -r "$T/h0" "$T/h1" >/dev/null'
gone "... the shards it read left the page cache" "$T"/sh0/wikicorpus_en_training_*.txt
kept "... the test shards it did not read did not" "$T"/sh0/wikicorpus_en_test_*.txt

# ---- the workflows ----
mkn() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory -n NOBUILD=1 BIN="$BIN" \
    WORKDIR="$T/w" HU_DUMP="$DATA/huwiki-berlin.xml.bz2" EN_DUMP="$DATA/enwiki-206.xml.bz2" \
    EN_VOCAB="$V" "$@" hu en
}
run mkn
expect_rc "make -n hu en" 0
for p in sent_split text_filter shard_split hdf5gen; do
  ok "... $p gets --nocache" grep -q "/$p .*--nocache" "$out"
done
ok "... 9 commands: hu's 5 and en's 4 (hdf5gen twice in each)" \
  [ "$(grep -c -- --nocache "$out")" -eq 9 ]
ok "... not the text stage (the dump is the user's)" not grep -q "wiki_dump.*--nocache" "$out"
run mkn NOCACHE=0
ok "NOCACHE=0: none" not grep -q -- --nocache "$out"
done_testing
