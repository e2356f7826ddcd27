# bench/gpu_first.sh, the GPU runbook, end to end on the CPU emulation of
# CUDA (EMU=1: train_bert_emu and test_gpu_emu, tiny models, little data),
# so that its control flow, its output files and the parsing of its
# results are checked on every commit, without a GPU:
# - call 1: setup, preflight, gpu-check (check_gpu against the reference
#   file), data, speed rows of train_bert and of the PyTorch peer, the
#   profile, phase 2; call 2: data, the step-0 export, both learning
#   curves and their windows, the sanitizer steps ("not run" without
#   compute-sanitizer); at most 8 files per call; `summary` renders both.
# - The PyTorch rows: with a Python that has torch, transformers and h5py
#   the peer runs on the CPU, and with dropout off its curve must equal
#   train_bert's step by step (same initial weights, rows, LAMB, schedule);
#   without one, a stand-in prints a peer's result line for the speed rows
#   (their parsing and the ratio) and the curve's PyTorch side is "not run".
# - A step past its budget is killed and recorded as "timeout" while the
#   next ones still run; a step that does not fit in what is left of the
#   call is "not run"; a call killed after a step keeps what it recorded.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
: >"$err"
if ! [ -x "$TESTBIN/train_bert_emu" ] || ! [ -x "$TESTBIN/test_gpu_emu" ]; then
  echo "not run: no train_bert_emu / test_gpu_emu in $TESTBIN"
  done_testing
  exit 0
fi
HPY=$(py_with "torch, transformers, h5py")

# the helpers the speed rows are computed with (bench/gpu_lib.sh)
. "$ROOT/bench/gpu_lib.sh"
ok "model FLOPs of BERT-large at 128/20: 3 x forward = 240643485696" \
  [ "$(gpu_flops "$ROOT/train/configs/bert_large.json" 128 20)" = 240643485696 ]
ok "... the GPUs' bf16 peaks" [ "$(gpu_peak_tflops "NVIDIA H100 80GB HBM3") $(gpu_peak_tflops "NVIDIA H200") $(gpu_peak_tflops "NVIDIA H100 PCIe") $(gpu_peak_tflops "Tesla T4")" = "989 989 756 0" ]
ok "... MFU of 2055 seq/s on an H100: 50.0 %, none without a peak" \
  [ "$(gpu_mfu 2055 240643485696 989)|$(gpu_mfu 2055 240643485696 0)|$(gpu_mfu "" 1 989)" = "50.0 %|-|-" ]
printf '{"step": %d, "loss": 9.1, "seq_per_s": %s}\n' 1 5.0 2 100.5 3 90.25 4 120.0 5 80.0 >"$T/log"
ok "... the median seq/s after the warm-up steps (steps 3-5: 90.25)" [ "$(gpu_median_seqs "$T/log" 2)" = 90.25 ]
# a long run's throughput (long-stats): a step's time is its sequences
# over its seq/s; the step after a checkpoint in the same process (step 5,
# not step 3, the resumed process's first) is left out of the second
# figures and its extra time is the checkpoint's cost
{
  printf '1.0 {"step": %d, "loss": 1.5, "seq_per_s": %s}\n' 1 8.00 2 8.00
  printf 'resumed: 1.0 {"step": %d, "loss": 1.5, "seq_per_s": %s}\n' 3 8.00 4 8.00 5 2.00 6 8.00
} >"$T/long.log"
ok "a long run's throughput by window, with and without the steps after a checkpoint, and its cost" \
  [ "$(bash "$ROOT/bench/gpu_first.sh" long-stats "$T/long.log" 8 2 3)" = "9.0 s of training, 6 steps logged; seq/s first 3 s 8.00, middle 3.20, last 3.20 (without the 1 steps after a checkpoint: 8.00, 8.00, 8.00); a step 1.00 s (median); a checkpoint adds 3.0 s" ]

# the phase-2 data carried from the CPU machine (P2DATA, bench/gpu_prep.sh):
# trained on when every file is SEQ2/PRED2, made on the spot when not
"$BIN/wiki_dump" "$ROOT/tests/data/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -l en 2>/dev/null >"$T/p2.txt"
for sp in ok:128:20 bad:64:10; do
  n=${sp%%:*} q=${sp#*:}
  mkdir -p "$T/p2$n"
  "$BIN/hdf5gen" -q --vocab "$ROOT/data/bert/vocab.txt" --max-seq-length "${q%:*}" --max-predictions-per-seq "${q#*:}" \
    -o "$T/p2$n/x_training_0.hdf5" "$T/p2.txt"
  printf 'dump enwiki-3 here\nworkflow hdf5gen %s\n' "$q" >"$T/p2$n/MANIFEST"
  tar -C "$T/p2$n" -cJf "$T/p2$n.tar.xz" MANIFEST x_training_0.hdf5
done
rows=$("$BIN/hdf5_check" "$T/p2ok/x_training_0.hdf5" | sed -n 's/.*: \([0-9]*\) instances.*/\1/p')
datastep() { # NAME P2DATA: the runbook's data step alone, emulated
  mkdir -p "$T/d$1" && : >"$T/d$1/binaries.env"
  env CALL=4 EMU=1 OUT="$T/d$1" WORK="$T/d$1" BIN="$BIN" P2DATA="$2" DUMP="$ROOT/tests/data/enwiki-3.xml.bz2" DUPE=1 \
    SEQ1=64 PRED1=10 SEQ2=128 PRED2=20 VOCAB="$ROOT/data/bert/vocab.txt" \
    timeout 300 bash "$ROOT/bench/gpu_first.sh" _step data >"$T/d$1.out" 2>&1
}
datastep ok "$T/p2ok.tar.xz"
ok "carried phase-2 data of the right shape: trained on, as carried ($rows rows)" eval \
  'grep -q "^data	128/20 carried from the CPU machine (p2ok.tar.xz, bench/gpu_prep.sh): enwiki-3 here; hdf5gen 128:20; 1 files, $rows rows (hdf5_check here)$" "$T/dok/results.tsv" &&
   cmp -s "$T/p2ok/x_training_0.hdf5" "$T/dok/data/h5_128/x_training_0.hdf5" && [ "$(ls "$T/dok/data/h5_128")" = x_training_0.hdf5 ]'
datastep bad "$T/p2bad.tar.xz"
ok "... of another shape: said so, and made on the spot" eval \
  'grep -q "^data	carried p2bad.tar.xz is not 128/20: made here instead$" "$T/dbad/results.tsv" &&
   [ "$(ls "$T/dbad/data/h5_128")" = en_training_0.hdf5 ] && grep -q "^data	enwiki-3.xml.bz2 (dupe 1) at 128/20: [0-9]* rows$" "$T/dbad/results.tsv"'
emu() { # OUTDIR CALL [VAR=VALUE...]: the runbook, emulated
  local o=$1 c=$2
  shift 2
  env EMU=1 OUT="$T/$o" WORK="$T/w$o" TRB="$TESTBIN/train_bert_emu" CHK="$TESTBIN/test_gpu_emu" \
    TRC="$BIN/train_bert_cpu" BIN="$BIN" GPU_CHECK_CPU=0 "$@" \
    timeout 1200 bash "$ROOT/bench/gpu_first.sh" "$c" >"$T/$o.out" 2>&1
}
col() { # FILE KIND KEY -> the results.tsv line of KIND whose second field is KEY
  awk -F'\t' -v k="$2" -v n="$3" '$1 == k && $2 == n' "$1"
}
stat_of() { # OUTDIR STEP -> its status
  awk -F'\t' -v s="$2" '$1 == "step" && $3 == s { print $4 }' "$T/$1/results.tsv"
}
nfiles() { find "$T/$1" -type f | wc -l; }

# ---- call 1 ----
if [ -n "$HPY" ]; then
  peer=$HPY
else # a peer's result line, for the parsing (the import check passes, the run prints it)
  peer=$T/fakepy
  printf '#!/bin/sh\n[ "$1" = -c ] && exit 0\necho "torch 2.11.0 transformers 5.17.0 (attention: sdpa, cuda): 812.50 seq/s, peak 20480 MB"\n' >"$peer"
  chmod +x "$peer"
fi
rc=0
emu o1 1 PY="$peer" || rc=$?
R=$T/o1/results.tsv
ok "call 1 ends with exit 0 (got $rc; $(tail -3 "$T/o1.out" | tr '\n' ' '))" [ "$rc" = 0 ]
ok "... its steps in order" [ "$(awk -F'\t' '$1 == "step" { printf "%s ", $3 }' "$R")" = \
  "setup preflight check data p1_ours p1_torch profile p2_ours p2_torch " ]
for s in setup preflight check data p1_ours p1_torch profile p2_ours p2_torch; do
  ok "... step $s: ok (got '$(stat_of o1 $s)')" [ "$(stat_of o1 $s)" = ok ]
done
ok "... at most 8 files, the expected ones ($(ls "$T/o1" | tr '\n' ' '))" eval \
  '[ "$(nfiles o1)" -le 8 ] && [ "$(ls "$T/o1" | tr "\n" " ")" = "bench.log check.log preflight.txt profile.txt results.tsv summary.md " ]'
ok "... the preflight block says there is no GPU and no compute-sanitizer" eval \
  'grep -q "^gpu: not run" "$T/o1/preflight.txt" && grep -q "^compute-sanitizer: not run" "$T/o1/preflight.txt"'
c=$(col "$R" check "check_gpu (the reference file, fp32 and bf16)")
ok "... check_gpu's counts recorded ($c)" eval '[ "$(echo "$c" | cut -f4)" = 0 ] && [ "$(echo "$c" | cut -f3)" -gt 20 ]'
ok "... the check's output streamed into check.log" grep -q "check_gpu.c: [0-9]* passed, 0 failed" "$T/o1/check.log"
ok "... train_bert against train_bert_cpu recorded as not run (GPU_CHECK_CPU=0)" \
  eval '[ -n "$(col "$R" check "train_bert against train_bert_cpu" | grep "not run")" ]'
s1=$(awk -F'\t' '$1 == "speed" && $3 == "1 (64/10)" && $5 == "ours" { print $6 }' "$R")
s2=$(awk -F'\t' '$1 == "speed" && $3 == "2 (128/20)" && $5 == "ours" { print $6 }' "$R")
ok "... train_bert's seq/s in phase 1 ($s1) and phase 2 ($s2)" eval \
  'awk -v a="$s1" -v b="$s2" "BEGIN { exit !(a > 0 && b > 0) }"'
p1=$(awk -F'\t' '$1 == "speed" && $3 == "1 (64/10)" && $5 == "pytorch" { print $6 }' "$R")
if [ -n "$HPY" ]; then
  ok "... PyTorch's seq/s on the CPU ($p1)" awk -v a="$p1" 'BEGIN { exit !(a > 0) }'
else
  ok "... the peer's line parsed ($p1)" [ "$p1" = 812.50 ]
  ratio=$(awk -v a="$s1" 'BEGIN { printf "%.2fx", a / 812.5 }')
  ok "... the summary's phase 1 row: ours, the peer's, the ratio" \
    grep -qF "| tiny | 1 (64/10) | 8 | $s1 | - | - | 812.50 | - | 20480 | $ratio |" "$T/o1/summary.md"
fi
ok "... the profile's head line and rows recorded" eval \
  '[ "$(grep -c "^profile" "$R")" -ge 5 ] && grep -q "^profile.*ms of GPU time per step" "$R"'
ok "... the data rows counted" grep -q "^data.*at 64/10: [0-9]* rows" "$R"

# ---- call 2 ----
rc=0
emu o2 2 PY="${HPY:-none}" || rc=$?
R=$T/o2/results.tsv
ok "call 2 ends with exit 0 (got $rc; $(tail -3 "$T/o2.out" | tr '\n' ' '))" [ "$rc" = 0 ]
ok "... its steps in order" [ "$(awk -F'\t' '$1 == "step" { printf "%s ", $3 }' "$R")" = \
  "setup preflight data curve_ours curve_torch curve_compare mlm_eval memcheck racecheck initcheck synccheck " ]
for s in setup preflight data curve_ours curve_compare mlm_eval; do
  ok "... step $s: ok (got '$(stat_of o2 $s)')" [ "$(stat_of o2 $s)" = ok ]
done
for s in memcheck racecheck initcheck synccheck; do # (the sanitizer needs a GPU)
  ok "... $s: not run, no compute-sanitizer" eval \
    '[ "$(stat_of o2 $s)" = "not run" ] && grep -q "step.*$s.*no compute-sanitizer" "$R"'
done
ok "... at most 8 files ($(ls "$T/o2" | tr '\n' ' '))" [ "$(nfiles o2)" -le 8 ]
ok "... curve.tsv: a line per step" [ "$(tail -n +2 "$T/o2/curve.tsv" | wc -l)" = 8 ]
ok "... train_bert's losses in it" awk -F'\t' 'NR > 1 && !($2 > 5 && $2 < 15) { bad = 1 } END { exit bad }' "$T/o2/curve.tsv"
ok "... the step-0 export was written" test -s "$T/wo2/c0/hf/model.safetensors"
ok "... and the trained one" test -s "$T/wo2/c1/hf/model.safetensors"
e0=$(awk -F'\t' '$1 == "mlmeval" && $3 == "step 0"' "$R") e1=$(awk -F'\t' '$1 == "mlmeval" && $3 == "step 8"' "$R")
ok "... the held-out rows: train_bert's loss and MLM accuracy of both models ($e0 | $e1)" awk -F'\t' \
  '$1 == "mlmeval" { n++; if (!($4 > 0 && $5 >= 0 && $5 <= 1)) bad = 1 } END { exit bad || n != 2 }' "$R"
ok "... the trained model's loss below the step-0 model's" awk -v a="$(echo "$e0" | cut -f4)" -v b="$(echo "$e1" | cut -f4)" 'BEGIN { exit !(b < a) }'
ok "... a table in the summary" grep -q "^| enwiki-3.xml.bz2 (16 rows at 64/10, the training dump) | step 8 | " "$T/o2/summary.md"
if [ -n "$HPY" ]; then
  ok "... PyTorch from the export: the same losses step by step (dropout off, float32)" awk -F'\t' \
    'NR > 1 { d = $2 - $3; if (d < 0) d = -d; if (!($3 > 0) || d > 1e-4 * $3) bad = 1 } END { exit bad }' "$T/o2/curve.tsv"
  e=$(col "$R" curveeval "loss, 8 rows, no dropout, float32")
  ok "... the initial model's loss on the same rows is the same ($e)" \
    awk -v a="$(echo "$e" | cut -f3)" -v b="$(echo "$e" | cut -f4)" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-5 * b) }'
  ok "... the windows' summary" grep -q "^curvesum.*largest relative difference 0.000 %" "$R"
  ok "... the held-out rows: transformers' loss and MLM accuracy are train_bert's" awk -F'\t' \
    '$1 == "mlmeval" { n++; d = $4 - $6; if (d < 0) d = -d; if (!($6 > 0) || d > 1e-5 * $6 || $5 != $7) bad = 1 } END { exit bad || n != 2 }' "$R"
else
  ok "... curve_torch not run (no Python with torch)" [ "$(stat_of o2 curve_torch)" = "not run" ]
  ok "... its column empty" awk -F'\t' 'NR > 1 && $3 != "-" { bad = 1 } END { exit bad }' "$T/o2/curve.tsv"
  ok "... the windows say so" grep -q "^curvesum	no PyTorch curve" "$R"
  ok "... the windows' rows still hold train_bert's" grep -q "^curve	1	4	[0-9.]*	not run" "$R"
fi

# ---- call 3 (BERT-base and -large emulated by tiny; speed steps shortened) ----
rc=0
emu oc 3 PY="$peer" STEPS=1 || rc=$?
R=$T/oc/results.tsv
ok "call 3 ends with exit 0 (got $rc; $(tail -3 "$T/oc.out" | tr '\n' ' '))" [ "$rc" = 0 ]
ok "... its steps in order" [ "$(awk -F'\t' '$1 == "step" { printf "%s ", $3 }' "$R")" = \
  "setup preflight data sandiag resume base1_ours base1_torch base2_ours base2_torch p1_ours p2b32_ours p2b32_torch p2_fused p2_bins p2b64_ours initcheck_tiny " ]
for s in setup preflight data resume base1_ours base2_ours p1_ours p2b32_ours p2_fused p2_bins p2b64_ours; do
  ok "... step $s: ok (got '$(stat_of oc $s)')" [ "$(stat_of oc $s)" = ok ]
done
for s in sandiag initcheck_tiny; do
  ok "... $s: not run, no compute-sanitizer" [ "$(stat_of oc $s)" = "not run" ]
done
ok "... stopped at a step and resumed: the last checkpoint byte for byte the uninterrupted run's" \
  grep -q "^check	tiny: --stop_at_step 2, resumed to 4: .*	1	0$" "$R"
ok "... killed with SIGKILL after a checkpoint and resumed: the same" \
  grep -q "^check	tiny: kill -9 after step 2's checkpoint, resumed to 4: .*	1	0$" "$R"
ok "... the --attention fused and --bin_size rows, apart" eval \
  '[ "$(awk -F"\t" "\$1 == \"speed\" && \$5 == \"ours\" { print \$2 }" "$R" | LC_ALL=C sort -u | tr "\n" "|")" = "tiny|tiny --attention fused|tiny --bin_size 64|" ]'
ok "... at most 8 files ($(ls "$T/oc" | tr '\n' ' '))" [ "$(nfiles oc)" -le 8 ]

# ---- both calls on one page ----
run bash "$ROOT/bench/gpu_first.sh" summary "$T/o1" "$T/o2"
ok "summary of both calls" eval 'grep -q "call 1, .*; call 2, " "$out" && grep -q "^### Speed" "$out" &&
  grep -q "^### Learning curve" "$out" && grep -q "^### Profile" "$out" && grep -q "^| 2 | memcheck |" "$out"'

# ---- call 4 (phase 2 at its limits; a micro-batch above 24 "does not fit") ----
cat >"$T/small_gpu" <<EOF
#!/bin/sh
# train_bert_emu on a GPU that holds 24 sequences of a micro-batch
b=32 a=1 prev=
for x in "\$@"; do
  case "\$prev" in --train_batch_size) b=\$x ;; --gradient_accumulation_steps) a=\$x ;; esac
  prev=\$x
done
if [ \$((b / a)) -gt 24 ]; then echo "train_bert: GPU memory: 512 MB more needed, 0 MB free" >&2; exit 1; fi
exec "$TESTBIN/train_bert_emu" "\$@"
EOF
chmod +x "$T/small_gpu"
rc=0
emu o4 4 PY="$peer" TRB="$T/small_gpu" STEPS=2 LONG_STEPS=6 LONG_EVERY=2 LONG_KILL=2 || rc=$?
R=$T/o4/results.tsv
ok "call 4 ends with exit 0 (got $rc; $(tail -3 "$T/o4.out" | tr '\n' ' '))" [ "$rc" = 0 ]
ok "... its steps in order" [ "$(awk -F'\t' '$1 == "step" { printf "%s ", $3 }' "$R")" = \
  "setup preflight data long_ref long profile profile2 p1b128_ours p2max p2max_torch p2bins_mm " ]
for s in setup preflight data long_ref long profile profile2 p1b128_ours p2max p2max_torch p2bins_mm; do
  ok "... step $s: ok (got '$(stat_of o4 $s)')" [ "$(stat_of o4 $s)" = ok ]
done
ok "... killed with SIGKILL after step 2's checkpoint and resumed: steps 3-4's losses the uninterrupted run's" \
  grep -q "^check	tiny 128/20 x 8: kill -9 after step 2's checkpoint, resumed: the losses of steps 3-4 the uninterrupted run's	1	0$" "$R"
ok "... and its checkpoint 4 byte for byte" \
  grep -q "^check	tiny 128/20 x 8: kill -9 after step 2's checkpoint, resumed: ckpt_4 byte for byte the uninterrupted run's	1	0$" "$R"
ok "... the run's throughput in its first, middle and last window" \
  grep -q "^info	phase-2 run with accumulation	tiny 128/20, 4 x 2 = 8 sequences a step, 6 steps: .* [0-9]* steps logged; seq/s first 5 s [0-9.]*, middle [0-9.]*, last [0-9.]*" "$R"
ok "... the log of both parts kept" grep -q "^resumed: .*resumed from .*ckpt_2.wbckpt at step 2" "$T/o4/long.log"
ok "... the largest micro-batch that fits: 24 with matmul, the next does not fit" eval \
  'grep -q "^speed	tiny --attention matmul	2 (128/20)	24	ours	[0-9.]*	" "$R" &&
   grep -q "^speed	tiny --attention matmul	2 (128/20)	32	ours	does not fit	.*GPU memory" "$R"'
ok "... none with fused attention at 32 either" \
  grep -q "^speed	tiny --attention fused	2 (128/20)	32	ours	does not fit	" "$R"
ok "... PyTorch at that largest micro-batch" grep -q "^speed	tiny	2 (128/20)	24	pytorch	" "$R"
ok "... both profiles" eval '[ "$(grep -c "ms of GPU time per step" "$T/o4/profile.txt")" = 2 ]'
ok "... at most 8 files ($(ls "$T/o4" | tr '\n' ' '))" [ "$(nfiles o4)" -le 8 ]

# ---- call 5 (the check, the speed rows, both profiles, P2MAX_SIZES) ----
rc=0
emu o5 5 PY="$peer" STEPS=1 P2MAX_ATTENTION=fused P2MAX_SIZES=6 || rc=$?
ok "call 5 ends with exit 0 (got $rc)" [ "$rc" = 0 ]
ok "... its steps in order, each ok" [ "$(awk -F'\t' '$1 == "step" { printf "%s:%s ", $3, $4 }' "$T/o5/results.tsv")" = \
  "setup:ok preflight:ok check:ok data:ok p1_ours:ok p1_torch:ok p2_ours:ok p2_torch:ok p2b32_ours:ok p2b32_torch:ok profile:ok profile2:ok p2max:ok " ]
ok "... P2MAX_SIZES: the fused attention at the micro-batch asked for" grep -q "^speed	tiny --attention fused	2 (128/20)	6	ours	" "$T/o5/results.tsv"
ok "... phase 2 at two micro-batches beside PyTorch's" eval \
  '[ "$(awk -F"\t" "\$1 == \"speed\" && \$2 == \"tiny\" && \$3 == \"2 (128/20)\" { print \$4 \$5 }" "$T/o5/results.tsv" | LC_ALL=C sort | tr "\n" " ")" = "4ours 4pytorch 8ours 8pytorch " ]'

# ---- ACC: the speed rows with accumulation, both sides ----
rc=0
no=99999999 # a budget past the emulated call's: the step is left out
emu o6 5 PY="$peer" STEPS=1 ACC=2 BUDGET_check=$no BUDGET_p2_ours=$no BUDGET_p2_torch=$no \
  BUDGET_p2b32_ours=$no BUDGET_p2b32_torch=$no BUDGET_profile=$no BUDGET_profile2=$no || rc=$?
ok "ACC=2: call 5 ends with exit 0 (got $rc)" [ "$rc" = 0 ]
ok "... phase 1 at micro-batch 8 x 2, ours and PyTorch's" eval \
  '[ "$(awk -F"\t" "\$1 == \"speed\" { print \$4 \$5 }" "$T/o6/results.tsv" | LC_ALL=C sort | tr "\n" " ")" = "8 x 2ours 8 x 2pytorch " ]'
ok "... train_bert ran 2 micro-batches a step (global batch 16)" grep -q "micro-batch 8 x 2:" "$T/o6/bench.log"

# ---- a step past its budget, one that does not fit, a call cut short ----
printf '#!/bin/sh\nsleep 600\n' >"$T/slow"
chmod +x "$T/slow"
rc=0
(emu o3 1 PY=none CHK="$T/slow" BUDGET_check=2 CALL_BUDGET=600 BUDGET_p1_ours=100000 BUDGET_p1_torch=60 \
  STOP_AFTER=p1_torch) 2>/dev/null || rc=$? # (the shell's "Killed" line not shown)
R=$T/o3/results.tsv
ok "a call killed after a step (STOP_AFTER): killed (exit $rc)" [ "$rc" = 137 ]
ok "... a check that hangs is stopped at its budget: timeout" [ "$(stat_of o3 check)" = timeout ]
ok "... and the next steps still run" [ "$(stat_of o3 data)" = ok ]
ok "... a step whose budget exceeds the call's time left: not run" eval \
  '[ "$(stat_of o3 p1_ours)" = "not run" ] && grep -q "p1_ours	not run	0	100000	[0-9]* s left in the call" "$R"'
ok "... PyTorch missing: its rows not run" eval '[ "$(stat_of o3 p1_torch)" = "not run" ] &&
  grep -q "p1_torch.*no Python with torch" "$R"'
ok "... what was recorded before the kill is kept, nothing after" eval \
  '[ -z "$(stat_of o3 profile)" ] && grep -q "| 1 | check | timeout |" "$T/o3/summary.md"'
done_testing
