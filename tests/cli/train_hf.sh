# The Hugging Face round trip of train_bert_cpu: the export (config.json,
# model.safetensors, vocab.txt, tokenizer_config.json,
# special_tokens_map.json, tokenizer.json, README.md) and --init_checkpoint
# on a model directory or a .safetensors file. A tiny model (dropout 0)
# trains 4 steps; a new run started from its export takes as its first
# step's loss the export's --eval_file loss on the same rows (the file's
# 31 rows are one batch). F16 and BF16 files load as their values rounded
# in float32; a BertModel or BertForMaskedLM checkpoint gets the heads it
# lacks as a fresh model with the seed; a word embedding without the rows
# that rounding vocab_size to a multiple of 8 adds loads. Errors: shapes
# of another config, another head count in config.json, a missing tensor,
# an integer dtype, a file that is no checkpoint, a directory without
# model.safetensors. Where Python has transformers: AutoTokenizer and
# tokenizers load the export's tokenizer and tokenize as wp_tokenize,
# model_max_length is max_position_embeddings; with torch as well, models
# that transformers wrote load.
# An untied MLM decoder (tie_word_embeddings false) trains, is exported and
# imported with its own decoder (its export's eval loss is its checkpoint's;
# transformers' untied BertForPreTraining gives transformers' loss); a tied
# --config_file with an untied checkpoint is refused, a tied checkpoint in
# an untied model starts its decoder as the word embeddings. A model
# directory as --init_checkpoint gives the default config (for --eval_file
# too) and vocabulary, and its tokenizer's lower-casing and accents carry
# into the export unless the command line says otherwise (said in one
# line). An export without --vocab_file says that the tokenizer files are
# missing (stderr, model card); with one, the model card's fill-mask example
# is a sentence of the training text with one word masked.
. "$TESTS/cli/lib.sh"
TR=$BIN/train_bert_cpu
V=$TESTS/../data/bert/vocab.txt
EDIT=$TESTS/cli/st_edit.py
mkdir -p "$T/h5"
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -80 >"$T/en.txt"
"$BIN/hdf5gen" -q --vocab "$V" --dupe-factor 1 --max-seq-length 64 --max-predictions-per-seq 10 \
  -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
H5=$T/h5/en_training_0.hdf5
ROWS=$("$BIN/hdf5_check" "$H5" 2>&1 | sed -n 's/.*: \([0-9]*\) instances.*/\1/p')
cat >"$T/tiny.json" <<'JSON'
{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02}
JSON
train() { # OUT [more options]
  local o=$1
  shift
  run "$TR" --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$o" --vocab_file "$V" \
    --train_batch_size 8 --learning_rate 0.01 --max_steps 4 --max_predictions_per_seq 10 --seed 3 -j2 "$@"
}
ev() { # CHECKPOINT [more options]: the eval line's losses, "loss mlm nsp"
  local c=$1
  shift
  run "$TR" --eval_file "$H5" --config_file "$T/tiny.json" --train_batch_size "$ROWS" \
    --max_predictions_per_seq 10 --init_checkpoint "$c" -j2 "$@"
  sed -n 's/^{"eval_loss": \([0-9.]*\), "mlm_loss": \([0-9.]*\), "nsp_loss": \([0-9.]*\).*/\1 \2 \3/p' "$out"
}
first_loss() { sed -n 's/^{"step": 1, "loss": \([0-9.]*\), "mlm_loss": \([0-9.]*\), "nsp_loss": \([0-9.]*\).*/\1 \2 \3/p' "$out"; }
close() { # A B: the same three losses within 2e-6 (the rows are summed in another order)
  [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= n; i++) if (x[i] - y[i] > 2e-6 || y[i] - x[i] > 2e-6) exit 1; exit n != 3 }'
}

# ---- the export ----
train "$T/a"
expect_rc "a tiny model, 4 steps" 0
ok "the file's $ROWS rows are one batch" [ "$ROWS" -gt 8 ]
ok "the export's files" eval '[ "$(ls "$T/a/hf" | tr "\n" " ")" = "README.md config.json model.safetensors special_tokens_map.json tokenizer.json tokenizer_config.json vocab.txt " ]'
PY=$(py_with json)
if [ -z "$PY" ]; then
  echo "not run: the JSON files' fields (no python3)"
else
  run "$PY" - "$T/a/hf" "$V" <<'PYEOF'
import json, sys
d, v = sys.argv[1], sys.argv[2]
vocab = [l.rstrip("\n") for l in open(v, encoding="utf-8")]
m = json.load(open(d + "/special_tokens_map.json"))
print("map", m == {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"})
t = json.load(open(d + "/tokenizer.json", encoding="utf-8"))
n = t["normalizer"]
print("normalizer", n == {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True})
print("pre_tokenizer", t["pre_tokenizer"] == {"type": "BertPreTokenizer"})
w = t["model"]
print("model", w["type"] == "WordPiece" and w["unk_token"] == "[UNK]" and w["continuing_subword_prefix"] == "##" and w["max_input_chars_per_word"] == 100)
print("vocab", w["vocab"] == {tok: i for i, tok in enumerate(vocab)})
p = t["post_processor"]
print("template", p["type"] == "TemplateProcessing" and p["special_tokens"]["[CLS]"]["ids"] == [vocab.index("[CLS]")] and p["special_tokens"]["[SEP]"]["ids"] == [vocab.index("[SEP]")] and [list(x.values())[0]["id"] for x in p["pair"]] == ["[CLS]", "A", "[SEP]", "B", "[SEP]"] and [list(x.values())[0]["type_id"] for x in p["pair"]] == [0, 0, 0, 1, 1])
print("decoder", t["decoder"]["type"] == "WordPiece" and t["decoder"]["prefix"] == "##")
print("added", [a["content"] for a in t["added_tokens"] if not a["content"].startswith("[unused")] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
PYEOF
  for f in map normalizer pre_tokenizer model vocab template decoder added; do
    ok "tokenizer files: $f" grep -qx "$f True" "$out"
  done
fi
ok "README.md: made by train_bert_cpu of wikibert" grep -q '`train_bert_cpu` of wikibert' "$T/a/hf/README.md"
ok "... the data: 1 HDF5 file of the input dir" grep -qF "1 HDF5 training file of \`$T/h5\`" "$T/a/hf/README.md"
ok "... steps and the last loss" eval 'grep -qF "4 optimizer steps; the last step'"'"'s loss $(sed -n "s/^{\"step\": 4, \"loss\": \([0-9]*\.[0-9][0-9][0-9][0-9]\).*/\1/p" "$out")" "$T/a/hf/README.md"'
ok "... the normalization" grep -q "lower-cased: yes; accents stripped: as lower-casing" "$T/a/hf/README.md"
ok "... the command line" grep -q -- "--max_steps 4 --max_predictions_per_seq 10 --seed 3 -j2\$" "$T/a/hf/README.md"

# ---- the round trip: the export's eval loss is the first step's ----
ref=$(ev "$T/a/ckpt_4.wbckpt")
ok "the last checkpoint's eval loss ($ref)" [ -n "$ref" ]
got=$(ev "$T/a/hf")
ok "--init_checkpoint DIR evaluates as the checkpoint ($got)" [ "$got" = "$ref" ]
got=$(ev "$T/a/hf/model.safetensors")
ok "--init_checkpoint FILE.safetensors too ($got)" [ "$got" = "$ref" ]
for c in hf hf/model.safetensors; do
  train "$T/b" --train_batch_size "$ROWS" --max_steps 1 --seed 5 --init_checkpoint "$T/a/$c"
  expect_rc "a new run from $c" 0
  expect_err "... says where the weights came from" "*weights from $T/a/$c
*"
  ok "... its first step's loss is the export's eval loss ($(first_loss) vs $ref)" close "$(first_loss)" "$ref"
  rm -rf "$T/b"
done
train "$T/b" --resume_from_checkpoint --init_checkpoint "$T/a/hf" --max_steps 1
expect_rc "--resume_from_checkpoint --init_checkpoint DIR: the weights (no moments in it)" 0
rm -rf "$T/b"

# ---- other Hugging Face checkpoints ----
if [ -z "$PY" ]; then
  echo "not run: F16, BF16, BertModel and error checkpoints (no python3)"
else
  S=$T/a/hf/model.safetensors
  for ty in F16 BF16; do
    "$PY" "$EDIT" "$S" "$T/$ty.st" dtype=$ty
    "$PY" "$EDIT" "$S" "$T/$ty.f32.st" round=$ty
    want=$(ev "$T/$ty.f32.st")
    got=$(ev "$T/$ty.st")
    ok "$ty weights load as their float32 values ($got)" [ -n "$got" ] && [ "$got" = "$want" ]
  done
  # fresh heads: a run that barely moves from its initial weights gives them
  train "$T/fresh" --seed 9 --max_steps 1 --learning_rate 1e-30
  "$PY" "$EDIT" "$S" "$T/bare.st" bare drop='^cls\.'
  "$PY" "$EDIT" "$S" "$T/mixed.st" drop='^cls\.' take="$T/fresh/hf/model.safetensors:^cls\\."
  got=$(ev "$T/bare.st" --seed 9)
  expect_err "BertModel names: the heads it lacks are named" "*bare.st: initialized fresh: cls.predictions.bias, cls.predictions.transform.dense.weight, *, cls.seq_relationship.bias"
  ok "... and are a fresh model's with the seed ($got)" close "$got" "$(ev "$T/mixed.st")"
  ok "... another seed, other heads" [ "$(ev "$T/bare.st" --seed 10)" != "$got" ]
  "$PY" "$EDIT" "$S" "$T/mlm.st" drop='^cls\.seq|pooler'
  ev "$T/mlm.st" >/dev/null
  expect_err "BertForMaskedLM: pooler and NSP head fresh" "*mlm.st: initialized fresh: bert.pooler.dense.weight, bert.pooler.dense.bias, cls.seq_relationship.weight, cls.seq_relationship.bias"
  "$PY" "$EDIT" "$S" "$T/pad.st" rows=bert.embeddings.word_embeddings.weight:30522 rows=cls.predictions.bias:30522
  ok "a vocabulary of 30522 rows loads into 30528 ($(ev "$T/pad.st"))" [ "$rc" = 0 ]
  expect_err "... saying so" "*the model 30528 (vocab_size rounded up to a multiple of 8)*"
  "$PY" "$EDIT" "$S" "$T/miss.st" drop='layer\.1\.output\.dense\.weight'
  ev "$T/miss.st" >/dev/null
  expect_rc "a missing tensor" 1
  expect_err "... is named" "*miss.st: no tensor bert.encoder.layer.1.output.dense.weight *"
  "$PY" "$EDIT" "$S" "$T/i32.st" dtype=I32
  ev "$T/i32.st" >/dev/null
  expect_rc "an integer dtype" 1
  expect_err "... is refused" '*i32.st: bert.embeddings.word_embeddings.weight is "I32": F32, F16 or BF16 needed'
fi
sed 's/"intermediate_size": 64/"intermediate_size": 48/' "$T/tiny.json" >"$T/t48.json"
run "$TR" --eval_file "$H5" --config_file "$T/t48.json" --init_checkpoint "$T/a/hf"
expect_rc "shapes of another config" 1
expect_err "... name the tensor and both shapes" "*model.safetensors: bert.encoder.layer.0.intermediate.dense.weight has shape \[64, 32\], the model of --config_file \[48, 32\]"
cp -r "$T/a/hf" "$T/heads"
sed -i 's/"num_attention_heads": 2/"num_attention_heads": 4/' "$T/heads/config.json"
ev "$T/heads" >/dev/null
expect_rc "config.json with another head count" 1
expect_err "... is refused" "*heads/config.json: 2 layers of 32 with 4 heads; --config_file says 2 layers of 32 with 2 heads"
ev "$T/tiny.json" >/dev/null
expect_rc "a file that is no checkpoint" 1
expect_err "... is refused" "*tiny.json: neither a wikibert checkpoint nor a safetensors file*"
mkdir -p "$T/nodir"
ev "$T/nodir" >/dev/null
expect_rc "a directory without model.safetensors" 1
expect_err "... is refused" "*nodir: no model.safetensors in it*"

# ---- an untied MLM decoder (tie_word_embeddings false) ----
sed 's/"initializer_range": 0.02/"initializer_range": 0.02, "tie_word_embeddings": false/' "$T/tiny.json" >"$T/untied.json"
train "$T/u" --config_file "$T/untied.json"
expect_rc "an untied decoder trains" 0
ok "... its export's config.json says tie_word_embeddings false" grep -q '"tie_word_embeddings": false' "$T/u/hf/config.json"
ok "... and holds cls.predictions.decoder.weight" grep -q 'cls.predictions.decoder.weight' "$T/u/hf/model.safetensors"
uref=$(ev "$T/u/ckpt_4.wbckpt" --config_file "$T/untied.json")
ok "... its checkpoint evaluates ($uref)" [ -n "$uref" ]
ok "... the export, with its own config.json, evaluates as the checkpoint" [ "$(ev "$T/u/hf" --config_file "$T/untied.json")" = "$uref" ]
run "$TR" --eval_file "$H5" --init_checkpoint "$T/u/hf" --train_batch_size "$ROWS" --max_predictions_per_seq 10 -j2
got=$(sed -n 's/^{"eval_loss": \([0-9.]*\), "mlm_loss": \([0-9.]*\), "nsp_loss": \([0-9.]*\).*/\1 \2 \3/p' "$out")
ok "--eval_file with the model directory alone: its config.json ($got)" [ "$got" = "$uref" ]
expect_err "... said in one line" "*config from $T/u/hf/config.json (no --config_file)*"
ok "... the tied model's loss differs ($ref)" [ "$uref" != "$ref" ]
ev "$T/u/hf" >/dev/null
expect_rc "a tied --config_file with the untied directory" 1
expect_err "... is refused, saying how to fix it" "*u/hf/config.json: tie_word_embeddings false (an MLM decoder of its own), but --config_file ties it to the word embeddings: set \"tie_word_embeddings\": false there, or leave --config_file out to take this config.json"
ev "$T/u/hf/model.safetensors" >/dev/null
expect_rc "a tied --config_file with the untied .safetensors" 1
expect_err "... is refused: the decoder is not the word embeddings" "*model.safetensors: cls.predictions.decoder.weight is not the word embeddings*"
got=$(ev "$T/a/hf/model.safetensors" --config_file "$T/untied.json")
ok "a tied checkpoint in an untied model: the decoder is the word embeddings ($got)" close "$got" "$ref"
expect_err "... said" "*cls.predictions.decoder.weight: the word embeddings (tied in the checkpoint)*"
train "$T/ub" --train_batch_size "$ROWS" --max_steps 1 --seed 5 --init_checkpoint "$T/u/hf" --config_file "$T/untied.json"
ok "a run from the untied export: its first step's loss is the export's ($(first_loss) vs $uref)" close "$(first_loss)" "$uref"
rm -rf "$T/ub"
run "$TR" --eval_file "$H5" --init_checkpoint "$T/u/ckpt_4.wbckpt" --config_file "$T/tiny.json" --train_batch_size "$ROWS" --max_predictions_per_seq 10
expect_rc "an untied wikibert checkpoint with a tied config" 1
expect_err "... is refused naming the field" "*ckpt_4.wbckpt: a checkpoint of another model: tie_word_embeddings false, the config says true"

# ---- a model directory as --init_checkpoint: config, vocabulary, normalization ----
train "$T/cased" --max_steps 1 --do_lower_case 0 --strip_accents 0
expect_rc "a cased export" 0
run "$TR" --input_dir "$T/h5" --output_dir "$T/d" --init_checkpoint "$T/cased/hf" --train_batch_size 8 \
  --max_steps 1 --max_predictions_per_seq 10 -j2
expect_rc "--init_checkpoint DIR alone: its config.json and vocabulary" 0
expect_err "... says where the config came from" "*config from $T/cased/hf/config.json (no --config_file)*"
expect_err "... and the vocabulary" "*vocabulary from $T/cased/hf/vocab.txt (no --vocab_file)*"
ok "... its export keeps DIR's tokenizer: cased" eval 'grep -q "\"do_lower_case\": false" "$T/d/hf/tokenizer_config.json" && grep -q "\"lowercase\": false" "$T/d/hf/tokenizer.json"'
ok "... and DIR's vocabulary" cmp -s "$T/d/hf/vocab.txt" "$V"
ok "... without a word about a difference" eval '! grep -q "the export.s tokenizer" "$err"'
run "$TR" --input_dir "$T/h5" --output_dir "$T/d2" --init_checkpoint "$T/cased/hf" --train_batch_size 8 \
  --max_steps 1 --max_predictions_per_seq 10 -j2 --do_lower_case 1
expect_rc "--do_lower_case 1 against DIR's cased tokenizer" 0
ok "... the command line wins" grep -q '"do_lower_case": true' "$T/d2/hf/tokenizer_config.json"
expect_err "... and the difference is said in one line" "*the export's tokenizer: do_lower_case 1, strip_accents 0 (the command line); $T/cased/hf/tokenizer.json has lowercase false, strip_accents false*"
rm -rf "$T/d" "$T/d2"
mkdir -p "$T/noconf"
cp "$T/a/hf/model.safetensors" "$T/noconf/"
run "$TR" --eval_file "$H5" --init_checkpoint "$T/noconf" --train_batch_size 8
expect_rc "a directory without config.json and no --config_file" 2
expect_err "... says --config_file is required" "*--config_file is required: $T/noconf has no config.json"

# ---- the model card: a fill-mask sentence of the data; no vocabulary said ----
ex=$(sed -n 's/^print(fill("\(.*\)"))$/\1/p' "$T/a/hf/README.md")
word=$(sed -n 's/^Use (a sentence of the training text, the word `\(.*\)` masked):$/\1/p' "$T/a/hf/README.md")
ok "the fill-mask example has one [MASK] ($ex)" [ "$(grep -o '\[MASK\]' <<<"$ex" | wc -l)" = 1 ]
ok "... and is a sentence of the training text with '$word' masked" \
  eval '[ -n "$word" ] && grep -qiF -- "${ex/\[MASK\]/$word}" "$T/en.txt"'
run "$TR" --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$T/nov" --train_batch_size 8 \
  --max_steps 1 --max_predictions_per_seq 10 -j2
expect_rc "a run without --vocab_file" 0
expect_err "... says the export has no tokenizer files" "*nov/hf: tokenizer files missing: no tokenizer files (vocab.txt, tokenizer.json, tokenizer_config.json, special_tokens_map.json), as the training was given no --vocab_file*"
ok "... so does the model card" grep -q "^- Tokenizer: missing: no tokenizer files" "$T/nov/hf/README.md"
ok "... which gives no fill-mask example" eval '! grep -q "fill-mask\", model" "$T/nov/hf/README.md"'

# ---- transformers' tokenizers on the export ----
ok "the cased export's tokenizer.json: lowercase false, strip_accents false" \
  eval 'grep -q "\"strip_accents\": false" "$T/cased/hf/tokenizer.json" && grep -q "\"lowercase\": false" "$T/cased/hf/tokenizer.json"'
PYX=$(py_with "transformers, tokenizers")
if [ -z "$PYX" ]; then
  echo "not run: AutoTokenizer and tokenizers on the export (no Python with transformers)"
else
  printf '%s\n' 'Kör, kor és KŐR: Árvíztűrő tükörfúrógép!' 'Budapest Magyarország fővárosa, a Duna két partján fekszik.' \
    "The Quick Brown Fox jumped over Naïve Zoë's café in 1998." '東京 and 北京 are capitals.' \
    "$(printf 'a%.0s' $(seq 120)) is too long" >"$T/text.txt"
  for d in a cased; do
    run "$PYX" - "$T/$d/hf" "$T/text.txt" <<'PYEOF'
import sys
from tokenizers import Tokenizer
from transformers import AutoTokenizer
d, txt = sys.argv[1], sys.argv[2]
tk = Tokenizer.from_file(d + "/tokenizer.json")
t = AutoTokenizer.from_pretrained(d)
print("fast", t.is_fast, "max", t.model_max_length)
print("truncated", len(t("word " * 300, truncation=True)["input_ids"]))
e = t("kör", "kor")
print("pair", e["input_ids"][0] == t.cls_token_id, e["input_ids"][-1] == t.sep_token_id, e["token_type_ids"][-1] == 1, t.mask_token)
with open(d + "/auto.tok", "w", encoding="utf-8") as a, open(d + "/fast.tok", "w", encoding="utf-8") as f:
    for line in open(txt, encoding="utf-8"):
        a.write(" ".join(t.tokenize(line.rstrip("\n"))) + "\n")
        f.write(" ".join(tk.encode(line.rstrip("\n"), add_special_tokens=False).tokens) + "\n")
PYEOF
    ok "$d: AutoTokenizer is the fast one (tokenizer.json), model_max_length 64" grep -qx "fast True max 64" "$out"
    ok "$d: ... truncates a long input to 64 tokens" grep -qx "truncated 64" "$out"
    ok "$d: ... [CLS] A [SEP] B [SEP], B's type 1, mask [MASK]" grep -qx "pair True True True \[MASK\]" "$out"
    if [ $d = a ]; then flags=(--do-lower-case 1); else flags=(--do-lower-case 0 --strip-accents 0); fi
    "$BIN/wp_tokenize" --vocab "$T/$d/hf/vocab.txt" "${flags[@]}" "$T/text.txt" >"$T/$d/ours.tok" 2>/dev/null
    ok "$d: AutoTokenizer tokenizes as wp_tokenize ${flags[*]}" cmp -s "$T/$d/hf/auto.tok" "$T/$d/ours.tok"
    ok "$d: tokenizers' Tokenizer.from_file too" cmp -s "$T/$d/hf/fast.tok" "$T/$d/ours.tok"
  done
  ok "the cased export does not lower-case (KŐR: [UNK] in an uncased vocabulary)" \
    eval 'grep -q "\[UNK\] \[UNK\] :" "$T/cased/hf/auto.tok" && ! cmp -s "$T/a/hf/auto.tok" "$T/cased/hf/auto.tok"'

fi

# ---- models that transformers wrote ----
HPY=$(py_with "transformers, h5py, torch")
if [ -z "$HPY" ]; then
  echo "not run: models written by transformers (no Python with transformers, h5py and torch)"
else
  run "$HPY" - "$T/tf" <<'PYEOF'
import sys, torch
from transformers import BertConfig, BertForPreTraining, BertModel
torch.manual_seed(0)
c = BertConfig(vocab_size=30528, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
               attention_probs_dropout_prob=0.0)
BertForPreTraining(c).save_pretrained(sys.argv[1] + "/pt", safe_serialization=True)
BertModel(c).save_pretrained(sys.argv[1] + "/base", safe_serialization=True)
PYEOF
  expect_rc "transformers writes a BertForPreTraining and a BertModel" 0
  got=$(ev "$T/tf/pt")
  run "$HPY" "$TESTS/cli/hf_check.py" "$T/tf/pt" "$H5" "$ROWS"
  want=$(sed -n 's/^loss \([0-9.]*\) mlm \([0-9.]*\) nsp \([0-9.]*\)$/\1 \2 \3/p' "$out")
  ok "transformers' BertForPreTraining: our loss is theirs ($got vs $want)" \
    awk -v a="$got" -v b="$want" 'BEGIN { split(a, x, " "); split(b, y, " "); d = x[1] - y[1]; exit !(a != "" && b != "" && d < 1e-4 && d > -1e-4) }'
  ev "$T/tf/base" >/dev/null
  expect_rc "transformers' BertModel loads" 0
  expect_err "... with fresh heads" "*initialized fresh: cls.predictions.bias, *"
  # an untied decoder that transformers wrote, and ours read by transformers
  run "$HPY" - "$T/tf" <<'PYEOF'
import sys, torch
from transformers import BertConfig, BertForPreTraining
torch.manual_seed(1)
c = BertConfig(vocab_size=30528, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
               attention_probs_dropout_prob=0.0, tie_word_embeddings=False)
BertForPreTraining(c).save_pretrained(sys.argv[1] + "/untied", safe_serialization=True)
PYEOF
  expect_rc "transformers writes an untied BertForPreTraining" 0
  run "$TR" --eval_file "$H5" --init_checkpoint "$T/tf/untied" --train_batch_size "$ROWS" --max_predictions_per_seq 10 -j2
  got=$(sed -n 's/^{"eval_loss": \([0-9.]*\).*/\1/p' "$out")
  run "$HPY" "$TESTS/cli/hf_check.py" "$T/tf/untied" "$H5" "$ROWS"
  want=$(sed -n 's/^loss \([0-9.]*\) .*/\1/p' "$out")
  ok "transformers' untied BertForPreTraining: our loss is theirs ($got vs $want)" \
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 1e-4 && d > -1e-4) }'
  run "$HPY" "$TESTS/cli/hf_check.py" "$T/u/hf" "$H5" "$ROWS"
  want=$(sed -n 's/^loss \([0-9.]*\) mlm \([0-9.]*\) nsp \([0-9.]*\)$/\1 \2 \3/p' "$out")
  ok "our untied export in transformers: nothing missing or unexpected" grep -q "^missing \[\] unexpected \[\]$" "$out"
  ok "... and our loss ($uref vs $want)" \
    awk -v a="$uref" -v b="$want" 'BEGIN { split(a, x, " "); split(b, y, " "); d = x[1] - y[1]; exit !(a != "" && b != "" && d < 1e-4 && d > -1e-4) }'
fi
done_testing
