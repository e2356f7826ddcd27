# train_bert_emu_alt: the CUDA backend emulated computing as a GPU may,
# differently from train_bert_cpu and from train_bert_emu: multiply-adds
# contracted into FMAs (-ffp-contract=fast, with -mfma where this CPU has
# FMA, as nvcc contracts by default) and other sum orders (WB_EMU_ALT_ORDER:
# the matmuls' k order, the warp sums' butterfly). tests/gpu/compare_cpu.sh's
# checks against train_bert_cpu must hold within the tolerances its header
# derives, and those tolerances must still catch a wrong gradient
# (WB_EMU_WRONG_GRAD, the emulated backend's fault: one tensor's gradient
# scaled before every optimizer step).
. "$TESTS/cli/lib.sh"
TRB=$TESTBIN/train_bert_emu_alt CHK=$TESTBIN/test_gpu_emu ROOT=$(cd "$TESTS/.." && pwd)
if ! grep -qw fma /proc/cpuinfo 2>/dev/null; then
  echo "FMA contraction: not run (this CPU has no FMA); the other sum orders only"
elif ! command -v objdump >/dev/null 2>&1; then
  echo "FMA contraction: not checked (no objdump)"
else
  ok "the emulated backend is built with FMA instructions" eval 'objdump -d "$TRB" | grep -q vfmadd'
fi
CMP_TOLERANCES_ONLY=1
. "$TESTS/gpu/compare_cpu.sh"

# A wrong gradient: 1 % too large in one weight matrix (the losses and, as
# LAMB hardly depends on a gradient's scale, the weights barely move), and
# the sign of a LayerNorm bias's
WB_EMU_WRONG_GRAD=bert.encoder.layer.1.output.dense.weight:1.01 "$TRB" -q --precision fp32 $(cargs "$T/w1") >"$T/w1.log"
ok "a 1 % error in one weight matrix's gradient leaves the losses within 1e-5 of the CPU's" \
  eval 'cclose "$(closs "$T/w1.log" 1)" "$(closs "$T/cpu.log" 1)" 1e-5 && cclose "$(closs "$T/w1.log" 2)" "$(closs "$T/cpu.log" 2)" 1e-5'
run "$CHK" runs "$T/tiny.json" "$T/w1" "$T/cpu" 0.01 0.5 2
cat "$out"
expect_rc "... but not the comparison of gradients" 1
ok "... which names that tensor" grep -q "gradients (first moments): worst bert.encoder.layer.1.output.dense.weight" "$out"
WB_EMU_WRONG_GRAD=cls.predictions.transform.LayerNorm.bias:-1 "$TRB" -q --precision fp32 $(cargs "$T/w2") >/dev/null
run "$CHK" runs "$T/tiny.json" "$T/w2" "$T/cpu" 0.01 0.5 2
cat "$out"
expect_rc "a LayerNorm bias's gradient of the wrong sign" 1
ok "... is seen in the weights" grep -q "weights: worst cls.predictions.transform.LayerNorm.bias" "$out"
done_testing
