#!/usr/bin/env bash
# tests/gpu/check.sh - `make gpu-check`: train_bert on this machine's GPU.
#
#   tests/gpu/check.sh BUILD/tests BIN
#
# 1. check_gpu: the CUDA backend against the PyTorch reference file, fp32
#    (1e-4) and bf16 (1e-2 on losses and weights).
# 2. train_bert against train_bert_cpu on real data: tests/gpu/compare_cpu.sh
#    (the same checks make test runs on the CPU emulation of the backend).
# Without a GPU (nvidia-smi finds none) it says so and exits 0 counting
# nothing: the checks did not run. Each check's output is shown as it
# comes. The programs are BIN/train_bert and BUILD/tests/check_gpu unless
# TRB and CHK name others; GPU_CHECK_EMU=1 runs them without a GPU (the
# CPU emulation's train_bert_emu and test_gpu_emu: bench/gpu_first.sh's
# test), GPU_CHECK_CPU=0 leaves out part 2.
set -u
TB=$1 BIN=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TRB=${TRB:-$BIN/train_bert} CHK=${CHK:-$TB/check_gpu}
if [ "${GPU_CHECK_EMU:-0}" != 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: not run: no GPU here (nvidia-smi finds none); train_bert was built: $([ -x "$TRB" ] && echo yes || echo no)"
  exit 0
fi
[ -x "$TRB" ] || { echo "gpu-check: $TRB was not built (see mk/cuda.sh)"; exit 1; }
PASS=0 FAIL=0
ok() {
  local name=$1; shift
  if "$@"; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL $name"; fi
}
[ "${GPU_CHECK_EMU:-0}" = 1 ] || nvidia-smi -L
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
(cd "$ROOT" && "$CHK") 2>&1 | tee "$T/check_gpu.out"
p=$(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\1/p' "$T/check_gpu.out")
f=$(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\2/p' "$T/check_gpu.out")
PASS=$((PASS + ${p:-0})) FAIL=$((FAIL + ${f:-1}))

if [ "${GPU_CHECK_CPU:-1}" = 1 ]; then
  . "$ROOT/tests/gpu/compare_cpu.sh"
else
  echo "gpu-check: train_bert against train_bert_cpu: not run (GPU_CHECK_CPU=0)"
fi
echo "gpu-check: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
