#!/usr/bin/env bash
# examples/slurm/prep_array.sh - the text stages of one Wikipedia dump in N
# parts, one Slurm array task per part: task I of N takes the I-th N-th of
# the dump's bz2 streams (from the multistream index), runs
# wiki_dump | wiki_strip -F lines | sent_split [| text_filter] on them and
# writes OUT_DIR/part_<I>.txt. Each part is made a whole dump of its own:
# the dump's first stream (<mediawiki> and <siteinfo>, which wiki_strip needs
# for the wiki's namespace names) + the part's streams + a one-stream
# </mediawiki> footer, so the parts in order hold exactly the pages of the
# whole dump. A finished part is kept on a requeue or a resubmission.
#
#   sbatch --array=0-31 --cpus-per-task=16 --mem=16G examples/slurm/prep_array.sh \
#       huwiki-20241101-pages-articles-multistream.xml.bz2 \
#       huwiki-20241101-pages-articles-multistream-index.txt.bz2 /scratch/wb/parts hu
#   TASK_INDEX=0 TASK_COUNT=4 examples/slurm/prep_array.sh DUMP INDEX OUT_DIR LANG
#
# N is the array's size: the array must be 0..N-1 (every task checks it
# first; a gap or a stride is an error naming the missing parts). To rerun
# some parts of N on purpose: TASK_COUNT=N sbatch --array=2,5 .... OUT_DIR
# keeps N (OUT_DIR/.parts): parts of another N are refused there.
# TEXT_FILTER=1 adds the Hungarian workflow's filter
# (text_filter --langdetect LANG --language LANG). The programs: from
# WIKIBERT_BIN, else bin/ of the checkout this script was submitted from,
# else the PATH. Threads: the job's CPUs per task.
# Next: examples/slurm/shard.sh on OUT_DIR (examples/slurm/submit.sh chains it).
#SBATCH --job-name=wikibert-prep
#SBATCH --output=wikibert-prep-%A_%a.log
#SBATCH --open-mode=append
set -eu -o pipefail
me=prep_array.sh
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

[ $# -eq 4 ] || { echo "usage: prep_array.sh DUMP INDEX OUT_DIR LANG" >&2; exit 2; }
bin=$(wb_bin wiki_dump ../.. "$@") || exit 2
wb_task || exit 2
dump=$1 index=$2 out=$3 lang=$4
for f in "$dump" "$index"; do [ -r "$f" ] || { echo "$me: $f: cannot read it" >&2; exit 1; }; done
threads=${SLURM_CPUS_PER_TASK:-$(nproc)}
part=$(printf '%s/part_%05d.txt' "$out" "$task")
mkdir -p "$out"
if [ -e "$out/.parts" ] && [ "$(cat "$out/.parts")" != "$count" ]; then
  echo "$me: $out holds the parts of a $(cat "$out/.parts")-part run; this is a $count-part run:" \
    "use another OUT_DIR, or empty this one" >&2
  exit 1
fi
printf '%s\n' "$count" >"$out/.parts.$task.tmp" && mv -f "$out/.parts.$task.tmp" "$out/.parts"
if [ -e "$part" ]; then echo "$part: done before"; exit 0; fi

# stream offsets: the index's lines are OFFSET:PAGE_ID:TITLE, 100 pages a stream
offs_text=$(bzip2 -dc "$index" | cut -d: -f1 | uniq)
mapfile -t offs <<<"$offs_text"
n=${#offs[@]}
[[ "${offs[0]}" =~ ^[0-9]+$ ]] || { echo "$me: $index: no stream offsets in it" >&2; exit 1; }
first=$((task * n / count)) last=$(((task + 1) * n / count))
stream() { # the part's bytes; the last part runs to the end (the real footer)
  local start=${offs[$first]}
  if [ "$last" -lt "$n" ]; then
    dd if="$dump" iflag=skip_bytes,count_bytes skip="$start" count=$((offs[last] - start)) bs=4M status=none
    printf '</mediawiki>\n' | bzip2 -c
  else
    dd if="$dump" iflag=skip_bytes skip="$start" bs=4M status=none
  fi
}
filter() {
  if [ "${TEXT_FILTER:-0}" = 1 ]; then
    "$bin/text_filter" -q --langdetect "$lang" --language "$lang"
  else
    cat
  fi
}
trap 'rm -f "$part.tmp"' EXIT
if [ "$first" -ge "$last" ]; then # more tasks than streams
  : >"$part.tmp"
else
  { head -c "${offs[0]}" "$dump"; stream; } |
    "$bin/wiki_dump" -q -j "$threads" |
    "$bin/wiki_strip" -q -j "$threads" -F lines |
    "$bin/sent_split" -q -j "$threads" -l "$lang" | filter >"$part.tmp"
fi
mv "$part.tmp" "$part"
if [ "$first" -ge "$last" ]; then
  echo "$part: empty (more parts than the dump's $n streams)"
else
  echo "$part: streams $first to $((last - 1)) of $n"
fi
