# The Slurm recipes of examples/slurm on a real Slurm: Debian 12's munged,
# slurmctld and two slurmd (nodes n1 and n2, 4 CPUs and 8 GRES GPUs each)
# started on this machine by mk/slurm_local.sh in a scratch folder, and
# stopped by their PIDs at the end whatever happens (also when this test is
# killed: a watcher process does it then). Root only (slurmd runs the jobs);
# the packages are installed when missing (mk/testdeps.sh tries it first),
# otherwise "not run", counting nothing. The whole test runs under its own
# timeout (WB_SLURM_TIMEOUT, 300 s); every wait is bounded.
#
# The chain, submit.sh as a user calls it, without WIKIBERT_BIN (the
# recipes find bin/ from the job's Command=): a multistream dump made from
# the 206 enwiki sample pages (11 streams, 3 parts), shards, the HDF5 files
# of both phases (arrays of 2), training over both nodes (2 tasks each) with
# the CUDA trainer on the CPU (train_bert_emu), phase 1 then phase 2:
#  1. from the checkout, with a damaged stream in part 1: the part fails,
#     the jobs after it are cancelled (nothing pends), WAIT=1 names the task
#     and its log, exit 1;
#  2. the dump repaired, submitted again from another directory with
#     relative paths, PHASES=1 and one GPU bound to each task: parts 0 and
#     2 are kept ("done before", logs appended), the chain finishes; the
#     joined parts, the shards and the HDF5 files are the bytes of
#     one-process runs; each task trains on the one GPU it sees;
#  3. PHASES=2 from the checkout, every task seeing its node's GPUs (local
#     rank r takes GPU r): the checkpoints and the export equal a run of the
#     same 4 ranks without Slurm.
# Then the recipes alone under sbatch: arrays with a gap, a stride or a
# start above 0 fail in every task naming the missing indices; TASK_COUNT
# reruns one part on purpose; an index equal to the count is refused; a
# copy of a recipe outside any checkout says how to name bin/; sizes above
# the nodes' are refused by submit.sh before anything is submitted.
if [ -z "${WB_SLURM_TIMED:-}" ]; then
  WB_SLURM_TIMED=1 exec timeout -k 30 "${WB_SLURM_TIMEOUT:-300}" bash "$0" "$@"
fi
. "$TESTS/cli/lib.sh"
t_start=$SECONDS
ROOT=$(cd "$TESTS/.." && pwd)
TRB=$TESTBIN/train_bert_emu
# a clean environment: none of a surrounding job's Slurm variables, none of the recipes' knobs
for v in $(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_'); do unset "$v"; done
unset WIKIBERT_BIN TASK_INDEX TASK_COUNT PARTS H5_TASKS PHASES PHASE NODES GPUS_PER_NODE GPUS_PER_TASK \
  TRAIN_CPUS TRAIN_BERT TRAIN_OPTS VOCAB WAIT DRY_RUN PARTITION TRAIN_PARTITION TRAIN_SHARDS TEST_SHARDS

if [ "$(id -u)" != 0 ]; then
  echo "not run: the local Slurm needs root (slurmd runs the jobs)"
  done_testing
  exit 0
fi
if [ ! -x "$TRB" ]; then
  echo "not run: $TRB is not built (make test builds it)"
  done_testing
  exit 0
fi
if ! "$ROOT/mk/slurm_local.sh" install; then
  echo "not run: Slurm is not installed and could not be (apt-get install munge slurmctld slurmd slurm-client)"
  done_testing
  exit 0
fi

S=$T/slurm
cleanup() {
  "$ROOT/mk/slurm_local.sh" stop "$S"
  rm -rf "$T"
}
trap cleanup EXIT
trap 'FAIL=$((FAIL + 1)); echo "FAIL the test ran past its time (${WB_SLURM_TIMEOUT:-300} s)"; done_testing; exit 1' TERM
chmod 755 "$T" # munged's socket lies below it
# killed (the suite's timeout), the test leaves no daemon behind: this
# watcher, in a session of its own (timeout signals its process group),
# stops them once the test is gone
setsid -f bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2" stop "$3"; rm -rf "$4"' watcher $$ \
  "$ROOT/mk/slurm_local.sh" "$S" "$T" >/dev/null 2>&1 </dev/null
start=$("$ROOT/mk/slurm_local.sh" start "$S" 2>&1)
ok "the local Slurm starts: two nodes idle ($start)" [ -e "$S/slurm.conf" ]
[ -e "$S/slurm.conf" ] || { done_testing; exit 1; }
export SLURM_CONF=$S/slurm.conf
echo "note: Slurm up in $((SECONDS - t_start)) s"

# ---- the data: a multistream dump of the 206 sample pages, 20 pages a
# stream (Wikimedia's layout: header stream, page streams, footer stream)
# and its index OFFSET:ID:TITLE; a copy with one damaged stream
mkdir -p "$T/d" "$T/elsewhere" "$T/lone"
bzip2 -dc "$DATA/enwiki-206.xml.bz2" >"$T/d/en.xml"
(
  cd "$T/d" || exit 1
  awk -v k=20 '
    /^ *<page>/ { if (n % k == 0) f = sprintf("s%05d", ++s); n++; want = 1 }
    /^ *<\/mediawiki>/ { f = "s99999" }
    !f { f = "s00000" }
    want && /^ *<title>/ { t = $0; sub(/^ *<title>/, "", t); sub(/<\/title>.*/, "", t) }
    want && /^ *<id>/ { id = $0; gsub(/[^0-9]/, "", id); print s "\t" id "\t" t > "pages"; want = 0 }
    { print > f }' en.xml
  : >en.xml.bz2
  for f in s?????; do
    off=$(stat -c %s en.xml.bz2)
    awk -F'\t' -v s=$((10#${f#s})) -v o="$off" '$1 == s { print o ":" $2 ":" $3 }' pages >>index.txt
    bzip2 -c "$f" >>en.xml.bz2
  done
  bzip2 -c index.txt >en-index.txt.bz2
  rm -f s????? pages index.txt en.xml
)
D=$T/d/en.xml.bz2 I=$T/d/en-index.txt.bz2
mapfile -t offs < <(bzip2 -dc "$I" | cut -d: -f1 | uniq)
ok "the dump has 11 page streams" [ ${#offs[@]} -eq 11 ]
cp "$D" "$T/d/good.xml.bz2"
# part 1 of 3 holds streams 3 to 6: damage the middle of stream 4
printf 'XXXXXXXX' | dd of="$D" bs=1 seek=$(((offs[4] + offs[5]) / 2)) conv=notrunc status=none
"$BIN/wiki_dump" -q "$D" >/dev/null 2>&1
ok "... and its damaged copy is refused by wiki_dump" [ $? -ne 0 ]
# one-process references: the text, a vocabulary of ~1000 pieces, the shards
"$BIN/wiki_dump" -q "$DATA/enwiki-206.xml.bz2" | "$BIN/wiki_strip" -q -F lines | "$BIN/sent_split" -q -l en >"$T/whole.txt"
"$BIN/vocab_train" -q --bert --vocab-size 1000 --wordpiece "$T/vocab.txt" -o "$T/v" "$T/whole.txt"
docs=$(grep -c '^$' "$T/whole.txt")
ntrain=$((docs * 9 / 10 / 16)) ntest=$((docs / 10 / 16))
[ $ntest -ge 1 ] || ntest=1
"$BIN/shard_split" -q --train $ntrain --test $ntest -o "$T/ref/shards" "$T/whole.txt"
vsize=$((($(wc -l <"$T/vocab.txt") + 7) / 8 * 8))
cat >"$T/small.json" <<J
{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 256, "type_vocab_size": 2, "vocab_size": $vsize, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
J
# the recipe, small: 2 + 1 steps of 8 and 4 sequences over 4 GPUs
knobs=(PARTS=3 H5_TASKS=2 GPUS_PER_NODE=2 PHASE1_STEPS=2 PHASE1_BATCH=8 PHASE1_MICRO=2 PHASE2_STEPS=1
  PHASE2_BATCH=4 PHASE2_MICRO=1 SEQ2=256 PRED2=40 CKPT_STEPS=1 TRAIN_OPTS=-v TRAIN_BERT="$TRB"
  VOCAB="$T/vocab.txt" WAIT=1 WAIT_POLL=1)
left() { # seconds a step may take: what is left of the test's time, less 20 for the end
  local l=$((${WB_SLURM_TIMEOUT:-300} - 20 - (SECONDS - t_start)))
  echo $((l > 5 ? l : 5))
}
state() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.* JobState=\([^ ]*\).*/\1/p' | sort -u | paste -sd, -; }
W=$T/work

# ---- 1. from the checkout, a damaged part
t0=$SECONDS
run env -C "$ROOT" "${knobs[@]}" timeout "$(left)" examples/slurm/submit.sh "$D" "$I" en "$W" "$T/small.json"
echo "note: a chain with a failing part ended in $((SECONDS - t0)) s"
expect_rc "a damaged part: submit.sh WAIT=1" 1
ok "... names the failed task" grep -qE '^submit.sh: prep [0-9]+_1 \(job [0-9]+\): FAILED, exit 1:0' "$out"
ok "... and shows its log's end: wiki_dump's message" grep -q "prep_1.log:" "$err"
ok "... the jobs after it are cancelled (DependencyNeverSatisfied)" \
  grep -qE '^submit.sh: shard \(job [0-9]+\): CANCELLED.*DependencyNeverSatisfied' "$out"
ok "... all four of them" eval '[ "$(grep -cE ": (shard|hdf5_phase.|train_phase.) .*CANCELLED" "$out")" -ge 4 ]'
ok "... and nothing is left in the queue" [ -z "$(squeue -h)" ]
ok "... parts 0 and 2 are written, part 1 is not (no temp file either)" \
  eval '[ -s "$W/parts/part_00000.txt" ] && [ -s "$W/parts/part_00002.txt" ] && ! ls "$W/parts" | grep -q "_00001"'
ok "... the failed task's log has the decoder's error" grep -q "wiki_dump" "$W/logs/prep_1.log"
kept=$(stat -c '%i %Y' "$W/parts/part_00000.txt" "$W/parts/part_00002.txt")

# ---- 2. repaired, from another directory, relative paths, phase 1 with one GPU per task
cp "$T/d/good.xml.bz2" "$D"
t0=$SECONDS
run env -C "$T/elsewhere" "${knobs[@]}" PHASES=1 GPUS_PER_TASK=1 timeout "$(left)" \
  "$ROOT/examples/slurm/submit.sh" ../d/en.xml.bz2 ../d/en-index.txt.bz2 en ../work ../small.json
echo "note: the chain to phase 1 in $((SECONDS - t0)) s"
expect_rc "repaired and submitted again from another directory" 0
ok "... the chain finishes" grep -q "the chain finished" "$out"
ok "... parts 0 and 2 kept as they were" [ "$(stat -c '%i %Y' "$W/parts/part_00000.txt" "$W/parts/part_00002.txt")" = "$kept" ]
ok "... their logs appended to: the first run's line, then done before" \
  eval 'grep -q "streams 0 to 2 of 11" "$W/logs/prep_0.log" && tail -1 "$W/logs/prep_0.log" | grep -q "done before" &&
    tail -1 "$W/logs/prep_2.log" | grep -q "done before"'
ok "... part 1's log: the error, then the part" \
  eval 'grep -q wiki_dump "$W/logs/prep_1.log" && tail -1 "$W/logs/prep_1.log" | grep -q "streams 3 to 6 of 11"'
cat "$W"/parts/part_*.txt >"$T/joined.txt"
ok "the 3 parts joined are the bytes of one run" cmp -s "$T/joined.txt" "$T/whole.txt"
ok "... which are not empty ($docs documents)" [ "$docs" -gt 100 ]
ok "shards: $ntrain + $ntest from $docs documents (16 a shard), said in the log" \
  grep -q "$ntrain training and $ntest test shards of $docs documents in 3 parts" "$W/logs/shard.log"
ok "... the bytes of one shard_split run" diff -r -x .complete "$W/shards" "$T/ref/shards"
for p in 1 2; do
  [ $p = 1 ] && sp=(--max-seq-length 128 --max-predictions-per-seq 20) || sp=(--max-seq-length 256 --max-predictions-per-seq 40)
  "$BIN/hdf5gen" -q --vocab "$T/vocab.txt" "${sp[@]}" --dupe-factor 5 --random-seed 12345 -o "$T/ref/h$p/" "$T/ref/shards"/*.txt
  ok "HDF5 phase $p: $(ls "$T/ref/h$p" | wc -l) files, the bytes of one hdf5gen run (2 tasks)" \
    eval '[ "$(ls "$T/ref/h$p" | wc -l)" = $((ntrain + ntest)) ] && diff -r "$W/hdf5_phase$p" "$T/ref/h$p"'
done
L=$W/logs/train_phase1.log
ok "phase 1: 4 ranks, each on the one GPU it sees (--gpus-per-task=1)" \
  eval '[ "$(grep -cE "^train.sh: rank [0-3] on n[12], local rank [01]: GPU 0 of the ones it sees \(CUDA_VISIBLE_DEVICES=[01]\)$" "$L")" = 4 ]'
ok "... local rank 1 sees GPU 1 alone and takes it as GPU 0" grep -qE "local rank 1: GPU 0 .*CUDA_VISIBLE_DEVICES=1\)" "$L"
ok "... both nodes" eval 'grep -q "rank . on n1" "$L" && grep -q "rank . on n2" "$L"'
ok "... the trainer: 4 processes placed by Slurm, rank 0 on GPU 0" grep -q "(GPU 0 of 8 on this node), .*4 processes, placed by Slurm" "$L"
ok "... 2 steps, then phase1.done" eval 'grep -q "\"step\": 2," "$L" && [ -e "$W/train/phase1.done" ] && [ ! -e "$W/train/phase2.done" ]'

# ---- 3. phase 2 from the checkout, every task seeing its node's GPUs
t0=$SECONDS
run env -C "$ROOT" "${knobs[@]}" PHASES=2 timeout "$(left)" examples/slurm/submit.sh "$T/d/en.xml.bz2" "$I" en "$W" "$T/small.json"
echo "note: phase 2 (data jobs done before) in $((SECONDS - t0)) s"
expect_rc "phase 2 submitted from the checkout" 0
ok "... the shards are kept (done before)" eval 'tail -1 "$W/logs/shard.log" | grep -q "done before"'
L=$W/logs/train_phase2.log
ok "... local rank r takes GPU r of the node's (CUDA_VISIBLE_DEVICES=0,1)" \
  eval '[ "$(grep -cE "^train.sh: rank [13] on n[12], local rank 1: GPU 1 of the ones it sees \(CUDA_VISIBLE_DEVICES=0,1\)$" "$L")" = 2 ]'
ok "... from phase 1's last checkpoint" grep -q "from $W/train/ckpt_2.wbckpt; phase 2 starts at step 0" "$L"
# the same 4 ranks without Slurm
ranks() { # options...: ranks 3..0 of 4, each with the options
  local r pids=() rc=0
  for r in 3 2 1 0; do
    "$TRB" -q "$@" --world_size 4 --rank $r --nccl_id_file "$T/ref/id" >"$T/ref/out$r" 2>"$T/ref/err$r" &
    pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || rc=1; done
  return $rc
}
t0=$SECONDS
common=(--config_file "$T/small.json" --vocab_file "$T/vocab.txt" --output_dir "$T/ref/train"
  --num_steps_per_checkpoint 1 --do_lower_case 1 --comm_timeout 60)
ok "without Slurm, 4 ranks: phase 1" ranks "${common[@]}" --input_dir "$W/hdf5_phase1" --train_batch_size 2 \
  --gradient_accumulation_steps 1 --learning_rate 6e-3 --warmup_proportion 0.2843 --max_steps 2 \
  --max_seq_length 128 --max_predictions_per_seq 20
ok "... phase 2" ranks "${common[@]}" --input_dir "$W/hdf5_phase2" --train_batch_size 1 --gradient_accumulation_steps 1 \
  --learning_rate 4e-3 --warmup_proportion 0.128 --max_steps 1 --max_seq_length 256 --max_predictions_per_seq 40 \
  --phase2 --resume_from_checkpoint --phase1_end_step 2
echo "note: the same training without Slurm in $((SECONDS - t0)) s"
ok "the checkpoints of both phases equal those of the run under Slurm" \
  eval 'cmp -s "$W/train/ckpt_2.wbckpt" "$T/ref/train/ckpt_2.wbckpt" && cmp -s "$W/train/ckpt_3.wbckpt" "$T/ref/train/ckpt_3.wbckpt"'
ok "... and the export, file for file (its README.md names the command)" \
  eval '[ -s "$W/train/hf/model.safetensors" ] && diff -r -x README.md "$W/train/hf" "$T/ref/train/hf"'

# ---- the recipes alone under sbatch (from another directory, no WIKIBERT_BIN)
sub() { (cd "$T/elsewhere" && timeout 30 sbatch --parsable --output="$T/elsewhere/%x-%A_%a.log" "$@"); }
P=$ROOT/examples/slurm/prep_array.sh
j1=$(sub -J gap0 --array=1-3 "$P" "$D" "$I" "$T/v1" en)
j2=$(sub -J stride --array=0-4:2 "$P" "$D" "$I" "$T/v2" en)
j3=$(sub -J gap2 --array=0,1,3 "$P" "$D" "$I" "$T/v3" en)
j4=$(TASK_COUNT=3 sub -J rerun --array=1 "$P" "$D" "$I" "$W/parts" en)
j5=$(TASK_COUNT=3 sub -J past --array=3 "$P" "$D" "$I" "$W/parts" en)
j6=$(sub -J h5gap --array=0,2 "$ROOT/pipelines/hdf5_array.sh" "$W/shards" "$T/vocab.txt" "$T/v6")
cp "$P" "$T/lone/prep_array.sh"
j7=$(cd "$T/lone" && PATH=/usr/bin:/bin timeout 30 sbatch --parsable -J lone --array=0 --output="$T/elsewhere/%x-%A_%a.log" \
  prep_array.sh "$D" "$I" "$T/v7" en)
end=$((SECONDS + 60))
while [ -n "$(squeue -h)" ] && [ $SECONDS -lt $end ]; do sleep 0.5; done
ok "sbatch alone: every job ended" [ -z "$(squeue -h)" ]
lg() { cat "$T/elsewhere/$1"-*.log 2>/dev/null; }
ok "--array=1-3: every task fails" [ "$(state "$j1")" = FAILED ]
ok "... naming index 0" eval '[ "$(lg gap0 | grep -c "leaves out index 0 of 0..3, whose work would be lost: submit --array=0-3")" = 3 ]'
ok "... before any work" [ ! -e "$T/v1" ]
ok "--array=0-4:2: every task fails, naming 1 and 3" \
  eval '[ "$(state "$j2")" = FAILED ] && [ "$(lg stride | grep -c "leaves out index 1,3 of 0..4")" = 3 ]'
ok "--array=0,1,3: every task fails, naming 2" \
  eval '[ "$(state "$j3")" = FAILED ] && [ "$(lg gap2 | grep -c "leaves out index 2 of 0..3")" = 3 ]'
ok "TASK_COUNT=3 --array=1: reruns part 1 of 3 on purpose (kept: done before)" \
  eval '[ "$(state "$j4")" = COMPLETED ] && lg rerun | grep -q "part_00001.txt: done before"'
ok "TASK_COUNT=3 --array=3: refused" eval '[ "$(state "$j5")" = FAILED ] && lg past | grep -q "task 3 of 3: the index must be a number below the task count"'
ok "hdf5_array.sh --array=0,2: refused, naming 1" \
  eval '[ "$(state "$j6")" = FAILED ] && lg h5gap | grep -q "leaves out index 1 of 0..2" && [ ! -e "$T/v6" ]'
ok "a recipe outside a checkout, programs not on the PATH: says what to do" \
  eval '[ "$(state "$j7")" = FAILED ] && lg lone | grep -q "cannot find the program wiki_dump .*export WIKIBERT_BIN=DIR"'
ok "... and ends with exit status 2" grep -q " Name=lone .* ExitCode=2:0" "$S/jobcomp.txt"

# ---- sizes: defaults follow the dump and the nodes; too big is refused before submitting
run env -C "$T/elsewhere" DRY_RUN=1 GPUS_PER_NODE=2 VOCAB="$T/vocab.txt" TRAIN_BERT="$TRB" \
  "$ROOT/examples/slurm/submit.sh" "$T/d/good.xml.bz2" "$I" en "$T/dry" "$T/small.json"
expect_rc "DRY_RUN=1" 0
ok "... a 1.7 MB dump: 1 part, 1 HDF5 task per phase" \
  eval '[ "$(grep -c -- "--array=0-0 " "$out")" = 3 ]'
ok "... 16 CPUs and 16G cut to the nodes' 4 CPUs and 4000 MB" grep -q -- "--job-name=wikibert-prep --array=0-0 --cpus-per-task=4 --mem=4000M" "$out"
ok "... 2 nodes x 2 GPUs: 2 tasks a node, 2 CPUs each" grep -q -- "--nodes=2 --ntasks-per-node=2 --gpus-per-node=2 --cpus-per-task=2" "$out"
ok "... nothing submitted" [ -z "$(squeue -h)" ] 
run env -C "$T/elsewhere" VOCAB="$T/vocab.txt" TRAIN_BERT="$TRB" "$ROOT/examples/slurm/submit.sh" "$T/d/good.xml.bz2" "$I" en "$T/dry" "$T/small.json"
expect_rc "the nodes' 8 GPUs each, 4 CPUs: refused" 2
expect_err "... saying why" "*8 tasks per node (one per GPU) need 8 CPUs; the training nodes have 4*"
run env -C "$T/elsewhere" PREP_CPUS=64 PHASES= "$ROOT/examples/slurm/submit.sh" "$T/d/good.xml.bz2" "$I" en "$T/dry" "$T/small.json"
expect_rc "PREP_CPUS=64 on nodes of 4" 2
expect_err "... refused: it would pend for ever" "*PREP_CPUS=64: not from 1 to 4, what the largest node has*"
ok "... before anything was submitted" eval '[ -z "$(squeue -h)" ] && [ ! -e "$T/dry" ]'
echo "note: the whole test in $((SECONDS - t_start)) s"
done_testing
