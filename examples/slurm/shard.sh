#!/usr/bin/env bash
# examples/slurm/shard.sh - after examples/slurm/prep_array.sh: the parts
# in order into shard_split (one job; it indexes documents by offset and
# does not hold the text in memory), NVIDIA's layout: training and test
# shards.
#
#   sbatch --cpus-per-task=4 --mem=8G examples/slurm/shard.sh PARTS_DIR SHARD_DIR [shard_split options...]
#   sbatch --dependency=afterok:JOBID --kill-on-invalid-dep=yes examples/slurm/shard.sh /scratch/wb/parts /scratch/wb/shards
#
# Every part of the prep run must be there (PARTS_DIR/.parts holds their
# count): a missing part is an error naming it, never a smaller corpus.
# TRAIN_SHARDS and TEST_SHARDS (256 each, NVIDIA's; fewer on a small corpus,
# so that a shard gets 16 documents on average: shard_split refuses fewer
# documents than shards) and TEST_FRACTION (0.1) size the split; options
# after SHARD_DIR go to shard_split last and win. SHARD_DIR/.complete marks
# a finished split: run again (a resubmitted chain), the job keeps the
# shards unless a part is newer or the sizes differ. The programs: from
# WIKIBERT_BIN, else bin/ of the checkout this script was submitted from,
# else the PATH.
#SBATCH --job-name=wikibert-shard
#SBATCH --output=wikibert-shard-%j.log
#SBATCH --open-mode=append
set -eu -o pipefail
me=shard.sh
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

[ $# -ge 2 ] || { echo "usage: shard.sh PARTS_DIR SHARD_DIR [shard_split options...]" >&2; exit 2; }
bin=$(wb_bin shard_split ../.. "$@") || exit 2
parts=$1 shards=$2
shift 2
[ -r "$parts/.parts" ] || { echo "$me: $parts/.parts: not there: PARTS_DIR is not the output of prep_array.sh" >&2; exit 1; }
count=$(cat "$parts/.parts")
files=() missing=()
for ((i = 0; i < count; i++)); do
  f=$(printf '%s/part_%05d.txt' "$parts" "$i")
  if [ -e "$f" ]; then files+=("$f"); else missing+=("$i"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  list=$(IFS=, && echo "${missing[*]}")
  echo "$me: $parts: part $list of 0..$((count - 1)) missing:" \
    "rerun it (TASK_COUNT=$count sbatch --array=$list prep_array.sh ...)" >&2
  exit 1
fi
docs=$(cat "${files[@]}" | { grep -c '^$' || true; })
frac=${TEST_FRACTION:-0.1}
read -r ntrain ntest < <(awk -v d="$docs" -v f="$frac" 'BEGIN {
  a = int(d * (1 - f) / 16); b = int(d * f / 16)
  a = a < 1 ? 1 : a > 256 ? 256 : a; b = f == 0 ? 0 : b < 1 ? 1 : b > 256 ? 256 : b
  print a, b }')
ntrain=${TRAIN_SHARDS:-$ntrain} ntest=${TEST_SHARDS:-$ntest}
stamp="train $ntrain test $ntest fraction $frac parts $count options $*"
if [ -e "$shards/.complete" ] && [ "$(cat "$shards/.complete")" = "$stamp" ] &&
  [ -z "$(find "${files[@]}" -newer "$shards/.complete")" ]; then
  echo "$shards: done before ($stamp)"
  exit 0
fi
rm -f "$shards/.complete"
"$bin/shard_split" -q -f --train "$ntrain" --test "$ntest" --test-fraction "$frac" "$@" -o "$shards" "${files[@]}"
printf '%s\n' "$stamp" >"$shards/.complete"
echo "$shards: $ntrain training and $ntest test shards of $docs documents in $count parts"
