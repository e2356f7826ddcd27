#!/usr/bin/env bash
# bench/gpu_prep.sh - build here, on the CPU machine (nvcc 13, cuBLAS,
# NCCL and the Debian -dev packages), everything a lent GPU machine needs
# for bench/gpu_first.sh, as one compressed file to carry there: no build
# is spent on the GPU's time.
#
#   bash bench/gpu_prep.sh [PACK]     (default build/gpu-carry/wikibert-gpu.tar.xz)
#
# 1. mk/devlibs.sh build/gpu/pkg/devlibs: the headers and libraries beyond
#    the C library and CUDA (HDF5 with its libcurl and libcrypto, ICU,
#    PCRE2, expat, bzip2, libdeflate, the compiler's runtime).
# 2. make against that bundle only (DEVLIBS; the system's HDF5 directories
#    are not looked at), sm_90 code only (H100, H200), in build/gpu/obj:
#    train_bert, check_gpu, attn_kernels (the fused attention alone, for
#    the sanitizer) and the programs the runbook makes its data and
#    checks with (train_bert_cpu, wiki_dump, wiki_strip, sent_split,
#    hdf5gen, hdf5_check), into build/gpu/pkg/bin with the RPATH
#    $ORIGIN/../devlibs/lib:$ORIGIN/../devlibs/lib/cc (then CUDA's lib64),
#    so that they find the bundle wherever the pack is unpacked.
# 3. mk/devlibs.sh --check on the bundle and the programs; MANIFEST: the
#    hash of the sources (bench/gpu_lib.sh gpu_src_hash: the runbook
#    builds anew on the GPU machine when its tree differs), the commit,
#    nvcc's version, the newest glibc symbol version the programs need.
# 4. PACK: build/gpu/pkg (bin/, devlibs/, MANIFEST) as tar.xz.
# 5. The phase-2 data, made here and carried beside PACK as
#    phase2-en.tar.xz (about 15 MB; P2DATA=0: not made): NVIDIA's English
#    workflow (`make en-hdf5-phase2`, 512/80, dupe factor 5, 8 training
#    shards) on the shipped enwiki-206 sample repeated P2COPIES (2) times
#    with new page ids (bench/make_dump.py): about 15,700 rows. Its
#    MANIFEST says how it was made; the runbook trains on it when present.
#
# The build takes a few minutes on 2 cores (backend.cu alone is one nvcc
# run of about a minute); it is incremental when run again.
set -eu
cd "$(dirname "$0")/.."
. bench/gpu_lib.sh
PACK=${1:-build/gpu-carry/wikibert-gpu.tar.xz}
W=build/gpu
PROGS=(train_bert train_bert_cpu wiki_dump wiki_strip sent_split hdf5gen hdf5_check)
JOBS=${JOBS:-$(nproc)}
ARCH='-gencode arch=compute_90,code=sm_90'
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { echo "gpu_prep: no nvcc here: train_bert cannot be built (the runbook then builds on the GPU machine)" >&2; exit 1; }
t0=$(date +%s)
rm -rf "$W/pkg"
mkdir -p "$W/pkg/bin" "$(dirname "$PACK")"
mk/devlibs.sh "$W/pkg/devlibs"
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, \$$ for make and the shell
make --no-print-directory -j"$JOBS" BUILD="$W/obj" BIN="$W/pkg/bin" DEVLIBS="$W/pkg/devlibs" \
  'DEVLIBS_RPATH=\$$ORIGIN/../devlibs/lib:\$$ORIGIN/../devlibs/lib/cc' "CUDA_ARCH=$ARCH" \
  "${PROGS[@]/#/$W/pkg/bin/}" "$W/obj/tests/check_gpu" "$W/obj/tests/attn_kernels"
cp "$W/obj/tests/check_gpu" "$W/obj/tests/attn_kernels" "$W/pkg/bin/"
mk/devlibs.sh --check "$W/pkg/devlibs" "$W/pkg/bin"/*
for f in "$W/pkg/bin"/*; do # each program finds the bundle wherever the pack is unpacked
  [ "${f##*/}" = attn_kernels ] && continue # (CUDA's runtime only, linked in)
  rp=$(readelf -d "$f" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p')
  case "$rp" in '$ORIGIN/../devlibs/lib:$ORIGIN/../devlibs/lib/cc'*) ;; *)
    echo "gpu_prep: $f: RPATH '$rp', not the bundle's \$ORIGIN path" >&2
    exit 1
    ;;
  esac
done
# and, without LD_LIBRARY_PATH (as on the GPU machine), every library the
# bundle holds is found in it, not in this machine's system directories
bad=$(for f in "$W/pkg/bin"/*; do
  [ "${f##*/}" = attn_kernels ] && continue # (the C++ runtime of the machine it runs on: no bundle)
  env -u LD_LIBRARY_PATH ldd "$f" | awk -v f="$f" '$2 == "=>" { print f, $1, $3 }'
done | while read -r f name path; do
  if [ -e "$W/pkg/devlibs/lib/$name" ] || [ -e "$W/pkg/devlibs/lib/cc/$name" ]; then
    case "$(readlink -f "$path")" in "$(readlink -f "$W/pkg/devlibs")"/*) ;; *) echo "$f: $name -> $path" ;; esac
  fi
done)
[ -z "$bad" ] || { echo "gpu_prep: programs that would miss the bundle elsewhere:"; echo "$bad"; exit 1; } >&2
glibc=$(for f in "$W/pkg/bin"/*; do objdump -T "$f"; done | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
nv=$(${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)} --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 \2/p')
{
  echo "src_hash $(gpu_src_hash .)"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1 | sed 's/.* //') glibc"
  echo "nvcc $nv, $ARCH"
  echo "needs $glibc or newer"
  echo "rpath $rp"
} >"$W/pkg/MANIFEST"
tar -C "$W/pkg" -cf - MANIFEST bin devlibs | xz -T"$JOBS" -6 >"$PACK.tmp"
mv "$PACK.tmp" "$PACK"
cat "$W/pkg/MANIFEST"
echo "gpu_prep: $PACK: $(du -m "$PACK" | cut -f1) MB ($(du -sm "$W/pkg" | cut -f1) MB unpacked: devlibs $(du -sm "$W/pkg/devlibs" | cut -f1) MB, bin $(du -sm "$W/pkg/bin" | cut -f1) MB), $(($(date +%s) - t0)) s"
if [ "${P2DATA:-1}" != 0 ]; then
  D=$W/p2data C=${P2COPIES:-2}
  rm -rf "$D" && mkdir -p "$D/pack"
  python3 bench/make_dump.py tests/data/enwiki-206.xml.bz2 "$C" "$D/enwiki-x$C"
  make --no-print-directory -s en-hdf5-phase2 DUMP="$D/enwiki-x$C.xml.bz2" EN_DIR="$D/en" SHARDS=8 TEST_SHARDS=8 SEQ2=512 PRED2=80
  H=$(echo "$D"/en/hdf5_*_seq_len_512_max_pred_80_*/wikicorpus_en)
  cp "$H"/*_training_*.hdf5 "$D/pack/"
  for f in "$D"/pack/*.hdf5; do bin/hdf5_check "$f" | head -1 | sed "s|^$D/pack/||"; done >"$D/check.txt"
  {
    echo "made $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "dump tests/data/enwiki-206.xml.bz2 x $C (bench/make_dump.py: new page ids), $(bzcat "$D/enwiki-x$C.xml.bz2" | grep -c '<page>') pages"
    echo "workflow make en-hdf5-phase2 SHARDS=8 TEST_SHARDS=8 SEQ2=512 PRED2=80 (dupe factor 5, seed 12345, bert-base-uncased vocab)"
    echo "dir $(basename "$(dirname "$H")")"
    cat "$D/check.txt"
    echo "rows $(sed -n 's/.*: \([0-9]*\) instances.*/\1/p' "$D/check.txt" | awk '{ n += $1 } END { print n }')"
  } >"$D/pack/MANIFEST"
  tar -C "$D/pack" -cf - MANIFEST $(cd "$D/pack" && ls ./*.hdf5) | xz -T"$JOBS" -6 >"$(dirname "$PACK")/phase2-en.tar.xz.tmp"
  mv "$(dirname "$PACK")/phase2-en.tar.xz.tmp" "$(dirname "$PACK")/phase2-en.tar.xz"
  sed -n 's/^rows/gpu_prep: phase-2 data: rows/p' "$D/pack/MANIFEST"
  echo "gpu_prep: $(dirname "$PACK")/phase2-en.tar.xz: $(du -m "$(dirname "$PACK")/phase2-en.tar.xz" | cut -f1) MB"
fi
echo "gpu_prep: carry $(dirname "$PACK") and run bench/gpu_first.sh (its header has the run tool's lines)"
