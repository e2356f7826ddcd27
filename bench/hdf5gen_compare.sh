#!/usr/bin/env bash
# bench/hdf5gen_compare.sh - instance generation (hdf5gen/instances.c)
# against NVIDIA's create_pretraining_data.py, row for row, and the speed of
# both.
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
# bench/hdf5gen_ref.py, which times its phases and prints its HDF5 rows.
#
# Ours: bin/hdf5gen writes its HDF5 file, compared dataset by dataset with
# h5py (hdf5gen_ref.py compare: "identical" or the first difference), and
# build/tests/inst_dump (the test driver) prints the same rows as text.
# Shards: BERT-format text (one sentence per line, blank line between
# documents) made from tests/data by wiki_dump | wiki_strip -F lines |
# sent_split. Compared:
#   - the small shards x seq 128 (P 20) and 512 (P 80) x dupe_factor 1..5 x
#     the seeds in $HG_SEEDS
#   - the 206-page shard, seq 128 and 512, dupe_factor 5, seed 12345
#   - \r\n and lone-\r line ends; a vocabulary with duplicate lines;
#     other masked_lm_prob / short_seq_prob / max_predictions values
#   - --whole-word against Google's create_masked_lm_predictions with
#     do_whole_word_mask (google-research/bert at eedf571, fetched the same
#     way into $W/google-bert; $GOOGLE_BERT_GIT for a local clone)
# Speed (HG_SPEED=0 skips it): the 206-page shard repeated $HG_COPIES
# times, dupe_factor 5, seq 128 (P 20) and 512 (P 80): the original's phases
# (instances = read + tokenize + build; write = ids + HDF5) against ours on
# one core (read+tokenize, build; best of $REPS), wall clock and CPU time;
# and ours with -j2 reading. HG_COMPARE=0 skips the row comparisons.
#   bash bench/hdf5gen_compare.sh
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
DUMP=$ROOT/build/tests/inst_dump
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

make -C "$ROOT" -s all build/tests/inst_dump >/dev/null

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

# ---- row-for-row comparison ----
runs=0 rows=0 bad=0
# compare LABEL SHARD VOCAB SEQ PRED DUPE SEED MLM SHORT [--whole-word]
compare() {
  local label=$1 shard=$2 vocab=$3 seq=$4 pred=$5 dupe=$6 seed=$7 mlm=$8 short=$9 wwm=${10:-}
  local g=() o=()
  [ -n "$wwm" ] && g=(--google-wwm "$GOOGLE") && o=(--whole-word)
  "$PY" "$REF" run "$NV" "${g[@]}" -- --vocab_file "$vocab" --input_file "$shard" --output_file "$D/ref.hdf5" \
    --max_seq_length "$seq" --max_predictions_per_seq "$pred" --dupe_factor "$dupe" --random_seed "$seed" \
    --masked_lm_prob "$mlm" --short_seq_prob "$short" >/dev/null 2>"$D/ref.log" || { cat "$D/ref.log" >&2; return 1; }
  "$PY" "$REF" dump "$D/ref.hdf5" >"$D/ref.rows"
  "$DUMP" --vocab "$vocab" --seq "$seq" --max-pred "$pred" --dupe "$dupe" --seed "$seed" --mlm-prob "$mlm" \
    --short-prob "$short" "${o[@]}" "$shard" >"$D/our.rows"
  local n h5
  [ -n "$wwm" ] && o=(--whole-word-mask)
  "$BIN/hdf5gen" -q -f --vocab "$vocab" --max_seq_length "$seq" --max_predictions_per_seq "$pred" \
    --dupe_factor "$dupe" --random_seed "$seed" --masked_lm_prob "$mlm" --short_seq_prob "$short" "${o[@]}" \
    -o "$D/our.hdf5" "$shard"
  h5=$("$PY" "$REF" compare "$D/ref.hdf5" "$D/our.hdf5") || true
  n=$(wc -l <"$D/ref.rows")
  runs=$((runs + 1)) rows=$((rows + n))
  if [ "$h5" != identical ]; then
    bad=$((bad + 1))
    printf '  DIFF  %6d rows  %s: HDF5 files: %s\n' "$n" "$label" "$h5"
  elif cmp -s "$D/ref.rows" "$D/our.rows"; then
    printf '  same  %6d rows  %s (HDF5 datasets identical)\n' "$n" "$label"
  else
    bad=$((bad + 1))
    printf '  DIFF  %6d rows  %s (ours %d rows; first difference in row %s)\n' "$n" "$label" "$(wc -l <"$D/our.rows")" \
      "$(cmp "$D/ref.rows" "$D/our.rows" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')"
  fi
}

if [ "${HG_COMPARE:-1}" = 1 ]; then
  echo "== rows: small shards x seq x dupe_factor x seed"
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
  echo "== rows: 206-page shard"
  compare "enwiki-206 seq 128 dupe 5 seed 12345" "$S/enwiki-206.txt" "$VOCAB" 128 20 5 12345 0.15 0.1
  compare "enwiki-206 seq 512 dupe 5 seed 12345" "$S/enwiki-206.txt" "$VOCAB" 512 80 5 12345 0.15 0.1
  echo "== rows: line ends, vocabulary, parameters"
  compare "enwiki-3 \\r\\n seq 128 dupe 3" "$S/enwiki-3-crlf.txt" "$VOCAB" 128 20 3 12345 0.15 0.1
  compare "huwiki-berlin lone \\r seq 128 dupe 3" "$S/huwiki-berlin-cr.txt" "$VOCAB" 128 20 3 12345 0.15 0.1
  compare "enwiki-3 duplicate vocab lines dupe 5" "$S/enwiki-3.txt" "$D/vocab-dup.txt" 128 20 5 7 0.15 0.1
  compare "huwiki-berlin duplicate vocab lines dupe 5" "$S/huwiki-berlin.txt" "$D/vocab-dup.txt" 128 20 5 7 0.15 0.1
  compare "enwiki-tables mlm 0.3 short 0.5 P 30" "$S/enwiki-tables.txt" "$VOCAB" 128 30 3 3 0.3 0.5
  compare "enwiki-3 seq 64 mlm 0.25 short 0 P 10" "$S/enwiki-3.txt" "$VOCAB" 64 10 3 3 0.25 0
  compare "enwiki-3 seq 256 short 1 P 40" "$S/enwiki-3.txt" "$VOCAB" 256 40 2 3 0.15 1
  if [ -n "$GOOGLE" ]; then
    echo "== rows: --whole-word against Google's create_masked_lm_predictions (do_whole_word_mask)"
    for s in enwiki-3 huwiki-berlin enwiki-tables; do
      compare "$s whole-word seq 128 dupe 3" "$S/$s.txt" "$VOCAB" 128 20 3 12345 0.15 0.1 wwm
    done
    compare "enwiki-206 whole-word seq 512 dupe 2" "$S/enwiki-206.txt" "$VOCAB" 512 80 2 12345 0.15 0.1 wwm
  else
    echo "== whole-word: not run (google-research/bert's create_pretraining_data.py cannot be obtained)"
  fi
  echo "compared: $runs runs, $rows rows, $bad with differences"
fi

# ---- speed ----
: >"$D/speed.txt"
for ((i = 0; i < HG_COPIES; i++)); do cat "$S/enwiki-206.txt" >>"$D/speed.txt"; done
num() { grep -o "$1 [0-9.]*" <<<"$2" | sed -n "${3}p" | cut -d' ' -f2; } # name text nth
speed() { # seq pred
  local seq=$1 pred=$2 ref t rd bd best= i
  echo "== speed: enwiki-206 x $HG_COPIES ($(wc -c <"$D/speed.txt") bytes, $(wc -l <"$D/speed.txt") lines), seq $seq, P $pred, dupe_factor 5"
  $CORE1 "$PY" "$REF" run "$NV" -- --vocab_file "$VOCAB" --input_file "$D/speed.txt" --output_file "$D/ref.hdf5" \
    --max_seq_length "$seq" --max_predictions_per_seq "$pred" --dupe_factor 5 >/dev/null 2>"$D/ref.log"
  ref=$(grep '^ref:' "$D/ref.log")
  local r_inst r_write r_total rc_inst rc_write rc_total
  r_inst=$(num instances "$ref" 1) r_write=$(num write "$ref" 1) r_total=$(num total "$ref" 1)
  rc_inst=$(num instances "$ref" 2) rc_write=$(num write "$ref" 2) rc_total=$(num total "$ref" 2)
  for ((i = 0; i < REPS; i++)); do
    t=$($CORE1 "$DUMP" --vocab "$VOCAB" --seq "$seq" --max-pred "$pred" --dupe 5 --time "$D/speed.txt" 2>&1 >/dev/null |
      grep '^inst_dump: read')
    rd=$(num read "$t" 1) bd=$(num build "$t" 1)
    if [ -z "$best" ] || [ "$(echo "$rd + $bd < $best" | bc)" = 1 ]; then
      best=$(echo "$rd + $bd" | bc -l) best_read=$rd best_build=$bd cread=$(num read "$t" 2) cbuild=$(num build "$t" 2)
    fi
  done
  t=$("$DUMP" -j2 --vocab "$VOCAB" --seq "$seq" --max-pred "$pred" --dupe 5 --time "$D/speed.txt" 2>&1 >/dev/null |
    grep '^inst_dump: read')
  local rd2 bd2 ours cours
  rd2=$(num read "$t" 1) bd2=$(num build "$t" 1)
  ours=$(echo "$best_read + $best_build" | bc -l) cours=$(echo "$cread + $cbuild" | bc -l)
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall-clock times include waiting for a core)"
  printf 'original, one core  wall: read+tokenize+build %8.3f s  ids+HDF5 %7.3f s  total %8.3f s\n' "$r_inst" "$r_write" "$r_total"
  printf '                    cpu:  read+tokenize+build %8.3f s  ids+HDF5 %7.3f s  total %8.3f s\n' "$rc_inst" "$rc_write" "$rc_total"
  printf 'ours -j1, one core  wall: read+tokenize %7.3f s  build %7.3f s  total %7.3f s\n' "$best_read" "$best_build" "$ours"
  printf '                    cpu:  read+tokenize %7.3f s  build %7.3f s  total %7.3f s\n' "$cread" "$cbuild" "$cours"
  printf 'ours -j2            wall: read+tokenize %7.3f s  build %7.3f s\n' "$rd2" "$bd2"
  printf 'ratio, wall: original instances / ours %sx; original total (with HDF5) / ours (without) %sx\n' \
    "$(ratio "$r_inst" "$ours")" "$(ratio "$r_total" "$ours")"
  printf 'ratio, cpu:  original instances / ours %sx; original total (with HDF5) / ours (without) %sx\n' \
    "$(ratio "$rc_inst" "$cours")" "$(ratio "$rc_total" "$cours")"
}
if [ "${HG_SPEED:-1}" = 1 ]; then
  speed 128 20
  speed 512 80
fi
[ "$bad" -eq 0 ]
