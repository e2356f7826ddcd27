# CLI tests of hdf5gen: the spec's end-to-end test vector read back with
# HDF5's own h5dump; the HDF5 rows equal the instance driver's rows on real
# shards; types, shapes and compression; identical files for any -j and for
# parallel shards; output naming (-o file, -o DIR/, --prep-root, --input-file);
# batch shares (--shard-index/--shard-count, MPI rank/size); bad input (empty
# shard, missing file, vocabulary without [CLS]/[SEP]/[MASK], existing
# output, disk full) with no partial file left; the switches beyond the
# original (--do-lower-case 0, --no-mask, --nsp 0); --memory (fewer shards
# at once, the same files).
. "$TESTS/cli/lib.sh"
G=$BIN/hdf5gen
DUMP=${TESTBIN:-}/inst_dump
INJECT=${TESTBIN:-}/inject.so
not() { ! "$@"; }
# under make asan the injector is preloaded ahead of the ASan runtime
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# h5rows FILE: the rows as inst_dump prints them (unpadded ids, segment
# digits, positions up to the first 0, their ids, label), from h5dump.
h5col() { # FILE DATASET -> one row per line, space-separated
  h5dump -d "/$2" -y -w 0 -o "$T/col.txt" "$1" >/dev/null && sed -e '/^[[:space:]]*$/d' -e 's/,[[:space:]]*$//' \
    -e 's/^[[:space:]]*//' -e 's/, / /g' "$T/col.txt"
}
h5rows() {
  h5col "$1" input_ids >"$T/c1" && h5col "$1" input_mask >"$T/c2" && h5col "$1" segment_ids >"$T/c3" &&
    h5col "$1" masked_lm_positions >"$T/c4" && h5col "$1" masked_lm_ids >"$T/c5" &&
    h5col "$1" next_sentence_labels | tr ' ' '\n' >"$T/c6" &&
    paste -d'|' "$T/c1" "$T/c2" "$T/c3" "$T/c4" "$T/c5" "$T/c6" | awk -F'|' '{
      n = split($1, id, " "); split($2, m, " "); split($3, s, " "); k = split($4, p, " "); split($5, l, " ")
      len = 0; for (i = 1; i <= n; i++) if (m[i] == 1) len = i
      ids = ""; seg = ""; for (i = 1; i <= len; i++) { ids = ids (i > 1 ? " " : "") id[i]; seg = seg s[i] }
      np = 0; for (i = 1; i <= k; i++) { if (p[i] == 0) break; np = i }
      pos = ""; lab = ""; for (i = 1; i <= np; i++) { pos = pos (i > 1 ? " " : "") p[i]; lab = lab (i > 1 ? " " : "") l[i] }
      printf "%s\t%s\t%s\t%s\t%s\n", ids, seg, pos, lab, $6 }'
}

run "$G" --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: hdf5gen" "$out"
run "$G" --version
expect_rc "version" 0
ok "version names HDF5 and libdeflate" grep -q "HDF5 1\..*libdeflate" "$out"
run "$G" -o "$T/x.hdf5" "$T/nope.txt"
expect_rc "no vocab" 2
expect_err "no vocab message" "*--vocab FILE is required*"
run "$G" --vocab "$T/nope-vocab.txt" -o "$T/x.hdf5" "$T/nope.txt"
expect_rc "unreadable vocab" 2
expect_err "unreadable vocab message" "*nope-vocab.txt*"
run "$G" --vocab "$TESTS/../data/bert/vocab.txt" "$T/nope.txt"
expect_rc "no output" 2
run "$G" --vocab "$TESTS/../data/bert/vocab.txt" --max-seq-length 4 -o "$T/x.hdf5" "$T/nope.txt"
expect_rc "max_seq_length 4" 2
run "$G" --vocab "$TESTS/../data/bert/vocab.txt" --shard-index 2 --shard-count 2 -o "$T/x/" "$T/nope.txt"
expect_rc "shard index not below count" 2
run "$G" --vocab "$TESTS/../data/bert/vocab.txt" --dupe-factor 0 -o "$T/x.hdf5" "$T/nope.txt"
expect_rc "--dupe-factor 0 (no instances): a usage error" 2
expect_err "... naming the option" "hdf5gen: --dupe-factor: '0' is out of range *"

# ---- the spec's test vector (16.2), read back with h5dump ----
printf '%s\n' '[PAD]' '[unused0]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' the cat sat on mat a dog ran fast . , it was \
  happy '##s' '##ing' bird sang song sun is hot today we go home >"$T/v.txt"
printf 'The cat sat on the mat.\nIt was happy.\nThe dog ran fast.\nA bird sang a song.\n\nThe sun is hot today.\nWe go home.\nDogs ran, cats sat.\n\nSinging birds.\n' >"$T/s.txt"
run "$G" --vocab "$T/v.txt" --max_seq_length 16 --dupe_factor 2 --max_predictions_per_seq 3 --random_seed 12345 \
  --do_lower_case -o "$T/v16.hdf5" "$T/s.txt"
expect_rc "test vector" 0
expect_err "summary line" "*1 shard written, 3 documents*8 instances*"
cat >"$T/want16.txt" <<'EOF'
3 5 22 20 15 4 12 13 14 15 11 22 23 5 24 4	0000001111111111	1 13	2 11	1
3 2 22 20 5 4 31 15 12 20 5 16 7 20 8 4	0000001111111111	4 10	15 13	1
3 6 5 5 9 6 10 15 4 6 25 26 27 28 15 4	0000000001111111	2 3	7 8	1
3 17 18 19 15 4 12 13 14 5 11 22 5 11 24 4	0000001111111111	9 12	15 23	0
3 25 26 27 28 5 29 5 4 20 13 16 7 20 8 4	0000000001111111	5 7	15 30	0
3 17 18 19 15 4 12 13 14 15 11 5 23 11 5 4	0000001111111111	11 14	22 24	0
3 6 7 8 9 5 5 15 4 2 22 20 15 4	00000000011111	5 6	6 10	1
3 6 5 26 17 28 15 4 30 31 15 12 20 13 16 4	0000000011111111	2 4	25 27	0
EOF
h5rows "$T/v16.hdf5" >"$T/got16.txt"
ok "test vector rows (spec 16.2)" cmp -s "$T/got16.txt" "$T/want16.txt"
h5col "$T/v16.hdf5" input_ids | sed -n 7p >"$T/row6"
ok "short row padded with 0" [ "$(cat "$T/row6")" = "3 6 7 8 9 5 5 15 4 2 22 20 15 4 0 0" ]
h5col "$T/v16.hdf5" masked_lm_ids | sed -n 1p >"$T/lab0"
ok "masked_lm_ids padded with 0" [ "$(cat "$T/lab0")" = "2 11 0" ]
h5dump -H -p "$T/v16.hdf5" >"$T/h.txt"
ok "six datasets" [ "$(grep -c 'DATASET "' "$T/h.txt")" -eq 6 ]
ok "input_ids i32 (8, 16)" grep -A2 'DATASET "input_ids"' "$T/h.txt" | grep -q 'H5T_STD_I32LE'
ok "input_mask i8" grep -A2 'DATASET "input_mask"' "$T/h.txt" | grep -q 'H5T_STD_I8LE'
ok "segment_ids i8" grep -A2 'DATASET "segment_ids"' "$T/h.txt" | grep -q 'H5T_STD_I8LE'
ok "masked_lm_positions i32 (8, 3)" grep -A3 'DATASET "masked_lm_positions"' "$T/h.txt" | grep -q '( 8, 3 )'
ok "next_sentence_labels i8 (8)" grep -A3 'DATASET "next_sentence_labels"' "$T/h.txt" | grep -q 'SIMPLE { ( 8 ) / ( 8 ) }'
ok "gzip level 4 on every dataset" [ "$(grep -c 'DEFLATE { LEVEL 4 }' "$T/h.txt")" -eq 6 ]
ok "no attributes" not grep -q 'ATTRIBUTE' "$T/h.txt"

# ---- real shards from the prep stage ----
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null >"$T/en.txt"
"$BIN/wiki_dump" "$DATA/huwiki-berlin.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l hu 2>/dev/null >"$T/hu.txt"
ok "shards made" [ "$(wc -l <"$T/en.txt")" -gt 200 -a "$(wc -l <"$T/hu.txt")" -gt 200 ]
mkdir -p "$T/in"
cp "$T/en.txt" "$T/in/wikicorpus_en_training_0.txt"
cp "$T/hu.txt" "$T/in/wikicorpus_en_training_1.txt"
cat "$T/en.txt" "$T/en.txt" >"$T/in/wikicorpus_en_test_0.txt"

V=$TESTS/../data/bert/vocab.txt
run "$G" --vocab "$V" --dupe-factor 2 -j1 -o "$T/en-j1.hdf5" "$T/en.txt"
expect_rc "one shard -j1" 0
run "$G" --vocab "$V" --dupe-factor 2 -j2 -o "$T/en-j2.hdf5" "$T/en.txt"
ok "-j2 file byte-identical" cmp -s "$T/en-j1.hdf5" "$T/en-j2.hdf5"
ok "a shard of several documents: no next-sentence warning" not grep -q "no random next" "$err"
awk 'NF { print } !NF { exit }' "$T/en.txt" >"$T/one-doc.txt"
run "$G" --vocab "$V" --dupe-factor 2 -o "$T/one-doc.hdf5" "$T/one-doc.txt"
expect_rc "a shard of one document" 0
expect_err "... warned: no random next sentence, naming the shard" \
  "*one-doc.txt: 1 document: no random next sentence (NVIDIA's rule draws it from another document of the shard)*"
run "$G" --vocab "$V" --dupe-factor 2 --nsp 0 -f -o "$T/one-doc.hdf5" "$T/one-doc.txt"
ok "... not with --nsp 0 (no next-sentence task)" not grep -q "no random next" "$err"
run "$G" --vocab "$V" --dupe-factor 2 -j2 --max-seq-length 512 --max-predictions-per-seq 80 -o "$T/en512.hdf5" "$T/en.txt"
expect_rc "seq 512" 0
h5dump -H -p "$T/en512.hdf5" >"$T/h512.txt"
ok "seq 512: input_ids (N, 512)" grep -A3 'DATASET "input_ids"' "$T/h512.txt" | grep -q ', 512 )'
ok "seq 512: positions (N, 80)" grep -A3 'DATASET "masked_lm_positions"' "$T/h512.txt" | grep -q ', 80 )'
if [ -n "${TESTBIN:-}" ] && [ -x "$DUMP" ]; then
  "$DUMP" --vocab "$V" --dupe 2 --seq 128 --max-pred 20 --seed 12345 "$T/en.txt" >"$T/en-dump.txt"
  h5rows "$T/en-j1.hdf5" >"$T/en-h5.txt"
  ok "HDF5 rows equal the instances (en)" cmp -s "$T/en-h5.txt" "$T/en-dump.txt"
  ok "rows exist" [ "$(wc -l <"$T/en-h5.txt")" -gt 100 ]
  "$DUMP" --vocab "$V" --dupe 2 --seq 512 --max-pred 80 "$T/en.txt" >"$T/en512-dump.txt"
  h5rows "$T/en512.hdf5" >"$T/en512-h5.txt"
  ok "HDF5 rows equal the instances (seq 512)" cmp -s "$T/en512-h5.txt" "$T/en512-dump.txt"
else
  echo "not run: HDF5 rows against inst_dump (the driver is not built; run through make test)"
fi

# several shards into a directory: each file equals the file made alone
run "$G" --vocab "$V" --dupe-factor 2 -j2 -o "$T/outdir/" "$T/in"
expect_rc "directory of shards -j2" 0
ok "one file per shard" [ "$(ls "$T/outdir" | tr '\n' ' ')" = "wikicorpus_en_test_0.hdf5 wikicorpus_en_training_0.hdf5 wikicorpus_en_training_1.hdf5 " ]
ok "parallel shard = the shard alone" cmp -s "$T/outdir/wikicorpus_en_training_0.hdf5" "$T/en-j1.hdf5"
expect_err "summary names three shards" "*3 shards written*"
run "$G" --vocab "$V" --dupe-factor 2 -j1 -o "$T/outdir1" "$T/in/wikicorpus_en_training_0.txt" \
  "$T/in/wikicorpus_en_training_1.txt" "$T/in/wikicorpus_en_test_0.txt"
ok "-j1 files equal -j2 files" cmp -s "$T/outdir1/wikicorpus_en_training_1.hdf5" "$T/outdir/wikicorpus_en_training_1.hdf5"
ok "-j1 files equal -j2 files (test shard)" cmp -s "$T/outdir1/wikicorpus_en_test_0.hdf5" "$T/outdir/wikicorpus_en_test_0.hdf5"
# a memory budget below two shards' estimate: one shard at a time, with both threads
run "$G" --vocab "$V" --dupe-factor 2 -j2 --memory 1M -v -o "$T/outdir-mem/" "$T/in"
expect_rc "--memory 1M -j2" 0
expect_err "... runs one shard at a time, saying why" "*1 shard at once (not 2): each needs up to * MB of the 1 MB (--memory)*"
ok "... the same files" diff -r "$T/outdir" "$T/outdir-mem"
run "$G" --vocab "$V" --memory 0.5G -o "$T/x.hdf5" "$T/en.txt"
expect_rc "--memory 0.5G: a usage error" 2

# existing output
run "$G" --vocab "$V" --dupe-factor 2 -o "$T/outdir/" "$T/in"
expect_rc "existing output without -f" 2
expect_err "existing output message" "*already exists (use -f*"
touch -d '2001-01-01' "$T/outdir/wikicorpus_en_training_0.hdf5"
rm "$T/outdir/wikicorpus_en_training_1.hdf5"
run "$G" --vocab "$V" --dupe-factor 2 --skip-existing -o "$T/outdir/" "$T/in"
expect_rc "--skip-existing" 0
ok "--skip-existing writes the missing shard" cmp -s "$T/outdir/wikicorpus_en_training_1.hdf5" "$T/outdir1/wikicorpus_en_training_1.hdf5"
ok "--skip-existing leaves the others" [ "$(stat -c %Y "$T/outdir/wikicorpus_en_training_0.hdf5")" -lt 1000000000 ]
expect_err "--skip-existing says so" "*2 shards skipped: output exists*"
run "$G" --vocab "$V" --dupe-factor 2 -f -o "$T/outdir/" "$T/in"
expect_rc "-f replaces" 0
ok "-f rewrote the file" [ "$(stat -c %Y "$T/outdir/wikicorpus_en_training_0.hdf5")" -gt 1000000000 ]

# bertPrep's directory
run "$G" --vocab "$V" --dupe_factor 5 --do_lower_case 1 -P "$T/prep" "$T/in/wikicorpus_en_training_0.txt"
expect_rc "--prep-root" 0
ok "bertPrep directory and name" [ -f "$T/prep/hdf5_lower_case_1_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5/wikicorpus_en/wikicorpus_en_training_0.hdf5" ]
run "$G" --vocab "$V" --dupe_factor 1 --max_seq_length 512 --max_predictions_per_seq 80 --masked_lm_prob 0.2 \
  --do-lower-case 0 --dataset books_wiki_en_corpus -P "$T/prep" "$T/in/wikicorpus_en_training_0.txt"
ok "bertPrep directory with other values" [ -f "$T/prep/hdf5_lower_case_0_seq_len_512_max_pred_80_masked_lm_prob_0.2_random_seed_12345_dupe_factor_1/books_wiki_en_corpus/wikicorpus_en_training_0.hdf5" ]
run "$G" --vocab "$V" -P "$T/prep" "$T/en.txt"
expect_rc "--prep-root without a dataset name" 2
run "$G" --vocab "$V" --dupe_factor 1 --strip-accents 0 -P "$T/prep" "$T/in/wikicorpus_en_training_0.txt"
ok "--strip-accents 0 named after lower_case_1" [ -f "$T/prep/hdf5_lower_case_1_strip_accents_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_1/wikicorpus_en/wikicorpus_en_training_0.hdf5" ]
run "$G" --vocab "$V" --dupe_factor 1 --do-lower-case 0 --strip-accents 0 -P "$T/prep" "$T/in/wikicorpus_en_training_0.txt"
ok "... and not named where it is the case choice" [ -f "$T/prep/hdf5_lower_case_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_1/wikicorpus_en/wikicorpus_en_training_0.hdf5" ]
run "$G" --vocab "$V" --strip-accents 2 -o "$T/x.hdf5" "$T/hu.txt"
expect_rc "--strip-accents 2" 2
# Hungarian text: kept accents give other ids than stripped ones
printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nkor\nkör\n' >"$T/kv.txt"
printf 'kor kör kor kör.\nkör kor.\n\nkor kör kör.\nkor.\n' >"$T/kor.txt"
run "$G" --vocab "$T/kv.txt" --dupe-factor 1 --no-mask --strip-accents 0 -o "$T/kor0.hdf5" "$T/kor.txt"
run "$G" --vocab "$T/kv.txt" --dupe-factor 1 --no-mask -o "$T/kor1.hdf5" "$T/kor.txt"
run "$BIN/hdf5_check" --vocab "$T/kv.txt" "$T/kor0.hdf5"
ok "--strip-accents 0: kör keeps its id (max id 6)" grep -q "max id 6" "$out"
run "$BIN/hdf5_check" --vocab "$T/kv.txt" "$T/kor1.hdf5"
ok "... stripped, it is kor (max id 5)" grep -q "max id 5" "$out"

# the original's --input_file DIR: every *.txt as one stream into one file
mkdir -p "$T/two"
cp "$T/en.txt" "$T/two/a.txt"
cp "$T/hu.txt" "$T/two/b.txt"
echo "ignored" >"$T/two/c.dat"
run "$G" --vocab "$V" --dupe_factor 2 --input_file "$T/two" --output_file "$T/two.hdf5"
expect_rc "--input_file DIR" 0
if [ -x "$DUMP" ]; then
  "$DUMP" --vocab "$V" --dupe 2 "$T/en.txt" "$T/hu.txt" >"$T/two-dump.txt"
  h5rows "$T/two.hdf5" >"$T/two-h5.txt"
  ok "--input_file DIR = the files as one stream" cmp -s "$T/two-h5.txt" "$T/two-dump.txt"
fi

# batch shares
run "$G" --vocab "$V" --dupe-factor 1 --shard-index 1 --shard-count 2 -o "$T/part/" "$T/in"
expect_rc "--shard-index 1 --shard-count 2" 0
ok "part 1 of 2: the second shard only" [ "$(ls "$T/part" | tr '\n' ' ')" = "wikicorpus_en_training_0.hdf5 " ]
expect_err "part named in the summary" "*part 1 of 2: 1 of 3 shards*"
rc=0
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$G" --vocab "$V" --dupe-factor 1 -o "$T/part/" "$T/in" >"$out" 2>"$err" || rc=$?
expect_rc "MPI rank 0 of 2" 0
ok "rank 0 of 2: the first and third shards" [ "$(ls "$T/part" | tr '\n' ' ')" = "wikicorpus_en_test_0.hdf5 wikicorpus_en_training_0.hdf5 wikicorpus_en_training_1.hdf5 " ]

# bad input: an empty shard and a missing one fail; the good shard is written
: >"$T/in/wikicorpus_en_training_2.txt"
printf '\n\n  \n' >"$T/blank.txt"
run "$G" --vocab "$V" --dupe-factor 2 -o "$T/bad/" "$T/in/wikicorpus_en_training_0.txt" "$T/in/wikicorpus_en_training_2.txt" "$T/nope.txt" "$T/blank.txt"
expect_rc "empty and missing shards" 1
expect_err "empty shard named" "*wikicorpus_en_training_2.txt: no documents*"
expect_err "missing shard named" "*nope.txt: No such file or directory*"
expect_err "blank shard named" "*blank.txt: no documents*"
expect_err "failure count" "*3 of 4 shards failed*"
ok "the good shard is written" cmp -s "$T/bad/wikicorpus_en_training_0.hdf5" "$T/en-j1.hdf5"
ok "nothing else written" [ "$(ls -A "$T/bad" | wc -l)" -eq 1 ]

# one-sentence documents and unknown words
printf 'Zyxwvut qqqq.\n\nJust one sentence here.\n\n' >"$T/one.txt"
run "$G" --vocab "$T/v.txt" --max_seq_length 16 --dupe_factor 3 -o "$T/one.hdf5" "$T/one.txt"
expect_rc "one-sentence documents, unknown words" 0
ok "unknown words become [UNK] (2)" grep -q '\b2\b' <(h5col "$T/one.hdf5" input_ids)

# vocabularies without the special tokens
grep -v '^\[MASK\]$' "$T/v.txt" >"$T/v-nomask.txt"
run "$G" --vocab "$T/v-nomask.txt" -o "$T/x.hdf5" "$T/s.txt"
expect_rc "vocab without [MASK]" 2
expect_err "missing [MASK] named" "*v-nomask.txt: the vocabulary has no [[]MASK[]] token*"
ok "no output then" [ ! -e "$T/x.hdf5" ]
run "$G" --vocab "$T/v-nomask.txt" --no-mask --max_seq_length 16 -o "$T/x.hdf5" "$T/s.txt"
expect_rc "--no-mask needs no [MASK]" 0
grep -v '^\[SEP\]$' "$T/v.txt" >"$T/v-nosep.txt"
run "$G" --vocab "$T/v-nosep.txt" -o "$T/y.hdf5" "$T/s.txt"
expect_rc "vocab without [SEP]" 2
expect_err "missing [SEP] named" "*the vocabulary has no [[]SEP[]] token*"

# beyond the original
run "$G" --vocab "$V" --dupe-factor 1 --no-mask -o "$T/nomask.hdf5" "$T/en.txt"
expect_rc "--no-mask" 0
ok "--no-mask: no positions" [ "$(h5col "$T/nomask.hdf5" masked_lm_positions | tr ' ' '\n' | sort -u)" = 0 ]
ok "--no-mask: no [MASK] (103) in the ids" not grep -qw 103 <(h5col "$T/nomask.hdf5" input_ids)
run "$G" --vocab "$V" --dupe-factor 1 --nsp 0 -o "$T/nonsp.hdf5" "$T/en.txt"
expect_rc "--nsp 0" 0
ok "--nsp 0: one segment" [ "$(h5col "$T/nonsp.hdf5" segment_ids | tr ' ' '\n' | sort -u)" = 0 ]
ok "--nsp 0: labels 0" [ "$(h5col "$T/nonsp.hdf5" next_sentence_labels | tr ' ' '\n' | sort -u)" = 0 ]
{ cat "$V"; printf 'Berlin\nNémet\n'; } >"$T/vocab-cased.txt"
run "$G" --vocab "$T/vocab-cased.txt" --dupe-factor 1 --do-lower-case 0 -o "$T/cased.hdf5" "$T/hu.txt"
expect_rc "--do-lower-case 0" 0
cased_id=$(($(grep -n '^Berlin$' "$T/vocab-cased.txt" | cut -d: -f1) - 1))
ok "--do-lower-case 0 keeps 'Berlin'" grep -qw "$cased_id" <(h5col "$T/cased.hdf5" input_ids)
run "$G" --vocab "$T/vocab-cased.txt" --dupe-factor 1 -o "$T/uncased.hdf5" "$T/hu.txt"
ok "default lower-cases: no 'Berlin'" not grep -qw "$cased_id" <(h5col "$T/uncased.hdf5" input_ids)
run "$G" --vocab "$V" --dupe-factor 1 --whole-word-mask -o "$T/wwm.hdf5" "$T/en.txt"
expect_rc "--whole-word-mask" 0
ok "--whole-word-mask differs" not cmp -s "$T/wwm.hdf5" "$T/en-j1.hdf5"

# disk full: exit 1, the message, no file, no temp file
if [ -f "$INJECT" ]; then
  for at in 1 4 9; do
    rc=0
    (cd "$T" && WB_INJECT=pwrite WB_INJECT_AT=$at LD_PRELOAD=$INJECT "$G" --vocab "$V" --dupe-factor 2 -o FAILME.hdf5 en.txt) \
      >"$out" 2>"$err" || rc=$?
    expect_rc "disk full after $at writes" 1
    expect_err "disk full message ($at)" "*FAILME.hdf5: *No space left on device*"
    ok "no file left ($at)" [ -z "$(ls "$T" | grep FAILME)" ]
  done
  # two shards on two threads: HDF5's stack dumps are off in every thread,
  # so stderr holds one line per failed shard and the summary, nothing else
  # (libhdf5 1.10.8 leaks a 4 KiB buffer when H5Fcreate fails on a full
  # disk: LeakSanitizer, under make asan, is told to pass over its blocks)
  mkdir -p "$T/j2in"
  split -n l/2 -d --additional-suffix=.txt "$T/en.txt" "$T/j2in/s"
  printf 'leak:libhdf5\n' >"$T/lsan.supp"
  for at in 1 3 9; do
    rc=0
    (cd "$T" && LSAN_OPTIONS=suppressions=$T/lsan.supp:print_suppressions=0 WB_INJECT=pwrite WB_INJECT_AT=$at LD_PRELOAD=$INJECT \
      "$G" --vocab "$V" --dupe-factor 1 -j2 -o FAILME/ j2in/) \
      >"$out" 2>"$err" || rc=$?
    expect_rc "-j2 disk full after $at writes" 1
    ok "-j2 disk full ($at): no HDF5 stack dump" not grep -q "HDF5-DIAG\|#00[0-9]:\|major:" "$err"
    ok "-j2 disk full ($at): one error line per shard" eval \
      '[ "$(grep -c "^hdf5gen: FAILME/s0[01].hdf5: .*No space left on device$" "$err")" = 2 ]'
    ok "-j2 disk full ($at): the summary and the count, no other line" eval \
      '[ "$(wc -l <"$err")" = 4 ] && grep -q "^hdf5gen: 0 shards written" "$err" && tail -1 "$err" | grep -q "^hdf5gen: 2 of 2 shards failed$"'
    ok "-j2 disk full ($at): no file left" [ -z "$(ls "$T/FAILME" 2>/dev/null)" ]
  done
else
  echo "not run: disk-full checks (the injector is not built; run through make test)"
fi
ok "no temp files anywhere" [ -z "$(find "$T" -name '*.tmp.*')" ]
done_testing
