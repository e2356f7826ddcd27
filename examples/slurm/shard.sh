#!/usr/bin/env bash
# examples/slurm/shard.sh - after examples/slurm/prep_array.sh: the parts
# in order into shard_split (one job; it indexes documents by offset and
# does not hold the text in memory), bertPrep's layout.
#
#   sbatch --cpus-per-task=4 --mem=8G examples/slurm/shard.sh PARTS_DIR SHARD_DIR [shard_split options...]
#   sbatch --dependency=afterok:JOBID examples/slurm/shard.sh /scratch/wb/parts /scratch/wb/shards --train 256 --test 256
#SBATCH --job-name=wikibert-shard
#SBATCH --output=wikibert-shard-%j.log
set -eu -o pipefail
[ $# -ge 2 ] || { echo "usage: shard.sh PARTS_DIR SHARD_DIR [shard_split options...]" >&2; exit 2; }
parts=$1 shards=$2
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WIKIBERT_BIN:-$here/bin}
[ -x "$bin/shard_split" ] || bin=$(dirname "$(command -v shard_split)")
"$bin/shard_split" -q -f "$@" -o "$shards" "$parts"/part_*.txt
