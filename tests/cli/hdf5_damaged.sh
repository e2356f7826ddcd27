# Damaged HDF5 files: every file in tests/data/hdf5-damaged (mutations of
# an hdf5gen file that made libhdf5 1.10.8 crash or loop) gives hdf5_check
# and train_bert_cpu one error line naming the file and exit 1, never a
# signal; so do a file cut short and one claiming 2^40 rows, while valid
# files with a user block or superblock version 3 pass (written by the test
# driver h5craft with the HDF5 library the programs link: no Python).
# And when the HDF5 library itself crashes while a file is read (the
# injector makes H5Lexists or H5Dread fault, as a damaged file can), the
# program still ends with one line,
# "FILE: damaged HDF5 file (the HDF5 library crashed reading it)", exit 1,
# what it printed before kept, and no temp file left.
. "$TESTS/cli/lib.sh"
# under make asan the injector is preloaded ahead of the ASan runtime
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
C=$BIN/hdf5_check
TR=$BIN/train_bert_cpu
V=$TESTS/../data/bert/vocab.txt
D=$DATA/hdf5-damaged
lines() { wc -l <"$err"; }

cat >"$T/tiny.json" <<'JSON'
{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
JSON
targs() { # INPUT_DIR OUTPUT_DIR: train_bert_cpu's arguments (no spaces in $T)
  echo --input_dir "$1" --config_file "$T/tiny.json" --output_dir "$2" --vocab_file "$V" --train_batch_size 4 \
    --max_steps 4 --max_predictions_per_seq 20 --num_steps_per_checkpoint 1 --seed 3 -j1
}

n=0
for f in "$D"/*.hdf5; do
  b=$(basename "$f")
  n=$((n + 1))
  run timeout 60 "$C" "$f"
  expect_rc "hdf5_check $b: exit 1" 1
  expect_err "hdf5_check $b: the file named as damaged" "hdf5_check: $f: damaged HDF5 file (*)
hdf5_check: 1 of 1 file invalid"
  rm -rf "$T/in" "$T/out"
  mkdir -p "$T/in"
  cp "$f" "$T/in/x_training_0.hdf5"
  run timeout 60 "$TR" $(targs "$T/in" "$T/out")
  expect_rc "train_bert_cpu $b: exit 1" 1
  expect_err "train_bert_cpu $b: one line naming the file" "train_bert_cpu: $T/in/x_training_0.hdf5: damaged HDF5 file (*)"
  ok "train_bert_cpu $b: one line" [ "$(lines)" = 1 ]
done
ok "the damaged files are there ($n)" [ "$n" -ge 5 ]

# a valid file for the rest: hdf5gen's, of the same text as the damaged ones
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -12 >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 -o "$T/good.hdf5" "$T/en.txt"
run "$C" "$T/good.hdf5"
expect_rc "the valid file" 0
size=$(stat -c %s "$T/good.hdf5")
ok "the damaged files are mutations of this one (same size)" [ "$(stat -c %s "$D/dims.hdf5")" = "$size" ]

# cut short: the superblock's end-of-file address against the file's size
head -c 2900 "$T/good.hdf5" >"$T/cut.hdf5"
run "$C" "$T/cut.hdf5"
expect_rc "cut short: exit 1" 1
expect_err "cut short: the sizes" "hdf5_check: $T/cut.hdf5: damaged HDF5 file (truncated: its superblock says $size bytes, the file has 2900)*"

# a file that claims 2^40 rows (the shapes and no chunk, written by the test
# driver h5craft on the HDF5 library the programs link): refused before
# anything is allocated for it; and the superblock checks accept valid files
# of other layouts: a user block before the superblock (base address 512,
# 1024), superblock version 3
H=${TESTBIN:-}/h5craft
if [ -x "$H" ]; then
  mkdir -p "$T/huge"
  "$H" huge "$T/good.hdf5" "$T/huge/x_training_0.hdf5"
  hsize=$(stat -c %s "$T/huge/x_training_0.hdf5")
  run "$C" "$T/huge/x_training_0.hdf5"
  expect_rc "2^40 rows: exit 1" 1
  expect_err "2^40 rows: the claim and the file's size" "hdf5_check: $T/huge/x_training_0.hdf5: dataset input_ids claims 1099511627776 rows of 64 (more than a file of $hsize bytes can hold)*"
  run timeout 60 "$TR" $(targs "$T/huge" "$T/hout")
  expect_rc "train_bert_cpu, 2^40 rows: exit 1" 1
  expect_err "train_bert_cpu, 2^40 rows: the file named, no 'out of memory'" "train_bert_cpu: $T/huge/x_training_0.hdf5: dataset input_ids claims 1099511627776 rows of 64 (more than a file of $hsize bytes can hold)"
  "$H" copy "$T/good.hdf5" "$T/ub.hdf5" ub 512
  "$H" copy "$T/good.hdf5" "$T/v3.hdf5" v3
  "$H" copy "$T/good.hdf5" "$T/ubv3.hdf5" ub 1024 v3
  ok "v3: superblock version 3" eval '[ "$(od -An -tu1 -j8 -N1 "$T/v3.hdf5" | tr -d " ")" = 3 ]'
  ok "ub: the signature after 512 bytes" eval '[ "$(od -An -c -j513 -N3 "$T/ub.hdf5" | tr -d " ")" = HDF ]'
  for v in ub v3 ubv3; do
    run "$C" "$T/$v.hdf5"
    expect_rc "valid file ($v) accepted" 0
  done
  head -c $(($(stat -c %s "$T/ub.hdf5") - 100)) "$T/ub.hdf5" >"$T/ubcut.hdf5"
  run "$C" "$T/ubcut.hdf5"
  expect_rc "user block, cut short: exit 1" 1
  expect_err "user block, cut short: the sizes" "*ubcut.hdf5: damaged HDF5 file (truncated: its superblock says $(stat -c %s "$T/ub.hdf5") bytes, the file has $(stat -c %s "$T/ubcut.hdf5"))*"
else
  echo "not run: a file of 2^40 rows and other layouts (the test driver h5craft is not built; run through make test)"
fi

# a real crash inside libhdf5, not an injected one (found by make fuzz: a
# chunk dimension of 0 makes H5Dopen2 divide by zero, SIGFPE): one line,
# exit 1, for hdf5_check and the trainer
L=$DATA/hdf5-libcrash.hdf5
run timeout 60 "$C" "$L"
expect_rc "libhdf5's own crash: exit 1, not a signal" 1
expect_err "... one line naming the file" "hdf5_check: $L: damaged HDF5 file (the HDF5 library crashed reading it)"
rm -rf "$T/in" "$T/out"
mkdir -p "$T/in"
cp "$L" "$T/in/x_training_0.hdf5"
run timeout 120 "$TR" $(targs "$T/in" "$T/out")
expect_rc "... train_bert_cpu: exit 1" 1
ok "... train_bert_cpu: one line naming the file" eval '[ "$(lines)" = 1 ] && grep -q "^train_bert_cpu: $T/in/x_training_0.hdf5: " "$err"'

# unfiltered chunks stored shorter than a chunk (found by make fuzz; libhdf5
# copied past what it read): refused before the read, naming the dataset
for f in H5Dread:"masked_lm_ids: 122 bytes stored for 1 chunk of 480 bytes" \
  H5D__scatgath_read:"next_sentence_labels: 21 bytes stored for 1 chunk of 23 bytes"; do
  run "$C" "$TESTS/fuzz/crashes/mlmcheck/libhdf5-heap-overread-${f%%:*}.hdf5"
  expect_rc "short unfiltered chunk (${f%%:*}): exit 1" 1
  expect_err "... damaged, the sizes named" "*: damaged HDF5 file (${f#*:})*"
done

if [ ! -f "${INJECT:-}" ]; then
  echo "not run: crashes inside the HDF5 library (the injector is not built; run through make test)"
  done_testing
  exit 0
fi
crash="damaged HDF5 file (the HDF5 library crashed reading it)"
for fn in H5Lexists H5Dread; do
  run env WB_INJECT=$fn LD_PRELOAD="$INJECT" "$C" "$T/good.hdf5"
  expect_rc "hdf5_check, $fn crashes: exit 1" 1
  expect_err "hdf5_check, $fn crashes: one line" "hdf5_check: $T/good.hdf5: $crash"
  ok "hdf5_check, $fn crashes: one line only" [ "$(lines)" = 1 ]
done
# the crash in the second file: the first file's summary is kept
cp "$T/good.hdf5" "$T/second.hdf5"
run env WB_INJECT=H5Dread WB_INJECT_AT=7 LD_PRELOAD="$INJECT" "$C" "$T/good.hdf5" "$T/second.hdf5"
expect_rc "crash in the second file: exit 1" 1
expect_err "crash in the second file: named" "hdf5_check: $T/second.hdf5: $crash"
ok "crash in the second file: the first file's summary printed" grep -q "^$T/good.hdf5: 6 instances" "$out"
# train_bert_cpu: the first file, and a later read (the file read next, on the prefetch thread)
mkdir -p "$T/tin"
cp "$T/good.hdf5" "$T/tin/x_training_0.hdf5"
cp "$T/good.hdf5" "$T/tin/x_training_1.hdf5"
for at in 1 7; do
  rm -rf "$T/tout"
  run env WB_INJECT=H5Dread WB_INJECT_AT=$at LD_PRELOAD="$INJECT" "$TR" $(targs "$T/tin" "$T/tout")
  expect_rc "train_bert_cpu, read $at crashes: exit 1" 1
  expect_err "train_bert_cpu, read $at crashes: one line" "train_bert_cpu: $T/tin/x_training_[01].hdf5: $crash"
  ok "train_bert_cpu, read $at crashes: one line only" [ "$(lines)" = 1 ]
  ok "train_bert_cpu, read $at crashes: no temp file" [ -z "$(find "$T/tout" -name '*.tmp.*' 2>/dev/null)" ]
done
done_testing
