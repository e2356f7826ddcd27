# Hugging Face's tokenizer.json wherever a vocab.txt is taken: wp_tokenize
# --vocab, hdf5gen --vocab, hdf5_check --vocab, train_bert_cpu
# --vocab_file. bert-base-uncased's vocabulary as a tokenizer.json (the
# layout transformers 5 saves instead of vocab.txt) tokenizes as vocab.txt,
# makes the same HDF5 bytes and the same statistics; a cased one (lowercase
# false, strip_accents false) tokenizes as vocab.txt with --do-lower-case 0
# --strip-accents 0 and names hdf5gen's --prep-root directory
# hdf5_lower_case_0; a command-line setting that differs from the file's
# wins and is said in one line; BPE, Unigram and WordLevel models, another
# pre-tokenizer and broken JSON are refused naming what the file has. The
# trainer takes the tokenizer.json's tokens and normalization into its
# export. Where Python has transformers: a BertTokenizer that transformers
# saves (tokenizer.json, no vocab.txt) tokenizes as transformers does, and
# tokenizers' BPE / Unigram / WordLevel files are refused.
. "$TESTS/cli/lib.sh"
V=$TESTS/../data/bert/vocab.txt
PY=$(py_with json)
if [ -z "$PY" ]; then
  echo "not run: tokenizer.json (no python3 to write one)"
  done_testing
  exit 0
fi
# tokjson OUT LOWERCASE STRIP_ACCENTS [MODEL_TYPE [PRE_TOKENIZER]]: vocab.txt as tokenizers writes it
tokjson() {
  "$PY" - "$V" "$@" <<'PYEOF'
import json, sys
v, out, low, strip = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
model = sys.argv[5] if len(sys.argv) > 5 else "WordPiece"
pre = sys.argv[6] if len(sys.argv) > 6 else "BertPreTokenizer"
vocab = [l.rstrip("\n") for l in open(v, encoding="utf-8")]
special = [i for i, t in enumerate(vocab) if t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
b = lambda s: None if s == "null" else s == "true"
t = {"version": "1.0", "truncation": None, "padding": None,
     "added_tokens": [{"id": i, "content": vocab[i], "single_word": False, "lstrip": False, "rstrip": False,
                       "normalized": False, "special": True} for i in special],
     "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                    "strip_accents": b(strip), "lowercase": b(low)},
     "pre_tokenizer": {"type": pre}, "post_processor": None,
     "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
     "model": {"type": model, "unk_token": "[UNK]", "continuing_subword_prefix": "##",
               "max_input_chars_per_word": 100, "vocab": dict(reversed([(t, i) for i, t in enumerate(vocab)]))}}
json.dump(t, open(out, "w", encoding="utf-8"), ensure_ascii=False, indent=2)
PYEOF
}
tokjson "$T/uncased.json" true null
tokjson "$T/cased.json" false false
printf '%s\n' 'Kör, kor és KŐR: Árvíztűrő tükörfúrógép!' "The Quick Brown Fox jumped over Naïve Zoë's café in 1998." \
  '東京 and 北京 are capitals.' "$(printf 'a%.0s' $(seq 120)) is too long" 'unbelievable [MASK] tokens' >"$T/text.txt"

# ---- wp_tokenize ----
"$BIN/wp_tokenize" --vocab "$V" "$T/text.txt" >"$T/want.tok"
run "$BIN/wp_tokenize" --vocab "$T/uncased.json" "$T/text.txt"
expect_rc "wp_tokenize --vocab tokenizer.json" 0
ok "... tokenizes as vocab.txt" cmp -s "$out" "$T/want.tok"
ok "... without a word on stderr" [ ! -s "$err" ]
"$BIN/wp_tokenize" --vocab "$V" --do-lower-case 0 --strip-accents 0 "$T/text.txt" >"$T/want-cased.tok"
run "$BIN/wp_tokenize" --vocab "$T/cased.json" "$T/text.txt"
ok "a cased tokenizer.json keeps case and accents, as --do-lower-case 0 --strip-accents 0" cmp -s "$out" "$T/want-cased.tok"
ok "... which differs from the uncased" eval '! cmp -s "$out" "$T/want.tok"'
run "$BIN/wp_tokenize" --vocab "$T/uncased.json" --do-lower-case 0 --strip-accents 0 "$T/text.txt"
expect_rc "the command line overrides the file's normalization" 0
ok "... tokenizing as it says" cmp -s "$out" "$T/want-cased.tok"
expect_err "... and says so in one line" "wp_tokenize: --do-lower-case 0, but $T/uncased.json has lowercase true; --strip-accents 0, but $T/uncased.json has strip_accents true: the command line's setting is used"
run "$BIN/wp_tokenize" --vocab "$T/uncased.json" --do-lower-case 1 "$T/text.txt"
ok "a setting equal to the file's says nothing" [ ! -s "$err" ]

# ---- refusals ----
for m in BPE Unigram WordLevel; do
  tokjson "$T/$m.json" true null $m
  run "$BIN/wp_tokenize" --vocab "$T/$m.json" "$T/text.txt"
  ok "wp_tokenize: a $m model is refused (exit $rc)" [ "$rc" -ne 0 ] && [ ! -s "$out" ]
  expect_err "... naming its type" "wp_tokenize: $T/$m.json: model type $m: only WordPiece models (BERT's tokenizer) are read, not BPE, Unigram or WordLevel"
done
tokjson "$T/ws.json" true null WordPiece Whitespace
run "$BIN/hdf5gen" --vocab "$T/ws.json" -o "$T/x.hdf5" "$T/text.txt"
expect_rc "hdf5gen: another pre-tokenizer" 2
expect_err "... is named" "hdf5gen: $T/ws.json: pre_tokenizer Whitespace: only BertPreTokenizer*"
printf '{"model": {"type": "WordPiece", "vocab": {"a": 0,}}}' >"$T/broken.json"
run "$BIN/hdf5_check" --vocab "$T/broken.json" "$T/x.hdf5"
expect_rc "hdf5_check: broken JSON" 2
expect_err "... with its byte offset" "hdf5_check: $T/broken.json: byte 49: object key expected"

# ---- hdf5gen, hdf5_check ----
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -60 >"$T/en.txt"
G=("$BIN/hdf5gen" -q --dupe-factor 2 --max-seq-length 64 --max-predictions-per-seq 10)
"${G[@]}" --vocab "$V" -o "$T/want.hdf5" "$T/en.txt"
run "${G[@]}" --vocab "$T/uncased.json" -o "$T/got.hdf5" "$T/en.txt"
expect_rc "hdf5gen --vocab tokenizer.json" 0
ok "... the same HDF5 bytes as vocab.txt" cmp -s "$T/got.hdf5" "$T/want.hdf5"
mkdir -p "$T/sh/wikicorpus_en"
cp "$T/en.txt" "$T/sh/wikicorpus_en/wikicorpus_en_training_0.txt"
run "${G[@]}" --vocab "$T/cased.json" --prep-root "$T/prep" "$T/sh/wikicorpus_en"
expect_rc "hdf5gen --prep-root with a cased tokenizer.json" 0
ok "... names the directory hdf5_lower_case_0 (its normalization)" [ -d "$T"/prep/hdf5_lower_case_0_seq_len_64_*/wikicorpus_en ]
"${G[@]}" --vocab "$V" --do-lower-case 0 --strip-accents 0 -o "$T/want-cased.hdf5" "$T/en.txt"
ok "... the bytes of vocab.txt with --do-lower-case 0 --strip-accents 0" cmp -s "$T"/prep/hdf5_lower_case_0_*/wikicorpus_en/wikicorpus_en_training_0.hdf5 "$T/want-cased.hdf5"
"$BIN/hdf5_check" --vocab "$V" "$T/want.hdf5" >"$T/check.want" 2>"$T/check.want-err"
run "$BIN/hdf5_check" --vocab "$T/uncased.json" "$T/want.hdf5"
ok "hdf5_check --vocab tokenizer.json: the statistics of vocab.txt" \
  eval 'cmp -s "$out" "$T/check.want" && cmp -s "$err" "$T/check.want-err"'

# ---- the trainer ----
mkdir -p "$T/h5"
cp "$T/want.hdf5" "$T/h5/en_training_0.hdf5"
cat >"$T/tiny.json" <<'JSON'
{"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02}
JSON
run "$BIN/train_bert_cpu" -j2 --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$T/run" \
  --vocab_file "$T/cased.json" --train_batch_size 4 --max_steps 1 --max_predictions_per_seq 10
expect_rc "train_bert_cpu --vocab_file tokenizer.json" 0
ok "... the export's vocab.txt is its tokens" cmp -s "$T/run/hf/vocab.txt" "$V"
ok "... with its normalization (cased)" eval 'grep -q "\"do_lower_case\": false" "$T/run/hf/tokenizer_config.json" && grep -q "\"strip_accents\": false" "$T/run/hf/tokenizer_config.json"'
run "$BIN/train_bert_cpu" -j2 --input_dir "$T/h5" --config_file "$T/tiny.json" --output_dir "$T/run2" \
  --vocab_file "$T/BPE.json" --train_batch_size 4 --max_steps 1 --max_predictions_per_seq 10
expect_rc "train_bert_cpu: a BPE tokenizer.json" 2
expect_err "... is refused naming it" "*BPE.json: model type BPE: only WordPiece models*"

# ---- tokenizer.json files that transformers and tokenizers wrote ----
PYX=$(py_with "transformers, tokenizers")
if [ -z "$PYX" ]; then
  echo "not run: tokenizer.json written by transformers (no Python with transformers)"
else
  run "$PYX" - "$V" "$T/tf" "$T/text.txt" <<'PYEOF'
import os, sys
from transformers import BertTokenizer
from tokenizers import Tokenizer, models, pre_tokenizers
v, d, txt = sys.argv[1], sys.argv[2], sys.argv[3]
for name, lower, strip in (("uncased", True, None), ("cased", False, False), ("hu", True, False)):
    t = BertTokenizer(v, do_lower_case=lower, strip_accents=strip)
    t.save_pretrained(d + "/" + name)
    with open(d + "/" + name + ".tok", "w", encoding="utf-8") as f:
        for line in open(txt, encoding="utf-8"):
            f.write(" ".join(t.tokenize(line.rstrip("\n"))) + "\n")
print("files", " ".join(sorted(os.listdir(d + "/uncased"))))
vocab = {"[UNK]": 0, "a": 1, "b": 2, "ab": 3}
for kind, m in (("BPE", models.BPE(vocab, [("a", "b")], unk_token="[UNK]")),
                ("Unigram", models.Unigram([("[UNK]", 0.0), ("a", -1.0), ("b", -2.0)], 0)),
                ("WordLevel", models.WordLevel(vocab, unk_token="[UNK]"))):
    tk = Tokenizer(m)
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.save(d + "/" + kind + ".json")
PYEOF
  expect_rc "transformers saves BertTokenizers, tokenizers BPE, Unigram and WordLevel" 0
  ok "... transformers writes tokenizer.json and no vocab.txt ($(grep files "$out"))" eval 'grep -q "tokenizer.json" "$out" && ! grep -q "vocab.txt" "$out"'
  for n in uncased cased hu; do
    run "$BIN/wp_tokenize" --vocab "$T/tf/$n/tokenizer.json" "$T/text.txt"
    ok "$n: wp_tokenize with transformers' tokenizer.json tokenizes as transformers" cmp -s "$out" "$T/tf/$n.tok"
  done
  for m in BPE Unigram WordLevel; do
    run "$BIN/wp_tokenize" --vocab "$T/tf/$m.json" "$T/text.txt"
    expect_err "tokenizers' $m file is refused" "*$m.json: model type $m: only WordPiece models*"
  done
fi
done_testing
