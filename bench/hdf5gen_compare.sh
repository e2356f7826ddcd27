#!/usr/bin/env bash
# bench/hdf5gen_compare.sh - bin/hdf5gen against NVIDIA's
# create_pretraining_data.py, HDF5 file against HDF5 file: the data, the
# speed and the peak memory of both.
#
# The original (DeepLearningExamples at 4733603, PyTorch/LanguageModeling/
# BERT/create_pretraining_data.py + tokenization.py) is fetched at bench
# time into $W/nvidia-bert and never committed; tried in this order:
# $NV_BERT_DIR holding both files; $W/nvidia-bert from an earlier run;
# `git show` from a local clone named by $DLE_GIT; a download of the raw
# files at that commit. Both must have the recorded sha256. Its
# file_utils.py (needed only by BertTokenizer.from_pretrained, and pulling in
# boto3 and requests) is replaced by a one-function stub. It runs in
# $W/venv3 (h5py, numpy, six, tqdm installed there if missing) through
# bench/hdf5gen_ref.py run, which times its phases.
#
# Every comparison runs the original and bin/hdf5gen on the same shard with
# the same parameters and compares the two HDF5 files with
# `hdf5gen_ref.py compare`: the six datasets present in both, same dtype,
# same shape, identical values. The chunk shapes and filters of both files
# are printed once, for information. Shards: BERT-format text (one sentence
# per line, blank line between documents) made from tests/data by
# wiki_dump | wiki_strip -F lines | sent_split. Compared:
#   - the small shards x seq 128 (P 20) and 512 (P 80) x dupe_factor 1..5 x
#     the seeds in $HG_SEEDS
#   - the 206-page shard, seq 128 and 512, dupe_factor 5, seed 12345
#   - \r\n and lone-\r line ends; a vocabulary with duplicate lines;
#     other masked_lm_prob / short_seq_prob / max_predictions values
#   - hdf5gen --whole-word-mask against the original with Google's
#     create_masked_lm_predictions and do_whole_word_mask
#     (google-research/bert at eedf571, fetched the same way into
#     $W/google-bert; $GOOGLE_BERT_GIT for a local clone)
# HG_COMPARE=0 skips these.
# Speed and memory (HG_SPEED=0 skips them): the 206-page shard repeated
# $HG_COPIES times, dupe_factor 5, seq 128 (P 20) and 512 (P 80): the
# original on one core ($CORE1; once) against hdf5gen -j1 on the same core
# and hdf5gen -j2 (best of $REPS each): wall clock and CPU time of the whole
# process, MB/s of text and instances/s; and two shards (two copies of that
# shard, one output directory) with -j1 against -j2. Every output of these
# runs is compared with the original's too. Peak RSS (/usr/bin/time %M) of
# the original and of hdf5gen -j1. A "== summary" block at the end holds
# all ratios; the exit status is 1 when any comparison differs.
#   bash bench/hdf5gen_compare.sh
#   HG_SEEDS=12345 HG_COPIES=1 REPS=1 bash bench/hdf5gen_compare.sh   (quick)
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
HG_SEEDS=${HG_SEEDS:-"12345 1 987654321"}
HG_COPIES=${HG_COPIES:-2}
NV_COMMIT=4733603577080dbd1bdcd51864f31e45d5196704
NV_SUB=PyTorch/LanguageModeling/BERT
NV_SHA_CPD=2aac140e1e037411fd017052040ab2e49bbed8e9779030b51d9b455195592aff
NV_SHA_TOK=01ba033a4ac2fec5aef36b27efd5fbc3ba07be5c6bcbb10258ca83c8689e8a52
GB_COMMIT=eedf5716ce1268e56f0a50264a88cafad334ac61
GB_SHA=7c3df7749e6327f85fdd00adaf6ed55d6399ee58d3d844d2281db60b36129b21
PY=$W/venv3/bin/python
REF=$ROOT/bench/hdf5gen_ref.py
HG=$BIN/hdf5gen
VOCAB=$ROOT/data/bert/vocab.txt
D=$W/hdf5gen
mkdir -p "$D"

sha_is() { [ -f "$1" ] && [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$2" ]; }

# fetch_file DEST SHA REPO COMMIT PATH GITDIR...: the file at that commit.
fetch_file() {
  local dest=$1 sha=$2 repo=$3 commit=$4 path=$5 g
  shift 5
  sha_is "$dest" "$sha" && return 0
  for g in "$@"; do
    [ -n "$g" ] && [ -d "$g" ] && git -C "$g" show "$commit:$path" >"$dest.tmp" 2>/dev/null && mv "$dest.tmp" "$dest" && break
  done
  rm -f "$dest.tmp"
  sha_is "$dest" "$sha" || curl -fsSL --max-time 30 -o "$dest" \
    "https://raw.githubusercontent.com/$repo/$commit/$path" 2>/dev/null || true
  sha_is "$dest" "$sha"
}

NV=$W/nvidia-bert
if [ -n "${NV_BERT_DIR:-}" ] && sha_is "$NV_BERT_DIR/create_pretraining_data.py" "$NV_SHA_CPD" &&
   sha_is "$NV_BERT_DIR/tokenization.py" "$NV_SHA_TOK"; then
  mkdir -p "$NV"
  cp "$NV_BERT_DIR/create_pretraining_data.py" "$NV_BERT_DIR/tokenization.py" "$NV/"
fi
mkdir -p "$NV"
if ! fetch_file "$NV/create_pretraining_data.py" "$NV_SHA_CPD" NVIDIA/DeepLearningExamples "$NV_COMMIT" \
       "$NV_SUB/create_pretraining_data.py" "${DLE_GIT:-}" ||
   ! fetch_file "$NV/tokenization.py" "$NV_SHA_TOK" NVIDIA/DeepLearningExamples "$NV_COMMIT" \
       "$NV_SUB/tokenization.py" "${DLE_GIT:-}"; then
  echo "bench: NVIDIA's create_pretraining_data.py/tokenization.py ($NV_COMMIT) cannot be obtained:" >&2
  echo "bench: set NV_BERT_DIR to a directory holding both, or DLE_GIT to a DeepLearningExamples clone" >&2
  exit 1
fi
printf 'def cached_path(url_or_filename, cache_dir=None):\n    return url_or_filename\n' >"$NV/file_utils.py"
GB=$W/google-bert
mkdir -p "$GB"
GOOGLE=
fetch_file "$GB/create_pretraining_data.py" "$GB_SHA" google-research/bert "$GB_COMMIT" \
  create_pretraining_data.py "${GOOGLE_BERT_GIT:-}" && GOOGLE=$GB/create_pretraining_data.py

[ -x "$PY" ] || python3 -m venv "$W/venv3"
"$PY" -c 'import h5py, numpy, six, tqdm' 2>/dev/null || "$W/venv3/bin/pip" install -q h5py numpy six tqdm
"$PY" -c 'import sys, h5py, numpy; print("python", sys.version.split()[0], "h5py", h5py.__version__, "numpy", numpy.__version__)'

make -C "$ROOT" -s all >/dev/null
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time (GNU time) is needed for the peak memory" >&2; exit 1; }
read -ra one_core <<<"$CORE1"

# ---- shards ----
S=$D/shards
mkdir -p "$S"
shard() { # name lang
  [ -s "$S/$1.txt" ] || "$BIN/wiki_dump" "$ROOT/tests/data/$1.xml.bz2" 2>/dev/null |
    "$BIN/wiki_strip" -F lines 2>/dev/null | "$BIN/sent_split" -j1 -l "$2" 2>/dev/null >"$S/$1.txt"
}
shard enwiki-3 en
shard huwiki-berlin hu
shard enwiki-tables en
shard elwikivoyage-17 en
shard enwiki-206 en
sed 's/$/\r/' "$S/enwiki-3.txt" >"$S/enwiki-3-crlf.txt"
tr '\n' '\r' <"$S/huwiki-berlin.txt" >"$S/huwiki-berlin-cr.txt"
{ cat "$VOCAB"; printf 'the\n##s\n.\n[MASK]\nberlin\n'; } >"$D/vocab-dup.txt"
SMALL="enwiki-3 huwiki-berlin enwiki-tables elwikivoyage-17"
for s in $SMALL enwiki-206; do
  printf '%-16s %7d lines %9d bytes %4d documents\n' "$s" "$(wc -l <"$S/$s.txt")" "$(wc -c <"$S/$s.txt")" \
    "$(($(grep -c '^$' "$S/$s.txt") + 0))"
done

# ---- HDF5 against HDF5 ----
runs=0 rows=0 bad=0 layout_done=0 last_rows=0
# check LABEL ORIGINAL OURS [layout]: compares two HDF5 files, prints one
# line (and the layout once, when asked), counts; last_rows = their rows.
check() {
  local label=$1 a=$2 b=$3 lay=()
  [ "${4:-}" = layout ] && [ "$layout_done" = 0 ] && lay=(--layout) && layout_done=1
  runs=$((runs + 1)) last_rows=0
  if "$PY" "$REF" compare "${lay[@]}" "$a" "$b" >"$D/cmp.txt"; then
    [ ${#lay[@]} = 0 ] || sed '$d' "$D/cmp.txt"
    last_rows=$(sed -n '$s/^identical: \([0-9]*\) rows$/\1/p' "$D/cmp.txt")
    rows=$((rows + last_rows))
    printf '  same  %7d rows  %s\n' "$last_rows" "$label"
  else
    bad=$((bad + 1))
    [ ${#lay[@]} = 0 ] || grep '^layout\|^  ' "$D/cmp.txt" || true
    printf '  DIFF  %s\n' "$label"
    grep -v '^layout\|^  ' "$D/cmp.txt" | sed 's/^/          /' || true
  fi
}

# original ARGS...: the original with its own command line; exits the bench
# when it fails (the bench is then broken, not hdf5gen).
original() {
  "$PY" "$REF" run "$NV" "$@" >/dev/null 2>"$D/ref.log" ||
    { cat "$D/ref.log" >&2; echo "bench: the original failed" >&2; exit 1; }
}

# compare LABEL SHARD VOCAB SEQ PRED DUPE SEED MLM SHORT [wwm] [layout]:
# the original and hdf5gen -j1 with the same parameters, then check.
compare() {
  local label=$1 shard=$2 vocab=$3 g=() o=()
  local p=(--max_seq_length "$4" --max_predictions_per_seq "$5" --dupe_factor "$6" --random_seed "$7"
           --masked_lm_prob "$8" --short_seq_prob "$9")
  [ "${10:-}" = wwm ] && g=(--google-wwm "$GOOGLE") && o=(--whole-word-mask)
  rm -f "$D/ref.hdf5" "$D/our.hdf5"
  original "${g[@]}" -- --vocab_file "$vocab" --input_file "$shard" --output_file "$D/ref.hdf5" "${p[@]}"
  if ! "$HG" -q -j1 -f --vocab "$vocab" "${p[@]}" "${o[@]}" -o "$D/our.hdf5" "$shard" 2>"$D/our.log"; then
    runs=$((runs + 1)) bad=$((bad + 1))
    printf '  DIFF  %s\n          hdf5gen failed: %s\n' "$label" "$(tail -1 "$D/our.log")"
    return 0
  fi
  check "$label" "$D/ref.hdf5" "$D/our.hdf5" "${11:-}"
}

if [ "${HG_COMPARE:-1}" = 1 ]; then
  echo "== HDF5 files: small shards x seq x dupe_factor x seed"
  for s in $SMALL; do
    for seq in 128 512; do
      pred=$([ "$seq" = 128 ] && echo 20 || echo 80)
      for dupe in 1 2 3 4 5; do
        for seed in $HG_SEEDS; do
          compare "$s seq $seq dupe $dupe seed $seed" "$S/$s.txt" "$VOCAB" "$seq" "$pred" "$dupe" "$seed" 0.15 0.1
        done
      done
    done
  done
  echo "== HDF5 files: 206-page shard"
  compare "enwiki-206 seq 128 dupe 5 seed 12345" "$S/enwiki-206.txt" "$VOCAB" 128 20 5 12345 0.15 0.1 '' layout
  compare "enwiki-206 seq 512 dupe 5 seed 12345" "$S/enwiki-206.txt" "$VOCAB" 512 80 5 12345 0.15 0.1
  echo "== HDF5 files: line ends, vocabulary, parameters"
  compare "enwiki-3 \\r\\n seq 128 dupe 3" "$S/enwiki-3-crlf.txt" "$VOCAB" 128 20 3 12345 0.15 0.1
  compare "huwiki-berlin lone \\r seq 128 dupe 3" "$S/huwiki-berlin-cr.txt" "$VOCAB" 128 20 3 12345 0.15 0.1
  compare "enwiki-3 duplicate vocab lines dupe 5" "$S/enwiki-3.txt" "$D/vocab-dup.txt" 128 20 5 7 0.15 0.1
  compare "huwiki-berlin duplicate vocab lines dupe 5" "$S/huwiki-berlin.txt" "$D/vocab-dup.txt" 128 20 5 7 0.15 0.1
  compare "enwiki-tables mlm 0.3 short 0.5 P 30" "$S/enwiki-tables.txt" "$VOCAB" 128 30 3 3 0.3 0.5
  compare "enwiki-3 seq 64 mlm 0.25 short 0 P 10" "$S/enwiki-3.txt" "$VOCAB" 64 10 3 3 0.25 0
  compare "enwiki-3 seq 256 short 1 P 40" "$S/enwiki-3.txt" "$VOCAB" 256 40 2 3 0.15 1
  if [ -n "$GOOGLE" ]; then
    echo "== HDF5 files: --whole-word-mask against Google's create_masked_lm_predictions (do_whole_word_mask)"
    for s in enwiki-3 huwiki-berlin enwiki-tables; do
      compare "$s whole-word seq 128 dupe 3" "$S/$s.txt" "$VOCAB" 128 20 3 12345 0.15 0.1 wwm
    done
    compare "enwiki-206 whole-word seq 512 dupe 2" "$S/enwiki-206.txt" "$VOCAB" 512 80 2 12345 0.15 0.1 wwm
  else
    echo "== whole-word: not run (google-research/bert's create_pretraining_data.py cannot be obtained)"
  fi
  echo "compared: $runs runs, $rows rows, $bad with differences"
fi

# ---- speed and memory ----
# measure CMD...: runs it once (output to $D/run.log); sets m_wall (s),
# m_cpu (user + system s) and m_rss (peak RSS, KB).
measure() {
  local s e u y
  s=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$D/time.txt" "$@" >/dev/null 2>"$D/run.log" ||
    { cat "$D/run.log" >&2; echo "bench: command failed: $*" >&2; exit 1; }
  e=$(date +%s.%N)
  read -r u y m_rss <"$D/time.txt"
  m_wall=$(echo "$e - $s" | bc) m_cpu=$(echo "$u + $y" | bc)
}
# best CMD...: measure $REPS times; sets b_wall and b_cpu of the fastest run,
# b_rss the highest peak and b_line hdf5gen's summary line of the fastest.
best() {
  local i
  b_wall="" b_rss=0
  for ((i = 0; i < REPS; i++)); do
    measure "$@"
    if [ -z "$b_wall" ] || [ "$(echo "$m_wall < $b_wall" | bc)" = 1 ]; then
      b_wall=$m_wall b_cpu=$m_cpu b_line=$(grep '^hdf5gen: .* written' "$D/run.log" || true)
    fi
    if [ "$m_rss" -gt "$b_rss" ]; then b_rss=$m_rss; fi
  done
}
mb() { printf '%.1f' "$(echo "$1 * 1024 / 1000000" | bc -l)"; } # KB -> MB (10^6 bytes)
per() { printf '%.0f' "$(echo "$1 / $2" | bc -l)"; }
summary=()
speed() { # seq pred
  local seq=$1 pred=$2 bytes ow oc orss ref j1w j1c j1rss j1line j2w j2c j2rss tw1 tw2 inst
  local p=(--max_seq_length "$seq" --max_predictions_per_seq "$pred" --dupe_factor 5 --random_seed 12345
           --masked_lm_prob 0.15 --short_seq_prob 0.1)
  bytes=$(wc -c <"$D/speed.txt")
  echo "== speed and memory: enwiki-206 x $HG_COPIES ($bytes bytes, $(wc -l <"$D/speed.txt") lines), seq $seq, P $pred, dupe_factor 5"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall-clock times include waiting for a core)"
  rm -f "$D/speed-ref.hdf5"
  measure "${one_core[@]}" "$PY" "$REF" run "$NV" -- --vocab_file "$VOCAB" --input_file "$D/speed.txt" \
    --output_file "$D/speed-ref.hdf5" "${p[@]}"
  ow=$m_wall oc=$m_cpu orss=$m_rss ref=$(grep '^ref:' "$D/run.log")
  best "${one_core[@]}" "$HG" -j1 -f --vocab "$VOCAB" "${p[@]}" -o "$D/speed-j1.hdf5" "$D/speed.txt"
  j1w=$b_wall j1c=$b_cpu j1rss=$b_rss j1line=$b_line
  best "$HG" -j2 -f --vocab "$VOCAB" "${p[@]}" -o "$D/speed-j2.hdf5" "$D/speed.txt"
  j2w=$b_wall j2c=$b_cpu j2rss=$b_rss
  best "$HG" -j1 -f --vocab "$VOCAB" "${p[@]}" -o "$D/two-j1/" "$D/two/speed-a.txt" "$D/two/speed-b.txt"
  tw1=$b_wall
  best "$HG" -j2 -f --vocab "$VOCAB" "${p[@]}" -o "$D/two-j2/" "$D/two/speed-a.txt" "$D/two/speed-b.txt"
  tw2=$b_wall
  check "speed shard seq $seq: original vs ours -j1" "$D/speed-ref.hdf5" "$D/speed-j1.hdf5" layout
  inst=$last_rows
  check "speed shard seq $seq: original vs ours -j2" "$D/speed-ref.hdf5" "$D/speed-j2.hdf5"
  check "speed shard seq $seq: original vs two shards -j1 (first)" "$D/speed-ref.hdf5" "$D/two-j1/speed-a.hdf5"
  check "speed shard seq $seq: original vs two shards -j2 (second)" "$D/speed-ref.hdf5" "$D/two-j2/speed-b.hdf5"
  printf 'original, one core     wall %8.3f s  cpu %8.3f s  peak RSS %7s MB  (%s)\n' "$ow" "$oc" "$(mb "$orss")" "$ref"
  printf 'ours -j1, one core     wall %8.3f s  cpu %8.3f s  peak RSS %7s MB  %s MB/s  %s instances/s\n' "$j1w" "$j1c" \
    "$(mb "$j1rss")" "$(mbps "$bytes" "$j1w")" "$(per "$inst" "$j1w")"
  printf 'ours -j2               wall %8.3f s  cpu %8.3f s  peak RSS %7s MB  %s MB/s  %s instances/s\n' "$j2w" "$j2c" \
    "$(mb "$j2rss")" "$(mbps "$bytes" "$j2w")" "$(per "$inst" "$j2w")"
  printf 'two shards, ours -j1   wall %8.3f s  %s MB/s  %s instances/s\n' "$tw1" "$(mbps $((2 * bytes)) "$tw1")" \
    "$(per $((2 * inst)) "$tw1")"
  printf 'two shards, ours -j2   wall %8.3f s  %s MB/s  %s instances/s\n' "$tw2" "$(mbps $((2 * bytes)) "$tw2")" \
    "$(per $((2 * inst)) "$tw2")"
  echo "ours -j1, its own line: ${j1line:-none}"
  summary+=(
    "seq $seq P $pred, dupe_factor 5, $inst instances from $(printf '%.2f' "$(echo "$bytes / 1000000" | bc -l)") MB of text:"
    "$(printf '  original (one core)  wall %8.3f s  cpu %8.3f s  peak %7s MB' "$ow" "$oc" "$(mb "$orss")")"
    "$(printf '  ours -j1 (one core)  wall %8.3f s  cpu %8.3f s  peak %7s MB = %s MB per MB of text  %s MB/s  %s inst/s' \
      "$j1w" "$j1c" "$(mb "$j1rss")" "$(printf '%.1f' "$(echo "$j1rss * 1024 / $bytes" | bc -l)")" \
      "$(mbps "$bytes" "$j1w")" "$(per "$inst" "$j1w")")"
    "$(printf '  ours -j2             wall %8.3f s  cpu %8.3f s  %s MB/s  %s inst/s' "$j2w" "$j2c" \
      "$(mbps "$bytes" "$j2w")" "$(per "$inst" "$j2w")")"
    "$(printf '  two shards           -j1 wall %.3f s, -j2 wall %.3f s' "$tw1" "$tw2")"
    "$(printf '  ratios: original/ours-j1 wall %sx cpu %sx; original/ours-j2 wall %sx; two shards j1/j2 %sx; memory ours-j1/original %s' \
      "$(ratio "$ow" "$j1w")" "$(ratio "$oc" "$j1c")" "$(ratio "$ow" "$j2w")" "$(ratio "$tw1" "$tw2")" \
      "$(ratio "$j1rss" "$orss")")"
  )
}
if [ "${HG_SPEED:-1}" = 1 ]; then
  : >"$D/speed.txt"
  for ((i = 0; i < HG_COPIES; i++)); do cat "$S/enwiki-206.txt" >>"$D/speed.txt"; done
  mkdir -p "$D/two"
  cp "$D/speed.txt" "$D/two/speed-a.txt"
  cp "$D/speed.txt" "$D/two/speed-b.txt"
  speed 128 20
  speed 512 80
fi

echo "== summary"
echo "HDF5 against HDF5 (six datasets: dtype, shape, values): $runs comparisons, $rows rows, $bad with differences"
[ "${HG_COMPARE:-1}" = 1 ] || echo "  (HG_COMPARE=0: the shard comparisons were skipped)"
if [ ${#summary[@]} -gt 0 ]; then
  echo "speed: enwiki-206 x $HG_COPIES, best of $REPS for ours; original once; one core = '${CORE1:-no taskset}'; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%s\n' "${summary[@]}"
fi
[ "$bad" -eq 0 ]
