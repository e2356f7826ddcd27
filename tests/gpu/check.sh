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
# nothing: the checks did not run.
set -u
TB=$1 BIN=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: not run: no GPU here (nvidia-smi finds none); train_bert was built: $([ -x "$BIN/train_bert" ] && echo yes || echo no)"
  exit 0
fi
[ -x "$BIN/train_bert" ] || { echo "gpu-check: bin/train_bert was not built (see mk/cuda.sh)"; exit 1; }
PASS=0 FAIL=0
ok() {
  local name=$1; shift
  if "$@"; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL $name"; fi
}
nvidia-smi -L
out=$(cd "$ROOT" && "$TB/check_gpu")
echo "$out"
p=$(echo "$out" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\1/p')
f=$(echo "$out" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed/\2/p')
PASS=$((PASS + ${p:-0})) FAIL=$((FAIL + ${f:-1}))

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TRB=$BIN/train_bert CHK=$TB/check_gpu
. "$ROOT/tests/gpu/compare_cpu.sh"
echo "gpu-check: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
