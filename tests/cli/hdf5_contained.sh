# HDF5 inputs are read only from the file named: hdf5_check and
# train_bert_cpu refuse a file whose data lies elsewhere or needs a plugin,
# with "FILE: not a self-contained HDF5 file (...)", exit 1, before reading
# any of it: raw data in external storage (/etc/passwd), an external link
# (to a valid file, to a FIFO: no hang), a soft link through an external
# one, an external link anywhere in the root group, a virtual dataset (of a
# valid file, of a FIFO), a filter other than deflate/shuffle/fletcher32
# (LZF). A soft link inside the file is read as the dataset it names. The
# files are written by the test driver h5craft with the HDF5 library the
# programs link, so no Python package is involved.
. "$TESTS/cli/lib.sh"
C=$BIN/hdf5_check
TR=$BIN/train_bert_cpu
V=$TESTS/../data/bert/vocab.txt
H=${TESTBIN:-}/h5craft
if [ ! -x "$H" ]; then
  echo "not run: the test driver h5craft is not built (run through make test)"
  done_testing
  exit 0
fi
lines() { wc -l <"$err"; }
cat >"$T/tiny.json" <<'JSON'
{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
JSON
train() { # FILE: train_bert_cpu on a copy of FILE as the only training file
  rm -rf "$T/in" "$T/tout"
  mkdir -p "$T/in"
  cp "$1" "$T/in/x_training_0.hdf5"
  run timeout 60 "$TR" --input_dir "$T/in" --config_file "$T/tiny.json" --output_dir "$T/tout" \
    --vocab_file "$V" --train_batch_size 4 --max_steps 1 --max_predictions_per_seq 20 --seed 3 -j1
}

"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -12 >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 -o "$T/good.hdf5" "$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 --seed 7 -o "$T/other.hdf5" "$T/en.txt"
mkfifo "$T/fifo"
# a writer on the FIFO would unblock a reader that opened it: none is started

nc="not a self-contained HDF5 file"
while IFS='|' read -r name mode arg detail; do
  f=$T/$name.hdf5
  # shellcheck disable=SC2086
  "$H" "$mode" "$T/good.hdf5" "$f" $arg || { ok "h5craft $mode" false; continue; }
  run timeout 20 "$C" "$f"
  expect_rc "hdf5_check, $name: exit 1 (124: it hung)" 1
  expect_err "hdf5_check, $name: refused, the reason named" "hdf5_check: $f: $nc ($detail)
hdf5_check: 1 of 1 file invalid"
  train "$f"
  expect_rc "train_bert_cpu, $name: exit 1 (124: it hung)" 1
  expect_err "train_bert_cpu, $name: refused" "train_bert_cpu: $T/in/x_training_0.hdf5: $nc ($detail)"
  ok "train_bert_cpu, $name: one line" [ "$(lines)" = 1 ]
  ok "train_bert_cpu, $name: no checkpoint, no export" eval '[ ! -e "$T/tout/hf" ] && ! ls "$T/tout" 2>/dev/null | grep -q ckpt'
done <<EOF
extstore|extstore|/etc/passwd|input_ids: its raw data is stored in /etc/passwd
elink|elink|$T/other.hdf5|input_ids: an external link to $T/other.hdf5:/input_ids
elink-fifo|elink|$T/fifo|input_ids: an external link to $T/fifo:/input_ids
softelink|softelink|$T/fifo|input_ids: an external link at g/ext to $T/fifo:/
extra|extra|$T/other.hdf5|extra: an external link to $T/other.hdf5:/
vds|vds|$T/other.hdf5|input_ids: a virtual dataset mapping $T/other.hdf5
vds-fifo|vds|$T/fifo|input_ids: a virtual dataset mapping $T/fifo
vdsunlim-fifo|vdsunlim|$T/fifo|input_ids: a virtual dataset mapping $T/fifo
lzf|filter|32000 lzf|input_ids: filter 32000 "lzf"; only deflate, shuffle and fletcher32 are read, no plugins
EOF

# a plugin path in the environment changes nothing: no plugin is loaded
mkdir -p "$T/plugins"
run env HDF5_PLUGIN_PATH="$T/plugins" HDF5_PLUGIN_PRELOAD= timeout 20 "$C" "$T/lzf.hdf5"
expect_rc "LZF with HDF5_PLUGIN_PATH set: exit 1" 1
expect_err "... the same refusal, no plugin directory named" "hdf5_check: $T/lzf.hdf5: $nc (input_ids: filter 32000*"

# a soft link inside the file is the dataset it names: the same rows
"$H" soft "$T/good.hdf5" "$T/soft.hdf5"
run "$C" --dump "$T/soft.hdf5"
expect_rc "a soft link inside the file: accepted" 0
cp "$out" "$T/soft.dump"
run "$C" --dump "$T/good.hdf5"
ok "... the rows of the dataset it names" cmp -s "$out" "$T/soft.dump"
train "$T/soft.hdf5"
expect_rc "... and the trainer reads it" 0
done_testing
