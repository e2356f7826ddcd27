#!/usr/bin/env bash
# examples/slurm/train.sh - one phase of NVIDIA's two-phase BERT
# pretraining with train_bert over nodes: one process per GPU, started by
# srun; each takes its rank and group size from Slurm's environment, and
# the NCCL id travels through MPI (an MPI build) or the --nccl_id_file on
# the shared OUT_DIR. Requeued or restarted, it resumes from the newest
# complete checkpoint; OUT_DIR/phase<P>.done marks a finished phase, which
# a resubmission leaves alone (remove it to train that phase again).
#
#   sbatch --nodes=4 examples/slurm/train.sh HDF5_128_DIR bert_config.json OUT_DIR --vocab_file vocab.txt
#   PHASE=2 sbatch --nodes=4 examples/slurm/train.sh HDF5_512_DIR bert_config.json OUT_DIR --vocab_file vocab.txt
#
# The recipe, each value an environment variable (NVIDIA's defaults):
#   phase 1: PHASE1_STEPS 7038, PHASE1_LR 6e-3, PHASE1_WARMUP 0.2843,
#            PHASE1_BATCH 65536 sequences per step over all GPUs,
#            PHASE1_MICRO 64 sequences per GPU per micro-batch,
#            SEQ1 / PRED1 128 / 20 (the HDF5 files' lengths)
#   phase 2: PHASE2_STEPS 1563, PHASE2_LR 4e-3, PHASE2_WARMUP 0.128,
#            PHASE2_BATCH 32768, PHASE2_MICRO 8, SEQ2 / PRED2 512 / 80;
#            starts from phase 1's last checkpoint in OUT_DIR (--phase2
#            --phase1_end_step PHASE1_STEPS), checkpoints numbered on
#   PHASE 1 or 2; CKPT_STEPS 200 (steps between checkpoints); LOWER 1 (the
#   files' case, for the export's tokenizer); TRAIN_OPTS, more train_bert
#   options (options after OUT_DIR come last and win); TRAIN_BERT, the
#   trainer (train_bert of WIKIBERT_BIN, else of bin/ of the checkout this
#   script was submitted from, else of the PATH).
# Each GPU's batch is BATCH / (the job's tasks), accumulated in micro-batches
# of MICRO: both must divide.
# A task's GPU: when its CUDA_VISIBLE_DEVICES names one GPU, or with
# --gpus-per-task, the first it sees (one GPU per task: --gpus-per-task=1,
# --gpu-bind=single:1, or a site that binds them); when it names the
# node's GPUs, the task's local rank (SLURM_LOCALID) picks one. More tasks
# on a node than the job's GPUs there is an error (two processes would
# share one GPU). Each task writes its choice to the log.
#SBATCH --job-name=wikibert-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=8
#SBATCH --time=24:00:00
#SBATCH --requeue
#SBATCH --output=wikibert-train-%j.log
#SBATCH --open-mode=append
set -eu -o pipefail
me=train.sh
# ---- the recipes' common part (each recipe holds a copy, so that one
# script can be copied and submitted alone; tests/cli/examples.sh checks
# that the copies are the same)
# wb_bin PROG UP ARGS...: print the directory of our programs, the one
# that holds PROG: $WIKIBERT_BIN when set; else bin/ of the checkout this
# script is in (UP: the way from the script's folder to the checkout's
# root; ARGS: the script's arguments). Under sbatch $0 is slurmd's copy
# of the script, so the submitted path is taken from the job's Command=
# (scontrol), then the submit directory's bin/; last the PATH (an
# installed tree). Nothing found: a message saying what was tried, status 1.
wb_bin() {
  local prog=$1 up=$2 self=$0 cmd d tried=()
  shift 2
  if [ -n "${WIKIBERT_BIN:-}" ]; then
    [ -x "$WIKIBERT_BIN/$prog" ] && { (cd "$WIKIBERT_BIN" && pwd); return 0; }
    echo "$me: WIKIBERT_BIN=$WIKIBERT_BIN holds no program $prog" >&2
    return 1
  fi
  if [ -n "${SLURM_JOB_ID:-}" ] && [ "${0##*/}" = slurm_script ]; then
    cmd=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Command=//p' | head -n 1)
    [ $# -gt 0 ] && cmd=${cmd% "$*"}
    [ -n "$cmd" ] && [ "${cmd#/}" = "$cmd" ] && cmd=${SLURM_SUBMIT_DIR:-.}/$cmd
    self=$cmd
  fi
  if [ -n "$self" ] && d=$(cd "$(dirname "$self")/$up/bin" 2>/dev/null && pwd); then
    [ -x "$d/$prog" ] && { echo "$d"; return 0; }
    tried+=("$d")
  fi
  if [ -n "${SLURM_SUBMIT_DIR:-}" ] && [ -x "$SLURM_SUBMIT_DIR/bin/$prog" ]; then
    echo "$SLURM_SUBMIT_DIR/bin"
    return 0
  fi
  [ -n "${SLURM_SUBMIT_DIR:-}" ] && tried+=("$SLURM_SUBMIT_DIR/bin")
  if d=$(command -v "$prog"); then
    dirname "$d"
    return 0
  fi
  echo "$me: cannot find the program $prog (looked in ${tried[*]:-no checkout} and on the PATH):" \
    "export WIKIBERT_BIN=DIR, the directory of the wikibert programs, before sbatch" >&2
  return 1
}
# ---- end of the recipes' common part

[ $# -ge 3 ] || { echo "usage: train.sh HDF5_DIR CONFIG OUT_DIR [train_bert options...]" >&2; exit 2; }
if [ -n "${TRAIN_BERT:-}" ]; then
  trainer=$TRAIN_BERT
  [ -x "$trainer" ] || { echo "$me: TRAIN_BERT=$trainer: not an executable" >&2; exit 2; }
else
  trainer=$(wb_bin train_bert ../.. "$@")/train_bert || exit 2
fi
h5=$1 config=$2 out=$3
shift 3
phase=${PHASE:-1}
case $phase in
1) steps=${PHASE1_STEPS:-7038} lr=${PHASE1_LR:-6e-3} warmup=${PHASE1_WARMUP:-0.2843}
   batch=${PHASE1_BATCH:-65536} micro=${PHASE1_MICRO:-64} seq=${SEQ1:-128} pred=${PRED1:-20} ;;
2) steps=${PHASE2_STEPS:-1563} lr=${PHASE2_LR:-4e-3} warmup=${PHASE2_WARMUP:-0.128}
   batch=${PHASE2_BATCH:-32768} micro=${PHASE2_MICRO:-8} seq=${SEQ2:-512} pred=${PRED2:-80} ;;
*) echo "$me: PHASE=$phase: 1 or 2" >&2; exit 2 ;;
esac
world=${SLURM_NTASKS:?not in a Slurm job: submit it with sbatch}
if [ $((batch % world)) -ne 0 ] || [ $((batch / world % micro)) -ne 0 ]; then
  echo "$me: phase $phase: a batch of $batch sequences over $world GPUs in micro-batches of $micro" \
    "does not divide: set PHASE${phase}_BATCH (a multiple of $world x PHASE${phase}_MICRO) or PHASE${phase}_MICRO" >&2
  exit 2
fi
per=$((batch / world))
mkdir -p "$out"
if [ -e "$out/phase$phase.done" ]; then echo "$out: phase $phase done before"; exit 0; fi
opts=(--input_dir "$h5" --config_file "$config" --output_dir "$out"
  --train_batch_size "$per" --gradient_accumulation_steps $((per / micro)) --learning_rate "$lr"
  --warmup_proportion "$warmup" --max_steps "$steps" --max_seq_length "$seq" --max_predictions_per_seq "$pred"
  --num_steps_per_checkpoint "${CKPT_STEPS:-200}" --do_lower_case "${LOWER:-1}")
if [ "$phase" = 2 ]; then
  opts+=(--phase2 --resume_from_checkpoint --phase1_end_step "${PHASE1_STEPS:-7038}")
elif compgen -G "$out/ckpt_*" >/dev/null; then
  opts+=(--resume_from_checkpoint)
fi
# a requeued job keeps its id: a rendezvous file of the run before is stale
id_file=$out/nccl_id.${SLURM_JOB_ID:-0}.${SLURM_RESTART_COUNT:-0}
rm -f "$out/nccl_id.${SLURM_JOB_ID:-0}".*
read -r -a extra <<<"${TRAIN_OPTS:-}"
echo "$me: phase $phase on $world GPUs, $steps steps: $per sequences per GPU and step ($((per / micro)) x $micro)"
# each task: its GPU (see the header), then the trainer
task_gpu='
vis=${CUDA_VISIBLE_DEVICES:-} lid=${SLURM_LOCALID:-0} dev=
n=$(tr , "\n" <<<"$vis" | grep -c .) || true
if [ -n "${SLURM_GPUS_ON_NODE:-}" ] && [ "$lid" -ge "$SLURM_GPUS_ON_NODE" ]; then
  echo "train.sh: rank $SLURM_PROCID: local rank $lid, but the job has $SLURM_GPUS_ON_NODE GPUs on this node:" \
    "one GPU per task (--gpus-per-node = --ntasks-per-node, or --gpus-per-task=1)" >&2
  exit 2
fi
if [ "$n" -eq 1 ] || { [ "$n" -gt 1 ] && [ -n "${SLURM_GPUS_PER_TASK:-}" ]; }; then
  dev=0
elif [ "$n" -gt "$lid" ]; then
  dev=$lid
elif [ "$n" -gt 0 ]; then
  echo "train.sh: rank $SLURM_PROCID (local rank $lid) sees $n GPUs ($vis), fewer than the tasks of its node" >&2
  exit 2
fi
echo "train.sh: rank ${SLURM_PROCID:-0} on ${SLURMD_NODENAME:-$(hostname)}, local rank $lid:" \
  "GPU ${dev:-$lid} of the ones it sees (CUDA_VISIBLE_DEVICES=${vis:-unset})" >&2
exec "$@" ${dev:+--local_rank "$dev"}'
srun --kill-on-bad-exit=1 bash -c "$task_gpu" train.sh "$trainer" "${opts[@]}" --nccl_id_file "$id_file" \
  "${extra[@]}" "$@"
touch "$out/phase$phase.done"
