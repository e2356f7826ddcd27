# CLI tests of train_bert (the CUDA trainer) that need no GPU: it is built
# where nvcc is (the CI machines have nvcc and no GPU); --help; options
# shared with train_bert_cpu and its own (--precision, --rank/--world_size,
# --nccl_id_file) and their errors; without a GPU a one-line error and exit
# 1, and rank 0 writes no NCCL id file; rank 1 takes its group's id file,
# not another job's. The GPU checks themselves are `make gpu-check`
# (tests/gpu/check.sh).
. "$TESTS/cli/lib.sh"
TR=$BIN/train_bert
if [ ! -x "$TR" ]; then
  echo "not run: bin/train_bert was not built (no nvcc: see mk/cuda.sh)"
  done_testing
  exit 0
fi
V=$TESTS/../data/bert/vocab.txt
CFG=$TESTS/../train/configs/bert_tiny.json
mkdir -p "$T/h5"
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --max-seq-length 64 --max-predictions-per-seq 10 -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
args() { echo --input_dir "$T/h5" --config_file "$CFG" --output_dir "$T/train" --max_steps 2 --max_predictions_per_seq 10 "$@"; }

run "$TR" --help
expect_rc "--help" 0
ok "... documents the GPU options" eval 'grep -q -- "--precision bf16|fp32" "$out" && grep -q -- "--nccl_id_file" "$out" && grep -q mpirun "$out"'
ok "... and --profile, --zero_stage" eval 'grep -q -- "--profile" "$out" && grep -q -- "--zero_stage 0|1" "$out"'
ok "... and run_pretraining.py's" eval 'grep -q -- "--gradient_accumulation_steps" "$out" && grep -q -- "--phase2" "$out"'
run "$TR" $(args --precision fp16)
expect_rc "--precision fp16" 2
expect_err "... names the choices" "*--precision fp16: bf16 or fp32*"
run "$TR" $(args -j 2)
expect_rc "-j (a CPU option)" 2
run "$TR" $(args --rank 1)
expect_rc "--rank without --world_size" 2
run "$TR" $(args --rank 2 --world_size 2)
expect_rc "--rank not below --world_size" 2
run "$BIN/train_bert_cpu" $(args --precision bf16)
expect_rc "train_bert_cpu refuses --precision" 2
expect_err "... naming it, as train_bert's" "*--precision: only train_bert (GPUs) has this option*"
run "$BIN/train_bert_cpu" $(args --attention matmul)
expect_rc "train_bert_cpu refuses --attention" 2
expect_err "... naming it" "*--attention: only train_bert (GPUs) has this option*"
run "$BIN/train_bert_cpu" $(args --profile)
expect_rc "train_bert_cpu refuses --profile" 2
run "$TR" $(args --zero_stage 3)
expect_rc "--zero_stage 3" 2
expect_err "... names the range" "*--zero_stage*"
run "$TR" --config_file "$CFG"
expect_rc "missing required options" 2
run "$TR" $(args --world_size 2 --rank 0)
expect_rc "2 processes, no MPI, no id file" 1
expect_err "... asks for --nccl_id_file" "*--nccl_id_file*"
if nvidia-smi -L >/dev/null 2>&1; then
  echo "not run: the no-GPU error and the id exchange (this machine has a GPU: make gpu-check)"
else
  run "$TR" $(args)
  expect_rc "no GPU: exit 1" 1
  expect_err "... one line naming the CPU trainer" "train_bert: no CUDA device (*); train_bert_cpu trains on the CPU"
  ok "... and nothing written" test ! -e "$T/train"
  # rank 0 without a GPU stops before it writes the id file (no rank could use it)
  run "$TR" -v $(args --world_size 2 --rank 0 --nccl_id_file "$T/id")
  expect_rc "two processes, rank 0 without a GPU: exit 1" 1
  expect_err "... no CUDA device" "*no CUDA device*"
  ok "... and no NCCL id file written" test ! -e "$T/id"
  # rank 1 takes a file of its group: the record rank 0 writes (magic, world
  # size, pad, the launcher's job id in 112 bytes, the 128-byte NCCL id)
  idrec() { # JOB: a record of a group of 2 (an all-zero id)
    printf 'WBNCCLID\002\000\000\000\000\000\000\000%s' "$1"
    head -c $((112 - ${#1} + 128)) /dev/zero
  }
  idrec "" >"$T/id"
  run env -u SLURM_JOB_ID -u TORCHELASTIC_RUN_ID -u PMIX_NAMESPACE \
    "$TR" -v $(args --world_size 2 --rank 1 --nccl_id_file "$T/id" --comm_timeout 10)
  ok "... rank 1 reads it (then stops: no GPU)" eval 'grep -q "rank 1 of 2 (local rank 1): NCCL .*id via file" "$err" && [ "$rc" = 1 ]'
  # a file of another run (another Slurm job) is not taken: rank 1 waits for rank 0's, up to --comm_timeout
  idrec "slurm 7" >"$T/id7"
  run env SLURM_JOB_ID=8 "$TR" $(args --world_size 2 --rank 1 --nccl_id_file "$T/id7" --comm_timeout 2)
  expect_rc "rank 1 of Slurm job 8 beside job 7's id file: exit 1" 1
  expect_err "... not taken (another job), then the watchdog" "*id7: written by another run (2 processes, job 'slurm 7'; this one: 2, 'slurm 8')*rank 1 of 2: waited 2 s for rank 0's NCCL id in the file*"
  if command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    run timeout 120 mpirun --oversubscribe -np 2 "$TR" -v $(args)
    if grep -q "no MPI to share the NCCL id" "$err"; then
      echo "not run: the MPI bootstrap (train_bert was built without MPI: see mk/cuda.sh)"
    else
      ok "mpirun -np 2: both ranks get the NCCL id through MPI" \
        eval 'grep -q "rank 0 of 2 (local rank 0): NCCL .*id via MPI" "$err" && grep -q "rank 1 of 2 (local rank 1): NCCL .*id via MPI" "$err"'
    fi
  else
    echo "not run: the MPI bootstrap (no mpirun here)"
  fi
fi
done_testing
