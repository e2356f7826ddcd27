#!/usr/bin/env bash
# pipelines/pretrain.sh - BERT pretraining in NVIDIA's two phases on a
# workflow's HDF5 files (make hu-pretrain, make en-pretrain, make demo):
# phase 1 on the 128/20 files, phase 2 on the 512/80 files started from
# phase 1's last checkpoint (run_pretraining.sh's --phase2
# --resume_from_checkpoint --phase1_end_step), a Hugging Face model after
# each phase, then the report page.
#
#   pipelines/pretrain.sh DATA1=DIR DATA2=DIR VOCAB=vocab.txt RUN=DIR [VAR=value...]
#   pipelines/pretrain.sh DATA1=DIR DATA2=DIR VOCAB=vocab.txt RUN_IN=DIR [VAR=value...]
#                                   (RUN = RUN_IN/bert_MODEL)
#
# The run directory, complete on its own:
#   RUN/bert_config.json   MODEL's config, vocab_size from VOCAB (rounded up to 8)
#   RUN/phase1/            phase 1's --output_dir: log.jsonl, ckpt_<step>.wbckpt,
#                          hf/ (the Hugging Face model), .complete
#   RUN/phase2/            phase 1's last checkpoint (linked), phase 2's
#                          ckpt_<phase1 steps + step>.wbckpt, log.jsonl, hf/, .complete
#   RUN/report.html        the training curves of both phases and the workflow's data
# A phase's .complete is written after its export, so a phase that has one
# is done (a rerun says so and skips it) and one that has none is resumed
# from its newest checkpoint: a stopped or killed run leaves nothing that
# looks finished, and running it again continues where it stopped.
#
# The trainer: train_bert on all the GPUs `nvidia-smi -L` lists (GPUS=N for
# fewer), one process per GPU (ranks meet through an id file in the phase's
# directory), where train_bert was built; train_bert_cpu otherwise. Each
# phase's global batch BATCHn is split over the GPUs and into micro-batches
# of MICROn sequences per GPU (the accumulation steps follow).
#
# Variables (defaults: NVIDIA's recipe for base and large; for tiny, mini and
# small a run a CPU finishes in hours):
#   MODEL        tiny|mini|small|base|large (train/configs/bert_MODEL.json;
#                default large with GPUs, tiny without); CONFIG=FILE another config
#   TRAINER      cpu|gpu (default: gpu where GPUs and train_bert are found)
#   GPUS         processes for train_bert (default: every GPU nvidia-smi -L lists)
#   STEPS1 BATCH1 MICRO1 LR1 WARMUP1   phase 1: base/large 7038 65536 64 6e-3 0.2843,
#                                      tiny/mini/small 1000 128 32 5e-3 0.1
#   STEPS2 BATCH2 MICRO2 LR2 WARMUP2   phase 2: base/large 1563 32768 16 4e-3 0.128,
#                                      tiny/mini/small 200 32 8 3e-3 0.1
#   SEQ1 PRED1 SEQ2 PRED2  the files' max_seq_length / max_predictions_per_seq (128 20 512 80)
#   LOWER STRIP_ACCENTS    how the files' text was tokenized, for the export (1, as LOWER)
#   CKPT_EVERY   checkpoint every N steps (200), LOG_FREQ (1), SEED (42)
#   TRAIN_OPTS, TRAIN_OPTS1, TRAIN_OPTS2  more trainer options (both phases, one phase)
#   TRAIN_BERT, TRAIN_BERT_CPU  the trainers (default BIN/train_bert, BIN/train_bert_cpu)
#   BIN          the programs (default bin/ beside this folder)
#   WORKFLOW     the workflow directory the report draws beside the curves
#   REPORT       0: no report page
# Exit status: 0 both phases done; 1 a trainer failed or stopped early; 2 a bad variable.
set -u -o pipefail
prog=pretrain
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
say() { echo "$prog: $*" >&2; }
bad() {
  say "$*"
  exit 2
}

VARS=" DATA1 DATA2 VOCAB RUN RUN_IN MODEL CONFIG TRAINER GPUS STEPS1 BATCH1 MICRO1 LR1 WARMUP1 STEPS2 BATCH2 "
VARS+="MICRO2 LR2 WARMUP2 SEQ1 PRED1 SEQ2 PRED2 LOWER STRIP_ACCENTS CKPT_EVERY LOG_FREQ SEED TRAIN_OPTS "
VARS+="TRAIN_OPTS1 TRAIN_OPTS2 TRAIN_BERT TRAIN_BERT_CPU BIN WORKFLOW REPORT "
for a in "$@"; do
  case $a in
  -h | --help) sed -n '/^#   pipelines/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *=*) ;;
  *) bad "'$a': arguments are VAR=value (see -h)" ;;
  esac
  v=${a%%=*}
  [[ $VARS == *" $v "* ]] || bad "$v: not a variable of this script (see -h)"
  printf -v "$v" '%s' "${a#*=}"
done
for v in DATA1 DATA2 VOCAB; do [ -n "${!v:-}" ] || bad "$v=... is needed (see -h)"; done
[ -n "${RUN:-}${RUN_IN:-}" ] || bad "RUN=DIR or RUN_IN=DIR is needed (see -h)"
BIN=${BIN:-$root/bin}
TRAIN_BERT=${TRAIN_BERT:-$BIN/train_bert}
TRAIN_BERT_CPU=${TRAIN_BERT_CPU:-$BIN/train_bert_cpu}

# ---- the trainer, and how many processes ----
ngpu=0
if command -v nvidia-smi >/dev/null 2>&1; then ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
case ${TRAINER:-} in
gpu)
  [ -x "$TRAIN_BERT" ] || bad "TRAINER=gpu: no $TRAIN_BERT (it is built where nvcc is found)"
  why="TRAINER=gpu"
  ;;
cpu) why="TRAINER=cpu" ;;
"")
  if [ "$ngpu" -gt 0 ] && [ -x "$TRAIN_BERT" ]; then
    TRAINER=gpu why="nvidia-smi -L lists $ngpu GPU$([ "$ngpu" = 1 ] || echo s)"
  elif [ "$ngpu" -gt 0 ]; then
    TRAINER=cpu why="$ngpu GPUs, but no $TRAIN_BERT (nvcc was not found at build time)"
  else
    TRAINER=cpu why="no GPU (nvidia-smi -L lists none)"
  fi
  ;;
*) bad "TRAINER=$TRAINER: cpu or gpu" ;;
esac
world=1
if [ "$TRAINER" = gpu ]; then
  world=${GPUS:-$ngpu}
  [ "$world" -ge 1 ] 2>/dev/null || world=1
fi

# ---- the model and the recipe ----
if [ -z "${MODEL:-}" ]; then MODEL=$([ "$TRAINER" = gpu ] && echo large || echo tiny); fi
case $MODEL in
base | large) d1="7038 65536 64 6e-3 0.2843" d2="1563 32768 16 4e-3 0.128" ;;
tiny | mini | small) d1="1000 128 32 5e-3 0.1" d2="200 32 8 3e-3 0.1" ;;
*) [ -n "${CONFIG:-}" ] || bad "MODEL=$MODEL: tiny, mini, small, base or large (or CONFIG=FILE)"
  d1="1000 128 32 5e-3 0.1" d2="200 32 8 3e-3 0.1" ;;
esac
RUN=${RUN:-$RUN_IN/bert_$MODEL}
read -r s1 b1 m1 l1 w1 <<<"$d1"
read -r s2 b2 m2 l2 w2 <<<"$d2"
STEPS1=${STEPS1:-$s1} BATCH1=${BATCH1:-$b1} MICRO1=${MICRO1:-$m1} LR1=${LR1:-$l1} WARMUP1=${WARMUP1:-$w1}
STEPS2=${STEPS2:-$s2} BATCH2=${BATCH2:-$b2} MICRO2=${MICRO2:-$m2} LR2=${LR2:-$l2} WARMUP2=${WARMUP2:-$w2}
SEQ1=${SEQ1:-128} PRED1=${PRED1:-20} SEQ2=${SEQ2:-512} PRED2=${PRED2:-80}
LOWER=${LOWER:-1} STRIP_ACCENTS=${STRIP_ACCENTS:-$LOWER}
CKPT_EVERY=${CKPT_EVERY:-200} LOG_FREQ=${LOG_FREQ:-1} SEED=${SEED:-42}
CONFIG=${CONFIG:-$root/train/configs/bert_$MODEL.json}
for v in STEPS1 BATCH1 MICRO1 STEPS2 BATCH2 MICRO2 CKPT_EVERY LOG_FREQ; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || bad "$v=${!v}: a whole number above 0"
done
# split_batch N: phase N's global batch over the processes (perN) and into
# micro-batches of MICRON each, or fewer when a process's share is smaller
# (accN, the accumulation steps)
split_batch() {
  local n=$1 batch micro per
  batch=BATCH$1 micro=MICRO$1
  batch=${!batch} micro=${!micro}
  [ $((batch % world)) = 0 ] || bad "BATCH$n=$batch is not a multiple of the $world GPUs (GPUS=$world)"
  per=$((batch / world))
  [ "$per" -ge "$micro" ] || micro=$per # a batch smaller than one micro-batch: no accumulation
  [ $((per % micro)) = 0 ] ||
    bad "BATCH$n=$batch over $world process(es) is $per sequences each, not a multiple of MICRO$n=$micro"
  printf -v "per$n" '%s' "$per"
  printf -v "acc$n" '%s' "$((per / micro))"
}
per1=0 acc1=0 per2=0 acc2=0
split_batch 1
split_batch 2
[ -d "$DATA1" ] || { say "$DATA1: no such directory (the phase-1 HDF5 files)"; exit 1; }
[ -d "$DATA2" ] || { say "$DATA2: no such directory (the phase-2 HDF5 files)"; exit 1; }
[ -f "$VOCAB" ] || { say "$VOCAB: no such file"; exit 1; }
[ -f "$CONFIG" ] || { say "$CONFIG: no such file"; exit 1; }

# ---- the run directory and the config ----
mkdir -p "$RUN/phase1" "$RUN/phase2" || exit 1
words=$(wc -l <"$VOCAB") || exit 1
vsize=$(((words + 7) / 8 * 8))
cfg_tmp=$RUN/bert_config.json.tmp.$$
if ! { sed "s/\"vocab_size\": *[0-9]*/\"vocab_size\": $vsize/" "$CONFIG" >"$cfg_tmp" &&
  grep -q "\"vocab_size\": $vsize" "$cfg_tmp" && mv "$cfg_tmp" "$RUN/bert_config.json"; }; then
  rm -f "$cfg_tmp"
  say "$CONFIG: no \"vocab_size\" to set"
  exit 1
fi

if [ "$TRAINER" = gpu ]; then
  say "train_bert on $world GPU$([ "$world" = 1 ] || echo s): $why; BERT-$MODEL, vocab_size $vsize ($words tokens in $VOCAB)"
else
  say "train_bert_cpu: $why; BERT-$MODEL, vocab_size $vsize ($words tokens in $VOCAB)"
fi

pids=()
stop_ranks() { local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap 'stop_ranks; exit 130' INT
trap 'stop_ranks; exit 143' TERM

# train DIR ARGS...: the trainer in --output_dir DIR, one process per rank;
# stdout (the log's lines) is in DIR/log.jsonl, each other rank's stderr in
# DIR/rank<R>.err. Returns the first failing rank's status, 0 when all end well.
train() {
  local dir=$1 r rc=0 first=0 id
  shift
  if [ "$TRAINER" = cpu ]; then
    "$TRAIN_BERT_CPU" --output_dir "$dir" "$@" >/dev/null
    return
  fi
  if [ "$world" = 1 ]; then
    "$TRAIN_BERT" --output_dir "$dir" "$@" >/dev/null
    return
  fi
  pids=()
  for ((r = world - 1; r >= 0; r--)); do
    local rank=(--rank "$r" --world_size "$world" --local_rank "$r" --nccl_id_file "$dir/nccl_id")
    if [ "$r" = 0 ]; then
      "$TRAIN_BERT" --output_dir "$dir" "$@" "${rank[@]}" >/dev/null &
    else
      "$TRAIN_BERT" -q --output_dir "$dir" "$@" "${rank[@]}" >/dev/null 2>"$dir/rank$r.err" &
    fi
    pids+=($!)
  done
  # the first rank to fail stops the others (they would wait --comm_timeout)
  local -A live=()
  for id in "${pids[@]}"; do live[$id]=1; done
  while [ ${#live[@]} -gt 0 ]; do
    id=""
    wait -n -p id "${!live[@]}"
    rc=$?
    [ -n "$id" ] || break # none left to wait for
    unset "live[$id]"
    if [ "$rc" != 0 ] && [ "$first" = 0 ]; then
      first=$rc
      stop_ranks
    fi
  done
  for ((r = 1; r < world; r++)); do
    [ "$first" = 0 ] || [ ! -s "$dir/rank$r.err" ] || sed "s/^/  rank $r: /" "$dir/rank$r.err" >&2
    [ "$first" != 0 ] || rm -f "$dir/rank$r.err"
  done
  pids=()
  return "$first"
}

# newest_step DIR: the step of DIR's newest checkpoint file (0: none)
newest_step() {
  local f s best=0
  for f in "$1"/ckpt_*.wbckpt; do
    [ -f "$f" ] || continue
    s=${f##*/ckpt_}
    s=${s%.wbckpt}
    [ "$s" -gt "$best" ] && best=$s
  done
  echo "$best"
}

# phase N DIR DATA STEPS PER ACC LR WARMUP SEQ PRED [trainer options...]
phase() {
  local n=$1 dir=$2 data=$3 steps=$4 per=$5 acc=$6 lr=$7 warm=$8 seq=$9 pred=${10} rc=0
  shift 10
  if [ -f "$dir/.complete" ]; then
    say "phase $n: done ($dir/.complete; its model: $dir/hf); remove $dir to train it again"
    return 0
  fi
  say "phase $n: $steps steps of $((per * world)) sequences ($seq/$pred, $world x $acc x $((per / acc))), LAMB lr $lr, warm-up $warm -> $dir"
  rm -rf "$dir/hf" # an export from before a stop is remade at the end
  # shellcheck disable=SC2086
  train "$dir" --input_dir "$data" --config_file "$RUN/bert_config.json" --vocab_file "$VOCAB" \
    --train_batch_size "$per" --gradient_accumulation_steps "$acc" --learning_rate "$lr" \
    --warmup_proportion "$warm" --max_steps "$steps" --max_seq_length "$seq" --max_predictions_per_seq "$pred" \
    --num_steps_per_checkpoint "$CKPT_EVERY" --log_freq "$LOG_FREQ" --seed "$SEED" --do_lower_case "$LOWER" \
    --strip_accents "$STRIP_ACCENTS" --resume_from_checkpoint "$@" ${TRAIN_OPTS:-} || rc=$?
  if [ "$rc" != 0 ]; then
    say "phase $n failed (exit $rc); what it checkpointed is kept: run again to resume"
    return 1
  fi
  if [ ! -s "$dir/hf/model.safetensors" ]; then
    say "phase $n stopped at step $(newest_step "$dir") before its end: run again to resume"
    return 1
  fi
  touch "$dir/.complete" || return 1
  say "phase $n: done, the model in $dir/hf"
  say "  first: $(grep -m1 '^{"step"' "$dir/log.jsonl")"
  say "  last:  $(grep '^{"step"' "$dir/log.jsonl" | tail -1)"
}

# shellcheck disable=SC2086
phase 1 "$RUN/phase1" "$DATA1" "$STEPS1" "$per1" "$acc1" "$LR1" "$WARMUP1" "$SEQ1" "$PRED1" ${TRAIN_OPTS1:-} || exit 1

# phase 2 starts from phase 1's last checkpoint, put in its directory (a
# link) as NVIDIA's script finds it in the same results directory
p1=$RUN/phase1/ckpt_$STEPS1.wbckpt
if [ ! -f "$RUN/phase2/.complete" ] && [ "$(newest_step "$RUN/phase2")" = 0 ]; then
  [ -f "$p1" ] || { say "$p1: missing (phase 1's last checkpoint): remove $RUN/phase1 to train phase 1 again"; exit 1; }
  { ln -f "$p1" "$RUN/phase2/.ckpt.tmp.$$" 2>/dev/null || cp "$p1" "$RUN/phase2/.ckpt.tmp.$$"; } &&
    mv "$RUN/phase2/.ckpt.tmp.$$" "$RUN/phase2/ckpt_$STEPS1.wbckpt" || exit 1
fi
# shellcheck disable=SC2086
phase 2 "$RUN/phase2" "$DATA2" "$STEPS2" "$per2" "$acc2" "$LR2" "$WARMUP2" "$SEQ2" "$PRED2" \
  --phase2 --phase1_end_step "$STEPS1" ${TRAIN_OPTS2:-} || exit 1

if [ "${REPORT:-1}" != 0 ]; then
  "$root/report/run_report.sh" -b "$BIN" -f -o "$RUN/report.html" ${WORKFLOW:+--workflow "$WORKFLOW"} "$RUN" ||
    exit 1
  say "the report: $RUN/report.html; the model: $RUN/phase2/hf"
fi
