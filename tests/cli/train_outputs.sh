# What the trainers write, never clobbering: a run from step 0 into an
# output_dir that holds another run's checkpoints is refused (it would
# replace some and leave the newer ones for a later resume to take) unless
# it resumes them or -f removes them first; one run at a time per
# output_dir, a second refused naming the first one's process; the Hugging
# Face export is swapped in whole, so a full disk in the middle of it
# leaves the old export as it was (no new config.json beside the old
# weights) and no temp directory; a directory of other files is never
# swapped away; --nccl_id_file never replaces a file that is no id file,
# and is not written at all without a GPU.
. "$TESTS/cli/lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
TR=$BIN/train_bert_cpu
V=$TESTS/../data/bert/vocab.txt
mkdir -p "$T/h5"
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
cat >"$T/tiny.json" <<'EOF'
{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522}
EOF
sed 's/"hidden_size": 32/"hidden_size": 16/' "$T/tiny.json" >"$T/tiny16.json"
tr_args() { # OUT [more]
  local out=$1
  shift
  echo --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$out" --vocab_file "$V" \
    --train_batch_size 4 --max_steps 3 --max_predictions_per_seq 10 --num_steps_per_checkpoint 1 "$@"
}

# ---- a run from step 0 beside another run's checkpoints ----
"$TR" -q $(tr_args "$T/a" --seed 1) >/dev/null
cp -r "$T/a" "$T/a.before"
"$TR" -q $(tr_args "$T/ref" --seed 2 --max_steps 2) >/dev/null
run "$TR" -q $(tr_args "$T/a" --seed 2 --max_steps 2)
expect_rc "a new run into a directory with another run's checkpoints: refused" 1
expect_err "... naming the directory and the newest checkpoint, and the ways out" \
  "*$T/a: holds 3 checkpoints of another run (the newest $T/a/ckpt_3.wbckpt)*--resume_from_checkpoint*-f*"
ok "... the checkpoints are untouched" diff -r "$T/a" "$T/a.before"
run "$TR" -q $(tr_args "$T/a" --seed 1) --resume_from_checkpoint
expect_rc "--resume_from_checkpoint continues them" 0
rm -rf "$T/a.before"
cp -r "$T/a" "$T/a.before"
run "$TR" -q $(tr_args "$T/a" --seed 2 --max_steps 2) --init_checkpoint "$T/a/ckpt_3.wbckpt" -f
expect_rc "-f with --init_checkpoint among the checkpoints: refused" 1
expect_err "... naming it" "*ckpt_3.wbckpt: the same file as *ckpt_3.wbckpt, one of the checkpoints to remove*"
ok "... nothing removed" diff -r "$T/a" "$T/a.before"
run "$TR" $(tr_args "$T/a" --seed 2 --max_steps 2) -f
expect_rc "-f: the old checkpoints removed, the run made" 0
expect_err "... says so" "*-f: removed 3 checkpoints of an earlier run from $T/a*"
ok "... only this run's checkpoints are left, as a run into an empty directory writes them" \
  eval '[ "$(ls "$T/a" | grep wbckpt | tr "\n" " ")" = "ckpt_1.wbckpt ckpt_2.wbckpt " ] && cmp -s "$T/a/ckpt_2.wbckpt" "$T/ref/ckpt_2.wbckpt"'
# phase 2 from phase 1's checkpoint beside it writes above phase1_end_step: no mixing
run "$TR" -q $(tr_args "$T/a" --max_steps 1) --resume_from_checkpoint --phase2 --phase1_end_step 2 \
  --init_checkpoint "$T/a/ckpt_2.wbckpt"
expect_rc "phase 2 with --init_checkpoint into phase 1's directory: allowed" 0
ok "... phase 1's checkpoints kept, phase 2's beside them" eval '[ "$(ls "$T/a" | grep wbckpt | tr "\n" " ")" = "ckpt_1.wbckpt ckpt_2.wbckpt ckpt_3.wbckpt " ]'

# ---- one run at a time in an output_dir ----
mkfifo "$T/fifo"
"$TR" -q $(tr_args "$T/b") --init_checkpoint "$T/fifo" 2>/dev/null &
pid=$!
# the first run holds the lock once it reads --init_checkpoint (the FIFO)
timeout 60 bash -c 'exec 3>"$1"; "${@:2}" >/dev/null 2>"$1.err"; echo $? >"$1.rc"' _ "$T/fifo" "$TR" $(tr_args "$T/b")
timeout 60 sh -c ': >"$0"' "$T/fifo" & # the first run opens it once more, reads nothing, ends
timeout 60 tail --pid=$pid -f /dev/null
wait $pid
ok "a second run into the same output_dir is refused (exit $(cat "$T/fifo.rc"))" [ "$(cat "$T/fifo.rc")" = 1 ]
ok "... naming the directory and the first run's process" grep -q "$T/b: in use by another run (process $pid, still running)" "$T/fifo.err"
ok "... and the directory the first run created (and left empty) is gone" [ ! -e "$T/b" ]

# ---- the Hugging Face export: whole or not at all ----
E=$T/FAILME-hf
"$TR" -q $(tr_args "$T/e1") --export_hf "$E" >/dev/null
cp -r "$E" "$T/hf.before"
run env WB_INJECT=fwrite WB_INJECT_AT=1 LD_PRELOAD="$INJECT" "$TR" -q $(tr_args "$T/e2" --config_file "$T/tiny16.json") --export_hf "$E"
expect_rc "an export that fails half-way (disk full): exit 1" 1
expect_err "... naming the file" "*FAILME-hf.tmp.*/model.safetensors: write error: No space left on device*"
ok "... the old export is left as it was (no new config.json beside the old weights)" diff -r "$E" "$T/hf.before"
ok "... and no temp directory" bash -c "! ls -d '$E'.* 2>/dev/null"
mkdir "$E.tmp.999999999" # a dead process's: removed by the next export
touch "$E.tmp.999999999/config.json"
run "$TR" -q $(tr_args "$T/e2" --config_file "$T/tiny16.json") --export_hf "$E" --resume_from_checkpoint
expect_rc "the export again: exit 0" 0
ok "... the new export in place, whole" eval 'grep -q "\"hidden_size\": 16" "$E/config.json" && [ "$(ls "$E" | wc -l)" = 7 ] && ! cmp -s "$E/model.safetensors" "$T/hf.before/model.safetensors"'
ok "... the old one and the dead process's temp directory gone" bash -c "! ls -d '$E'.* 2>/dev/null"
mkdir -p "$T/mine"
echo notes >"$T/mine/notes.txt"
run "$TR" -q $(tr_args "$T/e3") --export_hf "$T/mine"
expect_rc "--export_hf onto a directory of other files: refused" 1
expect_err "... before training, naming the file" "*mine: holds notes.txt, which is not part of a Hugging Face export*"
ok "... which is kept, and no step was run" eval '[ "$(cat "$T/mine/notes.txt")" = notes ] && [ ! -s "$out" ] && [ ! -e "$T/e3" ]'

# ---- --nccl_id_file ----
echo precious >"$T/id"
TRB=$TESTBIN/train_bert_emu
if [ -x "$TRB" ]; then
  run "$TRB" -q $(tr_args "$T/n1") --world_size 2 --rank 0 --nccl_id_file "$T/id" --comm_timeout 30
  expect_rc "emulation: --nccl_id_file onto a file that is no id file: refused" 1
  expect_err "... naming it" "*$T/id: exists and is not a rendezvous file of train_bert*"
  ok "... and it is unchanged" [ "$(cat "$T/id")" = precious ]
else
  echo "not run: the emulated trainer (build/tests/train_bert_emu) was not built"
fi
if [ -x "$BIN/train_bert" ] && ! nvidia-smi -L >/dev/null 2>&1; then
  run "$BIN/train_bert" -q $(tr_args "$T/n2") --world_size 2 --rank 0 --nccl_id_file "$T/id"
  expect_rc "train_bert without a GPU, --nccl_id_file on another file: exit 1" 1
  expect_err "... no CUDA device" "*no CUDA device*"
  ok "... the file is not touched" [ "$(cat "$T/id")" = precious ]
else
  echo "not run: train_bert's --nccl_id_file without a GPU (no train_bert, or a GPU here)"
fi
done_testing
