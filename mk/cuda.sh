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
# -lcublas needs the unversioned libcublas.so of a -dev install; a toolkit
# with only libcublas.so.13 (pip's layout) is linked by the file's name
cl="-lcublas -lcudart"
if ! "$CC" "$tmp/blas.c" -I"$inc" -L"$lib" $cl -o "$tmp/blas" 2>"$tmp/err"; then
  cb=$(ls "$lib"/libcublas.so.[0-9]* 2>/dev/null | head -1) cr=$(ls "$lib"/libcudart.so.[0-9]* 2>/dev/null | head -1)
  cl="-l:${cb##*/} -l:${cr##*/}"
  if [ -z "$cb" ] || [ -z "$cr" ] || ! "$CC" "$tmp/blas.c" -I"$inc" -L"$lib" $cl -o "$tmp/blas" 2>/dev/null; then
    echo "cuda: $nvcc found, but a cuBLAS test program does not build ($(head -c 200 "$tmp/err")): train_bert is not built" >&2
    echo "NVCC :="
    exit 0
  fi
fi
echo "NVCC := $nvcc"
echo "CUDA_INC := $inc"
echo "CUDA_LIB := $lib"
echo "CUDA_LIBS := $cl"
ver=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
found="CUDA $ver"
cat >"$tmp/nccl.c" <<'C'
#include <nccl.h>
int main(void) { int v; return ncclGetVersion(&v) == ncclSuccess ? 0 : 1; }
C
# NCCL beside the toolkit, in NCCL_HOME, or PyTorch's (pip's nvidia.nccl)
nccl_ok=""
for d in "" ${NCCL_HOME:-} $(python3 -c 'import os, nvidia.nccl as n; print(os.path.dirname(n.__file__))' 2>/dev/null); do
  ni=$inc nl=$lib
  [ -n "$d" ] && ni=$d/include nl=$d/lib
  for l in -lnccl "-l:libnccl.so.2"; do
    if "$CC" "$tmp/nccl.c" -I"$inc" -I"$ni" -L"$lib" -L"$nl" $l $cl -o "$tmp/nccl" 2>/dev/null; then
      nccl_ok=1
      echo "NCCL_FLAGS := -DWB_HAVE_NCCL${d:+ -isystem $ni}"
      echo "NCCL_LIBS := ${d:+-L$nl -Wl,-rpath,$nl }$l"
      break 2
    fi
  done
done
if [ -n "$nccl_ok" ]; then
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
