# What a file declares or starts with is honoured: an XML dump declaring
# ISO-8859-1 gives the pages of its UTF-8 twin (another declared encoding
# is refused by name); a UTF-8 byte order mark before the first record of
# a JSON Lines input (wiki_strip, the text stages) or a config costs
# nothing; a config key written with \u escapes is the key it spells
# (RFC 8259), and numbers JSON does not have (NaN, Infinity, leading
# zeros, +1, .5, 1., hex) are refused with file:line.
. "$TESTS/cli/lib.sh"
BOM=$(printf '\357\273\277')

# ---- XML encodings ----
cat >"$T/u8.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" xml:lang="fr">
  <page>
    <title>Café</title>
    <ns>0</ns>
    <id>7</id>
    <revision>
      <id>70</id>
      <text xml:space="preserve">Le café de Zoë à Noël: ñ, ß, µ, ÿ.</text>
    </revision>
  </page>
</mediawiki>
XML
sed 's/encoding="UTF-8"/encoding="ISO-8859-1"/' "$T/u8.xml" | iconv -f UTF-8 -t ISO-8859-1 >"$T/l1.xml"
"$BIN/wiki_dump" "$T/u8.xml" >"$T/u8.jsonl" 2>/dev/null
run "$BIN/wiki_dump" "$T/l1.xml"
expect_rc "an ISO-8859-1 dump: read" 0
ok "... its pages are those of the UTF-8 one (no U+FFFD)" cmp -s "$out" "$T/u8.jsonl"
bzip2 -c "$T/l1.xml" >"$T/l1.xml.bz2"
run "$BIN/wiki_dump" -j2 "$T/l1.xml.bz2"
ok "... compressed too" cmp -s "$out" "$T/u8.jsonl"
sed 's/encoding="UTF-8"/encoding="windows-1252"/' "$T/u8.xml" >"$T/w.xml"
run "$BIN/wiki_dump" "$T/w.xml"
expect_rc "an encoding not read (windows-1252): exit 1" 1
expect_err "... named, with the conversion" "wiki_dump: $T/w.xml: line 1: the XML declaration says encoding \"windows-1252\"; wiki_dump reads UTF-8, US-ASCII and ISO-8859-1 (convert it: iconv -f windows-1252 -t UTF-8)"

# ---- byte order marks ----
"$BIN/wiki_dump" "$DATA/huwiki-berlin.xml.bz2" >"$T/hu.jsonl" 2>/dev/null
ok "the dump's first line is its siteinfo" grep -q '^{"siteinfo":' "$T/hu.jsonl"
{ printf '%s' "$BOM"; cat "$T/hu.jsonl"; } >"$T/hu-bom.jsonl"
"$BIN/wiki_strip" "$T/hu.jsonl" >"$T/plain.txt" 2>/dev/null
run "$BIN/wiki_strip" "$T/hu-bom.jsonl"
expect_rc "wiki_strip, a byte order mark first: exit 0" 0
ok "... the same text (siteinfo and first page kept)" cmp -s "$out" "$T/plain.txt"
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | tail -n +2 >"$T/pages.jsonl" # no siteinfo
{ printf '%s' "$BOM"; cat "$T/pages.jsonl"; } >"$T/pages-bom.jsonl"
"$BIN/wiki_strip" "$T/pages.jsonl" >"$T/pages.txt" 2>/dev/null
run "$BIN/wiki_strip" "$T/pages-bom.jsonl"
ok "wiki_strip, a byte order mark before the first page: the first page kept" cmp -s "$out" "$T/pages.txt"
ok "... no record called malformed" eval '! grep -q malformed "$err"'
"$BIN/wiki_strip" -F json "$T/hu.jsonl" >"$T/s.jsonl" 2>/dev/null
{ printf '%s' "$BOM"; cat "$T/s.jsonl"; } >"$T/s-bom.jsonl"
"$BIN/sent_split" -j1 -l hu "$T/s.jsonl" >"$T/s.txt" 2>/dev/null
run "$BIN/sent_split" -j1 -l hu "$T/s-bom.jsonl"
ok "sent_split, JSON Lines with a byte order mark: the same sentences" cmp -s "$out" "$T/s.txt"
{ printf '%s' "$BOM"; cat "$T/plain.txt"; } >"$T/plain-bom.txt"
"$BIN/sent_split" -j1 -l hu "$T/plain.txt" >"$T/p.txt" 2>/dev/null
run "$BIN/sent_split" -j1 -l hu "$T/plain-bom.txt"
ok "sent_split, text with a byte order mark: the same sentences" cmp -s "$out" "$T/p.txt"

# ---- the config's JSON ----
"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null | head -12 >"$T/en.txt"
mkdir -p "$T/h5"
"$BIN/hdf5gen" -q --vocab "$TESTS/../data/bert/vocab.txt" --dupe-factor 1 --max-seq-length 64 \
  -o "$T/h5/en_training_0.hdf5" "$T/en.txt"
cfg() { # LINE2: a config whose second line is LINE2
  printf '{"vocab_size": 30522,\n %s,\n "num_hidden_layers": 1, "num_attention_heads": 2,\n' "$1"
  printf ' "intermediate_size": 64, "max_position_embeddings": 64, "hidden_act": "\\u0067elu"}\n'
}
train() { run "$BIN/train_bert_cpu" --input_dir "$T/h5" --config_file "$1" --output_dir "$T/o" --max_steps 1 \
  --train_batch_size 2 --max_predictions_per_seq 20 --skip_checkpoint -j1; }
cfg '"hidden\u005fsize": 32' >"$T/esc.json"
train "$T/esc.json"
expect_rc "\"hidden\\u005fsize\" (and \"\\u0067elu\"): the key it spells" 0
{ printf '%s' "$BOM"; cfg '"hidden_size": 32'; } >"$T/bom.json"
train "$T/bom.json"
expect_rc "a config with a byte order mark: read" 0
for v in NaN Infinity -Infinity 032 +32 .5 32. 0x20 1e; do
  cfg "\"hidden_size\": $v" >"$T/n.json"
  train "$T/n.json"
  expect_rc "hidden_size $v: exit 2" 2
  expect_err "... refused with file:line" "train_bert_cpu: $T/n.json:2: hidden_size: $v is not a JSON number"
done
cfg '"hidden_size": 32, "bos_token_id": null, "use_cache": true, "is_decoder": false, "x": [1, {"y": -0.5e-3}]' >"$T/lit.json"
train "$T/lit.json"
expect_rc "null, true, false and nested values of other keys: read (transformers writes them)" 0
cfg '"hidden_size": 32, "pad_token_id": 00' >"$T/other.json"
train "$T/other.json"
expect_err "a number JSON has not, in a key the model does not use: refused all the same" \
  "train_bert_cpu: $T/other.json:2: pad_token_id: 00 is not a JSON number"
cfg '"hidden_size": 32, "hidden_dropout_prob": NaN' >"$T/d.json"
train "$T/d.json"
expect_err "a NaN dropout: refused too" "train_bert_cpu: $T/d.json:2: hidden_dropout_prob: NaN is not a JSON number"
done_testing
