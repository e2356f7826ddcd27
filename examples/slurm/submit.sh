#!/usr/bin/env bash
# examples/slurm/submit.sh - the whole chain as Slurm jobs, each waiting
# for the ones before (--dependency=afterok, --kill-on-invalid-dep=yes: a
# failed job cancels the jobs after it instead of leaving them pending for
# ever): the dump's parts (prep_array.sh), the shards (shard.sh), the HDF5
# files of both phases (pipelines/hdf5_array.sh, two array jobs), then
# training phase 1 and phase 2 (train.sh, srun over the nodes).
#
#   examples/slurm/submit.sh DUMP INDEX LANG WORK_DIR bert_config.json
#   WAIT=1 NODES=8 VOCAB=vocab.txt examples/slurm/submit.sh ...
#
# WORK_DIR gets parts/, shards/, hdf5_phase1/, hdf5_phase2/, train/
# (checkpoints, hf/) and logs/ (a log per job and per array task, appended
# to on a requeue or a resubmission). Submitted again (after a failure was
# fixed), the chain keeps what is finished: parts, shards, HDF5 files and
# finished phases are skipped, training resumes from its checkpoint.
# Sizes and options are environment variables, and the jobs get this
# environment (--export=ALL), so the recipes' own variables (TRAIN_SHARDS,
# PHASE1_STEPS, ..., see their headers) are set here too:
#   PARTS       prep tasks (one per GiB of dump, at most 64; as before in WORK_DIR)
#   H5_TASKS    tasks per HDF5 array (one per 512 MiB of dump, at most 64)
#   PREP_CPUS, PREP_MEM 16, 16G; SHARD_CPUS, SHARD_MEM 4, 8G; H5_CPUS,
#   H5_MEM 16, 32G: per task, each default cut to the smallest node of the
#   partition; a value above the largest node is refused here (the job
#   would pend for ever)
#   PARTITION   the data jobs' partition (default: the cluster's default)
#   TIME        the data jobs' time limit (default: the partition's)
#   SEQ1 PRED1 SEQ2 PRED2 128 20 512 80; DUPE 5; SEED 12345; MLM_PROB
#   0.15; LOWER 1: the HDF5 files (hdf5gen) and the training phases
#   VOCAB       WordPiece vocab.txt (data/bert/vocab.txt: give your language's)
#   PHASES      training phases to run ("1 2"; "": stop after the HDF5 files)
#   TRAIN_PARTITION (PARTITION), NODES (2), GPUS_PER_NODE (the partition's
#   GPUs per node, from its Gres), GPUS_PER_TASK (unset: each task sees its
#   node's GPUs; 1: one GPU bound to each task), TRAIN_CPUS (CPUs per task:
#   the node's share, at most 8), TRAIN_TIME (24:00:00; a job requeued
#   after its time resumes)
#   PREP_SBATCH, SHARD_SBATCH, H5_SBATCH, TRAIN_SBATCH: more sbatch options
#   per job (--account=..., --qos=..., --constraint=...)
#   WAIT=1      stay, print each job's end, and exit 1 (naming the jobs that
#               failed and their logs) unless all completed
#   WAIT_POLL   seconds between two looks at the jobs (30)
#   DRY_RUN=1   print the sbatch commands instead of running them
set -eu -o pipefail
me=submit.sh
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

[ $# -eq 5 ] || { echo "usage: submit.sh DUMP INDEX LANG WORK_DIR CONFIG" >&2; exit 2; }
bin=$(wb_bin wiki_dump ../.. "$@") || exit 2
here=$(cd "$(dirname "$0")/../.." && pwd)
dump=$(realpath -m -- "$1") index=$(realpath -m -- "$2") lang=$3 work=$(realpath -m -- "$4")
config=$(realpath -m -- "$5") vocab=$(realpath -m -- "${VOCAB:-$here/data/bert/vocab.txt}")
phases=${PHASES-1 2}
for f in "$dump" "$index" "$vocab" ${phases:+"$config"}; do
  [ -r "$f" ] || { echo "$me: $f: cannot read it" >&2; exit 2; }
done
if [ -n "$phases" ]; then
  trainer=${TRAIN_BERT:-$bin/train_bert}
  [ -x "$trainer" ] || {
    echo "$me: $trainer: no trainer (train_bert is built where nvcc is found): set TRAIN_BERT," \
      "or PHASES= to stop after the HDF5 files" >&2
    exit 2
  }
fi

# ---- sizes: knobs, or defaults that follow the dump and fit the nodes
# nodes PARTITION: "CPUS_MIN CPUS_MAX MEM_MIN MEM_MAX GPUS_MIN NODES" over
# the partition's nodes (MB; GPUs from their Gres)
nodes() {
  local p=$1
  [ -n "$p" ] || p=$(sinfo -h -o %P | sed -n 's/\*$//p' | head -n 1)
  sinfo -h -N -p "$p" -o '%c %m %G' | awk '
    { g = 0; n = split($3, a, ","); for (i = 1; i <= n; i++) if (a[i] ~ /^gpu/) {
        sub(/\(.*/, "", a[i]); k = split(a[i], b, ":"); if (b[k] ~ /^[0-9]+$/) g += b[k] }
      c0 = NR == 1 || $1 < c0 ? $1 : c0; c1 = $1 > c1 ? $1 : c1
      m0 = NR == 1 || $2 < m0 ? $2 : m0; m1 = $2 > m1 ? $2 : m1; g0 = NR == 1 || g < g0 ? g : g0 }
    END { if (NR) print c0, c1, m0, m1, g0, NR }'
}
mb() { # 16G, 512M, 2T or MB -> MB
  local v=${1^^}
  case $v in
  *T) echo $((${v%T} * 1048576)) ;; *G) echo $((${v%G} * 1024)) ;; *M) echo "${v%M}" ;; *) echo "$v" ;;
  esac
}
# size NAME DEFAULT MIN MAX: $NAME, else DEFAULT cut to MIN; above MAX: refused
size() {
  local v=${!1:-}
  if [ -z "$v" ]; then
    echo $(($2 < $3 ? $2 : $3))
  elif ! [[ "$v" =~ ^[0-9]+$ ]] || [ "$v" -gt "$4" ] || [ "$v" -lt 1 ]; then
    echo "$me: $1=${!1}: not from 1 to $4, what the largest node has (the job would pend for ever)" >&2
    return 1
  else
    echo "$v"
  fi
}
read -r c0 c1 m0 m1 _ _ < <(nodes "${PARTITION:-}") || true
[ -n "${c1:-}" ] || { echo "$me: sinfo shows no nodes in partition ${PARTITION:-(default)}" >&2; exit 2; }
PREP_MEM=${PREP_MEM:+$(mb "$PREP_MEM")} SHARD_MEM=${SHARD_MEM:+$(mb "$SHARD_MEM")} H5_MEM=${H5_MEM:+$(mb "$H5_MEM")}
prep_cpus=$(size PREP_CPUS 16 "$c0" "$c1") || exit 2
shard_cpus=$(size SHARD_CPUS 4 "$c0" "$c1") || exit 2
h5_cpus=$(size H5_CPUS 16 "$c0" "$c1") || exit 2
prep_mem= shard_mem= h5_mem= # no --mem where the nodes declare no memory (RealMemory unset)
if [ "$m1" -ge 1024 ]; then
  prep_mem=$(size PREP_MEM 16384 "$m0" "$m1") || exit 2
  shard_mem=$(size SHARD_MEM 8192 "$m0" "$m1") || exit 2
  h5_mem=$(size H5_MEM 32768 "$m0" "$m1") || exit 2
fi
bytes=$(stat -c %s "$dump")
gib=$(((bytes + (1 << 30) - 1) >> 30)) half=$(((bytes + (1 << 29) - 1) >> 29))
parts=${PARTS:-$(cat "$work/parts/.parts" 2>/dev/null || echo $((gib > 64 ? 64 : gib < 1 ? 1 : gib)))}
tasks=${H5_TASKS:-$((half > 64 ? 64 : half < 1 ? 1 : half))}
for v in parts tasks; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "$me: ${v^^}=${!v}: not a positive number" >&2; exit 2; }
done
if [ -e "$work/parts/.parts" ] && [ "$(cat "$work/parts/.parts")" != "$parts" ]; then
  echo "$me: $work/parts holds a $(cat "$work/parts/.parts")-part run; PARTS=$parts: use another WORK_DIR" >&2
  exit 2
fi
time=() data_part=()
[ -z "${TIME:-}" ] || time=(--time="$TIME")
[ -z "${PARTITION:-}" ] || data_part=(--partition="$PARTITION")
if [ -n "$phases" ]; then
  read -r tc0 _ _ _ tg0 tn < <(nodes "${TRAIN_PARTITION:-${PARTITION:-}}") || true
  [ -n "${tn:-}" ] || { echo "$me: sinfo shows no nodes in partition ${TRAIN_PARTITION:-${PARTITION:-(default)}}" >&2; exit 2; }
  nnodes=$(size NODES 2 "$tn" "$tn") || exit 2
  gpus=$(size GPUS_PER_NODE "$tg0" "$tg0" "$tg0" 2>/dev/null) || gpus=
  if [ -z "$gpus" ] || [ "$gpus" -lt 1 ]; then
    echo "$me: GPUS_PER_NODE=${GPUS_PER_NODE:-}: the training partition's nodes have $tg0 GPUs (Gres gpu):" \
      "set TRAIN_PARTITION to a partition with GPUs" >&2
    exit 2
  fi
  per_task=${GPUS_PER_TASK:-1}
  if ! [[ "$per_task" =~ ^[1-9][0-9]*$ ]] || [ $((gpus % per_task)) -ne 0 ]; then
    echo "$me: GPUS_PER_TASK=$per_task: not a divisor of GPUS_PER_NODE=$gpus" >&2
    exit 2
  fi
  ntasks=$((gpus / per_task)) share=$((tc0 / (gpus / per_task)))
  [ "$share" -le 8 ] || share=8
  if [ "$share" -lt 1 ]; then
    echo "$me: $ntasks tasks per node (one per GPU) need $ntasks CPUs; the training nodes have $tc0" >&2
    exit 2
  fi
  train_cpus=$(size TRAIN_CPUS "$share" "$share" $((tc0 / ntasks))) || exit 2
  gpu_opt=(--gpus-per-node="$gpus") # (also over train.sh's #SBATCH line)
  [ -z "${GPUS_PER_TASK:-}" ] || gpu_opt+=(--gpus-per-task="$GPUS_PER_TASK")
  train_part=("${data_part[@]}")
  [ -z "${TRAIN_PARTITION:-}" ] || train_part=(--partition="$TRAIN_PARTITION")
fi
read -r -a prep_x <<<"${PREP_SBATCH:-}"
read -r -a shard_x <<<"${SHARD_SBATCH:-}"
read -r -a h5_x <<<"${H5_SBATCH:-}"
read -r -a train_x <<<"${TRAIN_SBATCH:-}"

# ---- the jobs
logs=$work/logs
[ "${DRY_RUN:-0}" = 1 ] || mkdir -p "$logs"
exec 3>&1
submit() { # NAME sbatch options and script: the job id (DRY_RUN: the command, and NAME as the id)
  local name=$1
  shift
  if [ "${DRY_RUN:-0}" = 1 ]; then
    echo "sbatch $(printf '%q ' "$@")" >&3
    echo "$name"
  else
    local id
    id=$(sbatch --parsable --export=ALL --open-mode=append "$@") || { echo "$me: sbatch for $name failed" >&2; return 1; }
    echo "${id%%;*}"
  fi
}
all=()
abandon() { # a submission failed: the jobs before it would run for nothing
  if [ ${#all[@]} -gt 0 ] && [ "${DRY_RUN:-0}" != 1 ]; then
    scancel "${all[@]}" 2>/dev/null || true
    echo "$me: cancelled the jobs submitted before it: ${all[*]}" >&2
  fi
  exit 2
}
mem() { [ -z "$1" ] || echo --mem="$1"M; } # MB or nothing
after() { echo --dependency=afterok:"$(IFS=: && echo "$*")" --kill-on-invalid-dep=yes; }
h5opts() { # SEQ PRED
  echo --max-seq-length "$1" --max-predictions-per-seq "$2" --dupe-factor "${DUPE:-5}" \
    --random-seed "${SEED:-12345}" --masked-lm-prob "${MLM_PROB:-0.15}" --do-lower-case "${LOWER:-1}"
}
prep=$(submit prep --job-name=wikibert-prep --array=0-$((parts - 1)) --cpus-per-task="$prep_cpus" $(mem "$prep_mem") \
  --output="$logs/prep_%a.log" "${data_part[@]}" "${time[@]}" "${prep_x[@]}" \
  "$here/examples/slurm/prep_array.sh" "$dump" "$index" "$work/parts" "$lang") || abandon
all+=("$prep")
shard=$(submit shard --job-name=wikibert-shard $(after "$prep") --cpus-per-task="$shard_cpus" $(mem "$shard_mem") \
  --output="$logs/shard.log" "${data_part[@]}" "${time[@]}" "${shard_x[@]}" \
  "$here/examples/slurm/shard.sh" "$work/parts" "$work/shards") || abandon
all+=("$shard")
h5=()
for p in 1 2; do
  [ $p = 1 ] && s=${SEQ1:-128} r=${PRED1:-20}
  [ $p = 2 ] && s=${SEQ2:-512} r=${PRED2:-80}
  id=$(submit "hdf5_phase$p" --job-name=wikibert-hdf5 $(after "$shard") --array=0-$((tasks - 1)) \
    --cpus-per-task="$h5_cpus" $(mem "$h5_mem") --output="$logs/hdf5_phase${p}_%a.log" \
    "${data_part[@]}" "${time[@]}" "${h5_x[@]}" \
    "$here/pipelines/hdf5_array.sh" "$work/shards" "$vocab" "$work/hdf5_phase$p" $(h5opts "$s" "$r")) || abandon
  h5+=("$id") all+=("$id")
done
ids=("prep=$prep" "shard=$shard" "hdf5_phase1=${h5[0]}" "hdf5_phase2=${h5[1]}")
before=()
for p in $phases; do
  [[ "$p" =~ ^[12]$ ]] || { echo "$me: PHASES=$phases: 1, 2 or both" >&2; exit 2; }
  t=$(submit "train_phase$p" --job-name=wikibert-train $(after "${h5[p - 1]}" "${before[@]}") --export=ALL,PHASE="$p" \
    --nodes="$nnodes" --ntasks-per-node="$ntasks" "${gpu_opt[@]}" --cpus-per-task="$train_cpus" \
    --time="${TRAIN_TIME:-24:00:00}" --requeue --output="$logs/train_phase$p.log" "${train_part[@]}" "${train_x[@]}" \
    "$here/examples/slurm/train.sh" "$work/hdf5_phase$p" "$config" "$work/train" --vocab_file "$vocab") || abandon
  ids+=("train_phase$p=$t") all+=("$t")
  before=("$t")
done
echo "jobs: ${ids[*]}; logs in $logs"
[ "${DRY_RUN:-0}" = 1 ] && exit 0
[ "${WAIT:-0}" = 1 ] || exit 0

# ---- WAIT=1: follow the jobs to their end
declare -A state exit_code log_of
final='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$'
stuck='^(DependencyNeverSatisfied|PartitionConfig|PartitionNodeLimit|PartitionTimeLimit|BadConstraints)$'
order=()
f() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<" $rec"; } # field NAME of $rec
while :; do
  busy=0
  for e in "${ids[@]}"; do
    name=${e%%=*} id=${e#*=}
    while read -r rec; do
      [ -n "$rec" ] || continue
      task=$(f ArrayTaskId) st=$(f JobState) why=$(f Reason)
      [ "$why" != None ] || why=
      key=$name${task:+ ${id}_$task}
      [ -n "${state[$key]+x}" ] || order+=("$key")
      if [ "$st" = PENDING ] && [[ "$why" =~ $stuck ]]; then
        scancel "$(f JobId)" 2>/dev/null || true
        st="CANCELLED" why="($why)"
      fi
      if [[ "$st" =~ $final ]] && [ "${state[$key]:-}" != "$st" ]; then
        echo "$me: $key (job $(f JobId)): $st, exit $(f ExitCode)${why:+ $why}"
      fi
      state[$key]=$st exit_code[$key]=$(f ExitCode) log_of[$key]=$(f StdOut)
      [[ "$st" =~ $final ]] || busy=1
    done < <(scontrol -o show job "$id" 2>/dev/null || true)
  done
  [ $busy = 1 ] || break
  sleep "${WAIT_POLL:-30}"
done
bad=0
for key in "${order[@]}"; do
  [ "${state[$key]}" = COMPLETED ] && continue
  # a pending array's record of several tasks, which became the tasks' own
  [[ ! "${state[$key]}" =~ $final && "$key" =~ _.*[-,] ]] && continue
  bad=1
  [ "${state[$key]}" = CANCELLED ] && continue
  echo "$me: $key ${state[$key]} (exit ${exit_code[$key]}); the end of ${log_of[$key]}:" >&2
  tail -n 5 "${log_of[$key]}" 2>/dev/null | sed 's/^/  /' >&2 || true
done
if [ $bad = 1 ]; then
  echo "$me: the chain did not finish; once fixed, submit it again: finished work is kept" >&2
  exit 1
fi
echo "$me: the chain finished: $work/train/hf"
