#!/usr/bin/env bash
# bench/gpu_first.sh - the runbook for a GPU machine lent for 15 minutes of
# device time in all (its start and idle time included), each command at
# most 10 minutes, 64 MiB carried, at most 8 files back: two calls that
# answer, most valuable first, whether train_bert is correct on a GPU, how
# fast it is beside PyTorch, and whether it learns as PyTorch does.
#
#   here:    bash bench/gpu_prep.sh            build/gpu-carry/wikibert-gpu.tar.xz (about 20 MB):
#                                              train_bert (sm_90), check_gpu, the C programs and the
#                                              library bundle, built here with nvcc; and
#                                              phase2-en.tar.xz (about 15 MB): 512/80 data made
#                                              here by the English workflow (P2DATA), which the
#                                              data step checks and uses for SEQ2/PRED2
#   call 1:  run(command="bash bench/gpu_first.sh 1", carry=["build/gpu-carry"], timeout_s=480)
#   call 2:  run(command="bash bench/gpu_first.sh 2", carry=["build/gpu-carry"], timeout_s=300)
#            (at once after call 1, on the warm machine; a fresh one works as well: each call
#            unpacks the pack and makes its own data from tests/data), then give_back
#   call 3:  run(command="bash bench/gpu_first.sh 3", carry=["build/gpu-carry"], timeout_s=420)
#            (a draw with time left after calls 1 and 2: what they leave open, below)
#   after:   bash bench/gpu_first.sh summary OUT1 OUT2 [OUT3] > summary.md   (the calls' results in
#            one page: rows to paste into BENCHMARKS.md)
#
# Each step runs under its own `timeout`, streams its output (the run
# tool's tail shows it) into its log in $OUT, and appends its results to
# $OUT/results.tsv as it finishes; $OUT/summary.md is rendered from them
# after every step, so a call cut short keeps what it measured. A step
# starts only if its budget fits in what is left of the call's (CALL 1:
# 450 s, CALL 2: 275 s, CALL 3: 400 s, CALL 4: 555 s, CALL 5: 420 s), so
# a call ends inside its run timeout whatever happens; a step it cannot
# fit is recorded as "not run".
#
# Budget per step (seconds; the step's timeout):
#
#   call 1 (450 s)                                      call 2 (275 s)
#   setup       20  unpack, check the prebuilt ones     setup         20
#   build      240  only when they do not run here      build        240 (only when needed)
#   preflight   40  GPU, driver, nvcc, torch (a cold    preflight     35
#                   import of torch takes seconds)...   data          20  128/20 only
#   check       90  make gpu-check: check_gpu (fp32 +   curve_ours    50  export the step-0 model,
#                   bf16 against the reference file),                     its eval, CURVE_STEPS steps
#                   train_bert against train_bert_cpu   curve_torch   75  PyTorch from that export
#   data        30  enwiki-206 -> 128/20 and 512/80     curve_compare  5  windows side by side
#   p1_ours     60  BERT-large 128/20, micro-batch 64   mlm_eval      40  held-out rows (HELDOUT): loss
#   p1_torch    70  PyTorch, same shape                                   and MLM acc of the step-0 and
#   profile     45  train_bert --profile, phase 1                         trained exports, ours and
#   p2_ours     45  BERT-large 512/80, micro-batch 16                     transformers'
#   p2_torch    50  PyTorch, same shape                 memcheck      35  train_bert, small model
#                                                       racecheck     35  attn_kernels: the attention kernels
#                                                       initcheck     30  (if time is left)
#                                                       synccheck     30  (if time is left)
#
#   call 3 (400 s): setup 20, preflight 30, data 30 (both shapes), then
#   sandiag 75      compute-sanitizer memcheck of check_gpu (every kernel, fp32 and bf16);
#                   racecheck, initcheck and synccheck of attn_kernels (the fused attention
#                   kernels alone, head sizes 16, 32, 64: under racecheck, cuBLAS's Hopper
#                   bf16 matmuls stop the sanitizer before check_gpu or train_bert reach them)
#   resume 75       BERT-base 128/20: --stop_at_step and a kill -9 after a checkpoint, each
#                   resumed: the last checkpoint byte for byte the uninterrupted run's
#   base_* 30/45    BERT-base phase 1 (micro-batch 128) and 2 (32), ours and PyTorch
#   p1_ours 30      BERT-large phase 1 again (beside OURS_ARGS's rows)
#   p2_* 30-45      BERT-large phase 2: micro-batch 32 and 64 (ours, PyTorch at 32), 16 with
#                   --attention fused, 16 with --bin_size 64
#   (OURS_ARGS: more train_bert options for the speed rows, e.g. "--attention fused";
#   SAN_ARGS: more compute-sanitizer options, e.g. "--check-warpgroup-mma no";
#   BUDGET_<step>=99999 leaves a step out)
#   initcheck 60    train_bert tiny, one step
#
#   call 4 (555 s): setup, preflight, data, then
#   long_ref 120    BERT-large 512/80, LONG_B x LONG_ACC (64 x 8) sequences a step, uninterrupted
#                   to step LONG_KILL + LONG_EVERY (32 + 16) of LONG_STEPS (96)
#   long 270        the same run to the end with a checkpoint every LONG_EVERY, killed (SIGKILL)
#                   LONG_KILL_DELAY s after checkpoint LONG_KILL is written, resumed: the losses
#                   and the checkpoint the reference's; seq/s in the first, middle and last
#                   LONG_WINDOW (60) s of training and what a checkpoint costs (NVIDIA's
#                   phase-2 batch per GPU: LONG_B=128 LONG_ACC=32, 4096 sequences a step;
#                   `gpu_first.sh long-stats long.log N EVERY` computes these again)
#   profile 25, profile2 30   train_bert --profile, phase 1 (B1) and phase 2 (B2 x 2)
#   p1b128_ours 20  BERT-large phase 1 at micro-batch B1 x 2
#   p2max 130       phase 2 micro-batches upward (matmul: B2 x 6, 8, 10, 12; fused: B2 x 8, 16, 20, 22;
#                   P2MAX_ATTENTION picks) until one does not fit; p2max_torch 45 PyTorch at the
#                   largest; p2bins_mm 20 --bin_size 64 with the matmul attention
#
#   call 5 (420 s): setup, preflight, check (kernels changed since the last check on a GPU
#   make a speed row worthless until it passes), data, p1_ours, p1_torch, p2_ours, p2_torch
#   (micro-batch B2), p2b32_ours, p2b32_torch (B2 x 2), profile, profile2, and p2max when
#   P2MAX_SIZES lists the micro-batches to try (e.g. P2MAX_ATTENTION=fused P2MAX_SIZES="288 320")
#
# Output ($OUT, default out/gpu; at most 8 files): results.tsv (one
# tab-separated line per result: step, info, check, speed, curve,
# sanitizer, ...), summary.md (the rendering), preflight.txt (setup and
# the preflight block), build.log (only when it builds), and per call
# check.log, bench.log, profile.txt (call 1) or curve.log, curve.tsv,
# sanitizer.log (call 2).
#
# The binaries and commands are parameters (environment), so that make
# test runs the whole runbook on the CPU emulation of CUDA
# (tests/cli/gpu_first.sh): EMU=1 with TRB (train_bert: train_bert_emu),
# CHK (check_gpu: test_gpu_emu), BIN (the C programs), PY (a Python with
# torch, transformers and h5py; unset: the first found, none: the PyTorch
# steps are "not run"); EMU=1 also picks tiny models, little data, few
# steps, budgets x10 and no call deadline, and records nvidia-smi and
# compute-sanitizer as "not run". Other knobs: PACK, WORK, CALL_BUDGET,
# BUDGET_<step> (seconds, not scaled), BENCH_CONFIG, B1, B2, STEPS, WARMUP, ACC (the speed
# rows' micro-batches per optimizer step, both sides; default 1), CURVE_CONFIG,
# CURVE_B, CURVE_STEPS, CURVE_LR, CURVE_WARMUP, CURVE_WINDOW, CURVE_SEED,
# GPU_CHECK_CPU (0: skip train_bert against train_bert_cpu), STOP_AFTER
# (a step: the script kills itself after it, as a call cut short).
set -u
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. bench/gpu_lib.sh

# ---- results.tsv -> summary.md ----

# summarize DIR... : the markdown page of the results.tsv of each DIR
summarize() {
  local d
  for d in "$@"; do [ -f "$d/results.tsv" ] && cat "$d/results.tsv"; done | awk -F'\t' '
    function row(s) { print s }
    $1 == "call" { call[++ncall] = $2; calldate[ncall] = $3; next }
    $1 == "info" { if (!($2 in info)) { ikey[++ninfo] = $2; info[$2] = $3 }
      else if (index(info[$2], $3) == 0) info[$2] = info[$2] "; call " call[ncall] ": " $3
      next }
    $1 == "step" { st[++nst] = sprintf("| %s | %s | %s | %s | %s | %s |", $2, $3, $4, $5, $6, $7); next }
    $1 == "check" { ck[++nck] = sprintf("| %s | %s | %s |", $2, $3, $4); next }
    $1 == "fail" { fl[++nfl] = $2; next }
    $1 == "data" { dt[++ndt] = $2; next }
    $1 == "speed" { key = $2 SUBSEP $3 SUBSEP $4
      if (!(key in seen)) { seen[key] = 1; sk[++nsk] = key; ours[key] = "-"; omfu[key] = "-"; oth[key] = "not run"; tmfu[key] = "-"; omem[key] = "-"; tmem[key] = "-"; note[key] = "" }
      if ($5 == "ours") { ours[key] = $6; omfu[key] = $7; omem[key] = $8; if ($9 != "") note[key] = $9 }
      else { oth[key] = $6; tmfu[key] = $7; tmem[key] = $8 }
      next }
    $1 == "profile" { pf[++npf] = $2; next }
    $1 == "curveeval" { ce[++nce] = sprintf("| %s | %s | %s | %s |", $2, $3, $4, $5); next }
    $1 == "curve" { cv[++ncv] = sprintf("| %s-%s | %s | %s | %s | %s | %s |", $2, $3, $4, $5, $6, $7, $8); next }
    $1 == "curvesum" { cs[++ncs] = $2; next }
    $1 == "sanitizer" { sz[++nsz] = sprintf("| %s | %s | %s |", $2, $3, $4); next }
    $1 == "mlmeval" { me[++nme] = sprintf("| %s | %s | %s | %s | %s | %s |", $2, $3, $4, $5, ($6 == "" ? "not run" : $6), ($7 == "" ? "-" : $7)); next }
    END {
      printf "## GPU runbook (bench/gpu_first.sh)"
      for (i = 1; i <= ncall; i++) printf "%s call %s, %s", (i == 1 ? ":" : ";"), call[i], calldate[i]
      print ""
      print ""
      if (ninfo) { for (i = 1; i <= ninfo; i++) print "- " ikey[i] ": " info[ikey[i]]; print "" }
      if (nst) { print "| call | step | result | seconds | budget | note |"; print "|---|---|---|---|---|---|"
        for (i = 1; i <= nst; i++) print st[i]; print "" }
      if (nck || nfl) { print "### Correctness (make gpu-check)"; print ""
        if (nck) { print "| check | passed | failed |"; print "|---|---|---|"; for (i = 1; i <= nck; i++) print ck[i]; print "" }
        for (i = 1; i <= nfl; i++) print "- " fl[i]
        if (nfl) print "" }
      if (ndt) { print "Data:"; for (i = 1; i <= ndt; i++) print "- " dt[i]; print "" }
      if (nsk) { print "### Speed (train_bert --precision bf16, LAMB; PyTorch: BertForPreTraining, bf16 autocast, SDPA, fused AdamW)"; print ""
        print "| config | phase (seq/pred) | micro-batch | train_bert seq/s | MFU | peak MB | PyTorch seq/s | MFU | peak MB | ratio | note |"
        print "|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= nsk; i++) { k = sk[i]; split(k, p, SUBSEP)
          r = (ours[k] != "-" && oth[k] != "not run" && oth[k] + 0 > 0) ? sprintf("%.2fx", ours[k] / oth[k]) : "-"
          print "| " p[1] " | " p[2] " | " p[3] " | " ours[k] " | " omfu[k] " | " omem[k] " | " oth[k] " | " tmfu[k] " | " tmem[k] " | " r " | " note[k] " |" }
        print "" }
      if (npf) { print "### Profile (train_bert --profile, GPU time per optimizer step)"; print ""; print "```"
        for (i = 1; i <= npf; i++) print pf[i]; print "```"; print "" }
      if (nce || ncv || ncs) { print "### Learning curve (same data, same initial weights, LAMB, same schedule and batch)"; print "" }
      if (nce) { print "| initial model on the first rows | train_bert --eval_file | PyTorch | relative difference |"
        print "|---|---|---|---|"; for (i = 1; i <= nce; i++) print ce[i]; print "" }
      if (ncv) { print "| steps | train_bert loss | PyTorch loss | relative difference | train_bert MLM acc | PyTorch MLM acc |"
        print "|---|---|---|---|---|---|"; for (i = 1; i <= ncv; i++) print cv[i]; print "" }
      for (i = 1; i <= ncs; i++) print "- " cs[i]
      if (ncs) print ""
      if (nme) { print "| held-out rows | model | train_bert loss | MLM acc | transformers loss | MLM acc |"
        print "|---|---|---|---|---|---|"; for (i = 1; i <= nme; i++) print me[i]; print "" }
      if (nsz) { print "### compute-sanitizer"; print ""; print "| tool | target | result |"; print "|---|---|---|"
        for (i = 1; i <= nsz; i++) print sz[i]; print "" }
    }'
}

# long_stats LOG N EVERY W: the throughput of a long run's log (its first
# part's lines, then the resumed part's with "resumed: " before them; N
# sequences a step, a checkpoint every EVERY steps). A step's time is N
# over its seq/s (the wall time since the step before in the same
# process, so a checkpoint's writing counts in the step after it); the
# windows (the first, middle and last W s of that time, the gap of the kill
# and the restart left out) give seq/s with the checkpoints and without
# the steps after one; a checkpoint's cost is the mean time of a step
# after one (in the same process) less the median of the others
long_stats() {
  sed -n 's/^\(resumed: \)\{0,1\}[0-9.]* .*"step": \([0-9]*\),.*"seq_per_s": \([0-9.]*\).*/\2 \3 \1/p' "$1" | awk -v n="$2" -v e="$3" -v w="$4" '
    $2 > 0 { k++; d[k] = n / $2; part = NF > 2; tt[k] = tt[k - 1] + d[k]
      ck[k] = ($1 > 1 && ($1 - 1) % e == 0 && part == lastpart); lastpart = part } # (a process'"'"'s first step follows none)
    END { if (k < 3) { print "fewer than 3 steps logged"; exit }
      T = tt[k]; lo[1] = 0; lo[2] = (T - w) / 2; lo[3] = T - w
      for (q = 1; q <= 3; q++) { a = b = c = f = 0
        for (i = 1; i <= k; i++) if (tt[i] > lo[q] && tt[i] - d[i] < lo[q] + w) { a += n; b += d[i]; if (!ck[i]) { c += n; f += d[i] } }
        all[q] = b > 0 ? a / b : 0; clean[q] = f > 0 ? c / f : 0 }
      m = 0; for (i = 1; i <= k; i++) if (!ck[i]) o[++m] = d[i]
      for (i = 2; i <= m; i++) { x = o[i]; for (j = i - 1; j >= 1 && o[j] > x; j--) o[j + 1] = o[j]; o[j + 1] = x }
      med = m % 2 ? o[(m + 1) / 2] : (o[m / 2] + o[m / 2 + 1]) / 2
      s = 0; nc = 0; for (i = 1; i <= k; i++) if (ck[i]) { s += d[i] - med; nc++ }
      printf "%.1f s of training, %d steps logged; seq/s first %d s %.2f, middle %.2f, last %.2f", T, k, w, all[1], all[2], all[3]
      printf " (without the %d steps after a checkpoint: %.2f, %.2f, %.2f); a step %.2f s (median)", nc, clean[1], clean[2], clean[3], med
      if (nc) printf "; a checkpoint adds %.1f s", s / nc }'
}

if [ "${1:-}" = long-stats ]; then # LOG N EVERY [W]: a long run's throughput again, from its long.log
  [ $# -ge 4 ] || { echo "usage: bench/gpu_first.sh long-stats LONG.LOG SEQUENCES_A_STEP EVERY [WINDOW]" >&2; exit 2; }
  long_stats "$2" "$3" "$4" "${5:-60}"
  echo
  exit 0
fi
if [ "${1:-}" = summary ]; then
  shift
  [ $# -gt 0 ] || { echo "usage: bench/gpu_first.sh summary DIR..." >&2; exit 2; }
  summarize "$@"
  exit 0
fi

# ---- settings (the parent's, exported to the steps) ----
if [ "${1:-}" != _step ]; then
  CALL=${1:-}
  case "$CALL" in 1 | 2 | 3 | 4 | 5) ;; *)
    echo "usage: bench/gpu_first.sh 1|2|3|4|5   (or: summary DIR...)" >&2
    exit 2
    ;;
  esac
  export CALL EMU=${EMU:-0}
  export OUT=${OUT:-out/gpu} WORK=${WORK:-$ROOT/build/gpu/work}
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  export PACK=${PACK:-build/gpu-carry/wikibert-gpu.tar.xz}
  export P2DATA=${P2DATA-$([ "$EMU" = 1 ] || echo "$(dirname "$PACK")/phase2-en.tar.xz")} # the phase-2 data made by bench/gpu_prep.sh
  if [ "$EMU" = 1 ]; then
    export SCALE=10 CALL_BUDGET=${CALL_BUDGET:-1000000}
    export DUMP=${DUMP:-tests/data/enwiki-3.xml.bz2} DUPE=${DUPE:-1}
    export SEQ1=${SEQ1:-64} PRED1=${PRED1:-10} SEQ2=${SEQ2:-128} PRED2=${PRED2:-20}
    export B1=${B1:-8} B2=${B2:-4} STEPS=${STEPS:-2} WARMUP=${WARMUP:-1} PROFILE_STEPS=${PROFILE_STEPS:-3}
    export CURVE_B=${CURVE_B:-8} CURVE_STEPS=${CURVE_STEPS:-8} CURVE_LR=${CURVE_LR:-0.01} CURVE_WARMUP=${CURVE_WARMUP:-0.25}
    export CURVE_WINDOW=${CURVE_WINDOW:-4} CURVE_PRECISION=${CURVE_PRECISION:-fp32}
    export LONG_B=${LONG_B:-4} LONG_ACC=${LONG_ACC:-2} LONG_STEPS=${LONG_STEPS:-8} LONG_EVERY=${LONG_EVERY:-2} LONG_KILL=${LONG_KILL:-4}
    export LONG_WINDOW=${LONG_WINDOW:-5} LONG_KILL_DELAY=${LONG_KILL_DELAY:-0.5}
  else
    export SCALE=1 CALL_BUDGET=${CALL_BUDGET:-$(case $CALL in 1) echo 450 ;; 2) echo 275 ;; 3) echo 400 ;; 4) echo 555 ;; *) echo 420 ;; esac)}
    export DUMP=${DUMP:-tests/data/enwiki-206.xml.bz2} DUPE=${DUPE:-5}
    export SEQ1=${SEQ1:-128} PRED1=${PRED1:-20} SEQ2=${SEQ2:-512} PRED2=${PRED2:-80}
    export B1=${B1:-64} B2=${B2:-16} STEPS=${STEPS:-20} WARMUP=${WARMUP:-5} PROFILE_STEPS=${PROFILE_STEPS:-6}
    export CURVE_B=${CURVE_B:-32} CURVE_STEPS=${CURVE_STEPS:-300} CURVE_LR=${CURVE_LR:-2e-3} CURVE_WARMUP=${CURVE_WARMUP:-0.1}
    export CURVE_WINDOW=${CURVE_WINDOW:-25} CURVE_PRECISION=${CURVE_PRECISION:-bf16}
    export LONG_B=${LONG_B:-64} LONG_ACC=${LONG_ACC:-8} LONG_STEPS=${LONG_STEPS:-96} LONG_EVERY=${LONG_EVERY:-16} LONG_KILL=${LONG_KILL:-32}
    export LONG_WINDOW=${LONG_WINDOW:-60} LONG_KILL_DELAY=${LONG_KILL_DELAY:-3}
  fi
  export BENCH_CONFIG=${BENCH_CONFIG:-} CURVE_CONFIG=${CURVE_CONFIG:-} CURVE_SEED=${CURVE_SEED:-42}
  export GPU_CHECK_CPU=${GPU_CHECK_CPU:-1} VOCAB=$ROOT/data/bert/vocab.txt
  export HELDOUT=${HELDOUT:-tests/data/enwiki-3.xml.bz2} EVAL_ROWS=${EVAL_ROWS:-$([ "$EMU" = 1 ] && echo 16 || echo 256)}
  export TRB=${TRB:-} CHK=${CHK:-} TRC=${TRC:-} BIN=${BIN:-} PY=${PY-auto} ACC=${ACC:-1}
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false # nothing outside the machine
fi

# ---- the steps (each run as `bash gpu_first.sh _step NAME` under timeout) ----

note() { echo "$*" >"$WORK/note"; }
record() { # FIELD... : one line of results.tsv
  local IFS=$'\t'
  echo "$*" >>"$OUT/results.tsv"
}
env_load() { [ -f "$WORK/binaries.env" ] && . "$WORK/binaries.env"; }
# PYREF for a PyTorch step: the preflight's, or (when the preflight ended
# before it got there) found now
py_load() {
  env_load
  [ "${PYREF_DONE:-}" = 1 ] || find_py || true
}

# the small configs: tiny (head size 16, BERT-Tiny's shape with BERT's
# vocabulary; dropout 0.1, or 0 for tiny0) and small64 (head size 64, as
# BERT-base and -large: the fused attention's production shape)
write_configs() {
  cat >"$WORK/tiny.json" <<'J'
{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
 "max_position_embeddings": 512, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
J
  sed 's/"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1/"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0/' \
    "$WORK/tiny.json" >"$WORK/tiny0.json"
  cat >"$WORK/small64.json" <<'J'
{"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 512,
 "max_position_embeddings": 512, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
J
}

# the Python for the PyTorch steps: torch, transformers and h5py (and
# CUDA, unless emulated), found with one import each (a cold import of
# torch takes seconds): sets PYREF and PYVER; PY=none: none
find_py() {
  local p code='import torch, transformers, h5py
print("torch %s (CUDA %s, GPU %s), transformers %s, h5py %s" % (torch.__version__, torch.version.cuda,
      torch.cuda.is_available(), transformers.__version__, h5py.__version__))'
  [ "$EMU" = 1 ] || code="$code
assert torch.cuda.is_available(), 'no GPU for torch'"
  PYREF="" PYVER=""
  [ "$PY" = none ] && return 1
  for p in $([ "$PY" = auto ] && echo "${WIKIBERT_PYTHON:-} python3 /usr/bin/python3" || echo "$PY"); do
    if command -v "$p" >/dev/null && PYVER=$("$p" -c "$code" 2>/dev/null); then
      PYREF=$(command -v "$p")
      return 0
    fi
  done
  return 1
}

step_setup() {
  mkdir -p "$WORK"
  write_configs
  local P=$ROOT/build/gpu/pkg kind
  if [ "$EMU" = 1 ]; then
    for v in TRB CHK TRC; do
      [ -x "${!v}" ] || { echo "setup: EMU=1 needs $v (a program), not '${!v}'"; return 1; }
    done
    [ -x "$BIN/wiki_dump" ] || { echo "setup: EMU=1 needs BIN (the C programs), not '$BIN'"; return 1; }
    kind="emulated: $(basename "$TRB") on the CPU"
  elif [ -n "$TRB" ]; then
    kind="given: $TRB"
  else
    rm -f "$WORK/need_build"
    if [ -f "$PACK" ]; then
      rm -rf "$P" && mkdir -p "$P"
      tar -C "$P" -xJf "$PACK" 2>/dev/null ||
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$PACK" "$P" ||
        { echo "setup: $PACK does not unpack"; touch "$WORK/need_build"; }
      [ -f "$P/MANIFEST" ] && sed 's/^/setup: pack: /' "$P/MANIFEST"
      local have want
      have=$(sed -n 's/^src_hash //p' "$P/MANIFEST" 2>/dev/null) want=$(gpu_src_hash "$ROOT")
      if [ "$have" != "$want" ]; then
        echo "setup: the pack was built from other sources ($have, this tree $want): building here"
        touch "$WORK/need_build"
      fi
    else
      echo "setup: no $PACK (bash bench/gpu_prep.sh makes it): building here"
      touch "$WORK/need_build"
    fi
    # CUDA's libraries: the RPATH names CUDA's lib64; else pip's (PyTorch's CUDA, NCCL)
    local ldp="" nf
    if [ ! -f "$WORK/need_build" ]; then
      nf=$(ldd "$P"/bin/* 2>&1 | grep -c "not found")
      if [ "$nf" != 0 ]; then
        ldp=$(python3 -c 'import glob, os, nvidia
print(":".join(sorted(d for b in nvidia.__path__ for d in glob.glob(os.path.join(b, "*", "lib")))))' 2>/dev/null)
        nf=$(LD_LIBRARY_PATH=$ldp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$P"/bin/* 2>&1 | grep "not found" | sort -u)
        if [ -n "$nf" ]; then
          echo "setup: the prebuilt programs miss libraries here (building here):"
          echo "$nf"
          touch "$WORK/need_build"
        else
          echo "setup: CUDA's libraries from pip's packages: $ldp"
        fi
      fi
      if [ ! -f "$WORK/need_build" ] &&
        ! LD_LIBRARY_PATH=$ldp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$P/bin/train_bert" --help >/dev/null 2>"$WORK/help.err"; then
        echo "setup: the prebuilt train_bert does not start here: $(head -2 "$WORK/help.err")"
        touch "$WORK/need_build"
      fi
    fi
    kind="prebuilt by bench/gpu_prep.sh ($(sed -n 's/^commit //p' "$P/MANIFEST" 2>/dev/null))"
    [ -f "$WORK/need_build" ] && kind="built here (make, sm_90)"
    TRB=$P/bin/train_bert CHK=$P/bin/check_gpu TRC=$P/bin/train_bert_cpu BIN=$P/bin
    if [ -n "$ldp" ]; then echo "export LD_LIBRARY_PATH=$ldp\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" >"$WORK/binaries.env"; else : >"$WORK/binaries.env"; fi
  fi
  [ -f "$WORK/binaries.env" ] || : >"$WORK/binaries.env"
  {
    echo "TRB=$TRB CHK=$CHK TRC=$TRC BIN=$BIN"
    printf 'KIND=%q\n' "$kind"
  } >>"$WORK/binaries.env"
  echo "setup: programs: $kind"
  record info programs "$kind"
  [ -f "$WORK/need_build" ] && note "prebuilt programs unusable here: building"
  return 0
}

step_build() {
  env_load
  local dl=$ROOT/build/gpu/pkg/devlibs
  [ -d "$dl/lib" ] || dl=""
  rm -rf "$ROOT/build/gpu/pkg/bin"
  make --no-print-directory -j"$(nproc)" BUILD=build/gpu/obj BIN=build/gpu/pkg/bin ${dl:+DEVLIBS=$dl} \
    "CUDA_ARCH=-gencode arch=compute_90,code=sm_90" \
    build/gpu/pkg/bin/{train_bert,train_bert_cpu,wiki_dump,wiki_strip,sent_split,hdf5gen,hdf5_check} \
    build/gpu/obj/tests/check_gpu build/gpu/obj/tests/attn_kernels || return 1
  cp build/gpu/obj/tests/check_gpu build/gpu/obj/tests/attn_kernels build/gpu/pkg/bin/
}

step_preflight() {
  env_load
  local gpu="" v
  echo "== preflight $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  # first the Python (its imports take the longest): kept at once for the PyTorch steps
  if find_py; then
    echo "python: $PYREF: $PYVER"
    record info pytorch "$PYVER"
  else
    echo "python: not run: no Python with torch, transformers and h5py$([ "$EMU" = 1 ] || echo ' and CUDA') (PY=$PY)"
    record info pytorch "not run: no Python with torch, transformers, h5py$([ "$EMU" = 1 ] || echo ', CUDA')"
  fi
  echo "PYREF=$PYREF PYREF_DONE=1" >>"$WORK/binaries.env"
  echo "host: $(nproc) CPUs, $(free -g 2>/dev/null | awk '/^Mem/ { print $2 " GB memory" }'), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), glibc $(ldd --version 2>/dev/null | head -1 | sed 's/.* //')"
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    nvidia-smi --query-gpu=index,name,driver_version,compute_cap,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,power.limit \
      --format=csv | sed 's/^/gpu: /'
    v=$(nvidia-smi | sed -n 's/.*Driver Version: *\([0-9.]*\).*CUDA Version: *\([0-9.]*\).*/driver \1, CUDA \2/p')
    echo "driver: $v"
    record info gpu "$gpu, $(nvidia-smi --query-gpu=memory.total,memory.free --format=csv,noheader | head -1 | sed 's/, / total, /') free"
    record info driver "$v"
  else
    echo "gpu: not run: no nvidia-smi or no GPU"
    record info gpu "not run: no GPU (nvidia-smi finds none)"
  fi
  v=$( (command -v nvcc >/dev/null && nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>/dev/null | sed -n 's/.*release \(.*\)/\1/p')
  echo "nvcc: ${v:-none}"
  record info nvcc "${v:-none}"
  local cs
  cs=$(command -v compute-sanitizer || true)
  for f in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
    "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/nvcc)")/compute-sanitizer"; do
    [ -z "$cs" ] && [ -x "$f" ] && cs=$f
  done
  if [ "$EMU" != 1 ] && [ -n "$cs" ]; then
    v="$cs, $("$cs" --version 2>&1 | sed -n 's/.*Version \(.*\)/\1/p' | head -1)"
  elif [ -n "$cs" ]; then
    v="not run: emulated (CUDA on the CPU)" cs=""
  else
    v="not run: none found"
  fi
  echo "SANITIZER=$cs" >>"$WORK/binaries.env"
  echo "compute-sanitizer: $v"
  record info compute-sanitizer "$v"
  echo "programs: $KIND"
  if [ "$EMU" != 1 ]; then
    v=$(ldd "$TRB" "$CHK" 2>&1 | grep -c "not found")
    echo "ldd: $v libraries not found; $(ldd "$TRB" | grep -E 'libcublas|libnccl|libcudart|libhdf5' | awk '{ printf "%s %s  ", $1, $3 }')"
    nvidia-smi topo -m 2>/dev/null | head -3
  fi
  [ -n "$gpu" ] && echo "peak: $(gpu_peak_tflops "$gpu") TFLOP/s dense bf16"
  echo "== end of preflight"
}

step_check() {
  env_load
  GPU_CHECK_EMU=$EMU TRB=$TRB CHK=$CHK tests/gpu/check.sh "$(dirname "$CHK")" "$BIN" 2>&1 | tee "$WORK/check.out"
  local rc=${PIPESTATUS[0]}
  sed -n 's/^\(.*check_gpu.c\): \([0-9]*\) passed, \([0-9]*\) failed.*/check_gpu (the reference file, fp32 and bf16)\t\2\t\3/p;
          s/^gpu-check: \([0-9]*\) passed, \([0-9]*\) failed.*/gpu-check in all\t\1\t\2/p' "$WORK/check.out" |
    while IFS=$'\t' read -r n p f; do record check "$n" "$p" "$f"; done
  grep -q "train_bert against train_bert_cpu: not run" "$WORK/check.out" &&
    record check "train_bert against train_bert_cpu" "not run" "-"
  grep '^FAIL' "$WORK/check.out" | head -10 | while IFS= read -r l; do record fail "$l"; done
  return "$rc"
}

# carried_data DIR SEQ PRED: P2DATA unpacked into DIR, every file checked
# (hdf5_check) to be SEQ/PRED; 1 (and a data line saying why) if not
carried_data() {
  local d=$1 s=$2 p=$3 f bad=0 rows=0 n
  tar -C "$d" -xJf "$P2DATA" || { record data "carried $P2DATA does not unpack: made here instead"; return 1; }
  for f in "$d"/*.hdf5; do
    n=$("$BIN/hdf5_check" "$f" | head -1 | sed -n "s/.*: \([0-9]*\) instances, L $s, P $p,.*/\1/p")
    [ -n "$n" ] || { bad=1; echo "data: $f is not $s/$p: $("$BIN/hdf5_check" "$f" 2>&1 | head -1)"; }
    rows=$((rows + ${n:-0}))
  done
  [ "$bad" = 0 ] && [ "$rows" -gt 0 ] || { record data "carried $(basename "$P2DATA") is not $s/$p: made here instead"; return 1; }
  sed 's/^/data: carried: /' "$d/MANIFEST"
  record data "$s/$p carried from the CPU machine ($(basename "$P2DATA"), bench/gpu_prep.sh): $(sed -n 's/^dump //p' "$d/MANIFEST"); $(sed -n 's/^workflow //p' "$d/MANIFEST"); $(ls "$d"/*.hdf5 | wc -l) files, $rows rows (hdf5_check here)"
  rm -f "$d/MANIFEST"
}

step_data() {
  env_load
  local D=$WORK/data sp s p
  rm -rf "$D" && mkdir -p "$D"
  "$BIN/wiki_dump" "$DUMP" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
    "$BIN/sent_split" -l en 2>/dev/null >"$D/en.txt" || return 1
  for sp in "$SEQ1:$PRED1" $([ "$CALL" != 2 ] && echo "$SEQ2:$PRED2"); do
    s=${sp%:*} p=${sp#*:}
    mkdir -p "$D/h5_$s"
    if [ "$s:$p" = "$SEQ2:$PRED2" ] && [ -f "$P2DATA" ]; then # made on the CPU machine (bench/gpu_prep.sh)
      carried_data "$D/h5_$s" "$s" "$p" && continue
      rm -rf "$D/h5_$s" && mkdir -p "$D/h5_$s"
    fi
    "$BIN/hdf5gen" -q -f --vocab "$VOCAB" --dupe-factor "$DUPE" --max-seq-length "$s" \
      --max-predictions-per-seq "$p" -o "$D/h5_$s/en_training_0.hdf5" "$D/en.txt" || return 1
    "$BIN/hdf5_check" "$D/h5_$s/en_training_0.hdf5" | head -1
    record data "$(basename "$DUMP") (dupe $DUPE) at $s/$p: $("$BIN/hdf5_check" "$D/h5_$s/en_training_0.hdf5" | head -1 | sed 's/.*: \([0-9]*\) instances.*/\1 rows/')"
  done
}

bench_config() { # the config of the speed rows: BENCH_CONFIG, BERT-large, tiny emulated
  if [ -n "$BENCH_CONFIG" ]; then echo "$BENCH_CONFIG"; elif [ "$EMU" = 1 ]; then echo "$WORK/tiny.json"; else echo "$ROOT/train/configs/bert_large.json"; fi
}
cfg_name() { basename "$1" .json; }

# the GPU's used memory, sampled while a command runs (nvidia-smi's own loop)
mem_start() {
  rm -f "$WORK/mem.txt"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$WORK/mem.txt" 2>/dev/null &
    echo $! >"$WORK/mem.pid"
  fi
}
mem_peak() { # -> the largest sample (MB) since mem_start, or -
  if [ -f "$WORK/mem.pid" ]; then
    kill "$(cat "$WORK/mem.pid")" 2>/dev/null
    rm -f "$WORK/mem.pid"
  fi
  sort -n "$WORK/mem.txt" 2>/dev/null | tail -1 | grep . || echo "-"
}

speed_ours() { # phase: 1 or 2
  env_load
  local conf s p b seqs t0 first peak
  conf=$(bench_config)
  if [ "$1" = 1 ]; then s=$SEQ1 p=$PRED1 b=$B1; else s=$SEQ2 p=$PRED2 b=$B2; fi
  rm -rf "$WORK/run" "$WORK/first_step"
  mem_start
  t0=$(date +%s.%N)
  "$TRB" -q --input_dir "$WORK/data/h5_$s" --config_file "$conf" --output_dir "$WORK/run" \
    --train_batch_size $((b * ACC)) --gradient_accumulation_steps "$ACC" \
    --max_steps $((STEPS + WARMUP)) --max_predictions_per_seq "$p" --learning_rate 1e-4 --skip_checkpoint \
    --precision bf16 ${OURS_ARGS:-} 2>"$WORK/p$1_ours.err" | while IFS= read -r l; do
    if [ -z "${first:-}" ]; then # the start: weights, data, upload, the first step
      first=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
      echo "$first" >"$WORK/first_step"
      echo "train_bert: first step logged $first s after the start" >&2
    fi
    echo "$l"
  done | tee "$WORK/p$1_ours.log"
  local rc=${PIPESTATUS[0]}
  cat "$WORK/p$1_ours.err" >&2
  peak=$(mem_peak)
  seqs=$(gpu_median_seqs "$WORK/p$1_ours.log" "$WARMUP")
  echo "train_bert $(cfg_name "$conf") $s/$p micro-batch $(mb_of "$b"): ${seqs:--} seq/s (median after $WARMUP steps), peak GPU memory ${peak} MB (nvidia-smi)"
  [ -n "$seqs" ] && record speed "$(cfg_name "$conf")${OURS_ARGS:+ $OURS_ARGS}" "$1 ($s/$p)" "$(mb_of "$b")" ours "$seqs" \
    "$(gpu_mfu "$seqs" "$(gpu_flops "$conf" "$s" "$p")" "$(peak_of_gpu)")" "$peak" \
    "$STEPS steps after $WARMUP; first step $(cat "$WORK/first_step" 2>/dev/null || echo '?') s after the start"
  rm -rf "$WORK/run"
  return "$rc"
}
mb_of() { # micro-batch -> the speed rows' micro-batch: "64", or "64 x 8" with ACC=8
  if [ "$ACC" = 1 ]; then echo "$1"; else echo "$1 x $ACC"; fi
}
peak_of_gpu() {
  if command -v nvidia-smi >/dev/null; then gpu_peak_tflops "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; else echo 0; fi
}

speed_torch() {
  py_load
  local conf s p b out seqs peak
  conf=$(bench_config)
  if [ "$1" = 1 ]; then s=$SEQ1 p=$PRED1 b=$B1; else s=$SEQ2 p=$PRED2 b=$B2; fi
  [ -n "${PYREF:-}" ] || { note "no Python with torch, transformers, h5py$([ "$EMU" = 1 ] || echo ', CUDA')"; return 3; }
  "$PYREF" bench/train_gpu_ref.py "$conf" "$b" "$s" "$p" "$STEPS" "$WARMUP" "$ACC" 2>&1 | tee "$WORK/p$1_torch.log"
  local rc=${PIPESTATUS[0]}
  out=$(grep ' seq/s' "$WORK/p$1_torch.log" | tail -1)
  seqs=$(echo "$out" | sed -n 's/.*: \([0-9.]*\) seq\/s.*/\1/p') peak=$(echo "$out" | sed -n 's/.*peak \([0-9]*\) MB.*/\1/p')
  [ "${peak:-0}" = 0 ] && peak=-
  [ -n "$seqs" ] && record speed "$(cfg_name "$conf")" "$1 ($s/$p)" "$(mb_of "$b")" pytorch "$seqs" \
    "$(gpu_mfu "$seqs" "$(gpu_flops "$conf" "$s" "$p")" "$(peak_of_gpu)")" "${peak:--}"
  return "$rc"
}

step_p1_ours() { speed_ours 1; }
step_p1_torch() { speed_torch 1; }
step_p2_ours() { speed_ours 2; }
step_p2_torch() { speed_torch 2; }

step_profile() {
  env_load
  local conf
  conf=$(bench_config)
  rm -rf "$WORK/prof"
  "$TRB" -q --profile --input_dir "$WORK/data/h5_$SEQ1" --config_file "$conf" --output_dir "$WORK/prof" \
    --train_batch_size "$B1" --max_steps "$PROFILE_STEPS" --max_predictions_per_seq "$PRED1" --skip_checkpoint \
    --precision bf16 2>&1 >/dev/null | tee "$WORK/profile.out"
  local rc=${PIPESTATUS[0]}
  # the head lines and the 12 largest rows of the table
  { grep -m1 "ms of GPU time per step" "$WORK/profile.out"; grep -m1 "by section" "$WORK/profile.out"
    grep -E '^ +[0-9.]+ +[0-9.]+ +[0-9.]+ ' "$WORK/profile.out" | head -12; } |
    while IFS= read -r l; do record profile "$l"; done
  rm -rf "$WORK/prof"
  return "$rc"
}

curve_config() {
  if [ -n "$CURVE_CONFIG" ]; then echo "$CURVE_CONFIG"; elif [ "$EMU" = 1 ]; then echo "$WORK/tiny0.json"; else echo "$ROOT/train/configs/bert_base.json"; fi
}

step_curve_ours() {
  env_load
  local conf h5=$WORK/data/h5_$SEQ1 ev
  conf=$(curve_config)
  rm -rf "$WORK/c0" "$WORK/c1"
  set -- --input_dir "$h5" --config_file "$conf" --vocab_file "$VOCAB" --train_batch_size "$CURVE_B" \
    --max_predictions_per_seq "$PRED1" --seed "$CURVE_SEED" --learning_rate "$CURVE_LR" --precision "$CURVE_PRECISION"
  # the step-0 model: one step at learning rate 0 (PolyWarmUp at the schedule's end), then the export
  "$TRB" -q "$@" --output_dir "$WORK/c0" --max_steps 1 --warmup_proportion 0.5 --num_steps_per_checkpoint 1000000 ||
    return 1
  ev=$("$TRB" --eval_file "$h5/en_training_0.hdf5" --init_checkpoint "$WORK/c0/hf" --config_file "$conf" \
    --train_batch_size "$CURVE_B" --max_predictions_per_seq "$PRED1" --precision fp32 2>/dev/null)
  echo "train_bert --eval_file of the step-0 export: $ev"
  echo "$ev" | sed -n 's/.*"eval_loss": \([0-9.]*\).*/\1/p' >"$WORK/eval_ours"
  echo "train_bert: $(cfg_name "$conf"), $CURVE_STEPS steps of $CURVE_B, LAMB lr $CURVE_LR, warm-up $CURVE_WARMUP, seed $CURVE_SEED, $CURVE_PRECISION"
  "$TRB" -q "$@" --output_dir "$WORK/c1" --max_steps "$CURVE_STEPS" --warmup_proportion "$CURVE_WARMUP" \
    --num_steps_per_checkpoint "$CURVE_STEPS" | tee "$WORK/curve_ours.jsonl" # one checkpoint, the export
  return "${PIPESTATUS[0]}"
}

step_curve_torch() {
  py_load
  [ -n "${PYREF:-}" ] || { note "no Python with torch, transformers, h5py$([ "$EMU" = 1 ] || echo ', CUDA')"; return 3; }
  [ -f "$WORK/c0/hf/model.safetensors" ] || { note "no step-0 export (curve_ours did not run)"; return 3; }
  local dev=cuda
  [ "$EMU" = 1 ] && dev=cpu
  "$PYREF" bench/train_curve_ref.py --hf "$WORK/c0/hf" --input "$WORK/data/h5_$SEQ1/en_training_0.hdf5" \
    --batch "$CURVE_B" --steps "$CURVE_STEPS" --lr "$CURVE_LR" --warmup "$CURVE_WARMUP" --seed "$CURVE_SEED" \
    --max-pred "$PRED1" --device "$dev" --eval-rows "$CURVE_B" 2>&1 | tee "$WORK/curve_torch.jsonl"
  return "${PIPESTATUS[0]}"
}

step_curve_compare() {
  local o=$WORK/curve_ours.jsonl t=$WORK/curve_torch.jsonl eo et
  [ -s "$o" ] || { note "no train_bert curve"; return 3; }
  [ -f "$t" ] || : >"$t"
  eo=$(cat "$WORK/eval_ours" 2>/dev/null) et=$(sed -n 's/.*"eval_loss": \([0-9.]*\).*/\1/p' "$t" | head -1)
  [ -n "$eo$et" ] && record curveeval "loss, $CURVE_B rows, no dropout, float32" "${eo:--}" "${et:-not run}" \
    "$(awk -v a="$eo" -v b="$et" 'BEGIN { if (a == "" || b == "") print "-"; else { d = a - b; if (d < 0) d = -d; printf "%.2e", d / b } }')"
  # step, losses and MLM accuracies side by side
  awk -F'\t' 'function val(l, k,   r) { r = l; if (!sub(".*\"" k "\": ", "", r)) return ""; sub(/[,}].*/, "", r); return r }
    FNR == 1 { f++ }
    /"step": / { s = val($0, "step"); if (f == 1) { ol[s] = val($0, "loss"); oa[s] = val($0, "mlm_acc"); lr[s] = val($0, "lr"); n = s > n ? s : n }
                 else { tl[s] = val($0, "loss"); ta[s] = val($0, "mlm_acc") } }
    END { print "step\ttrain_bert_loss\tpytorch_loss\ttrain_bert_mlm_acc\tpytorch_mlm_acc\tlr"
          for (s = 1; s <= n; s++) if (s in ol) printf "%d\t%s\t%s\t%s\t%s\t%s\n", s, ol[s], (s in tl) ? tl[s] : "-", oa[s], (s in ta) ? ta[s] : "-", lr[s] }' \
    "$o" "$t" | tee "$OUT/curve.tsv" | awk 'NR <= 4 || NR % 25 == 0'
  # averaged windows, their relative difference; after warm-up: the largest, and the last window's
  awk -F'\t' -v w="$CURVE_WINDOW" -v wu="$CURVE_WARMUP" -v N="$CURVE_STEPS" -v out="$OUT/results.tsv" '
    NR == 1 { next }
    { k = int(($1 - 1) / w); so[k] += $2; no[k]++; if ($3 != "-") { st[k] += $3; nt[k]++ }; sa[k] += $4; if ($5 != "-") { ta[k] += $5 }; last = k; hi[k] = $1; if (!(k in lo)) lo[k] = $1 }
    END {
      wend = wu * N; mx = -1; fin = ""
      for (k = 0; k <= last; k++) {
        o = so[k] / no[k]; t = (nt[k] == no[k]) ? st[k] / nt[k] : ""
        r = (t != "") ? (o - t) / t : ""; if (r != "" && r < 0) r = -r
        printf "curve\t%d\t%d\t%.4f\t%s\t%s\t%.4f\t%s\n", lo[k], hi[k], o, (t != "") ? sprintf("%.4f", t) : "not run", \
          (r != "") ? sprintf("%.3f %%", 100 * r) : "-", sa[k] / no[k], (t != "") ? sprintf("%.4f", ta[k] / nt[k]) : "-" >> out
        if (r != "" && lo[k] > wend) { if (r > mx) mx = r; fin = r }
      }
      if (mx >= 0)
        printf "curvesum\tafter warm-up (step %d on), %d-step windows: largest relative difference %.3f %%, last window %.3f %% (goal: within 2 %%)\n", \
          wend + 1, w, 100 * mx, 100 * fin >> out
      else printf "curvesum\tno PyTorch curve to compare with\n" >> out
    }' "$OUT/curve.tsv"
  tail -n 20 "$OUT/results.tsv" | grep -E '^curve' | cut -f2-
}

# the step-0 and the trained model of the curve on rows of another dump
# (HELDOUT, not in the training dump): loss and MLM accuracy through
# train_bert --eval_file and through transformers (the export loaded by
# BertForPreTraining), the same rows and masks
step_mlm_eval() {
  env_load
  py_load
  [ -f "$WORK/c1/hf/model.safetensors" ] || { note "no trained export (curve_ours did not run)"; return 3; }
  local conf h=$WORK/data/heldout.hdf5 m ev tv rows dev=cuda label
  conf=$(curve_config)
  [ "$EMU" = 1 ] && dev=cpu
  "$BIN/wiki_dump" "$HELDOUT" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
    "$BIN/sent_split" -l en 2>/dev/null >"$WORK/data/heldout.txt" || return 1
  "$BIN/hdf5gen" -q -f --vocab "$VOCAB" --dupe-factor "$DUPE" --max-seq-length "$SEQ1" \
    --max-predictions-per-seq "$PRED1" -o "$h" "$WORK/data/heldout.txt" || return 1
  rows=$("$BIN/hdf5_check" "$h" | head -1 | sed 's/.*: \([0-9]*\) instances.*/\1/')
  [ "$rows" -gt "$EVAL_ROWS" ] && rows=$EVAL_ROWS
  label="$(basename "$HELDOUT") ($rows rows at $SEQ1/$PRED1$([ "$HELDOUT" = "$DUMP" ] && echo ', the training dump'))"
  for m in c0 c1; do
    ev=$("$TRB" --eval_file "$h" --init_checkpoint "$WORK/$m/hf" --config_file "$conf" --train_batch_size "$rows" \
      --max_predictions_per_seq "$PRED1" --seed "$CURVE_SEED" --precision fp32 2>/dev/null)
    echo "train_bert --eval_file, $m: $ev"
    tv="not run"
    if [ -n "${PYREF:-}" ]; then
      tv=$("$PYREF" bench/train_curve_ref.py --hf "$WORK/$m/hf" --input "$h" --batch "$rows" --steps 0 --lr 0 \
        --warmup 0 --seed "$CURVE_SEED" --max-pred "$PRED1" --device "$dev" --eval-rows "$rows" 2>/dev/null |
        grep eval_loss)
      echo "transformers, $m: $tv"
    fi
    record mlmeval "$label" "$([ $m = c0 ] && echo "step 0" || echo "step $CURVE_STEPS")" \
      "$(echo "$ev" | sed -n 's/.*"eval_loss": \([0-9.]*\).*/\1/p')" "$(echo "$ev" | sed -n 's/.*"mlm_acc": \([0-9.]*\).*/\1/p')" \
      "$(echo "$tv" | sed -n 's/.*"eval_loss": \([0-9.]*\).*/\1/p')" "$(echo "$tv" | sed -n 's/.*"eval_mlm_acc": \([0-9.]*\).*/\1/p')"
  done
}

# compute-sanitizer TOOL TARGET-NAME COMMAND...: run, record the summary
sanitize() {
  local tool=$1 name=$2 res
  shift 2
  echo "== compute-sanitizer --tool $tool: $name"
  # shellcheck disable=SC2086 # SAN_ARGS: more options, split at spaces
  "$SANITIZER" --tool "$tool" --error-exitcode 9 --print-limit 20 ${SAN_ARGS:-} "$@" >"$WORK/san.out" 2>&1
  local rc=$?
  cat "$WORK/san.out"
  res=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$WORK/san.out" | tail -1 | sed 's/^=* *//')
  [ $rc = 0 ] && [ -n "$res" ] && res="clean: $res"
  [ $rc != 0 ] && res="exit $rc: ${res:-$(grep -v '^$' "$WORK/san.out" | tail -1)}"
  record sanitizer "$tool${SAN_ARGS:+ $SAN_ARGS}" "$name" "$res"
  return $rc
}
# train_bert's arguments for a small64 run (head size 64), 2 steps of 2
# micro-batches, checkpoints and export: SA=(...)
small_args() {
  rm -rf "$WORK/san"
  SA=(--input_dir "$WORK/data/h5_$SEQ1" --config_file "$WORK/small64.json" --vocab_file "$VOCAB"
    --output_dir "$WORK/san" --train_batch_size 8 --gradient_accumulation_steps 2 --max_steps 2
    --max_predictions_per_seq "$PRED1" --num_steps_per_checkpoint 1 -q "$@")
}
need_sanitizer() {
  env_load
  [ -n "${SANITIZER:-}" ] || { note "no compute-sanitizer$([ "$EMU" = 1 ] && echo ': emulated')"; return 3; }
  [ -x "$TRB" ] || { note "no train_bert"; return 3; }
}
step_memcheck() {
  need_sanitizer || return
  local rc=0
  small_args --attention fused
  sanitize memcheck "train_bert small64 bf16, --attention fused" "$TRB" "${SA[@]}" || rc=1
  small_args
  sanitize memcheck "train_bert small64 bf16, matmul attention" "$TRB" "${SA[@]}" || rc=1
  return $rc
}
attn_bin() { echo "$(dirname "$CHK")/attn_kernels"; } # packed beside check_gpu
step_racecheck() {
  need_sanitizer || return
  local att
  att=$(attn_bin)
  if [ -x "$att" ]; then # the attention kernels alone: cuBLAS's Hopper bf16 matmuls stop racecheck
    sanitize racecheck "attn_kernels: the fused attention kernels (head sizes 16, 32, 64)" "$att"
    return
  fi
  sanitize racecheck "check_gpu, kernels k_attn* (head sizes 16, 32, 64)" --kernel-name kns=k_attn "$CHK" && return
  # a sanitizer that refuses the kernel filter ends with no summary: all kernels then
  grep -q "SUMMARY" "$WORK/san.out" && return 1
  sanitize racecheck "check_gpu, all kernels (the kernel filter was refused)" "$CHK"
}
step_initcheck() {
  need_sanitizer || return
  small_args
  sanitize initcheck "train_bert small64 bf16" "$TRB" "${SA[@]}"
}
step_synccheck() {
  need_sanitizer || return
  small_args
  sanitize synccheck "train_bert small64 bf16" "$TRB" "${SA[@]}"
}

# ---- call 3 ----

# check_gpu under memcheck (every kernel, both precisions); racecheck,
# initcheck and synccheck of attn_kernels (the fused attention kernels
# alone, no cuBLAS: under racecheck cuBLAS's Hopper bf16 matmuls stop the
# sanitizer before any attention kernel runs in check_gpu or train_bert)
step_sandiag() {
  need_sanitizer || return
  local rc=0 att
  att=$(attn_bin)
  sanitize memcheck "check_gpu, every kernel, fp32 and bf16" "$CHK" || rc=1
  if [ -x "$att" ]; then
    sanitize racecheck "attn_kernels: k_attn_fwd, k_attn_bwd_q, k_attn_bwd_kv (head sizes 16, 32, 64)" "$att" || rc=1
    sanitize initcheck "attn_kernels" "$att" || rc=1
    sanitize synccheck "attn_kernels" "$att" || rc=1
  else
    note "no attn_kernels beside check_gpu"
    rc=1
  fi
  return $rc
}

# a run that stops (--stop_at_step) and one killed with SIGKILL after its
# first checkpoint, each resumed: the last checkpoint byte for byte the
# one of the uninterrupted run
step_resume() {
  env_load
  local conf=$ROOT/train/configs/bert_base.json b=32 n=6 k=3 d=$WORK/res pid i
  [ "$EMU" = 1 ] && conf=$WORK/tiny.json b=8 n=4 k=2
  rm -rf "$d" && mkdir -p "$d"
  r() { # DIR ARGS...: one run of the schedule (exec: the process itself, for the kill)
    local o=$1
    shift
    exec "$TRB" -q --input_dir "$WORK/data/h5_$SEQ1" --config_file "$conf" --output_dir "$o" --train_batch_size "$b" \
      --gradient_accumulation_steps 2 --max_steps "$n" --num_steps_per_checkpoint "$k" \
      --max_predictions_per_seq "$PRED1" --learning_rate 1e-4 --precision bf16 --seed 7 "$@" >"$o.log" 2>&1
  }
  (r "$d/a") || { cat "$d/a.log"; return 1; }
  (r "$d/b" --stop_at_step "$k") && (r "$d/b" --resume_from_checkpoint) || { cat "$d/b.log"; return 1; }
  local same=0
  cmp "$d/a/ckpt_$n.wbckpt" "$d/b/ckpt_$n.wbckpt" && same=1
  echo "resume: --stop_at_step $k, resumed: ckpt_$n.wbckpt $([ $same = 1 ] && echo identical || echo DIFFERS)"
  record check "$(cfg_name "$conf"): --stop_at_step $k, resumed to $n: the checkpoint byte for byte the uninterrupted run's" $same $((1 - same))
  (r "$d/c") &
  pid=$!
  for ((i = 0; i < 600; i++)); do [ -f "$d/c/ckpt_$k.wbckpt" ] && break; sleep 0.1; done
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  echo "resume: killed (SIGKILL) with $(ls "$d/c" | tr '\n' ' ')"
  (r "$d/c" --resume_from_checkpoint) || { cat "$d/c.log"; return 1; }
  same=0
  cmp "$d/a/ckpt_$n.wbckpt" "$d/c/ckpt_$n.wbckpt" && same=1
  echo "resume: kill -9 after ckpt_$k, resumed: ckpt_$n.wbckpt $([ $same = 1 ] && echo identical || echo DIFFERS)"
  record check "$(cfg_name "$conf"): kill -9 after step $k's checkpoint, resumed to $n: the checkpoint byte for byte the uninterrupted run's" $same $((1 - same))
  rm -rf "$d"
  [ $same = 1 ]
}

base_config() { if [ "$EMU" = 1 ]; then echo "$WORK/tiny.json"; else echo "$ROOT/train/configs/bert_base.json"; fi; }
step_base1_ours() { BENCH_CONFIG=$(base_config) B1=$((B1 * 2)) speed_ours 1; }
step_base1_torch() { BENCH_CONFIG=$(base_config) B1=$((B1 * 2)) speed_torch 1; }
step_base2_ours() { BENCH_CONFIG=$(base_config) B2=$((B2 * 2)) speed_ours 2; }
step_base2_torch() { BENCH_CONFIG=$(base_config) B2=$((B2 * 2)) speed_torch 2; }
step_p2b32_ours() { B2=$((B2 * 2)) speed_ours 2; }
step_p2b32_torch() { B2=$((B2 * 2)) speed_torch 2; }
step_p2b64_ours() { B2=$((B2 * 4)) speed_ours 2; }
step_p2_fused() { OURS_ARGS="--attention fused" speed_ours 2; }
step_p2_bins() { OURS_ARGS="--bin_size 64" speed_ours 2; }
step_initcheck_tiny() {
  need_sanitizer || return
  rm -rf "$WORK/ic"
  sanitize initcheck "train_bert tiny bf16, one step" "$TRB" -q --input_dir "$WORK/data/h5_$SEQ1" \
    --config_file "$WORK/tiny.json" --output_dir "$WORK/ic" --train_batch_size 8 --max_steps 1 \
    --max_predictions_per_seq "$PRED1" --skip_checkpoint
}

# ---- call 4: phase 2 at its limits (the largest micro-batch, a run of
# minutes with accumulation, a kill -9 in it) and the profiles ----

# profile of phase 2 (micro-batch B2 x 2) beside phase 1's
step_profile2() { SEQ1=$SEQ2 PRED1=$PRED2 B1=$((B2 * 2)) step_profile; }
step_p1b128_ours() { B1=$((B1 * 2)) speed_ours 1; }

# the largest phase-2 micro-batch that fits, matmul and fused attention:
# micro-batches upward from 4 x B2 until one does not fit (its row says so);
# the largest that fit is kept for the PyTorch step
step_p2max() {
  local att b last
  for att in ${P2MAX_ATTENTION:-matmul fused}; do
    last=""
    for b in ${P2MAX_SIZES:-$(case $att in matmul) echo $((B2 * 6)) $((B2 * 8)) $((B2 * 10)) $((B2 * 12)) ;; *) echo $((B2 * 8)) $((B2 * 16)) $((B2 * 20)) $((B2 * 22)) ;; esac)}; do
      if B2=$b STEPS=$((STEPS > 1 ? STEPS / 2 : 1)) OURS_ARGS="--attention $att" speed_ours 2; then
        last=$b
      else
        record speed "$(cfg_name "$(bench_config)") --attention $att" "2 ($SEQ2/$PRED2)" "$b" ours "does not fit" - - \
          "$(grep -m1 -i 'memory\|alloc' "$WORK/p2_ours.err" | cut -c1-120)"
        break
      fi
    done
    echo "$att: largest micro-batch that fits: ${last:-none tried fits}"
    [ "$att" = matmul ] && echo "${last:-}" >"$WORK/p2max"
  done
  return 0
}
step_p2max_torch() {
  local b
  b=$(cat "$WORK/p2max" 2>/dev/null)
  [ -n "$b" ] || { note "no largest micro-batch from p2max"; return 3; }
  B2=$b speed_torch 2
}
step_p2bins_mm() { B2=$((B2 * 2)) OURS_ARGS="--bin_size 64" speed_ours 2; }

# the long run: BERT-large phase 2 with accumulation to LONG_B x LONG_ACC
# sequences a step, LONG_STEPS steps, a checkpoint every LONG_EVERY; killed
# (SIGKILL) once checkpoint LONG_KILL is written and resumed to the end.
# Its reference (long_ref, run first): the same schedule uninterrupted to
# step LONG_KILL + LONG_EVERY (--stop_at_step), whose checkpoint and
# losses the resumed run must equal.
long_run() { # DIR ARGS...
  local o=$1
  shift
  exec "$TRB" --input_dir "$WORK/data/h5_$SEQ2" --config_file "$(bench_config)" --output_dir "$o" \
    --train_batch_size $((LONG_B * LONG_ACC)) --gradient_accumulation_steps "$LONG_ACC" --max_steps "$LONG_STEPS" \
    --max_predictions_per_seq "$PRED2" --learning_rate 4e-4 --warmup_proportion 0.128 --precision bf16 \
    --seed 11 --log_freq 1 --vocab_file "$VOCAB" "$@"
}
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
step_long_ref() {
  env_load
  local d=$WORK/long c=$((LONG_KILL + LONG_EVERY))
  rm -rf "$d" && mkdir -p "$d"
  (long_run "$d/ref" --stop_at_step "$c" --num_steps_per_checkpoint 1000000) 2>&1 | stamp | tee "$d/ref.log" | grep -v '"step"'
  local rc=${PIPESTATUS[0]}
  [ -f "$d/ref/ckpt_$c.wbckpt" ] || { tail -5 "$d/ref.log"; return 1; }
  echo "long_ref: uninterrupted to step $c: $(ls -s --block-size=M "$d/ref/ckpt_$c.wbckpt" | cut -d' ' -f1) checkpoint"
  return "$rc"
}
step_long() {
  env_load
  local d=$WORK/long c=$((LONG_KILL + LONG_EVERY)) pid i f same=0 losses=0
  [ -f "$d/ref/ckpt_$c.wbckpt" ] || { note "no reference run (long_ref)"; return 3; }
  rm -rf "$d/run" "$d/keep" && mkdir -p "$d/keep"
  # the checkpoint to compare, kept (a hard link) from the pruning of all but the newest 3
  f=$d/run/ckpt_$c.wbckpt
  (while :; do [ -f "$f" ] && ln -f "$f" "$d/keep/" 2>/dev/null; sleep 0.2; done) &
  local keeper=$!
  (long_run "$d/run" --num_steps_per_checkpoint "$LONG_EVERY") > >(stamp >"$d/run1.log") 2>&1 &
  pid=$!
  for ((i = 0; i < 20 * 600; i++)); do [ -f "$d/run/ckpt_$LONG_KILL.wbckpt" ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.05; done
  sleep "${LONG_KILL_DELAY:-3}"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  echo "long: killed (SIGKILL) after step $(sed -n 's/.*"step": \([0-9]*\),.*/\1/p' "$d/run1.log" | tail -1), with $(ls "$d/run" | grep wbckpt | tr '\n' ' ')"
  (long_run "$d/run" --num_steps_per_checkpoint "$LONG_EVERY" --resume_from_checkpoint) 2>&1 | stamp >"$d/run2.log"
  local rc=${PIPESTATUS[0]}
  sleep 0.5
  kill $keeper 2>/dev/null
  wait $keeper 2>/dev/null
  grep -v '"step"' "$d/run1.log" "$d/run2.log" | cut -c1-300 | tail -12
  [ "$rc" = 0 ] && [ -f "$d/run/ckpt_$LONG_STEPS.wbckpt" ] || { echo "long: the resumed run failed (exit $rc)"; tail -5 "$d/run2.log"; return 1; }
  cmp "$d/ref/ckpt_$c.wbckpt" "$d/keep/ckpt_$c.wbckpt" && same=1
  # the losses of steps LONG_KILL+1..c, the reference's and the resumed run's
  lossof() { sed -n 's/^[0-9.]* \(.*"step": \([0-9]*\),.*"loss": \([^,]*\),.*\)/\2 \3/p' "$@" | awk -v a="$LONG_KILL" -v b="$c" '$1 > a && $1 <= b'; }
  lossof "$d/ref.log" >"$d/l.ref"
  lossof "$d/run2.log" >"$d/l.run"
  [ -s "$d/l.ref" ] && cmp -s "$d/l.ref" "$d/l.run" && losses=1
  echo "long: steps $((LONG_KILL + 1))-$c, losses $([ $losses = 1 ] && echo identical || echo DIFFER): $(paste -d' ' "$d/l.ref" "$d/l.run" | head -3 | tr '\n' ';')"
  echo "long: ckpt_$c.wbckpt $([ $same = 1 ] && echo identical || echo DIFFERS) to the uninterrupted run's"
  cp "$d/run1.log" "$OUT/long.log" 2>/dev/null && sed 's/^/resumed: /' "$d/run2.log" >>"$OUT/long.log"
  local th
  th=$(long_stats "$OUT/long.log" $((LONG_B * LONG_ACC)) "$LONG_EVERY" "${LONG_WINDOW:-60}")
  echo "long: $th; checkpoint size $(du -m "$d/ref/ckpt_$c.wbckpt" | cut -f1) MB"
  record info "phase-2 run with accumulation" "$(cfg_name "$(bench_config)") $SEQ2/$PRED2, $LONG_B x $LONG_ACC = $((LONG_B * LONG_ACC)) sequences a step, $LONG_STEPS steps: $th; every loss finite (exit 0)"
  record check "$(cfg_name "$(bench_config)") $SEQ2/$PRED2 x $((LONG_B * LONG_ACC)): kill -9 after step $LONG_KILL's checkpoint, resumed: the losses of steps $((LONG_KILL + 1))-$c the uninterrupted run's" $losses $((1 - losses))
  record check "$(cfg_name "$(bench_config)") $SEQ2/$PRED2 x $((LONG_B * LONG_ACC)): kill -9 after step $LONG_KILL's checkpoint, resumed: ckpt_$c byte for byte the uninterrupted run's" $same $((1 - same))
  rm -rf "$d"
  [ $same = 1 ] && [ $losses = 1 ]
}

if [ "${1:-}" = _step ]; then
  "step_$2"
  exit $?
fi

# ---- the call: its steps in order ----

T0=$(date +%s)
rm -rf "$WORK"
mkdir -p "$WORK"
record call "$CALL" "$(date -u +%Y-%m-%d\ %H:%M\ UTC)$([ "$EMU" = 1 ] && echo ', emulated (CPU)')"
render() { summarize "$OUT" >"$OUT/summary.md.tmp" && mv "$OUT/summary.md.tmp" "$OUT/summary.md"; }

run_step() { # NAME BUDGET LOG
  local name=$1 budget=$2 log=$3 left rc t s status v
  v=BUDGET_$name
  budget=${!v:-$((budget * SCALE))}
  left=$((CALL_BUDGET - ($(date +%s) - T0)))
  if [ "$budget" -gt "$left" ]; then
    echo "== step $name: not run: $left s left in the call, its budget is $budget s" | tee -a "$OUT/$log"
    record step "$CALL" "$name" "not run" 0 "$budget" "$left s left in the call"
    render
    cut_short "$name"
    return 0
  fi
  echo "== $(date -u +%H:%M:%S) call $CALL, step $name (budget $budget s, $left s left)" | tee -a "$OUT/$log"
  rm -f "$WORK/note"
  t=$(date +%s)
  timeout -k 5 "$budget" bash "$SELF" _step "$name" </dev/null 2>&1 | tee -a "$OUT/$log"
  rc=${PIPESTATUS[0]}
  s=$(($(date +%s) - t))
  case $rc in 0) status=ok ;; 124 | 137) status="timeout" ;; 3) status="not run" ;; *) status="FAIL (exit $rc)" ;; esac
  echo "== step $name: $status, $s s" | tee -a "$OUT/$log"
  record step "$CALL" "$name" "$status" "$s" "$budget" "$(cat "$WORK/note" 2>/dev/null)"
  render
  cut_short "$name"
}
cut_short() { # STOP_AFTER=STEP: the call killed right after that step, as a run cut short
  if [ "${STOP_AFTER:-}" = "$1" ]; then kill -9 $$; fi
}

run_step setup 20 preflight.txt
[ -f "$WORK/need_build" ] && run_step build 240 build.log
if [ "$CALL" = 1 ]; then
  run_step preflight 40 preflight.txt
  run_step check 90 check.log
  run_step data 30 bench.log
  run_step p1_ours 60 bench.log
  run_step p1_torch 70 bench.log
  run_step profile 45 profile.txt
  run_step p2_ours 45 bench.log
  run_step p2_torch 50 bench.log
elif [ "$CALL" = 3 ]; then
  run_step preflight 30 preflight.txt
  run_step data 30 bench.log
  run_step sandiag 75 sanitizer.log
  run_step resume 75 check.log
  run_step base1_ours 30 bench.log
  run_step base1_torch 45 bench.log
  run_step base2_ours 30 bench.log
  run_step base2_torch 45 bench.log
  run_step p1_ours 30 bench.log
  run_step p2b32_ours 35 bench.log
  run_step p2b32_torch 45 bench.log
  run_step p2_fused 35 bench.log
  run_step p2_bins 35 bench.log
  run_step p2b64_ours 40 bench.log
  run_step initcheck_tiny 60 sanitizer.log
elif [ "$CALL" = 4 ]; then
  run_step preflight 30 preflight.txt
  run_step data 30 bench.log
  run_step long_ref 120 long.log
  run_step long 270 long.log
  run_step profile 25 profile.txt
  run_step profile2 30 profile.txt
  run_step p1b128_ours 20 bench.log
  run_step p2max 130 bench.log
  run_step p2max_torch 45 bench.log
  run_step p2bins_mm 20 bench.log
elif [ "$CALL" = 5 ]; then
  run_step preflight 30 preflight.txt
  run_step check 90 check.log
  run_step data 30 bench.log
  run_step p1_ours 30 bench.log
  run_step p1_torch 45 bench.log
  run_step p2_ours 30 bench.log
  run_step p2_torch 45 bench.log
  run_step p2b32_ours 35 bench.log
  run_step p2b32_torch 45 bench.log
  run_step profile 25 profile.txt
  run_step profile2 30 profile.txt
  [ -n "${P2MAX_SIZES:-}" ] && run_step p2max 130 bench.log
else
  run_step preflight 35 preflight.txt
  run_step data 20 curve.log
  run_step curve_ours 50 curve.log
  run_step curve_torch 75 curve.log
  run_step curve_compare 5 curve.log
  run_step mlm_eval 40 curve.log
  run_step memcheck 35 sanitizer.log
  run_step racecheck 35 sanitizer.log
  run_step initcheck 30 sanitizer.log
  run_step synccheck 30 sanitizer.log
fi
echo "== call $CALL done in $(($(date +%s) - T0)) s; $OUT: $(ls "$OUT" | tr '\n' ' ')"
cat "$OUT/summary.md"
