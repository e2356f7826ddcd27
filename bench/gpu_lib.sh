# bench/gpu_lib.sh - helpers shared by the GPU scripts (sourced by
# bench/gpu_prep.sh, bench/gpu_first.sh and bench/train_gpu.sh): the
# model FLOPs count and MFU, the GPU's bf16 peak, the median of a
# train_bert log's seq/s, and the hash of the sources a prebuilt
# train_bert was built from.

# flops CONFIG S P -> training FLOPs per sequence: 3 x forward, per layer
# 2S(4H^2 + 2HI) + 4S^2H, plus the MLM head at the P masked tokens
# P(2H^2 + 2HV) and the pooler/NSP 2H^2 + 4H (the same count for both
# programs, although the peer's MLM head runs at all S positions).
gpu_flops() {
  awk -v S="$2" -v P="$3" -v c="$(tr -d '\n' <"$1")" 'BEGIN {
    n = split(c, kv, ","); for (i = 1; i <= n; i++) { split(kv[i], f, ":"); gsub(/[ "{}]/, "", f[1]); gsub(/[ "{}]/, "", f[2]); v[f[1]] = f[2] }
    H = v["hidden_size"]; I = v["intermediate_size"]; L = v["num_hidden_layers"]; V = v["vocab_size"] + (8 - v["vocab_size"] % 8) % 8
    fwd = L * (2 * S * (4 * H * H + 2 * H * I) + 4 * S * S * H) + P * (2 * H * H + 2 * H * V) + 2 * H * H + 4 * H
    printf "%.0f", 3 * fwd }'
}

# gpu_peak_tflops NAME -> the dense bf16 peak of a GPU named NAME (0: unknown)
gpu_peak_tflops() {
  case "$1" in
  *H100*PCIe*) echo 756 ;;
  *H100*NVL*) echo 835 ;;
  *H100* | *H200* | *GH200*) echo 989 ;;
  *A100*) echo 312 ;;
  *) echo 0 ;;
  esac
}

# gpu_mfu SEQ_PER_S FLOPS_PER_SEQ PEAK_TFLOPS -> "41.2 %" (either empty or no peak: -)
gpu_mfu() {
  if [ -n "$1" ] && [ -n "$2" ] && [ "${3:-0}" != 0 ]; then
    awk -v r="$1" -v f="$2" -v pk="$3" 'BEGIN { printf "%.1f %%", 100 * r * f / (pk * 1e12) }'
  else
    echo "-"
  fi
}

# gpu_median_seqs LOG WARMUP -> the median seq_per_s of train_bert's JSON
# lines after step WARMUP (nothing when there is none)
gpu_median_seqs() {
  sed -n 's/.*"step": \([0-9]*\),.*"seq_per_s": \([0-9.]*\).*/\1 \2/p' "$1" | awk -v w="$2" '$1 > w { print $2 }' |
    sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

# gpu_src_hash ROOT -> one hash of every file compiled into train_bert,
# check_gpu and the C programs (sources, headers, the Makefile), so that a
# prebuilt pack can tell whether it was built from this tree (scripts may
# differ: they are not in the binaries)
gpu_src_hash() {
  (
    cd "$1" &&
      find Makefile common prep tokenize vocab shard hdf5gen train tests/gpu tests/test.h tests/bert_ref.h \
        -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name Makefile \) 2>/dev/null |
      LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16
  )
}
