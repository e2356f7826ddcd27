# CLI tests of the instance generator through its test driver inst_dump
# (built into $TESTBIN): exit codes, identical rows for any -j and the same
# seed, other rows for another seed, --cased, --no-mask, --no-nsp,
# --whole-word, on shards made by our prep stage from tests/data.
# When NVIDIA's create_pretraining_data.py is available locally (after a run
# of bench/hdf5gen_compare.sh, or in $NV_BERT_DIR) and a Python with h5py,
# numpy, six and tqdm is found, its rows are compared with ours; otherwise
# that part prints "not run" and counts nothing.
. "$TESTS/cli/lib.sh"
DUMP=${TESTBIN:-}/inst_dump
not() { ! "$@"; }
if [ -z "${TESTBIN:-}" ] || [ ! -x "$DUMP" ]; then
  echo "not run: the inst_dump driver is not built (run through make test)"
  done_testing
  exit 0
fi

run $DUMP --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: inst_dump" "$out"
run $DUMP
expect_rc "no input" 2
run $DUMP "$T/nope.txt"
expect_rc "missing input" 1
expect_err "missing input message" "*nope.txt: No such file or directory*"
run $DUMP --seq 4 "$T/nope.txt"
expect_rc "max_seq_length 4" 2
expect_err "max_seq_length message" "*max_seq_length 4*"

# shards: one sentence per line, a blank line between documents
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null >"$T/en.txt"
"$BIN/wiki_dump" "$DATA/huwiki-berlin.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l hu 2>/dev/null >"$T/hu.txt"
ok "shards made" [ "$(wc -l <"$T/en.txt")" -gt 200 -a "$(wc -l <"$T/hu.txt")" -gt 200 ]

run $DUMP --dupe 2 --stats "$T/en.txt" "$T/hu.txt"
expect_rc "two shards" 0
cp "$out" "$T/j1.txt"
ok "rows written" [ "$(wc -l <"$T/j1.txt")" -gt 300 ]
expect_err "stats line" "*3 documents*instances*"
ok "five fields per row" [ "$(awk -F'\t' 'NF != 5' "$T/j1.txt" | wc -l)" -eq 0 ]
ok "rows fit 128" [ "$(awk -F'\t' 'length($2) > 128' "$T/j1.txt" | wc -l)" -eq 0 ]
ok "rows start with [CLS] (101)" [ "$(cut -d' ' -f1 "$T/j1.txt" | sort -u)" = 101 ]
ok "both labels occur" [ "$(cut -f5 "$T/j1.txt" | sort -u | tr -d '\n')" = 01 ]
run $DUMP --dupe 2 -j 2 "$T/en.txt" "$T/hu.txt"
ok "-j2 gives the same rows" cmp -s "$out" "$T/j1.txt"
run $DUMP --dupe 2 "$T/en.txt" "$T/hu.txt"
ok "same seed, same rows" cmp -s "$out" "$T/j1.txt"
run $DUMP --dupe 2 --seed 7 "$T/en.txt" "$T/hu.txt"
ok "other seed, other rows" not cmp -s "$out" "$T/j1.txt"

# case: the shipped (uncased) vocabulary plus a few cased Hungarian tokens
{ cat "$TESTS/../data/bert/vocab.txt"; printf 'Berlin\nNémet\nfőváros\n'; } >"$T/vocab-cased.txt"
run $DUMP --vocab "$T/vocab-cased.txt" --dupe 1 --tokens "$T/hu.txt"
sed 's/\[[A-Z]*\]//g' "$out" >"$T/uncased.txt"
ok "uncased: no capitals or accents" not grep -q '[A-ZÁÉÍÓÖŐÚÜŰáéíóöőúüű]' "$T/uncased.txt"
ok "uncased: berlin lower-cased" grep -q ' berlin ' "$T/uncased.txt"
run $DUMP --vocab "$T/vocab-cased.txt" --dupe 1 --tokens --cased "$T/hu.txt"
ok "--cased keeps capitals" grep -q ' Berlin ' "$out"
ok "--cased keeps accents" grep -q ' főváros ' "$out"
run $DUMP --dupe 1 --tokens --no-mask "$T/en.txt"
ok "--no-mask: no [MASK], no positions" [ "$(grep -c '\[MASK\]' "$out")" -eq 0 -a "$(cut -f3 "$out" | sort -u)" = "" ]
run $DUMP --dupe 1 --no-nsp "$T/en.txt"
ok "--no-nsp: one segment, label 0" [ "$(cut -f2 "$out" | grep -c 1)" -eq 0 -a "$(cut -f5 "$out" | sort -u)" = 0 ]
ok "--no-nsp: rows up to 128" [ "$(awk -F'\t' 'length($2) > 128' "$out" | wc -l)" -eq 0 ]
run $DUMP --dupe 1 --whole-word "$T/en.txt"
cp "$out" "$T/wwm.txt"
run $DUMP --dupe 1 "$T/en.txt"
ok "--whole-word changes the masks" not cmp -s "$out" "$T/wwm.txt"

# ---- against the original, when it is here ----
NV_COMMIT=4733603577080dbd1bdcd51864f31e45d5196704
SHA_CPD=2aac140e1e037411fd017052040ab2e49bbed8e9779030b51d9b455195592aff
SHA_TOK=01ba033a4ac2fec5aef36b27efd5fbc3ba07be5c6bcbb10258ca83c8689e8a52
nv=
for d in ${NV_BERT_DIR:-} "${BENCH_TMP:-/tmp/wikibert-bench}/nvidia-bert"; do
  if [ -f "$d/create_pretraining_data.py" ] && [ -f "$d/tokenization.py" ] &&
     [ "$(sha256sum <"$d/create_pretraining_data.py" | cut -d' ' -f1)" = "$SHA_CPD" ] &&
     [ "$(sha256sum <"$d/tokenization.py" | cut -d' ' -f1)" = "$SHA_TOK" ]; then nv=$d; break; fi
done
py=$(py_with "h5py, numpy, six, tqdm")
if [ -z "$nv" ]; then
  echo "not run: NVIDIA's create_pretraining_data.py ($NV_COMMIT) is not available locally (bench/hdf5gen_compare.sh fetches it)"
elif [ -z "$py" ]; then
  echo "not run: no Python with h5py, numpy, six and tqdm"
else
  mkdir -p "$T/nv"
  cp "$nv/create_pretraining_data.py" "$nv/tokenization.py" "$T/nv/"
  printf 'def cached_path(url_or_filename, cache_dir=None):\n    return url_or_filename\n' >"$T/nv/file_utils.py"
  REF=$TESTS/../bench/hdf5gen_ref.py
  VOCAB=$TESTS/../data/bert/vocab.txt
  for c in "en.txt 128 20 2 12345" "hu.txt 128 20 2 1" "en.txt 512 80 1 42" "hu.txt 512 80 3 12345"; do
    set -- $c
    "$py" "$REF" run "$T/nv" -- --vocab_file "$VOCAB" --input_file "$T/$1" --output_file "$T/ref.hdf5" \
      --max_seq_length "$2" --max_predictions_per_seq "$3" --dupe_factor "$4" --random_seed "$5" >/dev/null 2>&1
    "$py" "$REF" dump "$T/ref.hdf5" >"$T/ref.rows" 2>/dev/null
    run $DUMP --vocab "$VOCAB" --seq "$2" --max-pred "$3" --dupe "$4" --seed "$5" "$T/$1"
    ok "original's rows: $c" eval '[ -s "$T/ref.rows" ] && cmp -s "$T/ref.rows" "$out"'
  done
fi
done_testing
