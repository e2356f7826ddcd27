#!/usr/bin/env bash
# bench/gpu_all.sh - everything train_bert needs a GPU for, in one go (for a
# GPU machine lent for a short time): build, `make gpu-check`, then
# bench/train_gpu.sh writing its table into BENCHMARKS.md. Logs, the GPU's
# description and the updated BENCHMARKS.md go to $OUT (default out/gpu).
#
#   bash bench/gpu_all.sh            (CHECK_ONLY=1: build and gpu-check only)
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
[ "${CHECK_ONLY:-0}" = 1 ] && exit "$rc"
bash bench/train_gpu.sh --write BENCHMARKS.md 2>&1 | tee "$OUT/train_gpu.log"
cp BENCHMARKS.md "$OUT/BENCHMARKS.md"
exit "$rc"
