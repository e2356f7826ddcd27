# The CUDA backend of train_bert compiled against train/cuda/emu/cuda_emu.h (the
# CUDA execution model and cuBLAS's semantics on the CPU) as train_bert_emu,
# trained side by side with train_bert_cpu on real data:
# tests/gpu/compare_cpu.sh's checks (fp32 = the CPU, bf16 within 1e-2,
# resume, repeatability, --eval_file, export). On a GPU, make gpu-check
# runs the same checks with the real train_bert.
. "$TESTS/cli/lib.sh"
TRB=$TESTBIN/train_bert_emu CHK=$TESTBIN/test_gpu_emu ROOT=$(cd "$TESTS/.." && pwd)
. "$TESTS/gpu/compare_cpu.sh"
not() { ! "$@"; }
nolog() { sed 's/, "seq_per_s.*//' "$1"; }

# --profile: the table of where a step's time goes, and the same training
"$TRB" -q --precision bf16 --attention fused $(cargs "$T/prof") --profile >"$T/prof.log" 2>"$T/prof.err"
ok "--profile: the same losses as without" eval '[ "$(nolog "$T/prof.log")" = "$(nolog "$T/b16.log")" ]'
ok "... prints the table over the step after the first" \
  grep -q "profile of 1 optimizer steps after the first: .* ms of GPU time per step, matmuls" "$T/prof.err"
ok "... with the kernels and matmul shapes of each section" eval 'grep -q "forward k_attn_fwd$" "$T/prof.err" &&
  grep -q "backward k_attn_bwd_kv$" "$T/prof.err" && grep -q "backward gemm " "$T/prof.err" &&
  grep -q "optimizer k_lamb1$" "$T/prof.err"'
ok "... whose rows add up to the total" awk '/ms of GPU time per step/ { for (i = 1; i <= NF; i++) if ($i == "ms") t = $(i - 1) }
  /^ +[0-9.]+ +[0-9.]+ +[0-9.]+ / { s += $1 } END { d = s - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.01 * t) }' "$T/prof.err"
"$TRB" -q --precision bf16 --attention matmul $(cargs "$T/profm") --profile >/dev/null 2>"$T/profm.err"
ok "... --attention matmul: the softmax kernel and the score matmuls instead" eval 'grep -q "forward k_softmax$" "$T/profm.err" &&
  ! grep -q "k_attn_" "$T/profm.err"'
run "$TRB" -q --attention flash $(cargs "$T/x")
expect_rc "--attention flash" 2
expect_err "... names the choices" "*--attention flash: fused or matmul*"
# lengths the fused attention does not serve (bins of 20: 20, 40, 60) take the matmul attention
"$BIN/train_bert_cpu" -q $(bargs "$T/b20c") --bin_size 20 >"$T/b20c.log"
"$TRB" --precision bf16 --attention fused $(bargs "$T/b20g") --bin_size 20 >"$T/b20g.log" 2>"$T/b20g.err"
b20=1
for s in 1 2 3; do cclose "$(closs "$T/b20g.log" $s)" "$(closs "$T/b20c.log" $s)" 1e-2 || b20=0; done
ok "--bin_size 20: bf16 losses within 1e-2 of the CPU's" [ $b20 = 1 ]
ok "... saying once that the matmul attention takes those lengths" \
  eval '[ "$(grep -c "is not served by the fused attention" "$T/b20g.err")" = 1 ]'

# Data parallel: two train_bert_emu processes as ranks 0 and 1 of one group
# (train/cuda/emu/comm_emu.h carries the all-reduce and all-gather that NCCL
# carries on GPUs). Two files with the same rows: each rank reads one, so
# both ranks see the batches a single process sees; without dropout the
# two-rank run (gradients summed over ranks, then averaged) must end with
# the single process's bytes. With dropout, ranks draw their own masks.
mkdir -p "$T/h2"
cp "$T/h5/en_training_0.hdf5" "$T/h2/a_training_0.hdf5"
cp "$T/h5/en_training_0.hdf5" "$T/h2/a_training_1.hdf5"
sed 's/"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1/"hidden_dropout_prob": 0, "attention_probs_dropout_prob": 0/' \
  "$T/tiny.json" >"$T/nodrop.json"
dargs() { # config output_dir [options]
  local cfg=$1 o=$2; shift 2
  echo --input_dir "$T/h2" --config_file "$cfg" --vocab_file "$V" --train_batch_size 8 --gradient_accumulation_steps 2 \
    --learning_rate 0.01 --warmup_proportion 0.5 --max_steps 2 --max_predictions_per_seq 10 \
    --num_steps_per_checkpoint 1 --seed 5 --precision fp32 --output_dir "$o" "$@"
}
two() { # config output_dir [options]: ranks 0 and 1; rank 0's log in output_dir.log, stderr in .err0
  local rc0=0 rc1=0
  "$TRB" -q $(dargs "$@") --world_size 2 --rank 1 --nccl_id_file "$2.id" >/dev/null 2>"$2.err1" &
  local p=$!
  "$TRB" -v $(dargs "$@") --world_size 2 --rank 0 --nccl_id_file "$2.id" >"$2.log" 2>"$2.err0" || rc0=$?
  wait $p || rc1=$?
  [ $rc0 = 0 ] && [ $rc1 = 0 ] || { echo "  ranks exit $rc0 / $rc1: $(cat "$2.err0" "$2.err1")"; return 1; }
}
"$TRB" -q $(dargs "$T/nodrop.json" "$T/d1") >"$T/d1.log"
ok "2 ranks: both processes finish" two "$T/nodrop.json" "$T/d2"
ok "2 ranks on the same rows, no dropout: the losses of one process" \
  eval '[ -s "$T/d1.log" ] && [ "$(nolog "$T/d1.log")" = "$(nolog "$T/d2.log")" ]'
ok "... and the bytes of its exported model" cmp -s "$T/d1/hf/model.safetensors" "$T/d2/hf/model.safetensors"
ok "... and the rendezvous file is gone" test ! -e "$T/d2.id"
sed 's/"initializer_range": 0.02/"initializer_range": 0.02, "tie_word_embeddings": false/' "$T/nodrop.json" >"$T/untied.json"
"$TRB" -q $(dargs "$T/untied.json" "$T/u1") >"$T/u1.log"
ok "2 ranks, an untied MLM decoder: both processes finish" two "$T/untied.json" "$T/u2"
ok "... with the bytes of one process's export" eval '[ -s "$T/u1/hf/model.safetensors" ] && cmp -s "$T/u1/hf/model.safetensors" "$T/u2/hf/model.safetensors"'
"$TRB" -q $(dargs "$T/tiny.json" "$T/p1") >"$T/p1.log"
# no kernel's result may depend on the order its blocks and threads run in
# (a GPU runs them in any order): the emulation in reverse order
WB_EMU_REVERSE=1 "$TRB" -q $(dargs "$T/tiny.json" "$T/p1r") >"$T/p1r.log"
ok "blocks and threads in reverse order: the same bytes (fp32, dropout)" \
  eval '[ -s "$T/p1/ckpt_2.wbckpt" ] && cmp -s "$T/p1/ckpt_2.wbckpt" "$T/p1r/ckpt_2.wbckpt"'
"$TRB" -q $(dargs "$T/tiny.json" "$T/pb" --precision bf16 --attention fused) >"$T/pb.log"
WB_EMU_REVERSE=1 "$TRB" -q $(dargs "$T/tiny.json" "$T/pbr" --precision bf16 --attention fused) >"$T/pbr.log"
ok "... and in bf16" eval '[ -s "$T/pb/ckpt_2.wbckpt" ] && cmp -s "$T/pb/ckpt_2.wbckpt" "$T/pbr/ckpt_2.wbckpt"'
# head size 64 (BERT-base's and -large's) in the fused attention, 1 layer
sed 's/"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4/"hidden_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2/' \
  "$T/tiny.json" >"$T/h64.json"
"$TRB" -q $(dargs "$T/h64.json" "$T/pw" --precision bf16 --attention fused --max_steps 1) >"$T/pw.log"
WB_EMU_REVERSE=1 "$TRB" -q $(dargs "$T/h64.json" "$T/pwr" --precision bf16 --attention fused --max_steps 1) >"$T/pwr.log"
ok "... and in bf16 at head size 64" eval '[ -s "$T/pw/ckpt_1.wbckpt" ] && cmp -s "$T/pw/ckpt_1.wbckpt" "$T/pwr/ckpt_1.wbckpt"'
ok "2 ranks with dropout: both processes finish" two "$T/tiny.json" "$T/p2"
ok "... each rank draws its own dropout masks (step 1 differs from one process's)" \
  eval '[ "$(closs "$T/p1.log" 1)" != "$(closs "$T/p2.log" 1)" ] && [ -n "$(closs "$T/p2.log" 1)" ]'
ok "2 ranks: stopped after step 1" two "$T/tiny.json" "$T/pr" --stop_at_step 1
ok "... resumed" two "$T/tiny.json" "$T/pr" --resume_from_checkpoint
ok "... = uninterrupted, byte for byte" cmp -s "$T/pr/ckpt_2.wbckpt" "$T/p2/ckpt_2.wbckpt"
# ZeRO stage 1: each rank keeps the moments of its share of the weights
# (gradients reduced to the owner, weights broadcast after the update).
# Ranks on different rows: the same bytes as without it, and its
# checkpoints hold the full state (resumed with or without ZeRO).
mkdir -p "$T/h3"
cp "$T/h5/en_training_0.hdf5" "$T/h3/b_training_0.hdf5"
"$BIN/hdf5gen" -q --seed 7 --vocab "$V" --dupe-factor 1 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h3/b_training_1.hdf5" "$T/en.txt"
zargs() { echo --input_dir "$T/h3" --precision bf16 "$@"; }
ok "ZeRO-1: 2 ranks on different rows, without ZeRO" two "$T/tiny.json" "$T/q0" $(zargs)
ok "... with --zero_stage 1" two "$T/tiny.json" "$T/q1" $(zargs --zero_stage 1)
ok "... the same losses" eval '[ -s "$T/q0.log" ] && [ "$(nolog "$T/q0.log")" = "$(nolog "$T/q1.log")" ]'
ok "... and checkpoints, byte for byte (steps 1 and 2)" \
  eval 'cmp -s "$T/q0/ckpt_1.wbckpt" "$T/q1/ckpt_1.wbckpt" && cmp -s "$T/q0/ckpt_2.wbckpt" "$T/q1/ckpt_2.wbckpt"'
ok "... rank 0 says which share it updates" grep -q "ZeRO stage 1: rank 0 updates elements 0\.\." "$T/q1.err0"
ok "ZeRO-1: stopped after step 1" two "$T/tiny.json" "$T/qs" $(zargs --zero_stage 1 --stop_at_step 1)
mkdir -p "$T/qp" && cp "$T/qs/ckpt_1.wbckpt" "$T/qp/"
ok "... resumed" two "$T/tiny.json" "$T/qs" $(zargs --zero_stage 1 --resume_from_checkpoint)
ok "... = uninterrupted, byte for byte" cmp -s "$T/qs/ckpt_2.wbckpt" "$T/q1/ckpt_2.wbckpt"
ok "... its checkpoint resumed without ZeRO" two "$T/tiny.json" "$T/qp" $(zargs --resume_from_checkpoint)
ok "... = uninterrupted, byte for byte" cmp -s "$T/qp/ckpt_2.wbckpt" "$T/q0/ckpt_2.wbckpt"
ok "ZeRO-1 with AdamW: 2 ranks without" two "$T/tiny.json" "$T/qa0" $(zargs --optimizer adamw)
ok "... and with --zero_stage 1" two "$T/tiny.json" "$T/qa1" $(zargs --optimizer adamw --zero_stage 1)
ok "... end with the same bytes" eval '[ -s "$T/qa0/ckpt_2.wbckpt" ] && cmp -s "$T/qa0/ckpt_2.wbckpt" "$T/qa1/ckpt_2.wbckpt"'
ok "... which are not LAMB's" not cmp -s "$T/qa0/ckpt_2.wbckpt" "$T/q0/ckpt_2.wbckpt"
run "$TRB" -q $(dargs "$T/tiny.json" "$T/x") --zero_stage 2
expect_rc "--zero_stage 2" 2
run "$TRB" -q $(dargs "$T/tiny.json" "$T/pr") --resume_from_checkpoint --max_steps 3
expect_rc "one process resuming a 2-rank checkpoint" 1
expect_err "... says how many ranks wrote it" "*written by 2 data-parallel ranks; this run has 1*"
run "$TRB" -q $(dargs "$T/tiny.json" "$T/x") --world_size 2 --rank 0
expect_rc "2 ranks without --nccl_id_file (no MPI here)" 1
expect_err "... says what to give" "*--nccl_id_file*"
# The launcher's variables: all three from one launcher, the innermost
# first (torchrun or mpirun inside a Slurm job, whose SLURM_PROCID is 0
# in every process)
noenv=(env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE
  -u OMPI_COMM_WORLD_LOCAL_RANK -u PMI_RANK -u PMI_SIZE -u MPI_LOCALRANKID -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_LOCALID)
run "${noenv[@]}" RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_LOCALID=0 \
  "$TRB" -q $(dargs "$T/tiny.json" "$T/x")
expect_rc "torchrun's variables inside a Slurm job" 1
expect_err "... give torchrun's group of 2, not Slurm's 1" "*2 processes: the emulated collectives need --nccl_id_file*"
run "${noenv[@]}" OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=3 SLURM_PROCID=0 SLURM_NTASKS=1 "$TRB" -q $(dargs "$T/tiny.json" "$T/x")
expect_rc "mpirun's inside a Slurm job" 1
expect_err "... give mpirun's group of 3" "*3 processes*"
run "${noenv[@]}" RANK=1 SLURM_PROCID=1 SLURM_NTASKS=4 "$TRB" -q $(dargs "$T/tiny.json" "$T/x")
expect_rc "a lone RANK beside Slurm's three" 1
expect_err "... Slurm's group of 4, whole" "*4 processes*"
run "${noenv[@]}" RANK=2 WORLD_SIZE=2 "$TRB" -q $(dargs "$T/tiny.json" "$T/x")
expect_rc "RANK 2 of WORLD_SIZE 2" 1
expect_err "... refused" "*rank 2 of 2: the launcher's variables disagree*"
run "${noenv[@]}" "$TRB" -q $(dargs "$T/tiny.json" "$T/x") --local_rank 8
expect_rc "local rank 8 on a node of 8 (emulated) GPUs" 1
expect_err "... refused, not a second process on one GPU" "*local rank 8, but this node has 8 GPUs*"
envtwo() { # ranks 0 and 1 placed by torchrun's variables inside a Slurm job of one task
  local rc0=0 rc1=0
  "${noenv[@]}" SLURM_PROCID=0 SLURM_NTASKS=1 RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 \
    "$TRB" -q $(dargs "$T/nodrop.json" "$T/e2") --nccl_id_file "$T/e2.id" >/dev/null 2>"$T/e2.err1" &
  local p=$!
  "${noenv[@]}" SLURM_PROCID=0 SLURM_NTASKS=1 RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 \
    "$TRB" -v $(dargs "$T/nodrop.json" "$T/e2") --nccl_id_file "$T/e2.id" >"$T/e2.log" 2>"$T/e2.err0" || rc0=$?
  wait $p || rc1=$?
  [ $rc0 = 0 ] && [ $rc1 = 0 ] || { echo "  ranks exit $rc0 / $rc1: $(cat "$T/e2.err0" "$T/e2.err1")"; return 1; }
}
ok "2 ranks placed by torchrun's variables inside a Slurm job" envtwo
ok "... say so" grep -q "2 processes, placed by torchrun" "$T/e2.err0"
ok "... and end with --rank/--world_size's bytes" cmp -s "$T/e2/hf/model.safetensors" "$T/d2/hf/model.safetensors"
# The watchdog: a rank that waits --comm_timeout seconds for the others
# (one failed or stopped) ends with a message and exit 1 instead of hanging
# (the emulated collectives' own limit is 120 s)
run "$TRB" -q $(dargs "$T/tiny.json" "$T/w1") --world_size 2 --rank 0 --nccl_id_file "$T/w1.id" --comm_timeout 2
expect_rc "rank 0 of 2 started alone, --comm_timeout 2" 1
expect_err "... says it waited for the others to join" "*rank 0 of 2: waited 2 s for the other ranks to join*--comm_timeout*"
stopped() { # rank 1 stopped (SIGSTOP) once a checkpoint is written: rank 0 waits in the next step's collectives
  # (8 s, not less: rank 0 must not give up on a rank 1 that is merely slow on a loaded machine)
  local long="--max_steps 100000 --num_steps_per_checkpoint 1" rc0=0
  "$TRB" -q $(dargs "$T/tiny.json" "$T/w2") $long --world_size 2 --rank 1 --nccl_id_file "$T/w2.id" \
    --comm_timeout 100 >/dev/null 2>&1 &
  local p1=$!
  "$TRB" -v $(dargs "$T/tiny.json" "$T/w2") $long --world_size 2 --rank 0 --nccl_id_file "$T/w2.id" \
    --comm_timeout 8 >"$T/w2.log" 2>"$T/w2.err" &
  local p0=$!
  # a checkpoint in place: both ranks are past a checkpoint's collectives
  # (its data positions are gathered from every rank after the log line)
  for _ in $(seq 1200); do ls "$T/w2"/ckpt_*.wbckpt >/dev/null 2>&1 && break; sleep 0.1; done
  kill -STOP $p1
  wait $p0 || rc0=$?
  kill -KILL $p1
  wait $p1 2>/dev/null
  [ $rc0 = 1 ] || { echo "  rank 0 exit $rc0: $(cat "$T/w2.err")"; return 1; }
}
ok "rank 1 stopped mid-run: rank 0 ends with exit 1 after --comm_timeout 8" stopped
ok "... saying it waited for the collectives queued on the GPU" grep -q "rank 0 of 2: waited 8 s for the GPU.s work and the collectives queued before it" "$T/w2.err"
ok "... after the checkpoints of the steps both ranks took, complete, and no temp file" \
  eval 'last=$(ls "$T/w2"/ckpt_*.wbckpt | sort -V | tail -1) && [ -s "$last" ] &&
    "$TRB" -q --eval_file "$T/h2/a_training_0.hdf5" --init_checkpoint "$last" \
    --config_file "$T/tiny.json" --train_batch_size 8 --max_predictions_per_seq 10 --precision fp32 >/dev/null &&
    [ -z "$(find "$T/w2" -name "*.tmp*")" ]'
# A rank that dies where the others have queued a collective and copy its
# result to the host (the step statistics; the all-gather of the data
# positions before a checkpoint): the emulated collectives, like NCCL's, are
# queued and run when the host waits on the stream, so the others wait in
# that copy, and must do so under the watchdog: 3 ranks, rank 1 dies
# (WB_EMU_DIE, the emulation's fault point), ranks 0 and 2 end with exit 1
# after --comm_timeout 3, naming the wait. Under timeout 100: a wait outside
# the watchdog would last until the emulated collectives' own 120 s limit.
dead() { # WHERE N: rank 1 dies the Nth time it reaches WHERE
  local o=$T/dead_$1 r rc pids=()
  for r in 1 2 0; do
    WB_EMU_DIE=$1:1:$2 timeout 100 "$TRB" -q $(dargs "$T/tiny.json" "$o") --max_steps 4 --world_size 3 \
      --rank $r --nccl_id_file "$o.id" --comm_timeout 3 >/dev/null 2>"$o.err$r" &
    pids[r]=$!
  done
  for r in 0 1 2; do
    rc=0
    wait ${pids[r]} || rc=$?
    echo $rc >"$o.rc$r"
  done
  echo "  rank 1 died at $1 $2; exit status of ranks 0, 1, 2: $(cat "$o.rc0") $(cat "$o.rc1") $(cat "$o.rc2"); rank 0: $(cat "$o.err0")"
  [ "$(cat "$o.rc0") $(cat "$o.rc1") $(cat "$o.rc2")" = "1 3 1" ]
}
ok "rank 1 of 3 dies before the first step's statistics' all-reduce: ranks 0 and 2 exit 1 after --comm_timeout" dead stats 1
waited() { # WHERE: ranks 0 and 2 said they waited for the collectives
  local r
  for r in 0 2; do
    grep -q "rank $r of 3: waited 3 s for the GPU's work and the collectives queued before it: another rank has failed or stopped" \
      "$T/dead_$1.err$r" || return 1
  done
}
ok "... each saying it waited 3 s for the GPU's work and the collectives" waited stats
ok "... and no checkpoint" eval '[ -z "$(ls "$T/dead_stats" | grep -v "^log.jsonl$")" ]'
ok "rank 1 of 3 dies before the all-gather of a checkpoint's data positions: ranks 0 and 2 exit 1" dead allgather 1
ok "... saying they waited for the collectives" waited allgather
# a run that diverges ends at the first step that is not finite, on the
# GPU backend as on the CPU: no nan in the log, no checkpoint of it
run "$TRB" --precision bf16 $(cargs "$T/gnan") --learning_rate 1e30
expect_rc "--learning_rate 1e30" 1
expect_err "... names the step and the cure" "*train_bert*: step [12]: * training diverged; lower --learning_rate;*"
ok "... the log stays JSON (no nan or inf)" eval '! grep -qi "nan\|inf" "$out" && [ ! -e "$T/gnan/ckpt_2.wbckpt" ]'
done_testing
