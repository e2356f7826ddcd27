#!/usr/bin/env bash
# bench/gpu_ncu.sh - Nsight Compute's counters for train_bert's own kernels
# in one optimizer step of BERT-large phase 1 (128/20, micro-batch B1,
# bf16), on a lent GPU: per kernel its time, DRAM throughput (% of the
# GPU's peak), achieved occupancy, registers and block size, to see which
# element-wise and row kernels run below the memory's speed and why.
#
#   here:   bash bench/gpu_prep.sh   (the pack, as for bench/gpu_first.sh)
#   there:  run(command="bash bench/gpu_ncu.sh", carry=["build/gpu-carry"], timeout_s=240)
#
# Output ($OUT, default out/ncu): ncu.csv (ncu --csv, one line per kernel
# launch and metric), ncu.md (per kernel: launches, mean µs, DRAM %,
# occupancy %, registers, block; STALLS=1 adds the SM's throughput, issue
# slots busy, the main stall reasons per issue and the warp instructions),
# ncu.log. Knobs: B1 (64), KERNELS (an
# ncu -k regex; default the row and element-wise kernels of the profile's
# top rows), SKIP and COUNT (matching launches skipped, then profiled:
# about one step's).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/ncu}
B1=${B1:-64}
KERNELS=${KERNELS:-'regex:k_(gelu_bwd_cols|ln_bwd_cols|bias_drop_res_ln|bias_gelu|softmax|softmax_bwd|qkv_bwd_cols|qkv_bias_split|ln_rowstats|colsum_finish|colsum_part|lamb1|lamb3|permute|zero_ranges)'}
SKIP=${SKIP:-450} COUNT=${COUNT:-450}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee "$OUT/ncu.log") 2>&1
W=build/gpu/ncu
rm -rf "$W" && mkdir -p "$W/pkg" "$W/data/h5"
tar -C "$W/pkg" -xJf build/gpu-carry/wikibert-gpu.tar.xz || { echo "gpu_ncu: no pack (bash bench/gpu_prep.sh)"; exit 1; }
B=$W/pkg/bin
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "gpu_ncu: no ncu here"; exit 1; }
echo "ncu: $NCU ($("$NCU" --version | tail -1)); gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
"$B/wiki_dump" tests/data/enwiki-206.xml.bz2 2>/dev/null | "$B/wiki_strip" -F lines 2>/dev/null |
  "$B/sent_split" -l en 2>/dev/null >"$W/data/en.txt"
"$B/hdf5gen" -q -f --vocab data/bert/vocab.txt --dupe-factor 5 --max-seq-length 128 \
  --max-predictions-per-seq 20 -o "$W/data/h5/en_training_0.hdf5" "$W/data/en.txt" || exit 1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size
[ "${STALLS:-0}" = 1 ] && M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__inst_executed.sum
timeout 200 "$NCU" --csv --print-units base --metrics "$M" -k "$KERNELS" --launch-skip "$SKIP" --launch-count "$COUNT" \
  "$B/train_bert" --input_dir "$W/data/h5" --config_file train/configs/bert_large.json \
  --output_dir "$W/run" --train_batch_size "$B1" --max_steps 3 --max_predictions_per_seq 20 \
  --precision bf16 --skip_checkpoint --vocab_file data/bert/vocab.txt >"$OUT/ncu.csv" 2>"$W/err.txt"
rc=$?
tail -5 "$W/err.txt"
echo "ncu: exit $rc, $(grep -c '^"' "$OUT/ncu.csv") lines"
# per kernel (the name up to its template arguments): launches, mean time,
# DRAM %, occupancy %, registers, block
python3 - "$OUT/ncu.csv" "$M" >"$OUT/ncu.md" <<'PY'
import csv, re, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
metrics = sys.argv[2].split(",")
head = next((i for i, r in enumerate(rows) if "Metric Name" in r), None)
if head is None:
    print("no ncu rows"); sys.exit()
h = rows[head]; ki, mi, vi, ii = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value"), h.index("ID")
by = {}
for r in rows[head + 1:]:
    if len(r) <= vi: continue
    name = re.sub(r"[<(].*", "", r[ki]).replace("void ", "")
    try: v = float(r[vi].replace(",", ""))
    except ValueError: continue
    by.setdefault(name, {}).setdefault(r[mi], {})[r[ii]] = v
short = {"gpu__time_duration.sum": "mean us", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM %",
         "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %", "launch__registers_per_thread": "regs",
         "launch__block_size": "block", "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM %",
         "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue %", "smsp__inst_executed.sum": "warp inst (M)"}
def name_of(m): return short.get(m, re.sub(r"smsp__average_warps_issue_stalled_(.*)_per_issue_active.ratio", r"stall \1", m))
def mean(d): return sum(d.values()) / len(d) if d else 0
print("| kernel | launches | " + " | ".join(name_of(m) for m in metrics) + " |")
print("|---|---|" + "---|" * len(metrics))
out = []
for k, m in by.items():
    t = m.get("gpu__time_duration.sum", {})
    vals = []
    for x in metrics:
        v = mean(m.get(x, {}))
        if x == "gpu__time_duration.sum": v /= 1e3
        if x == "smsp__inst_executed.sum": v /= 1e6
        vals.append(v)
    out.append((sum(t.values()), k, len(t), vals))
for tot, k, n, vals in sorted(out, reverse=True):
    print(f"| {k} | {n} | " + " | ".join(f"{v:.1f}" if abs(v) < 1000 else f"{v:.0f}" for v in vals) + " |")
PY
cat "$OUT/ncu.md"
