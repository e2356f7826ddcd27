# The cluster and container recipes in examples/: shell syntax (bash -n),
# the MPIJob's YAML (PyYAML when importable, else a structural check), the
# Dockerfile's packages against mk/deps.sh and its CPU-only stages, every
# --option a recipe passes to one of our programs against that program's
# --help, and the Slurm recipes without Slurm (tests/cli/slurm.sh runs them
# on a real one): the prep array on a multistream sample (its parts
# together equal one run), the array checks (a gap, a stride, an index
# past the count: refused before any work, naming the missing indices),
# the copies of the recipes' common part, bin/ found from the job's
# Command= when $0 is slurmd's copy, shard.sh's sizes from the document
# count and its refusal of a missing part, and train.sh's GPU per task and
# batch arithmetic with a stand-in srun and trainer.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
EX=$ROOT/examples
: >"$err"
mapfile -t scripts < <(find "$EX" -name '*.sh' | sort)
ok "recipes found (${#scripts[@]} scripts)" [ "${#scripts[@]}" -ge 4 ]
for s in "${scripts[@]}" "$ROOT/pipelines/hdf5_array.sh"; do
  ok "bash -n ${s#"$ROOT"/}" bash -n "$s"
done

# ---- the MPIJob
Y=$EX/k8s/mpijob.yaml
py=$(py_with yaml)
if [ -n "$py" ]; then
  run "$py" -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["apiVersion"] == "kubeflow.org/v2beta1" and d["kind"] == "MPIJob", "api/kind"
r = d["spec"]["mpiReplicaSpecs"]
assert set(r) == {"Launcher", "Worker"}, "replica specs"
for k in r:
    c = r[k]["template"]["spec"]["containers"][0]
    assert c["image"] and c["name"], k
assert "nvidia.com/gpu" in r["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
print("ok")' "$Y"
  ok "mpijob.yaml parses (PyYAML): MPIJob v2beta1, Launcher + Worker with GPUs" [ "$rc" -eq 0 ]
else
  echo "note: no PyYAML; mpijob.yaml gets the structural check only"
fi
ok "mpijob.yaml: no tab characters" [ -z "$(grep -P '\t' "$Y")" ]
ok "mpijob.yaml: kind and apiVersion" grep -q '^kind: MPIJob$' "$Y"
ok "mpijob.yaml: apiVersion" grep -q '^apiVersion: kubeflow.org/v2beta1$' "$Y"
ok "mpijob.yaml: indentation in steps of two" \
  [ -z "$(grep -vE '^\s*(#|$)' "$Y" | awk '{ match($0, /^ */); if (RLENGTH % 2) print }')" ]

# ---- the Dockerfile: Debian 12, the build's -dev packages, make install
DF=$EX/docker/Dockerfile
ok "Dockerfile: Debian 12 base" grep -q '^FROM debian:12' "$DF"
pkgs=$(grep -oE '"[a-z0-9.-]+\|' "$ROOT/mk/deps.sh" | tr -d '"|')
miss=$(for p in $pkgs; do grep -qw -- "$p" "$DF" || echo "$p"; done | tr '\n' ' ')
ok "Dockerfile installs mk/deps.sh's packages (missing: ${miss:-none})" [ -z "$miss" ]
ok "Dockerfile: make install" grep -q 'make install PREFIX=' "$DF"
cpu=$(sed -n '/^FROM debian:12 AS cpu-build$/,/^FROM .* AS cuda-repo$/p' "$DF" | sed '$d')
ok "Dockerfile: a CPU-only target (cpu-build, then cpu) before NVIDIA's stages" \
  eval 'grep -q "^FROM debian:12 AS cpu$" <<<"$cpu" && grep -q "COPY --from=cpu-build /stage/opt/wikibert" <<<"$cpu"'
ok "... which names no NVIDIA repository, CUDA package or stage" eval '! grep -qiE "nvidia|cuda" <<<"$(grep -v "^#" <<<"$cpu")"'
miss=$(for p in $pkgs; do grep -qw -- "$p" <<<"$cpu" || echo "$p"; done | tr '\n' ' ')
ok "... and installs mk/deps.sh's packages (missing: ${miss:-none})" [ -z "$miss" ]

# ---- options: every --option after one of our programs on a command line
# (continuation lines joined; `|`, `;`, `&&` end a command;
# pipelines/hdf5_array.sh passes its options to hdf5gen)
help_of() { # PROG -> its --help on stdout
  if [ "$1" = train_bert ] && [ ! -x "$BIN/train_bert" ]; then "$TESTBIN/train_bert_emu" --help; else "$BIN/$1" --help; fi
}
mapfile -t progs < <(cd "$BIN" && ls; echo train_bert)
uses=$(for f in "${scripts[@]}" "$Y" "$DF"; do
  sed -E 's/^[[:space:]]*#+//' "$f" | awk '/\\$/ { sub(/\\$/, ""); buf = buf $0 " "; next } { print buf $0; buf = "" }' |
    sed -E 's/(\|\||&&|[|;])/\n/g' | while read -r -a w; do
    prog=""
    for t in "${w[@]}"; do
      t=${t//\"/} t=${t//\'/}
      b=${t##*/}
      [ "$b" = hdf5_array.sh ] && b=hdf5gen
      if [ -z "$prog" ]; then
        for p in "${progs[@]}"; do [ "$b" = "$p" ] && prog=$p; done
        [ -n "$prog" ] && echo "$prog - ${f#"$ROOT"/}"
      elif [[ "$t" =~ ^--[A-Za-z][A-Za-z0-9_-]*(=|$) ]]; then
        echo "$prog ${t%%=*} ${f#"$ROOT"/}"
      fi
    done
  done
done | sort -u)
n=$(grep -vc ' - ' <<<"$uses")
ok "the recipes pass options to our programs ($n uses)" [ "$n" -ge 15 ]
bad=$(while read -r prog opt file; do
  [ "$opt" = - ] && continue
  help_of "$prog" 2>/dev/null | grep -qE -- "(^|[^A-Za-z0-9_-])$opt([^A-Za-z0-9_-]|$)" || echo "$file: $prog $opt"
done <<<"$uses")
ok "every option exists in its program's --help (${bad:-all do})" [ -z "$bad" ]
for p in wiki_dump wiki_strip sent_split shard_split hdf5gen train_bert; do
  ok "a recipe runs $p" grep -q "^$p " <<<"$uses"
done

# ---- the prep array on a multistream sample, in 3 parts
D=$DATA/elwikivoyage-17.multistream.xml.bz2 I=$DATA/elwikivoyage-17.multistream-index.txt.bz2
for i in 0 1 2; do
  run env TASK_INDEX=$i TASK_COUNT=3 WIKIBERT_BIN="$BIN" bash "$EX/slurm/prep_array.sh" "$D" "$I" "$T/parts" en
  expect_rc "prep_array.sh task $i of 3" 0
done
"$BIN/wiki_dump" -q "$D" | "$BIN/wiki_strip" -q -F lines | "$BIN/sent_split" -q -l en >"$T/whole.txt"
cat "$T"/parts/part_*.txt >"$T/joined.txt"
ok "3 parts joined equal one run" cmp -s "$T/joined.txt" "$T/whole.txt"
ok "... which is not empty" [ -s "$T/whole.txt" ]
run env TASK_INDEX=1 TASK_COUNT=3 WIKIBERT_BIN="$BIN" bash "$EX/slurm/prep_array.sh" "$D" "$I" "$T/parts" en
ok "a finished part is kept on a requeue" grep -q "done before" "$out"
run env WIKIBERT_BIN="$BIN" bash "$EX/slurm/shard.sh" "$T/parts" "$T/shards" --train 2 --test 1
ok "shard.sh on the parts" [ "$rc" -eq 0 -a -f "$T/shards/wikicorpus_en_training_1.txt" ]

# options the recipes keep in arrays: train.sh's for train_bert, submit.sh's for hdf5gen
tb=$(sed -n '/^opts=(/,/)$/p; /^  opts+=(/p' "$EX/slurm/train.sh" | grep -oE -- '--[a-z][a-z0-9_]+' | sort -u)
hg=$(sed -n '/^h5opts()/,/^}/p' "$EX/slurm/submit.sh" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u)
ok "train.sh's train_bert options ($(wc -w <<<"$tb")) and submit.sh's hdf5gen options ($(wc -w <<<"$hg")) found" \
  [ "$(wc -w <<<"$tb")" -ge 14 -a "$(wc -w <<<"$hg")" -ge 6 ]
bad=$(for o in $tb; do help_of train_bert | grep -qE -- "(^|[^A-Za-z0-9_-])$o([^A-Za-z0-9_-]|$)" || echo "train_bert $o"; done
  for o in $hg; do help_of hdf5gen | grep -qE -- "(^|[^A-Za-z0-9_-])$o([^A-Za-z0-9_-]|$)" || echo "hdf5gen $o"; done)
ok "... each in its program's --help (${bad:-all are})" [ -z "$bad" ]

# ---- the recipes' common parts: one text in every copy
part() { sed -n "/^# ---- $1/,/^# ---- end of $1/p" "$2"; } # NAME FILE: the lines from "# ---- NAME" to "# ---- end of NAME"
sums=$(for f in "$EX"/slurm/*.sh "$ROOT/pipelines/hdf5_array.sh"; do part "the recipes' common part" "$f" | md5sum; done | sort -u)
ok "the recipes' common part (bin/ lookup): the same in the 5 recipes" \
  [ "$(wc -l <<<"$sums")" = 1 -a "$(part "the recipes' common part" "$EX/slurm/train.sh" | wc -l)" -gt 20 ]
sums=$(for f in "$EX/slurm/prep_array.sh" "$ROOT/pipelines/hdf5_array.sh"; do part "the array tasks' common part" "$f" | md5sum; done | sort -u)
ok "the array tasks' common part: the same in prep_array.sh and hdf5_array.sh" \
  [ "$(wc -l <<<"$sums")" = 1 -a "$(part "the array tasks' common part" "$EX/slurm/prep_array.sh" | wc -l)" -gt 20 ]

# ---- array places (Slurm's variables set as sbatch --array sets them)
arr() { # MIN MAX STEP COUNT ID SCRIPT ARGS...
  local a=(SLURM_ARRAY_JOB_ID=5 SLURM_ARRAY_TASK_MIN=$1 SLURM_ARRAY_TASK_MAX=$2 SLURM_ARRAY_TASK_STEP=$3
    SLURM_ARRAY_TASK_COUNT=$4 SLURM_ARRAY_TASK_ID=$5)
  shift 5
  run env PATH="$T/fake:$PATH" WIKIBERT_BIN="$BIN" "${a[@]}" bash "$@"
}
mkdir -p "$T/fake"
printf '#!/bin/sh\necho "JobId=9 ArrayJobId=5 ArrayTaskId=3 JobName=x"\necho "JobId=8 ArrayJobId=5 ArrayTaskId=0-1 JobName=x"\n' \
  >"$T/fake/scontrol.records"
P=$EX/slurm/prep_array.sh
arr 1 3 1 3 1 "$P" "$D" "$I" "$T/a1" en
expect_rc "--array=1-3 (task 1)" 2
expect_err "... names index 0 and the fix" "*prep_array.sh: the array leaves out index 0 of 0..3, whose work would be lost: submit --array=0-3*"
ok "... before any work" [ ! -e "$T/a1" ]
arr 0 4 2 3 0 "$P" "$D" "$I" "$T/a2" en
expect_rc "--array=0-4:2 (task 0)" 2
expect_err "... names indices 1 and 3" "*leaves out index 1,3 of 0..4*"
arr 0 3 1 3 0 "$P" "$D" "$I" "$T/a3" en
expect_rc "--array=0,1,3 without the job's records (task 0)" 2
expect_err "... says some are missing" "*leaves out index some of them (3 tasks in 0..3)*"
cp "$T/fake/scontrol.records" "$T/fake/scontrol" && chmod +x "$T/fake/scontrol"
arr 0 3 1 3 0 "$P" "$D" "$I" "$T/a3" en
expect_rc "--array=0,1,3 with the job's records" 2
expect_err "... names index 2" "*leaves out index 2 of 0..3*"
rm -f "$T/fake/scontrol"
run env TASK_INDEX=3 TASK_COUNT=3 WIKIBERT_BIN="$BIN" bash "$P" "$D" "$I" "$T/a4" en
expect_rc "TASK_INDEX=3 TASK_COUNT=3" 2
expect_err "... refused" "*task 3 of 3: the index must be a number below the task count*"
run env TASK_INDEX=1 WIKIBERT_BIN="$BIN" bash "$P" "$D" "$I" "$T/a4" en
expect_rc "TASK_INDEX without TASK_COUNT" 2
run env TASK_INDEX=0 TASK_COUNT=4 WIKIBERT_BIN="$BIN" bash "$P" "$D" "$I" "$T/parts" en
expect_rc "a 4-part task in a 3-part folder" 1
expect_err "... refused" "*holds the parts of a 3-part run; this is a 4-part run*"
arr 0 4 2 3 2 "$ROOT/pipelines/hdf5_array.sh" "$T/shards" "$ROOT/data/bert/vocab.txt" "$T/a5"
expect_rc "hdf5_array.sh --array=0-4:2" 2
expect_err "... names 1 and 3" "*hdf5_array.sh: the array leaves out index 1,3 of 0..4*"

# ---- bin/ under sbatch: $0 is slurmd's copy of the script, the job's Command= the submitted path
mkdir -p "$T/spool"
cp "$P" "$T/spool/slurm_script"
if [ "$(cd "$BIN" && pwd)" = "$ROOT/bin" ]; then
  printf '#!/bin/sh\necho "JobId=$3 JobName=prep_array.sh"\necho "   Command=%s %s"\n' "$P" "$D $I $T/b1 en" >"$T/fake/scontrol"
  chmod +x "$T/fake/scontrol"
  run env -u WIKIBERT_BIN PATH="$T/fake:/usr/bin:/bin" SLURM_JOB_ID=17 TASK_INDEX=0 TASK_COUNT=3 bash "$T/spool/slurm_script" \
    "$D" "$I" "$T/b1" en
  expect_rc "slurmd's copy, no WIKIBERT_BIN: bin/ from Command= (its arguments cut off)" 0
  ok "... the part is written" [ -s "$T/b1/part_00000.txt" ]
  rm -f "$T/fake/scontrol"
  run env -u WIKIBERT_BIN PATH="/usr/bin:/bin" SLURM_JOB_ID=17 SLURM_SUBMIT_DIR="$ROOT" TASK_INDEX=0 TASK_COUNT=3 \
    bash "$T/spool/slurm_script" "$D" "$I" "$T/b2" en
  expect_rc "... without scontrol: bin/ of the submit directory" 0
else
  echo "note: BIN is not the checkout's bin/: the lookup of bin/ under sbatch is not checked here"
fi
run env -u WIKIBERT_BIN PATH="/usr/bin:/bin" SLURM_JOB_ID=17 SLURM_SUBMIT_DIR="$T" TASK_INDEX=0 TASK_COUNT=3 \
  bash "$T/spool/slurm_script" "$D" "$I" "$T/b3" en
expect_rc "no scontrol, submitted elsewhere, nothing on the PATH" 2
expect_err "... says where it looked and what to set" \
  "*prep_array.sh: cannot find the program wiki_dump (looked in $T/bin and on the PATH): export WIKIBERT_BIN=DIR*"
run env WIKIBERT_BIN="$T" TASK_INDEX=0 TASK_COUNT=3 bash "$P" "$D" "$I" "$T/b4" en
expect_rc "a WIKIBERT_BIN without the programs" 2
expect_err "... says so" "*WIKIBERT_BIN=$T holds no program wiki_dump*"

# ---- shard.sh: sizes from the document count, every part needed
run env WIKIBERT_BIN="$BIN" bash "$EX/slurm/shard.sh" "$T/parts" "$T/sd"
docs=$(cat "$T"/parts/part_*.txt | grep -c '^$')
ok "shard.sh without sizes on $docs documents: 1 training and 1 test shard, not 256 + 256" \
  eval '[ $rc = 0 ] && [ "$(ls "$T/sd" | grep -c "_training_")" = 1 ] && [ "$(ls "$T/sd" | grep -c "_test_")" = 1 ]'
run env WIKIBERT_BIN="$BIN" bash "$EX/slurm/shard.sh" "$T/parts" "$T/sd"
ok "... run again: kept (done before)" grep -q "done before" "$out"
mv "$T/parts/part_00001.txt" "$T/p1"
run env WIKIBERT_BIN="$BIN" bash "$EX/slurm/shard.sh" "$T/parts" "$T/sd2"
expect_rc "a part missing" 1
expect_err "... named, with the command that makes it" "*part 1 of 0..2 missing: rerun it (TASK_COUNT=3 sbatch --array=1 *"
mv "$T/p1" "$T/parts/part_00001.txt"

# ---- train.sh: each task's GPU and the batch, with a stand-in srun and trainer
cat >"$T/fake/srun" <<'SH'
#!/bin/bash
# srun stand-in: the command once per task of FAKE_TASKS (PROCID:LOCALID:CUDA_VISIBLE_DEVICES)
while [[ "$1" == --* ]]; do shift; done
for t in $FAKE_TASKS; do
  IFS=: read -r p l c <<<"$t"
  SLURM_PROCID=$p SLURM_LOCALID=$l CUDA_VISIBLE_DEVICES=$c "$@" || exit
done
SH
printf '#!/bin/sh\necho "trainer $*"\n' >"$T/fake/trainer"
chmod +x "$T/fake/srun" "$T/fake/trainer"
ntr=0
tr_run() { # FAKE_TASKS [VAR=value...]: train.sh into a new $T/trN
  local tasks=$1
  shift
  ntr=$((ntr + 1))
  run env PATH="$T/fake:$PATH" SLURM_NTASKS=4 SLURM_JOB_ID=7 FAKE_TASKS="$tasks" TRAIN_BERT="$T/fake/trainer" "$@" \
    bash "$EX/slurm/train.sh" "$T/h5" "$T/cfg.json" "$T/tr$ntr" --vocab_file v.txt
}
lr() { sed -n 's/.*--local_rank \([0-9]*\)$/\1/p' "$out" | paste -sd' ' -; }
tr_run "0:0:0 1:1:1" SLURM_GPUS_ON_NODE=2
expect_rc "train.sh, one GPU bound to each task" 0
ok "... each task takes the one it sees: --local_rank 0 0 ($(lr))" [ "$(lr)" = "0 0" ]
ok "... NVIDIA's phase 1 on 4 GPUs: 16384 a GPU in 256 micro-batches of 64, 7038 steps at 6e-3" \
  grep -q -- "--train_batch_size 16384 --gradient_accumulation_steps 256 --learning_rate 6e-3 --warmup_proportion 0.2843 --max_steps 7038 --max_seq_length 128 --max_predictions_per_seq 20" "$out"
tr_run "0:0:0,1 1:1:0,1" SLURM_GPUS_ON_NODE=2
ok "every task seeing the node's GPUs: local rank r takes GPU r ($(lr))" [ "$(lr)" = "0 1" ]
tr_run "0:0:0,1 1:1:0,1" SLURM_GPUS_ON_NODE=2 SLURM_GPUS_PER_TASK=2
ok "two GPUs bound to each task: the first of its own ($(lr))" [ "$(lr)" = "0 0" ]
tr_run "0:0:0 1:1:0" SLURM_GPUS_ON_NODE=1
expect_rc "two tasks on a node where the job has one GPU" 2
expect_err "... refused, not two processes on one GPU" "*local rank 1, but the job has 1 GPUs on this node*"
tr_run "0:0: 1:1:" PHASE=2
ok "no CUDA_VISIBLE_DEVICES: the trainer's own choice (no --local_rank); phase 2's recipe from phase 1's end" \
  eval '[ -z "$(lr)" ] && grep -q -- "--train_batch_size 8192 --gradient_accumulation_steps 1024 --learning_rate 4e-3 --warmup_proportion 0.128 --max_steps 1563 --max_seq_length 512 --max_predictions_per_seq 80 .*--phase2 --resume_from_checkpoint --phase1_end_step 7038" "$out"'
tr_run "0:0:0" PHASE1_BATCH=100
expect_rc "a batch that does not divide over 4 GPUs" 2
expect_err "... says which knob" "*a batch of 100 sequences over 4 GPUs in micro-batches of 64 does not divide: set PHASE1_BATCH*"
ok "... and marks the phase done" [ -e "$T/tr1/phase1.done" ]
ntr=0
tr_run "0:0:0"
ok "a finished phase: done before, no training" eval '[ $rc = 0 ] && grep -q "phase 1 done before" "$out" && ! grep -q trainer "$out"'
done_testing
