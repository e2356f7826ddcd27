#!/usr/bin/env bash
# examples/slurm/submit.sh - the whole chain as Slurm jobs, each waiting
# for the one before (--dependency=afterok): the dump's parts
# (prep_array.sh), the shards (shard.sh), the HDF5 files of phase 1
# (pipelines/hdf5_array.sh, an array job: task I writes the shards k with
# k mod N = I), then training (train.sh, srun over the nodes).
#
#   examples/slurm/submit.sh DUMP INDEX LANG WORK_DIR bert_config.json
#
# PARTS (32), H5_TASKS (64), NODES (2) size the jobs; VOCAB (data/bert/vocab.txt)
# is the WordPiece vocabulary; give the one of your language.
set -eu -o pipefail
[ $# -eq 5 ] || { echo "usage: submit.sh DUMP INDEX LANG WORK_DIR CONFIG" >&2; exit 2; }
dump=$1 index=$2 lang=$3 work=$4 config=$5
here=$(cd "$(dirname "$0")/../.." && pwd)
vocab=${VOCAB:-$here/data/bert/vocab.txt}
parts=${PARTS:-32} tasks=${H5_TASKS:-64} nodes=${NODES:-2}
mkdir -p "$work/h5"
prep=$(sbatch --parsable --array=0-$((parts - 1)) --cpus-per-task=16 --mem=16G \
  "$here/examples/slurm/prep_array.sh" "$dump" "$index" "$work/parts" "$lang")
shard=$(sbatch --parsable --dependency=afterok:"$prep" --cpus-per-task=4 --mem=8G \
  "$here/examples/slurm/shard.sh" "$work/parts" "$work/shards" --train 256 --test 256)
h5=$(sbatch --parsable --dependency=afterok:"$shard" --array=0-$((tasks - 1)) --cpus-per-task=16 --mem=32G \
  "$here/pipelines/hdf5_array.sh" "$work/shards" "$vocab" "$work/h5" \
  --max-seq-length 128 --max-predictions-per-seq 20 --dupe-factor 5 --random-seed 12345)
train=$(sbatch --parsable --dependency=afterok:"$h5" --nodes="$nodes" \
  "$here/examples/slurm/train.sh" "$work/h5" "$config" "$work/train" \
  --vocab_file "$vocab" --max_seq_length 128 --max_predictions_per_seq 20)
echo "jobs: prep $prep, shard $shard, hdf5 $h5, train $train"
