#!/usr/bin/env bash
# pipelines/hdf5_array.sh - the HDF5 stage as one task of a batch array:
# task I of N writes the shards k with k mod N = I (hdf5gen --shard-index /
# --shard-count), so N tasks on N machines together write exactly the files
# one `hdf5gen` run writes, byte for byte. Under Slurm the index and count
# come from the array job; under mpirun hdf5gen takes the MPI rank and size
# itself; elsewhere pass them as TASK_INDEX / TASK_COUNT. Finished files are
# left alone (--skip-existing), so a requeued or restarted task only does
# what is missing.
#
#   sbatch --array=0-63 --cpus-per-task=16 --mem=64G \
#       pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR [hdf5gen options...]
#   mpirun -np 64 pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR --max-seq-length 512 ...
#   TASK_INDEX=3 TASK_COUNT=8 pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR
#
# SHARD_DIR holds the *.txt shards (shard_split's output), OUT_DIR gets
# <shard>.hdf5 for each. WIKIBERT_BIN names the directory of the programs
# (default: bin/ beside this script).
#SBATCH --job-name=wikibert-hdf5
#SBATCH --output=wikibert-hdf5-%A_%a.log
set -eu -o pipefail
[ $# -ge 3 ] || { echo "usage: hdf5_array.sh SHARD_DIR VOCAB OUT_DIR [hdf5gen options...]" >&2; exit 2; }
shards=$1 vocab=$2 out=$3
shift 3
bin=${WIKIBERT_BIN:-$(cd "$(dirname "$0")/.." && pwd)/bin}
index=${TASK_INDEX:-${SLURM_ARRAY_TASK_ID:-}}
count=${TASK_COUNT:-${SLURM_ARRAY_TASK_COUNT:-}}
share=()
[ -n "$index" ] && [ -n "$count" ] && share=(--shard-index "$index" --shard-count "$count")
threads=${SLURM_CPUS_PER_TASK:-$(nproc)}
exec "$bin/hdf5gen" -j "$threads" --skip-existing --vocab "$vocab" "${share[@]}" "$@" -o "$out/" "$shards"/*.txt
