# The CUDA backend of train_bert compiled against tests/gpu/cuda_emu.h (the
# CUDA execution model and cuBLAS's semantics on the CPU) as train_bert_emu,
# trained side by side with train_bert_cpu on real data:
# tests/gpu/compare_cpu.sh's checks (fp32 = the CPU, bf16 within 1e-2,
# resume, repeatability, --eval_file, export). On a GPU, make gpu-check
# runs the same checks with the real train_bert.
. "$TESTS/cli/lib.sh"
TRB=$TESTBIN/train_bert_emu CHK=$TESTBIN/test_gpu_emu ROOT=$(cd "$TESTS/.." && pwd)
. "$TESTS/gpu/compare_cpu.sh"
done_testing
