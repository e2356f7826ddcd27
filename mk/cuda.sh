#!/usr/bin/env bash
# mk/cuda.sh - find what train_bert needs, by test compiles: nvcc (the CUDA
# toolkit with cuBLAS), NCCL, MPI. Prints make variable assignments (the
# Makefile includes them from build/cuda.mk) and says on stderr what was
# found and, for what was not, why.
#
#   mk/cuda.sh CC > build/cuda.mk
set -u
CC=${1:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc=${NVCC:-$(command -v nvcc || true)}
[ -z "$nvcc" ] && for d in /usr/local/cuda/bin /usr/local/cuda-*/bin /opt/cuda/bin; do
  [ -x "$d/nvcc" ] && nvcc=$d/nvcc && break
done
if [ -z "$nvcc" ]; then
  echo "cuda: no nvcc (CUDA toolkit) on PATH or in /usr/local/cuda: train_bert (GPU trainer) is not built; train_bert_cpu is" >&2
  echo "NVCC :="
  exit 0
fi
home=$(cd "$(dirname "$nvcc")/.." && pwd)
inc=$home/include
lib=$home/lib64
[ -d "$lib" ] || lib=$home/lib
cat >"$tmp/blas.c" <<'C'
#include <cublas_v2.h>
int main(void) { cublasHandle_t h; return cublasCreate(&h) == CUBLAS_STATUS_SUCCESS ? 0 : 1; }
C
if ! "$CC" "$tmp/blas.c" -I"$inc" -L"$lib" -lcublas -lcudart -o "$tmp/blas" 2>"$tmp/err"; then
  echo "cuda: $nvcc found, but a cuBLAS test program does not build ($(head -c 200 "$tmp/err")): train_bert is not built" >&2
  echo "NVCC :="
  exit 0
fi
echo "NVCC := $nvcc"
echo "CUDA_INC := $inc"
echo "CUDA_LIB := $lib"
ver=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
found="CUDA $ver"
cat >"$tmp/nccl.c" <<'C'
#include <nccl.h>
int main(void) { int v; return ncclGetVersion(&v) == ncclSuccess ? 0 : 1; }
C
if "$CC" "$tmp/nccl.c" -I"$inc" -L"$lib" -lnccl -lcudart -o "$tmp/nccl" 2>/dev/null; then
  echo "NCCL_FLAGS := -DWB_HAVE_NCCL"
  echo "NCCL_LIBS := -lnccl"
  found="$found, NCCL"
else
  echo "NCCL_FLAGS :="
  echo "NCCL_LIBS :="
  found="$found, no NCCL (one GPU per run)"
fi
cat >"$tmp/mpi.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); return MPI_Finalize(); }
C
mcf="" mlf=""
if command -v mpicc >/dev/null 2>&1; then
  mcf=$(mpicc --showme:compile 2>/dev/null || mpicc -compile_info 2>/dev/null | cut -d' ' -f2- || true)
  mlf=$(mpicc --showme:link 2>/dev/null || mpicc -link_info 2>/dev/null | cut -d' ' -f2- || true)
fi
if [ -z "$mcf$mlf" ]; then
  for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/aarch64-linux-gnu/openmpi; do
    [ -f "$d/include/mpi.h" ] && mcf="-I$d/include" && mlf="-L$d/lib -lmpi" && break
  done
fi
if [ -n "$mcf$mlf" ] && "$CC" "$tmp/mpi.c" $mcf $mlf -o "$tmp/mpi" 2>/dev/null; then
  echo "MPI_FLAGS := -DWB_HAVE_MPI $mcf"
  echo "MPI_LIBS := $mlf"
  found="$found, MPI"
else
  echo "MPI_FLAGS :="
  echo "MPI_LIBS :="
  found="$found, no MPI (several processes share the NCCL id through --nccl_id_file)"
fi
echo "cuda: train_bert with $found" >&2
