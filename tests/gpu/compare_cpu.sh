# tests/gpu/compare_cpu.sh - train_bert against train_bert_cpu on real data
# (sourced; the caller defines ok NAME CMD... and sets TRB (a train_bert:
# the real one, or the CPU emulation's train_bert_emu or train_bert_emu_alt),
# CHK (check_gpu or test_gpu_emu, for its "runs" comparison), BIN, ROOT and T
# (a temp dir); CMP_TOLERANCES_ONLY=1 leaves out the checks that compare TRB
# with itself: resume, repeat, export).
#
# Data: enwiki-3 through the prep stages and hdf5gen (64 / 10); a tiny
# config with dropout 0.1; batches of 8 in 2 micro-batches; 2 LAMB steps
# (and 3 with length bins, --bin_size 16, batches of several lengths).
#
# fp32. Both trainers start from the same weights (bert_init_weights is
# shared) and draw the same batches and dropout masks, so they differ by
# float32 rounding only: a GPU adds in other orders (cuBLAS's tiles, warp
# trees) and contracts multiply-adds into FMAs. Losses: within 1e-5 of the
# CPU's (measured: equal to 6 decimals, with FMAs and other orders too).
# Gradients and weights, from the checkpoints after every step
# (check_gpu runs; the constants are its CMP_TAU, CMP_PHI, CMP_ETA):
#
# 1. Gradients, through LAMB's moments: m^ = m / (1 - b1^s) is a weighted
#    mean of the clipped gradients and sqrt(v^) (v^ = v / (1 - b2^s)) their
#    RMS; at every step both must agree within element i's allowance
#        delta_i = tau (g_i + phi G_T + eta G),
#    g_i = sqrt(v^_i) (the CPU's), G_T the largest g of its tensor, G of the
#    model. A gradient element is a sum whose rounding error follows the
#    size of its terms, not of the sum: tau = 1e-3 relative where the
#    element is large; where its terms cancel, a share phi = 0.1 of its
#    tensor's gradients (the terms are of their size); and eta = 1e-4 of the
#    model's largest for a tensor whose exact gradient is 0 (the attention's
#    key bias: a softmax ignores a constant added to its row), which holds
#    rounding noise only. Measured on train_bert_emu_alt (FMAs and other
#    sum orders): at most 4 % of delta; plain train_bert_emu: 0.3 %.
# 2. Weights after the last step. LAMB moves weight i at step s by
#    lr_s r_s u_i, u = m^ / (sqrt(v^) + eps) + wd w, eps = 1e-6, r the trust
#    ratio (||w|| / ||u|| of a decayed tensor, else 1). |m^| <= sqrt(v^) up to
#    the moments' weights (1.001 for 2 steps), so the two sides' u differ by
#    at most 2: a near-zero gradient's sign is noise, and such a weight may
#    move by 2 lr r one way or the other. Where the gradient stands above
#    its noise, u changes by at most 2 delta_i / (g_i + eps). With tau for
#    the trust ratio's own rounding and 2^-22 |w| for each update's:
#        |w_a - w_b| <= sum_s lr_s r_s (min(2, 2 delta_i / (g_i + eps)) + tau)
#                       + S 2^-22 |w_i|
#    (a step without both checkpoints counts 2 lr_s r_s). Measured: at most
#    1 % of it (train_bert_emu_alt). The former bound, 3e-4 of each tensor's
#    largest weight, failed there (a LayerNorm bias 5e-4 of its tensor's
#    largest: a near-zero gradient's noise) and missed a 1 % error in one
#    weight matrix's gradient, which moves that matrix's weights by 1e-5 of
#    its largest at most (LAMB hardly depends on a gradient's scale) and
#    leaves the losses equal to 6 decimals, but is 5 to 9 times delta
#    (tests/cli/train_bert_emu_alt.sh checks both).
#
# bf16 (fused attention, and --attention matmul): losses within 1e-2 of the
# CPU's and the loss of its weights after 2 steps (the CPU evaluates both
# checkpoints) within 1e-2 (bf16's 8 bits of mantissa); a bf16 run stopped
# after step 1 and resumed ends with the bytes of an uninterrupted one; a
# second run repeats the first's log; with length bins fp32 losses (1e-5)
# and checkpoints are the CPU's, bf16 losses within 1e-2; --eval_file gives
# the CPU's loss (1e-5); an untied MLM decoder (tie_word_embeddings false)
# trains as on the CPU in fp32 (losses, gradients, weights) and is exported;
# the Hugging Face export is written.
V=$ROOT/data/bert/vocab.txt
mkdir -p "$T/h5"
"$BIN/wiki_dump" "$ROOT/tests/data/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -l en 2>/dev/null >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
cat >"$T/tiny.json" <<'J'
{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
J
cargs() { echo --input_dir "$T/h5" --config_file "$T/tiny.json" --vocab_file "$V" --train_batch_size 8 \
  --gradient_accumulation_steps 2 --learning_rate 0.01 --warmup_proportion 0.5 --max_steps 2 \
  --max_predictions_per_seq 10 --num_steps_per_checkpoint 1 --seed 5 --output_dir "$@"; }
closs() { sed -n "s/^{\"step\": $2, \"loss\": \([0-9.]*\).*/\1/p" "$1"; }
cclose() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t * b) }'; }
ceval() { # checkpoint -> the CPU's loss of it on the first 8 rows
  "$BIN/train_bert_cpu" --eval_file "$T/h5/en_training_0.hdf5" --init_checkpoint "$1" --config_file "$T/tiny.json" \
    --train_batch_size 8 --max_predictions_per_seq 10 | sed -n 's/.*"eval_loss": \([0-9.]*\).*/\1/p'
}
"$BIN/train_bert_cpu" -q $(cargs "$T/cpu") >"$T/cpu.log"
"$TRB" -q --precision fp32 $(cargs "$T/f32") >"$T/f32.log"
"$TRB" -q --precision bf16 --attention fused $(cargs "$T/b16") >"$T/b16.log"
"$TRB" -q --precision bf16 --attention matmul $(cargs "$T/b16m") >"$T/b16m.log"
for s in 1 2; do
  c=$(closs "$T/cpu.log" $s) f=$(closs "$T/f32.log" $s) b=$(closs "$T/b16.log" $s) bm=$(closs "$T/b16m.log" $s)
  echo "step $s loss: CPU $c, fp32 $f, bf16 $b (fused attention), $bm (matmul attention)"
  ok "step $s: the fp32 loss is the CPU's ($f vs $c)" cclose "$f" "$c" 1e-5
  ok "step $s: the bf16 loss within 1e-2 of the CPU's ($b vs $c)" cclose "$b" "$c" 1e-2
  ok "step $s: the bf16 loss with --attention matmul within 1e-2 of the CPU's ($bm vs $c)" cclose "$bm" "$c" 1e-2
done
ok "fp32: gradients (LAMB's moments) at steps 1 and 2 and the weights after them are the CPU's (check_gpu runs)" \
  "$CHK" runs "$T/tiny.json" "$T/f32" "$T/cpu" 0.01 0.5 2
lc=$(ceval "$T/cpu/ckpt_2.wbckpt") lb=$(ceval "$T/b16/ckpt_2.wbckpt")
ok "bf16: the loss at its weights after 2 steps within 1e-2 of the CPU's ($lb vs $lc)" cclose "$lb" "$lc" 1e-2
# an untied MLM decoder (tie_word_embeddings false): fp32 is the CPU's
sed 's/"initializer_range": 0.02/"initializer_range": 0.02, "tie_word_embeddings": false/' "$T/tiny.json" >"$T/untied.json"
"$BIN/train_bert_cpu" -q $(cargs "$T/ucpu") --config_file "$T/untied.json" >"$T/ucpu.log"
"$TRB" -q --precision fp32 $(cargs "$T/uf32") --config_file "$T/untied.json" >"$T/uf32.log"
for s in 1 2; do
  c=$(closs "$T/ucpu.log" $s) f=$(closs "$T/uf32.log" $s)
  ok "untied decoder, step $s: the fp32 loss is the CPU's ($f vs $c)" cclose "$f" "$c" 1e-5
done
ok "untied decoder: gradients and weights of 2 steps are the CPU's (check_gpu runs)" \
  "$CHK" runs "$T/untied.json" "$T/uf32" "$T/ucpu" 0.01 0.5 2
if [ "${CMP_TOLERANCES_ONLY:-0}" != 1 ]; then
ok "the Hugging Face export" test -s "$T/b16/hf/model.safetensors"
ok "... and the untied one holds the decoder" grep -q "cls.predictions.decoder.weight" "$T/uf32/hf/model.safetensors"
"$TRB" -q --precision bf16 --attention fused $(cargs "$T/r") --stop_at_step 1 >/dev/null
"$TRB" -q --precision bf16 --attention fused $(cargs "$T/r") --resume_from_checkpoint >"$T/r.log"
ok "bf16: stopped after step 1 and resumed = uninterrupted, byte for byte" cmp -s "$T/r/ckpt_2.wbckpt" "$T/b16/ckpt_2.wbckpt"
mkdir -p "$T/r2" && cp "$T/b16/ckpt_1.wbckpt" "$T/r2/"
"$TRB" -q --precision bf16 --attention fused $(cargs "$T/r2") --resume_from_checkpoint >/dev/null
ok "bf16: resumed from the step-1 checkpoint of the uninterrupted run (written while the next batch was staged) = uninterrupted" \
  cmp -s "$T/r2/ckpt_2.wbckpt" "$T/b16/ckpt_2.wbckpt"
"$TRB" -q --precision bf16 --attention fused $(cargs "$T/b16b") >"$T/b16b.log"
ok "bf16: a second run repeats the first's losses exactly" \
  eval '[ "$(sed "s/, \"seq_per_s.*//" "$T/b16.log")" = "$(sed "s/, \"seq_per_s.*//" "$T/b16b.log")" ]'
ok "... and its checkpoint bytes" cmp -s "$T/b16/ckpt_2.wbckpt" "$T/b16b/ckpt_2.wbckpt"
fi
# length bins: batches of several lengths (the device buffers sized for
# the longest, each batch computed at its own)
mkdir -p "$T/hs"
awk 'NF { print; print "" }' "$T/en.txt" >"$T/short.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 2 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/hs/s_training_0.hdf5" "$T/short.txt"
bargs() { echo --input_dir "$T/hs" --config_file "$T/tiny.json" --vocab_file "$V" --train_batch_size 4 \
  --learning_rate 0.01 --max_steps 3 --max_predictions_per_seq 10 --num_steps_per_checkpoint 1 --seed 5 --bin_size 16 \
  --output_dir "$@"; }
"$BIN/train_bert_cpu" -q $(bargs "$T/bcpu") >"$T/bcpu.log"
"$TRB" -q --precision fp32 $(bargs "$T/bf32") >"$T/bf32.log"
bsame=1
for s in 1 2 3; do cclose "$(closs "$T/bf32.log" $s)" "$(closs "$T/bcpu.log" $s)" 1e-5 || bsame=0; done
ok "--bin_size 16: fp32 losses of 3 steps are the CPU's (1e-5)" [ $bsame = 1 ]
ok "... and the gradients and weights of every step (check_gpu runs)" \
  "$CHK" runs "$T/tiny.json" "$T/bf32" "$T/bcpu" 0.01 0.01 3
"$TRB" -q --precision bf16 --attention fused $(bargs "$T/bb16") >"$T/bb16.log"
bsame=1
for s in 1 2 3; do cclose "$(closs "$T/bb16.log" $s)" "$(closs "$T/bcpu.log" $s)" 1e-2 || bsame=0; done
ok "--bin_size 16: bf16 losses (fused attention at lengths 16 to 64) within 1e-2 of the CPU's" [ $bsame = 1 ]
ge=$("$TRB" --precision fp32 --eval_file "$T/h5/en_training_0.hdf5" --init_checkpoint "$T/cpu/ckpt_2.wbckpt" \
  --config_file "$T/tiny.json" --train_batch_size 8 --max_predictions_per_seq 10 | sed -n 's/.*"eval_loss": \([0-9.]*\).*/\1/p')
ok "--eval_file: the CPU's loss ($ge vs $lc)" cclose "$ge" "$lc" 1e-5
