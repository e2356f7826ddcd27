# CLI tests of the run report (report/run_report.sh, make report) on data
# made here: the Hungarian workflow's phase-1 HDF5 files of the Berlin
# sample (make hu-hdf5-phase1) and 7 logged steps of a tiny train_bert_cpu
# run on them. The page parses with no unclosed tag, loads nothing from
# outside, has a line plot per logged quantity with one point per log line,
# the funnel's counts (pages, articles, sentences, documents kept, shard
# sentences, instances: each bar in its own unit) of the files, the length
# histogram and the [UNK] share of hdf5_check; every curve plot has a
# y-axis label and the total loss stays visible under the MLM loss; make
# report on make demo's WORKDIR counts the demo dump's pages, and a workflow
# without a vocabulary of its own (make en's) names the shipped
# bert-base-uncased one; a training directory
# without workflows and a workflow without training say what is missing.
# Where chromium (or $CHROMIUM) is installed the page is rendered to a PNG that must not
# be blank.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
R=$ROOT/report/run_report.sh
not() { ! "$@"; }
W=$T/work
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" WORKDIR="$W" \
  HU_DUMP="$DATA/huwiki-berlin.xml.bz2" HU_VOCAB_SIZE=1000 HU_SHARDS=1 JOBS=1 hu-hdf5-phase1 >"$T/make.log" 2>&1 ||
  cat "$T/make.log"
V=$W/hu/vocab/vocab.txt
cat >"$T/tiny.json" <<EOF
{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
 "max_position_embeddings": 128, "type_vocab_size": 2, "vocab_size": $(wc -l <"$V"), "hidden_act": "gelu",
 "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
EOF
# the trainer's own log.jsonl in its --output_dir (no redirection)
"$BIN/train_bert_cpu" -q -j 1 --input_dir "$W"/hu/hdf5_*/textcorpus --config_file "$T/tiny.json" --vocab_file "$V" \
  --output_dir "$W/train" --train_batch_size 4 --learning_rate 0.01 --warmup_proportion 0.3 --max_steps 7 \
  --max_predictions_per_seq 20 --num_steps_per_checkpoint 7 --log_freq 1 --seed 1 >/dev/null
steps=$(grep -c '^{"step"' "$W/train/log.jsonl")
ok "the training run logged 7 steps (got $steps)" [ "$steps" -eq 7 ]

# ---- the page of a WORKDIR: training and a workflow ----
P=$T/report.html
run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" report RUN="$W" \
  OUT="$P" REPORT_OPTS="--dump hu=$DATA/huwiki-berlin.xml.bz2"
expect_rc "make report RUN=WORKDIR" 0
ok "the page is written" [ -s "$P" ]
ok "nothing loaded from outside (no script, src, href, url())" not grep -qiE '<script|src=|href=|url\(' "$P"
PY=$(py_with html.parser)
if [ -n "$PY" ]; then
  # prints: unclosed tags, then for each curve plot its polylines' point
  # counts, one line per plot ("title: n n n")
  cat >"$T/check.py" <<'EOF'
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "img", "hr", "link", "input", "wbr"}
class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.bad, self.plots, self.title = [], [], [], None
    def handle_starttag(self, tag, attrs):
        self.open(tag, dict(attrs), True)
    def handle_startendtag(self, tag, attrs):
        self.open(tag, dict(attrs), False)
    def open(self, tag, a, push):
        if tag == "svg" and "curve" in a.get("class", ""):
            self.plots.append(["?"])
        if tag == "title" and self.stack and self.stack[-1] == "svg":
            self.title = True
        if tag in ("polyline", "path") and self.plots and "svg" in self.stack:
            pts = a.get("points") or a.get("d") or ""
            self.plots[-1].append(str(len(pts.replace(",", " ").split()) // 2))
        if push and tag not in VOID:
            self.stack.append(tag)
    def handle_data(self, data):
        if self.title and self.plots and self.plots[-1][0] == "?":
            self.plots[-1][0] = data.strip().replace(" ", "_")
        self.title = None
    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.bad.append(tag)
p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
p.close()
print("unclosed:", " ".join(p.stack), "stray:", " ".join(p.bad))
for plot in p.plots:
    print(" ".join(plot))
EOF
  "$PY" "$T/check.py" "$P" >"$T/parse" 2>&1
  ok "no unclosed or stray tag ($(head -1 "$T/parse"))" [ "$(head -1 "$T/parse")" = "unclosed:  stray: " ]
  ok "5 line plots ($(tail -n +2 "$T/parse" | tr '\n' ';'))" [ "$(tail -n +2 "$T/parse" | wc -l)" -eq 5 ]
  bad=$(tail -n +2 "$T/parse" | awk -v n="$steps" '{ for (i = 2; i <= NF; i++) if ($i != n) print $1 } NF < 2 { print $1 }')
  ok "every series of every plot has one point per log line (${bad:-all do})" [ -z "$bad" ]
else
  echo "not run: the HTML parse (no python3)"
fi
for t in Loss Accuracy "Learning rate" Throughput; do
  ok "a plot titled $t" grep -q "<title>$t" "$P"
done
for s in loss mlm_loss nsp_loss mlm_acc nsp_acc lr seq_per_s; do
  ok "a series $s" grep -q "data-series=\"$s\"" "$P"
done
H=("$W"/hu/hdf5_*/textcorpus/*.hdf5)
"$BIN/hdf5_check" --vocab "$V" "${H[@]}" >"$T/check" 2>&1
inst=$(grep -o '[0-9]* instances' "$T/check" | head -1 | cut -d' ' -f1)
unk=$(grep -o '\[UNK\] [0-9.]* %' "$T/check" | head -1 | cut -d' ' -f2)
pages=$(bzip2 -dc "$DATA/huwiki-berlin.xml.bz2" | grep -c '<page>')
kept=$(awk 'NF && !r { d++ } { r = NF > 0 } END { print d + 0 }' "$W/hu/filtered/wikicorpus_hu.txt")
sents=$(grep -c . "$W/hu/sentences/wikicorpus_hu.txt")
arts=$(awk 'NF && !r { d++ } { r = NF > 0 } END { print d + 0 }' "$W/hu/text/wikicorpus_hu.txt")
ok "funnel: $pages pages" grep -q ">pages</text>.*>$pages pages\? in the dump<" "$P"
ok "funnel: $arts articles, in articles" grep -q ">articles</text>.*>$arts articles\?<" "$P"
ok "funnel: $sents sentences, in sentences" grep -q ">sentences</text>.*>$sents sentences (" "$P"
ok "funnel: $kept documents kept, in documents" grep -q ">documents kept</text>.*>$kept documents\? (" "$P"
ok "funnel: the shards in sentences" grep -q ">shard sentences</text>.*>$(grep -c . "$W"/hu/formatted_text/*.txt) sentences (" "$P"
ok "funnel: $inst instances of hdf5_check" grep -q ">$inst instances (1 file)<" "$P"
ok "funnel: each bar's length is its own count (sentences: log10 of 1 + $sents)" \
  eval '[ "$(grep -o ">sentences</text><rect [^>]*width=\"[0-9.]*\"" "$P" | sed "s/.*width=\"//; s/\"//")" = "$(awk -v s="$sents" -v m="$inst" "BEGIN { mx = s > m ? s : m; printf \"%.1f\", log(1 + s) / log(1 + mx) * 270 }")" ]'
for t in "cross-entropy (nats)" "share predicted right" "learning rate" "sequences / s" "L2 norm (before clipping)"; do
  ok "a y-axis label: $t" grep -q "class=\"ya\" transform=\"rotate(-90 [0-9 ]*)\">$t<" "$P"
done
ok "the total loss is drawn under the MLM loss, wide and pale" \
  eval 'grep -q "<polyline class=\"s1 total\" data-series=\"loss\"" "$P" && grep -q "svg .total{stroke-width:6;stroke-opacity:.35}" "$P" &&
  [ "$(grep -n "data-series=\"loss\"" "$P" | cut -d: -f1)" -lt "$(grep -n "data-series=\"mlm_loss\"" "$P" | cut -d: -f1)" ]'
ok "... named the total in the legend" grep -q ">loss (total)<" "$P"
ok "document checks of text_filter" grep -q 'checked again (text_filter -v' "$P"
ok "a length histogram of the $inst instances" grep -q "<title>Sequence lengths ($inst instances)" "$P"
ok "the histogram's 8 bins" [ "$(grep -o 'class="xl">&lt;=[0-9]*<' "$P" | wc -l)" -eq 8 ]
ok "masked-token shares" grep -q '<title>What the [0-9.]* % masked positions hold' "$P"
ok "[UNK] share $unk %" grep -q ">$unk %</td></tr></table>" "$P"

# ---- logs of resumed runs and of two phases ----
# a run resumed from its checkpoint of step 3 logs steps 4.. again: each
# step's last line is drawn; phase 2's steps count on from phase 1's last
mkdir -p "$T/lg/p/phase1" "$T/lg/p/phase2"
line() { echo "{\"step\": $1, \"loss\": $2, \"mlm_loss\": 1, \"nsp_loss\": 1, \"mlm_acc\": 0, \"nsp_acc\": 0, \"lr\": 0.001, \"grad_norm\": 1, \"seq_per_s\": 1}"; }
{
  echo '{"run": {"program": "train_bert_cpu", "command": "x", "phase": 1, "start_step": 0, "from": null}}'
  for i in 1 2 3 4 5; do line $i 9; done
  echo '{"run": {"program": "train_bert_cpu", "command": "x", "phase": 1, "start_step": 3, "from": "ckpt_3.wbckpt"}}'
  for i in 4 5 6; do line $i 8; done
} >"$T/lg/p/phase1/log.jsonl"
{
  echo '{"run": {"program": "train_bert_cpu", "command": "x", "phase": 2, "phase1_end_step": 6, "start_step": 0, "from": "ckpt_6.wbckpt"}}'
  for i in 1 2; do line $i 7; done
} >"$T/lg/p/phase2/log.jsonl"
run "$R" -b "$BIN" "$T/lg/p/phase1"
# the loss curve's y values, one a point
ys() { grep -o '<polyline [^>]*data-series="loss" points="[^"]*"' "$1" | sed 's/.*points="//; s/"$//' | tr ' ' '\n' | cut -d, -f2 | tr '\n' ' '; }
ok "a resumed run: each step once, steps 4-6 the resumed run's ($(ys "$out"))" \
  eval 'grep -q "log.jsonl: 6 logged steps, step 1 to 6\." "$out" &&
  ys "$out" | awk "{ exit !(NF == 6 && \$1 == \$3 && \$4 == \$6 && \$3 != \$4) }"'
run "$R" -b "$BIN" "$T/lg"
ok "phase1/ and phase2/ of one run: drawn together, phase 2 as steps 7 and 8" \
  eval 'grep -q "phase1/log.jsonl and [^ ]*phase2/log.jsonl: 8 logged steps, step 1 to 8\." "$out" && grep -q "<td>step 8</td><td>7</td>" "$out" &&
  ! grep -q "Not drawn" "$out"'

# ---- the demo's report counts pages; a workflow without vocabulary names the shipped one ----
run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" report RUN="$W" \
  OUT="$T/demo.html" DEMO_VARS="WORKDIR=$W HU_DUMP=$DATA/huwiki-berlin.xml.bz2"
expect_rc "make report on make demo's WORKDIR (DEMO_VARS), no REPORT_OPTS" 0
ok "... counts the pages of the demo's dump" grep -q ">$pages pages\? in the dump<" "$T/demo.html"
mkdir -p "$T/w2/en"
cp -r "$W"/hu/hdf5_* "$T/w2/en/"
run "$R" -b "$BIN" "$T/w2"
ok "a workflow without vocabulary (make en's layout) names the shipped one" \
  grep -q "Vocabulary: data/bert/vocab.txt (bert-base-uncased, the shipped vocabulary: make en.s default VOCAB)" "$out"
run "$R" -b "$BIN" --vocab "en=$V" "$T/w2"
ok "... --vocab en=FILE names that one" grep -q "Vocabulary: $V\." "$out"

# ---- missing pieces ----
run "$R" -b "$BIN" "$W/train"
expect_rc "a training directory alone" 0
ok "... says there is no workflow" grep -q 'class="missing">No workflow directory' "$out"
ok "... still plots" grep -q 'data-series="loss"' "$out"
run "$R" -b "$BIN" "$W/hu"
expect_rc "a workflow alone" 0
ok "... says there is no training log" grep -q 'class="missing">No training log' "$out"
ok "... says the pages are not counted" grep -q 'pages: not counted' "$out"
ok "... still has the histogram" grep -q '<title>Sequence lengths' "$out"
run "$R" -b "$BIN" --dump "en=$DATA/huwiki-berlin.xml.bz2" "$W"
ok "a dump named for another workflow is not counted" grep -q 'pages: not counted' "$out"
mkdir -p "$W/train2"
cp "$W/train/log.jsonl" "$W/train2/log.jsonl"
run "$R" -b "$BIN" "$W"
ok "a second log is named, not drawn" grep -q "Not drawn (make a page of each): $W/train2/log.jsonl" "$out"
mkdir -p "$T/nothing"
run "$R" -b "$BIN" "$T/nothing"
expect_rc "nothing to report" 1
expect_err "... says so" "*nothing to report*"
run "$R" -b "$BIN" "$T/absent"
expect_rc "a missing directory" 1
run "$R" --frobnicate "$W"
expect_rc "a bad option" 2
run "$R" -b "$BIN" -o "$P" "$W"
expect_rc "an existing output without -f" 1
run "$R" -h
expect_rc "-h" 0
ok "-h prints the usage on stdout" grep -q 'run_report.sh \[-b BIN\]' "$out"
ok "no temporary file left beside the page" [ -z "$(find "$T" -maxdepth 1 -name 'report.html.tmp*')" ]

# ---- rendered by a browser ----
CHROMIUM=${CHROMIUM:-chromium} # CHROMIUM=none: as if it were absent
if command -v "$CHROMIUM" >/dev/null 2>&1 && [ -n "$PY" ]; then
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chromium" \
    --window-size=1360,2400 --screenshot="$T/page.png" "file://$P" >"$T/chromium.log" 2>&1
  # not blank: the decoded pixels hold many values and many non-white bytes
  cat >"$T/png.py" <<'EOF'
import sys, zlib, struct
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
i, idat = 8, b""
while i < len(d):
    n, kind = struct.unpack(">I4s", d[i:i + 8])
    if kind == b"IDAT":
        idat += d[i + 8:i + 8 + n]
    i += 12 + n
px = zlib.decompress(idat)
print(len(set(px)), sum(1 for b in px[::7] if b < 200))
EOF
  read -r values dark < <("$PY" "$T/png.py" "$T/page.png" 2>/dev/null || echo 0 0)
  ok "chromium renders a page that is not blank ($values byte values, $dark dark samples)" \
    eval '[ "$values" -ge 32 ] && [ "$dark" -ge 1000 ]'
else
  echo "not run: the screenshot (no chromium or no python3)"
fi
done_testing
