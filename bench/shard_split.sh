#!/usr/bin/env bash
# bench/shard_split.sh - shard_split against NVIDIA's TextSharding.py.
#
# Input: the English Wikipedia samples of the shared data (the 2040-page
# multistream sample, the 206-page excerpt and the small ones) through
# wiki_dump | wiki_strip | sent_split -l en, in BERT format, repeated until
# it is SB_MB MB (default 100). Shards: bertPrep's defaults of today
# (256 training, 256 test, fraction 0.1).
#   ours      shard_split -n 256 -t 256 -F 0.1 -o DIR FILE   (and from stdin)
#   original  TextSharding.py @4733603 (the code of every later bertPrep
#             version; fetched, never committed) in the venv with NLTK,
#             timed per phase by bench/textsharding_time.py:
#             (a) as bertPrep runs it: the same documents as one article per
#                 line (sentences joined by a space), segmented by NLTK
#                 Punkt, distributed, written: total and distribute+write;
#             (b) on exactly our sentences (no Punkt; segmenter replaced by
#                 a split on a separator): distribute+write, the same work
#                 as ours, and a check that the shards are identical.
# The HILBERT sharding.py is fetched too (tests/cli/shard_split.sh compares
# with both when they are in $W).
#   bash bench/shard_split.sh
#   SB_MB=20 REPS=1 bash bench/shard_split.sh
. "$(dirname "$0")/lib.sh"
SB_MB=${SB_MB:-100}
SS=$BIN/shard_split
export PYTHONUTF8=1

# TextSharding.py of NVIDIA/DeepLearningExamples at 4733603 (Apache-2.0,
# fetched at bench time). Tried: $TEXTSHARDING; $W/TextSharding.py from an
# earlier run; `git show` from a clone named by $DLE_GIT; the raw file.
DLE_COMMIT=4733603577080dbd1bdcd51864f31e45d5196704
TS_SHA256=1a11bdead9f4b451728a88c9769e3d8711783592efc263b4cce8984accf49335
HS_COMMIT=8cddce59d909e5ec0550b33dc4cda5f68d42e0f6
HS_SHA256=2751a2869cffb7043489375f1c01e72f809022213de0b4450cd7321404ed23d4
sha_ok() { [ -f "$1" ] && [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$2" ]; }
fetch_original() { # dest sha env-file git-dirs commit path url
  local dest=$1 sha=$2 given=$3 gits=$4 commit=$5 path=$6 url=$7 g
  if [ -n "$given" ] && sha_ok "$given" "$sha"; then cp "$given" "$dest"; return 0; fi
  sha_ok "$dest" "$sha" && return 0
  for g in $gits; do
    [ -d "$g" ] && git -C "$g" show "$commit:$path" >"$dest.tmp" 2>/dev/null && mv "$dest.tmp" "$dest" && break
  done
  rm -f "$dest.tmp"
  sha_ok "$dest" "$sha" || curl -fsSL --max-time 30 -o "$dest" "$url" 2>/dev/null || true
  sha_ok "$dest" "$sha" || { rm -f "$dest"; return 1; }
}
fetch_original "$W/TextSharding.py" $TS_SHA256 "${TEXTSHARDING:-}" "${DLE_GIT:-}" $DLE_COMMIT \
  PyTorch/LanguageModeling/BERT/data/TextSharding.py \
  "https://raw.githubusercontent.com/NVIDIA/DeepLearningExamples/$DLE_COMMIT/PyTorch/LanguageModeling/BERT/data/TextSharding.py" || {
  echo "bench: TextSharding.py (NVIDIA/DeepLearningExamples@$DLE_COMMIT) cannot be obtained:" >&2
  echo "bench: set TEXTSHARDING=/path/to/TextSharding.py or DLE_GIT=/path/to/a/clone" >&2
  exit 1
}
fetch_original "$W/hilbert_sharding.py" $HS_SHA256 "${HILBERT_SHARDING:-}" "${HILBERT_GIT:-}" $HS_COMMIT sharding.py \
  "https://raw.githubusercontent.com/roberthajdu92/nvidia-bert-wiki-preprocess/$HS_COMMIT/sharding.py" ||
  echo "bench: the HILBERT sharding.py could not be fetched (HILBERT_SHARDING=FILE or HILBERT_GIT=CLONE); only the tests use it" >&2

peers_setup
punkt_setup
[ -x "$SS" ] || { echo "bench: $SS is not built" >&2; exit 1; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "original: TextSharding.py @${DLE_COMMIT:0:7}, nltk $("$PY" -c 'import nltk; print(nltk.__version__)'), $("$PY" --version)"

# ---- input ----
one=$W/sb-once.txt in=$W/sb-en.txt art=$W/sb-en-articles.txt
if [ ! -s "$in" ] || [ "$(stat -c %s "$in")" -lt $((SB_MB * 1000000)) ] || [ "$(stat -c %s "$in")" -gt $((SB_MB * 1000000 + 6000000)) ]; then
  for f in "$DATA/wiki-multistream/sample-pages-articles.xml.bz2" "$DATA"/wiki-en/*.bz2; do
    "$BIN/wiki_dump" -q "$f" | "$BIN/wiki_strip" -q | "$BIN/sent_split" -q -l en
  done >"$one"
  : >"$in"
  while [ "$(stat -c %s "$in")" -lt $((SB_MB * 1000000)) ]; do cat "$one" >>"$in"; done
  awk 'BEGIN { RS = ""; FS = "\n"; OFS = " " } { $1 = $1; print; print "" }' "$in" >"$art"
fi
ndocs=$(awk 'BEGIN { RS = "" } END { print NR }' "$in")
echo "input: $in, $(stat -c %s "$in") bytes, $ndocs documents, $(grep -c . "$in") sentences"
echo "       (one article per line for bertPrep's path: $art, $(stat -c %s "$art") bytes)"
echo

# ---- ours ----
# each run writes a fresh directory (removing 512 files is not part of it)
rm -rf "$W"/sb-ours*
nrun=0
ours() { nrun=$((nrun + 1)); $CORE1 "$SS" -q -n 256 -t 256 -F 0.1 -o "$W/sb-ours.f$nrun" "$@"; }
ours_stdin() { nrun=$((nrun + 1)); cat "$in" | $CORE1 "$SS" -q -n 256 -t 256 -F 0.1 -o "$W/sb-ours.s$nrun"; }
t_ours=$(wall ours "$in")
t_stdin=$(wall ours_stdin)
rm -rf "$W"/sb-ours.*
rss_ours=$( { /usr/bin/time -f %M "$SS" -q -n 256 -t 256 -F 0.1 -o "$W/sb-ours" "$in" ; } 2>&1 | tail -1)
echo "ours     shard_split (file, one core): $t_ours s, $(mbps "$(stat -c %s "$in")" "$t_ours") MB/s, peak RSS $((rss_ours / 1024)) MB"
echo "ours     shard_split (stdin, spooled): $t_stdin s"

# ---- original ----
declare -A P
run_ts() { # mode input outdir
  rm -rf "$3" && mkdir -p "$3"
  while read -r k v; do P[$1.$k]=$v; done < <($CORE1 "$PY" -W ignore::SyntaxWarning "$ROOT/bench/textsharding_time.py" "$W" "$1" "$2" "$3/wikicorpus_en" 256 256 0.1)
}
run_ts split "$in" "$W/sb-ts-split"
dw_split=$(echo "${P[split.distribute]} + ${P[split.write]}" | bc)
ldw_split=$(echo "${P[split.load]} + ${P[split.segment]} + $dw_split" | bc)
same=different; diff -rq "$W/sb-ours" "$W/sb-ts-split" >/dev/null && same=identical
echo "original (b) our sentences: load ${P[split.load]} s, split ${P[split.segment]} s, distribute ${P[split.distribute]} s, write ${P[split.write]} s; peak RSS ${P[split.maxrss_mb]} MB; shards $same to ours"
run_ts punkt "$art" "$W/sb-ts-punkt"
dw_punkt=$(echo "${P[punkt.distribute]} + ${P[punkt.write]}" | bc)
echo "original (a) bertPrep's path: load ${P[punkt.load]} s, Punkt ${P[punkt.segment]} s, distribute ${P[punkt.distribute]} s, write ${P[punkt.write]} s, total ${P[punkt.total]} s; peak RSS ${P[punkt.maxrss_mb]} MB"
echo
echo "ratios (original / ours, same input, one core):"
echo "  load+split+distribute+write on the same sentences (ours end to end): $ldw_split s / $t_ours s = $(ratio "$ldw_split" "$t_ours")x"
echo "  distribute+write alone on the same sentences: $dw_split s / $t_ours s = $(ratio "$dw_split" "$t_ours")x"
echo "  bertPrep's sharding action in full (incl. Punkt): ${P[punkt.total]} s / $t_ours s = $(ratio "${P[punkt.total]}" "$t_ours")x"
echo "  its distribute+write alone: $dw_punkt s / $t_ours s = $(ratio "$dw_punkt" "$t_ours")x"
