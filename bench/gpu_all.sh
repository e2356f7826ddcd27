#!/usr/bin/env bash
# bench/gpu_all.sh - everything train_bert needs a GPU for, in stages sized
# for a GPU machine lent for a short time (a command there may run 10
# minutes): every call builds first (incremental where the machine still
# has the last call's build), then runs the stages named.
#
#   bash bench/gpu_all.sh [STAGE...]      (no stage: all four, in this order)
#
#   check     make gpu-check: the CUDA backend against the reference file,
#             train_bert against train_bert_cpu on real data
#   sanitize  the reference checks under compute-sanitizer: memcheck
#             (out-of-bounds, misaligned), initcheck (reads of memory never
#             written: the CPU emulation's allocations are zeroed, a GPU's
#             are not), racecheck (shared memory), synccheck (barriers);
#             TOOL_TIMEOUT seconds each (default 150)
#   bench     bench/train_gpu.sh --write $OUT/BENCHMARKS.md (a copy of the repo's,
#             its table rewritten after each row)
#   profile   train_bert --profile on BERT-large, both phases, fused and matmul
#             attention (profile.txt)
#
# $OUT (default out/gpu) receives at most 8 files: machine.txt, build.log,
# gpu-check.log, sanitizer.log, train_gpu.log, BENCHMARKS.md, profile.txt.
# With the run tool, one call per 10-minute command: `bash bench/gpu_all.sh
# check sanitize`, then `bash bench/gpu_all.sh bench`, then `bash
# bench/gpu_all.sh profile` (profile reads bench's data), each within the
# 30 s the machine stays warm (or it rebuilds and bench's data is gone).
# From a machine whose image lacks the -dev packages:
# mk/devlibs.sh build/devlibs here, and carry build/devlibs.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(check sanitize bench profile)
for s in "${stages[@]}"; do
  case "$s" in check | sanitize | bench | profile) ;; *)
    echo "gpu_all: unknown stage '$s' (check, sanitize, bench, profile)" >&2
    exit 2
    ;;
  esac
done
{ nvidia-smi; nvcc --version; nproc; } >"$OUT/machine.txt" 2>&1
t0=$(date +%s)
MK=(make)
if [ -d build/devlibs ]; then # the bundle of mk/devlibs.sh, carried along
  MK=(make DEVLIBS=build/devlibs)
  echo "gpu_all: building against build/devlibs"
fi
if ! "${MK[@]}" -j"$(nproc)" all build/tests/check_gpu >"$OUT/build.log" 2>&1; then
  echo "gpu_all: build failed (log: $OUT/build.log)"
  tail -25 "$OUT/build.log"
  exit 1
fi
grep '^cuda:' "$OUT/build.log"
echo "gpu_all: built in $(($(date +%s) - t0)) s"
[ -x bin/train_bert ] || { echo "gpu_all: bin/train_bert was not built (see build.log)"; exit 1; }
rc=0
for s in "${stages[@]}"; do
  t=$(date +%s)
  case "$s" in
  check)
    "${MK[@]}" --no-print-directory gpu-check 2>&1 | tee "$OUT/gpu-check.log"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    ;;
  sanitize)
    if ! command -v compute-sanitizer >/dev/null; then
      echo "gpu_all: sanitize: no compute-sanitizer on PATH" | tee "$OUT/sanitizer.log"
      rc=1
    fi
    for tool in memcheck initcheck racecheck synccheck; do
      command -v compute-sanitizer >/dev/null || break
      echo "== compute-sanitizer --tool $tool build/tests/check_gpu" >>"$OUT/sanitizer.log"
      timeout "${TOOL_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 3 build/tests/check_gpu \
        >>"$OUT/sanitizer.log" 2>&1
      e=$?
      echo "gpu_all: compute-sanitizer $tool: $(case $e in 0) echo clean ;; 124) echo "timed out" ;;
        *) echo "exit $e (see sanitizer.log)" ;; esac)"
      [ $e = 0 ] || rc=1
    done
    ;;
  bench)
    cp BENCHMARKS.md "$OUT/BENCHMARKS.md" # the table goes in row by row: a call cut short keeps its rows
    bash bench/train_gpu.sh --write "$OUT/BENCHMARKS.md" 2>&1 | tee "$OUT/train_gpu.log"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    ;;
  profile) # where the time goes: BERT-large, both phases, on bench/train_gpu.sh's data
    D=${BENCH_TMP:-/tmp/wikibert-bench}/train_gpu
    if ! [ -s "$D/h5_128/en_training_0.hdf5" ] || ! [ -s "$D/h5_512/en_training_0.hdf5" ]; then
      echo "gpu_all: profile: no bench data in $D (run the bench stage first)"
      rc=1
      continue
    fi
    for ph in "128 20 ${B1:-64} fused" "128 20 ${B1:-64} matmul" "512 80 ${B2:-16} fused" "512 80 ${B2:-16} matmul"; do
      set -- $ph
      echo "== bert_large, seq $1, pred $2, micro-batch $3, --attention $4" >>"$OUT/profile.txt"
      rm -rf "$D/prof"
      bin/train_bert -q --profile --input_dir "$D/h5_$1" --config_file train/configs/bert_large.json \
        --output_dir "$D/prof" --train_batch_size "$3" --max_steps 6 --max_predictions_per_seq "$2" \
        --attention "$4" --skip_checkpoint >/dev/null 2>>"$OUT/profile.txt" || rc=1
    done
    rm -rf "$D/prof"
    grep -A2 "^==" "$OUT/profile.txt"
    ;;
  esac
  echo "gpu_all: $s: $(($(date +%s) - t)) s"
done
exit "$rc"
