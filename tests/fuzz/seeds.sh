#!/usr/bin/env bash
# tests/fuzz/seeds.sh - derive the seed corpus of make fuzz from tests/data
# with the programs of BIN: a few small files per target, in OUT/<target>/.
#
#   tests/fuzz/seeds.sh BIN OUT
#
#   mwxml     the head of each sample dump closed after its first pages,
#                a multistream fragment, the head of the UTF-16 dump
#   wikitext     the wikitext of sample pages (wiki_dump's "text"), cut to 8 kB
#   segmenter    paragraphs of wiki_strip and the golden-rule texts
#   wordpiece    sentences of sent_split; the head of data/bert/vocab.txt
#   mlmcheck      hdf5gen files (masked, unmasked) from a tiny vocabulary
#   bert_config  the configs of tests/cli/train_bert_cpu.sh and an export's
#   ckpt         train_bert_cpu checkpoints (LAMB, AdamW) of fuzz_ckpt.c's model
#   safetensors  the Hugging Face export of that model (model.safetensors)
#   bz2          bzip2 of sample text at levels 1 and 9, two streams, a cut dump
#   spmodel      vocab_train models (nmt_nfkc with its table, identity)
#   spvocab      their .vocab files
#   langid       a langid_train model of a few sample sentences
#   docfmt       wiki_strip's doc, json and lines layouts; sent_split's output
#   jsonl        wiki_dump's JSON Lines and wiki_strip -F json, cut to 4 kB
# The committed tests/fuzz/corpus/<target>/ files join them in make fuzz.
set -eu # no pipefail: heads of streams end their writers with SIGPIPE
BIN=$(cd "$1" && pwd)
OUT=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA=$ROOT/tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$OUT"
for t in mwxml wikitext segmenter wordpiece mlmcheck bert_config ckpt safetensors bz2 spmodel spvocab \
  langid docfmt jsonl; do mkdir -p "$OUT/$t"; done

# mwxml: siteinfo and the first 2 pages, then the closing tag
for d in enwiki-3 enwiki-tables huwiki-berlin elwikivoyage-17; do
  bzip2 -dc "$DATA/$d.xml.bz2" | awk '{print} /<\/page>/ && ++n == 2 {exit}' | head -c 20000 >"$OUT/mwxml/$d.xml"
  echo "</mediawiki>" >>"$OUT/mwxml/$d.xml"
done
bzip2 -dc "$DATA/elwikivoyage-17.multistream-noheader.xml.bz2" | head -c 6000 >"$OUT/mwxml/fragment-cut.xml"
bzip2 -dc "$DATA/bgwiki-utf16.xml.bz2" | head -c 2000 >"$OUT/mwxml/utf16-head.xml"

# wikitext: page texts; segmenter: paragraphs; wordpiece: sentences
for d in enwiki-3 enwiki-tables huwiki-berlin elwikivoyage-17; do
  "$BIN/wiki_dump" -q "$DATA/$d.xml.bz2" >"$tmp/$d.jsonl"
  if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if "text" not in r: continue
    open("%s/%s-%d.txt" % (sys.argv[2], sys.argv[3], n), "wb").write(r["text"].encode("utf-8")[:8192])
    n += 1
    if n == 3: break
' "$tmp/$d.jsonl" "$OUT/wikitext" "$d"
  fi
  "$BIN/wiki_strip" -q -F lines "$tmp/$d.jsonl" >"$tmp/$d.txt"
  lang=en
  [ "$d" = huwiki-berlin ] && lang=hu
  awk 'length > 200 && n < 3 {print substr($0, 1, 2500) > sprintf("%s/%s-%d.txt", dir, d, n++)}' \
    dir="$OUT/segmenter" d="$d" "$tmp/$d.txt"
  "$BIN/sent_split" -q -j1 -l "$lang" "$tmp/$d.txt" >"$tmp/$d.sent"
  awk 'length > 40 && n < 3 {print > sprintf("%s/%s-%d.txt", dir, d, n++)}' dir="$OUT/wordpiece" d="$d" "$tmp/$d.sent"
done
if command -v python3 >/dev/null 2>&1; then
  python3 -c '
import json, sys
for i, line in enumerate(open(sys.argv[1], encoding="utf-8")):
    if i % 10: continue
    open("%s/golden-%d.txt" % (sys.argv[2], i), "wb").write(json.loads(line)["text"].encode("utf-8"))
' "$DATA/sentseg/golden_rules_en.jsonl" "$OUT/segmenter"
fi
head -n 1200 "$ROOT/data/bert/vocab.txt" >"$OUT/wordpiece/vocab-head.txt"

# mlmcheck and ckpt: a 40-token vocabulary (the specials and the commonest
# words of the English sample), hdf5gen files of it, a tiny model trained
# on them for one step
head -c 4000 "$tmp/enwiki-3.sent" >"$tmp/small.txt"
{ printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n'
  tr -cs 'a-z' '\n' <"$tmp/enwiki-3.sent" | sort | uniq -c | sort -rn | awk 'NR <= 35 {print $2}'; } >"$tmp/vocab.txt"
mkdir -p "$tmp/h5"
"$BIN/hdf5gen" -q --vocab "$tmp/vocab.txt" --dupe-factor 1 --max-seq-length 32 --max-predictions-per-seq 5 \
  -o "$tmp/h5/tiny_training_0.hdf5" "$tmp/small.txt"
"$BIN/hdf5gen" -q --vocab "$tmp/vocab.txt" --dupe-factor 1 --max-seq-length 16 --no-mask --nsp 0 \
  -o "$OUT/mlmcheck/plain16.hdf5" "$tmp/small.txt"
cp "$tmp/h5/tiny_training_0.hdf5" "$OUT/mlmcheck/masked32.hdf5"
cat >"$OUT/bert_config/tiny.json" <<'JSON'
{"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
 "max_position_embeddings": 32, "type_vocab_size": 2, "vocab_size": 40, "hidden_act": "gelu"}
JSON
cat >"$OUT/bert_config/cli-tiny.json" <<'JSON'
{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": 30522, "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
JSON
for opt in lamb adamw; do
  "$BIN/train_bert_cpu" --input_dir "$tmp/h5" --config_file "$OUT/bert_config/tiny.json" --output_dir "$tmp/$opt" \
    --train_batch_size 2 --max_steps 1 --max_predictions_per_seq 5 --num_steps_per_checkpoint 1 \
    --optimizer "$opt" -j1 >/dev/null 2>&1
  cp "$tmp/$opt/ckpt_1.wbckpt" "$OUT/ckpt/$opt.wbckpt"
done
cp "$tmp/lamb/hf/config.json" "$OUT/bert_config/hf-export.json"
cp "$tmp/lamb/hf/model.safetensors" "$OUT/safetensors/tiny-export.safetensors"

# bz2: small streams of sample text, two streams in one file, a cut dump
head -c 3000 "$tmp/enwiki-3.sent" >"$tmp/t3k.txt"
bzip2 -1 -c "$tmp/t3k.txt" >"$OUT/bz2/text-level1.bz2"
bzip2 -9 -c "$tmp/t3k.txt" >"$OUT/bz2/text-level9.bz2"
{ bzip2 -c "$tmp/small.txt"; bzip2 -c "$tmp/t3k.txt"; } >"$OUT/bz2/two-streams.bz2"
head -c 6000 "$DATA/huwiki-berlin.xml.bz2" >"$OUT/bz2/huwiki-cut.bz2"
: | bzip2 -c >"$OUT/bz2/empty.bz2"

# spmodel, spvocab: BPE models of the sample sentences
for norm in nmt_nfkc identity; do
  "$BIN/vocab_train" -q -j1 --vocab-size 80 --normalization "$norm" -o "$tmp/sp-$norm" "$tmp/enwiki-3.sent"
  cp "$tmp/sp-$norm.model" "$OUT/spmodel/$norm.model"
  cp "$tmp/sp-$norm.vocab" "$OUT/spvocab/$norm.vocab"
done

# langid: a model of a few sentences in two languages
{ head -n 40 "$tmp/huwiki-berlin.sent" | awk 'NF {print "hu\t" $0}'
  head -n 40 "$tmp/enwiki-3.sent" | awk 'NF {print "en\t" $0}'; } >"$tmp/lid.tsv"
"$BIN/langid_train" -q --top 50 --min-count 1 -o "$OUT/langid/tiny.txt" "$tmp/lid.tsv"

# docfmt, jsonl: the stages' layouts, cut
for f in doc json lines; do
  "$BIN/wiki_strip" -q -F "$f" "$tmp/enwiki-3.jsonl" | head -c 6000 >"$OUT/docfmt/enwiki-3-$f.txt"
done
head -c 4000 "$tmp/huwiki-berlin.sent" >"$OUT/docfmt/huwiki-sentences.txt"
head -c 4000 "$tmp/enwiki-3.jsonl" >"$OUT/jsonl/enwiki-3-pages.jsonl"
"$BIN/wiki_strip" -q -F json "$tmp/huwiki-berlin.jsonl" | head -c 4000 >"$OUT/jsonl/huwiki-json.jsonl"
cp "$OUT/bert_config/hf-export.json" "$OUT/jsonl/hf-config.json"
for t in "$OUT"/*/; do
  [ -n "$(find "$t" -type f -size +0)" ] || { echo "fuzz: no seeds for $(basename "$t")" >&2; exit 1; }
done
echo "fuzz: seeds in $OUT: $(find "$OUT" -type f | wc -l) files"
