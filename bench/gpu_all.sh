#!/usr/bin/env bash
# bench/gpu_all.sh - everything train_bert needs a GPU for, in one go (for a
# GPU machine lent for a short time): build, `make gpu-check`, the
# reference checks under compute-sanitizer (memcheck, racecheck,
# synccheck; SANITIZE=0 skips them), then bench/train_gpu.sh writing its
# table into BENCHMARKS.md and train_bert --profile on BERT-large. Logs,
# the GPU's description, profile.txt and the updated BENCHMARKS.md go to
# $OUT (default out/gpu): at most 8 files.
#
#   bash bench/gpu_all.sh            (CHECK_ONLY=1: build and checks only)
#
# From a machine without a GPU, with the run tool: mk/devlibs.sh build/devlibs
# here, then run `bash bench/gpu_all.sh` there carrying build/devlibs.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
{ nvidia-smi; nvcc --version; nproc; } >"$OUT/machine.txt" 2>&1
t0=$(date +%s)
# without the -dev packages (and no mirror to install them from), the
# bundle of mk/devlibs.sh carried along as build/devlibs
MK=(make)
if [ -d build/devlibs ] && ! [ -e /usr/include/hdf5/serial/hdf5.h ]; then
  MK=(make DEVLIBS=build/devlibs)
  echo "gpu_all: no libhdf5-dev here: building against build/devlibs"
fi
if ! "${MK[@]}" -j"$(nproc)" >"$OUT/build.log" 2>&1; then
  echo "gpu_all: build failed (log: $OUT/build.log)"
  tail -25 "$OUT/build.log"
  exit 1
fi
echo "gpu_all: built in $(($(date +%s) - t0)) s"
"${MK[@]}" --no-print-directory gpu-check 2>&1 | tee "$OUT/gpu-check.log"
rc=${PIPESTATUS[0]}
# the kernels under compute-sanitizer (out-of-bounds and misaligned
# accesses, shared-memory races, barrier misuse) on the reference checks
if [ "${SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool build/tests/check_gpu" >>"$OUT/sanitizer.log"
    timeout 400 compute-sanitizer --tool "$tool" --error-exitcode 3 build/tests/check_gpu >>"$OUT/sanitizer.log" 2>&1
    s=$?
    echo "gpu_all: compute-sanitizer $tool: $([ $s = 0 ] && echo clean || echo "exit $s (see sanitizer.log)")"
    [ $s = 0 ] || rc=1
  done
fi
[ "${CHECK_ONLY:-0}" = 1 ] && exit "$rc"
bash bench/train_gpu.sh --write BENCHMARKS.md 2>&1 | tee "$OUT/train_gpu.log"
cp BENCHMARKS.md "$OUT/BENCHMARKS.md"
# where the time goes: train_bert --profile on BERT-large, both phases
D=${BENCH_TMP:-/tmp/wikibert-bench}/train_gpu # bench/train_gpu.sh's data
for ph in "128 20 ${B1:-64}" "512 80 ${B2:-16}"; do
  set -- $ph
  echo "== bert_large, seq $1, pred $2, micro-batch $3" >>"$OUT/profile.txt"
  rm -rf "$D/prof"
  bin/train_bert -q --profile --input_dir "$D/h5_$1" --config_file train/configs/bert_large.json --output_dir "$D/prof" \
    --train_batch_size "$3" --max_steps 6 --max_predictions_per_seq "$2" --skip_checkpoint \
    >/dev/null 2>>"$OUT/profile.txt"
done
rm -rf "$D/prof"
head -3 "$OUT/profile.txt"
exit "$rc"
