# CLI tests of the pretraining targets (pipelines/pretrain.mk,
# pipelines/pretrain.sh): make hu-pretrain on the Berlin sample's HDF5
# files runs phase 1 and phase 2 of a tiny BERT with train_bert_cpu and
# with the emulated GPU trainer on two ranks (train_bert_emu); each phase
# exports a Hugging Face model and gets its completion marker only after
# it; phase 2 starts from phase 1's last checkpoint (its weights and
# moments: the same bytes as phase 2 run by hand from that checkpoint, not
# those of a phase 2 from scratch); a rerun is a no-op; a run stopped in
# phase 1 leaves nothing that looks finished and the next run resumes it
# to the bytes of an uninterrupted one; the report page draws both phases;
# the variables' errors; make en-pretrain on the English sample.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
not() { ! "$@"; }
# mk [ARGS...]: the Hungarian workflow on the sample and its pretraining, tiny
mk() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL timeout 1800 make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" \
    WORKDIR="$T/w" HU_DUMP="$DATA/huwiki-berlin.xml.bz2" EN_DUMP="$DATA/enwiki-206.xml.bz2" HU_VOCAB_SIZE=1000 \
    EN_TRAIN_SHARDS=1 EN_TEST_SHARDS=1 JOBS=1 MODEL=tiny STEPS1=4 BATCH1=8 MICRO1=4 STEPS2=2 BATCH2=4 MICRO2=2 \
    CKPT_EVERY=2 "$@"
}
steps() { grep -c '^{"step": ' "$1"; }
loss1() { sed -n 's/^{"step": 1, "loss": \([0-9.]*\),.*/\1/p' "$1"; }

# ---- train_bert_cpu ----
R=$T/w/hu/bert_tiny
run mk hu-pretrain TRAINER=cpu
expect_rc "make hu-pretrain TRAINER=cpu" 0
expect_err "... says which trainer and why" "*pretrain: train_bert_cpu: TRAINER=cpu; BERT-tiny, vocab_size *"
for f in bert_config.json phase1/.complete phase1/hf/model.safetensors phase1/hf/config.json phase1/hf/vocab.txt \
  phase1/log.jsonl phase1/ckpt_4.wbckpt phase2/.complete phase2/hf/model.safetensors phase2/log.jsonl \
  phase2/ckpt_4.wbckpt phase2/ckpt_6.wbckpt report.html; do
  ok "output $f" eval '[ -s "$R/$f" ] || { [ "${f##*/}" = .complete ] && [ -e "$R/$f" ]; }'
done
V=$T/w/hu/vocab/vocab.txt
vs=$((($(wc -l <"$V") + 7) / 8 * 8))
ok "vocab_size from the workflow's vocab.txt ($vs), in the config and both exports" \
  eval 'grep -q "\"vocab_size\": $vs" "$R/bert_config.json" && grep -q "\"vocab_size\": $vs" "$R/phase1/hf/config.json" &&
  grep -q "\"vocab_size\": $vs" "$R/phase2/hf/config.json"'
ok "... and the config is BERT-Tiny's otherwise" eval 'grep -q "\"hidden_size\": 128" "$R/bert_config.json" &&
  grep -q "\"num_hidden_layers\": 2" "$R/bert_config.json"'
ok "phase 1: 4 steps logged in phase1/log.jsonl, global batch 8 as 2 micro-batches of 4" \
  eval '[ "$(steps "$R/phase1/log.jsonl")" = 4 ] &&
  grep -q "\"train_batch_size\": 8, \"gradient_accumulation_steps\": 2, \"learning_rate\": 0.005, \"warmup_proportion\": 0.1, \"max_steps\": 4, \"max_seq_length\": 128, \"max_predictions_per_seq\": 20" "$R/phase1/log.jsonl"'
ok "phase 2: 2 steps at 512/80 from phase 1's checkpoint of step 4" \
  eval '[ "$(steps "$R/phase2/log.jsonl")" = 2 ] && grep -q "\"phase\": 2, \"phase1_end_step\": 4, \"start_step\": 0, \"from\": \"[^\"]*phase2/ckpt_4.wbckpt\"" "$R/phase2/log.jsonl" &&
  grep -q "\"max_seq_length\": 512, \"max_predictions_per_seq\": 80" "$R/phase2/log.jsonl"'
ok "... which is phase 1's last, linked into phase 2's directory" cmp -s "$R/phase1/ckpt_4.wbckpt" "$R/phase2/ckpt_4.wbckpt"
# phase 2 from phase 1's weights and moments: the bytes of phase 2 run by
# hand from that checkpoint (the command of phase 2's log), and not those
# of the same phase 2 from scratch
cmd=$(sed -n 's/^{"run": {"program": "[^"]*", "command": "\(.*\)", "time": .*/\1/p' "$R/phase2/log.jsonl" | sed 's/\\"/"/g')
mkdir -p "$T/hand" && cp "$R/phase1/ckpt_4.wbckpt" "$T/hand/"
eval "${cmd/--output_dir $R\/phase2/--output_dir $T/hand}" -q >"$T/hand.log"
ok "phase 2 = phase 2 run by hand from phase 1's last checkpoint (bytes of its checkpoint)" \
  eval '[ -n "$cmd" ] && cmp -s "$T/hand/ckpt_6.wbckpt" "$R/phase2/ckpt_6.wbckpt"'
scratch=${cmd/--output_dir $R\/phase2/--output_dir $T/scratch}
scratch=${scratch/ --phase2/}
eval "${scratch/ --resume_from_checkpoint/}" -q >"$T/scratch.log"
ok "... not phase 2 from scratch: its first loss $(loss1 "$T/scratch.log") vs $(loss1 "$R/phase2/log.jsonl")" \
  eval '[ -n "$(loss1 "$T/scratch.log")" ] && [ "$(loss1 "$T/scratch.log")" != "$(loss1 "$R/phase2/log.jsonl")" ]'
ok "the report page: both phases' curves (6 steps), the workflow's data beside them" \
  eval 'grep -q "phase1/log.jsonl and [^:]*phase2/log.jsonl: 6 logged steps, step 1 to 6" "$R/report.html" &&
  grep -q "Data funnel" "$R/report.html"'
ok "... and the warning that the shard of one document has no random next sentence" \
  grep -q 'class="warn">[^<]*formatted_text_training_0.txt: 1 document: no random next sentence' "$R/report.html"
run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" report RUN="$R/phase2" OUT="$T/p2.html"
ok "make report RUN=phase2: its log alone" eval '[ $rc = 0 ] && grep -q "phase2/log.jsonl: 2 logged steps" "$T/p2.html"'

# ---- a finished run is a no-op ----
stamp=$(stat -c %Y:%s "$R/phase2/ckpt_6.wbckpt" "$R/phase1/log.jsonl" "$R/phase2/log.jsonl")
run mk hu-pretrain TRAINER=cpu
expect_rc "rerun" 0
expect_err "... says both phases are done" "*phase 1: done (*/phase1/.complete*phase 2: done (*/phase2/.complete*"
ok "... and trains nothing" eval '[ "$(stat -c %Y:%s "$R/phase2/ckpt_6.wbckpt" "$R/phase1/log.jsonl" "$R/phase2/log.jsonl")" = "$stamp" ]'

# ---- a run stopped in phase 1, then resumed ----
R2=$T/r2
run mk hu-pretrain TRAINER=cpu HU_PRETRAIN_DIR="$R2" TRAIN_OPTS1="--stop_at_step 2" REPORT=0
ok "stopped at step 2 of phase 1: make fails (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... said, with the cure" "*phase 1 stopped at step 2 before its end: run again to resume*"
ok "... nothing looks finished: no marker, no export, no phase 2" \
  eval '[ ! -e "$R2/phase1/.complete" ] && [ ! -e "$R2/phase1/hf" ] && [ -s "$R2/phase1/ckpt_2.wbckpt" ] && [ -z "$(ls -A "$R2/phase2")" ]'
run mk hu-pretrain TRAINER=cpu HU_PRETRAIN_DIR="$R2" REPORT=0
expect_rc "resumed" 0
expect_err "... from its checkpoint" "*resumed from *phase1/ckpt_2.wbckpt at step 2*"
ok "... to the bytes of the uninterrupted run (phase 1 and phase 2)" \
  eval 'cmp -s "$R2/phase1/ckpt_4.wbckpt" "$R/phase1/ckpt_4.wbckpt" && cmp -s "$R2/phase2/ckpt_6.wbckpt" "$R/phase2/ckpt_6.wbckpt"'
ok "... log.jsonl: two run lines, steps 1-2 then 3-4" eval '[ "$(grep -c "^{\"run\"" "$R2/phase1/log.jsonl")" = 2 ] &&
  [ "$(grep -o "^{\"step\": [0-9]*" "$R2/phase1/log.jsonl" | tr -dc "0-9")" = 1234 ]'

# ---- the emulated GPU trainer, two ranks ----
if [ -x "${TESTBIN:-}/train_bert_emu" ]; then
  R3=$T/r3
  run mk hu-pretrain TRAINER=gpu GPUS=2 TRAIN_BERT="$TESTBIN/train_bert_emu" HU_PRETRAIN_DIR="$R3" MICRO1=2 MICRO2=1 \
    TRAIN_OPTS="--precision fp32 --comm_timeout 300"
  expect_rc "TRAINER=gpu GPUS=2 with train_bert_emu" 0
  expect_err "... says so" "*pretrain: train_bert on 2 GPUs: TRAINER=gpu; BERT-tiny*"
  ok "... both phases exported and marked" eval '[ -e "$R3/phase1/.complete" ] && [ -s "$R3/phase1/hf/model.safetensors" ] &&
    [ -e "$R3/phase2/.complete" ] && [ -s "$R3/phase2/hf/model.safetensors" ]'
  ok "... 2 ranks, each 4 sequences a step as 2 micro-batches of 2" \
    grep -q '"world_size": 2, .*"train_batch_size": 4, "gradient_accumulation_steps": 2' "$R3/phase1/log.jsonl"
  ok "... phase 2 from phase 1's last checkpoint" eval 'cmp -s "$R3/phase1/ckpt_4.wbckpt" "$R3/phase2/ckpt_4.wbckpt" &&
    grep -q "\"phase\": 2, \"phase1_end_step\": 4, \"start_step\": 0, \"from\": \"[^\"]*r3/phase2/ckpt_4.wbckpt\"" "$R3/phase2/log.jsonl" &&
    grep -q "weights and optimizer moments from .*r3/phase2/ckpt_4.wbckpt; phase 2 starts at step 0" "$err"'
  ok "... and the rendezvous files and the ranks' empty stderr files are gone" \
    eval '[ -z "$(find "$R3" -name "nccl_id*" -o -name "rank*.err")" ]'
else
  echo "not run: the emulated GPU trainer (no $TESTBIN/train_bert_emu)"
fi

# ---- the variables ----
run mk hu-pretrain TRAINER=gpu GPUS=3 TRAIN_BERT="$BIN/train_bert_cpu" BATCH1=8 HU_PRETRAIN_DIR="$T/x"
ok "a batch that 3 GPUs do not share: refused (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... names the variables" "*BATCH1=8 is not a multiple of the 3 GPUs (GPUS=3)*"
run mk hu-pretrain TRAINER=cpu BATCH1=12 MICRO1=8 HU_PRETRAIN_DIR="$T/x"
ok "a batch that is no multiple of the micro-batch: refused (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... names both" "*BATCH1=12 over 1 process(es) is 12 sequences each, not a multiple of MICRO1=8*"
run mk hu-pretrain MODEL=huge HU_PRETRAIN_DIR="$T/x"
ok "MODEL=huge: refused (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... names the models" "*MODEL=huge: tiny, mini, small, base or large*"
run mk hu-pretrain TRAINER=tpu HU_PRETRAIN_DIR="$T/x"
ok "TRAINER=tpu: refused (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... naming the choices" "*TRAINER=tpu: cpu or gpu*"
ok "... and nothing trained" [ ! -e "$T/x/phase1/log.jsonl" ]
run env -u MAKEFLAGS make -C "$ROOT" --no-print-directory list
ok "make list shows hu-pretrain and en-pretrain" eval 'grep -q "^  hu-pretrain: " "$out" && grep -q "^  en-pretrain: " "$out"'

# ---- make en-pretrain: the English workflow's files and BERT's vocabulary ----
run mk en-pretrain TRAINER=cpu STEPS1=1 STEPS2=1 REPORT=0
expect_rc "make en-pretrain" 0
ok "... a model of bert-base-uncased's vocabulary (30528) from both phases" \
  eval 'grep -q "\"vocab_size\": 30528" "$T/w/en/bert_tiny/phase2/hf/config.json" && [ -e "$T/w/en/bert_tiny/phase1/.complete" ] &&
  [ -e "$T/w/en/bert_tiny/phase2/.complete" ]'
ok "... uncased, as the English workflow's files" grep -q '"do_lower_case": true' "$T/w/en/bert_tiny/phase2/hf/tokenizer_config.json"
done_testing
