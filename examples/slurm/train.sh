#!/usr/bin/env bash
# examples/slurm/train.sh - train_bert over nodes: one process per GPU,
# started by srun; each takes its rank, group size and local rank (its GPU)
# from Slurm's environment, and the NCCL id travels through MPI (an MPI
# build) or the --nccl_id_file on the shared OUT_DIR. Requeued or restarted,
# it resumes from the newest complete checkpoint; --stop_at_step N ends a
# time slice with a checkpoint.
#
#   sbatch --nodes=4 examples/slurm/train.sh HDF5_DIR bert_config.json OUT_DIR \
#       --vocab_file vocab.txt --train_batch_size 8192 --gradient_accumulation_steps 64 \
#       --learning_rate 6e-3 --max_steps 7038 --max_seq_length 128
#SBATCH --job-name=wikibert-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=8
#SBATCH --time=24:00:00
#SBATCH --requeue
#SBATCH --output=wikibert-train-%j.log
set -eu -o pipefail
[ $# -ge 3 ] || { echo "usage: train.sh HDF5_DIR CONFIG OUT_DIR [train_bert options...]" >&2; exit 2; }
h5=$1 config=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WIKIBERT_BIN:-$here/bin}
[ -x "$bin/train_bert" ] || bin=$(dirname "$(command -v train_bert)")
mkdir -p "$out"
resume=()
compgen -G "$out/ckpt_*" >/dev/null && resume=(--resume_from_checkpoint)
srun --kill-on-bad-exit=1 "$bin/train_bert" --input_dir "$h5" --config_file "$config" --output_dir "$out" \
  --nccl_id_file "$out/nccl_id.${SLURM_JOB_ID:-0}" "${resume[@]}" "$@"
