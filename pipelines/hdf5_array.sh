#!/usr/bin/env bash
# pipelines/hdf5_array.sh - the HDF5 stage as one task of a batch array:
# task I of N writes the shards k with k mod N = I (hdf5gen --shard-index /
# --shard-count), so N tasks on N machines together write exactly the files
# one `hdf5gen` run writes, byte for byte. Under Slurm the index and count
# come from the array job (which must be 0..N-1: every task checks it
# first, and a gap or a stride is an error naming the missing indices;
# TASK_COUNT=N with an array of some indices reruns those on purpose);
# under mpirun hdf5gen takes the MPI rank and size itself; elsewhere pass
# them as TASK_INDEX / TASK_COUNT (neither: every shard, one run).
# Finished files are left alone (--skip-existing), so a requeued or
# restarted task only does what is missing.
#
#   sbatch --array=0-63 --cpus-per-task=16 --mem=64G \
#       pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR [hdf5gen options...]
#   mpirun -np 64 pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR --max-seq-length 512 ...
#   TASK_INDEX=3 TASK_COUNT=8 pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR
#
# SHARD_DIR holds the *.txt shards (shard_split's output), OUT_DIR gets
# <shard>.hdf5 for each. The programs: from WIKIBERT_BIN, else bin/ of the
# checkout this script is in (under sbatch: the one it was submitted
# from), else the PATH. Threads: the job's CPUs per task.
#SBATCH --job-name=wikibert-hdf5
#SBATCH --output=wikibert-hdf5-%A_%a.log
#SBATCH --open-mode=append
set -eu -o pipefail
me=hdf5_array.sh
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
# ---- the array tasks' common part (prep_array.sh and hdf5_array.sh hold
# the same copy; tests/cli/examples.sh checks it)
# wb_task: this task's place into task and count: TASK_INDEX and
# TASK_COUNT when set (a run by hand; or TASK_COUNT alone with an array
# that reruns some tasks of TASK_COUNT), else the Slurm array's. An array
# without TASK_COUNT must be exactly 0..N-1: a start above 0, a gap or a
# stride would leave parts undone, so every task stops before any work
# with a message naming the missing ones (a Slurm that sets only
# SLURM_ARRAY_TASK_COUNT: that count, unchecked). Status 1 with a message
# when the place is unusable.
wb_task() {
  task=${TASK_INDEX:-${SLURM_ARRAY_TASK_ID:-}} count=${TASK_COUNT:-}
  if [ -z "$task" ]; then
    echo "$me: not an array task: sbatch --array=0-N, or set TASK_INDEX and TASK_COUNT" >&2
    return 1
  fi
  if [ -z "$count" ] && [ -n "${TASK_INDEX:-}" ]; then
    echo "$me: TASK_INDEX=$TASK_INDEX without TASK_COUNT" >&2
    return 1
  fi
  if [ -z "$count" ] && [ -z "${SLURM_ARRAY_TASK_MAX:-}" ]; then
    count=${SLURM_ARRAY_TASK_COUNT:-} # no range in the environment: the count alone, unchecked
  elif [ -z "$count" ]; then
    local max=$SLURM_ARRAY_TASK_MAX ids missing
    count=$((max + 1)) ids=$(wb_array_ids)
    if [ -z "$ids" ]; then
      missing="some of them (${SLURM_ARRAY_TASK_COUNT:-?} tasks in ${SLURM_ARRAY_TASK_MIN:-?}..$max)"
    else
      missing=$(seq 0 "$max" | grep -vxF -f <(echo "$ids") | paste -sd, -)
    fi
    if [ -n "$missing" ]; then
      echo "$me: the array leaves out index $missing of 0..$max, whose work would be lost:" \
        "submit --array=0-$max, or set TASK_COUNT=$count to run some tasks of $count on purpose" >&2
      return 1
    fi
  fi
  if ! [[ "$task" =~ ^[0-9]+$ && "$count" =~ ^[1-9][0-9]*$ ]] || [ "$task" -ge "$count" ]; then
    echo "$me: task $task of $count: the index must be a number below the task count" >&2
    return 1
  fi
}
# wb_array_ids: the indices of this Slurm array, one a line: from the
# environment when it is a range (with a stride), else the job's records
wb_array_ids() {
  local min=$SLURM_ARRAY_TASK_MIN max=$SLURM_ARRAY_TASK_MAX step=${SLURM_ARRAY_TASK_STEP:-1}
  if [ $(((max - min) / step + 1)) -eq "${SLURM_ARRAY_TASK_COUNT:-0}" ]; then
    seq "$min" "$step" "$max"
    return
  fi
  scontrol show job "${SLURM_ARRAY_JOB_ID:-}" 2>/dev/null | sed -n 's/.* ArrayTaskId=\([^ ]*\).*/\1/p' |
    sed 's/%.*//' | tr , '\n' | awk -F'[-:]' '$1 != "" {
      e = $2 != "" ? $2 : $1; s = $3 != "" ? $3 : 1; for (i = $1; i <= e; i += s) print i }'
}
# ---- end of the array tasks' common part

[ $# -ge 3 ] || { echo "usage: hdf5_array.sh SHARD_DIR VOCAB OUT_DIR [hdf5gen options...]" >&2; exit 2; }
bin=$(wb_bin hdf5gen .. "$@") || exit 2
shards=$1 vocab=$2 out=$3
shift 3
share=()
if [ -n "${TASK_INDEX:-}${TASK_COUNT:-}${SLURM_ARRAY_TASK_ID:-}" ]; then
  wb_task || exit 2
  share=(--shard-index "$task" --shard-count "$count")
fi
compgen -G "$shards/*.txt" >/dev/null || { echo "$me: $shards: no *.txt shards in it" >&2; exit 1; }
threads=${SLURM_CPUS_PER_TASK:-$(nproc)}
exec "$bin/hdf5gen" -j "$threads" --skip-existing --vocab "$vocab" "${share[@]}" "$@" -o "$out/" "$shards"/*.txt
