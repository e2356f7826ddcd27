#!/usr/bin/env bash
# bench/e2e.sh - the Hungarian workflow end to end: the original chain
# against `make hu HU_FAITHFUL=1`, stage by stage, on the same dump.
#
# Input: the 206-page English sample (tests/data/enwiki-206.xml.bz2, or
# the dump E2E_SAMPLE names) repeated COPIES times with new page ids
# (bench/make_dump.py), as a Wikimedia multistream file; one run per size
# in E2E_COPIES (default 4). English text through the Hungarian sequence,
# as `make hu WIKI_LANG=en` runs it: LANG=en for the sentence rules and
# the language check. E2E_LANG=hu with a Hungarian E2E_SAMPLE runs the
# workflow as it was made, quntoken included.
#
# The original, as the workflow runs it (README of HILBERT, spec §1.2),
# every script fetched at bench time and never committed:
#   text       bzip2 -dc DUMP > wikicorpus_LANG.xml; WikiExtractor 3.0.6
#              (PyPI, lib.sh we_setup) with its defaults (-o text, -b 1M)
#              and --processes JOBS; HILBERT's formatting.py
#   sentences  hu: quntoken -f spl -m sentence; en: quntoken has no English
#              rules, so NVIDIA's English splitter, NLTK Punkt per article
#              (bench/peer_split.py punkt; TextSharding's NLTKSegmenter)
#   filter     HILBERT's filtering.py FILE --word-chars <its alphabet>
#              --language LANG --langdetect LANG (langdetect from PyPI)
#   vocab      TurkuNLP's spmtrain.py (sentencepiece from PyPI) with the
#              workflow's options and --vocab_size=E2E_VOCAB, then
#              sent2wordpiece.py bert.vocab > vocab.txt
#   shards     HILBERT's sharding.py --num_shards=E2E_SHARDS
#   hdf5-128   HILBERT's create_hdf5_files.py --max_seq_length 128
#              --max_predictions_per_seq 20 --n_processes JOBS (dupe 5),
#              which runs create_pretraining_data.py per shard (its
#              file_utils.py, which needs boto3, replaced by a stub as in
#              hdf5gen_compare.sh); run through e2e_tools.py waitall, which
#              also waits for the shards the script does not wait for
#   hdf5-512   the same with 512 / 80
# Ours: make -C ROOT hu-text, hu-sentences, ..., hu-hdf5-phase2 with
# HU_FAITHFUL=1 WIKI_LANG=LANG NOBUILD=1 BIN=... JOBS=... WORKDIR=<bench
# dir> HU_DUMP=<dump> HU_VOCAB_SIZE=E2E_VOCAB HU_SHARDS=E2E_SHARDS.
#
# Every stage is timed by /usr/bin/time: wall, CPU (user + system, the
# children included) and peak RSS (of the largest single process). Where
# a peer cannot be obtained or fails, the bench says so, gives the next
# original stage our stage's output, and goes on (exit 0); it exits 1 only
# when our chain fails.
# Compared, chain against chain: articles per text stage (the same count;
# how many are byte-identical, formatting.py's order being the directory
# listing's), documents and sentences after splitting and filtering (the
# splitters differ), vocab.txt lines and the tokens both have, shard files
# and documents, HDF5 files, instances and sequence length. Then stage
# against stage on the same input: make's recipes for filter, vocab,
# shards and both HDF5 phases run on the original's input of that stage
# (HU_DIR per check, `make -o` on the file put in place), whose outputs
# must be identical to the original's: filtered text (unless langdetect and
# our identifier disagree), bert.vocab and vocab.txt, the shard files, and
# every HDF5 file (bench/hdf5gen_ref.py compare: six datasets, every value;
# text_training_<i> matched to its shard by os.listdir order, as
# create_hdf5_files.py numbers them).
# Written to E2E_OUT (default $W/e2e): e2e-xN.tsv (stage side wall_s cpu_s
# rss_mb) and e2e-xN.svg (wall time per stage, both chains). BENCH_VARY=RATE
# makes the copies differ (make_dump.py --vary, as bench/scale.sh runs it);
# E2E_CLEAN=1 removes each size's working directory ($W/e2e-xN) when done.
#
# Peers in a local clone instead of GitHub: HILBERT_GIT (roberthajdu92/
# nvidia-bert-wiki-preprocess), WBP_GIT (spyysalo/wiki-bert-pipeline),
# S2W_GIT (spyysalo/sent2wordpiece), DLE_GIT (NVIDIA/DeepLearningExamples,
# whose create_pretraining_data.py and tokenization.py at 4733603 are the
# same bytes as HILBERT's).
#   bash bench/e2e.sh                         (x4)
#   E2E_COPIES="4 16" E2E_OUT=bench/results bash bench/e2e.sh
. "$(dirname "$0")/lib.sh"
E2E_COPIES=${E2E_COPIES:-4}
E2E_LANG=${E2E_LANG:-en}
JOBS=${JOBS:-$(nproc)}
E2E_OUT=${E2E_OUT:-$W/e2e}
HU_CHARS=abcdefghijklmnopqrstuvwxyzáéíóöúüőű
export PYTHONUTF8=1 PYTHONWARNINGS=ignore
mkdir -p "$E2E_OUT"
E2E_OUT=$(cd "$E2E_OUT" && pwd)
[ -x /usr/bin/time ] || { echo "bench: needs GNU time as /usr/bin/time" >&2; exit 1; }
for p in wiki_dump wiki_strip sent_split text_filter vocab_train shard_split hdf5gen; do
  [ -x "$BIN/$p" ] || { echo "bench: $BIN/$p is not built (make -j)" >&2; exit 1; }
done

# ---- the originals ----
HILBERT_COMMIT=8cddce59d909e5ec0550b33dc4cda5f68d42e0f6
WBP_COMMIT_SPM=d41970c9e1b71f4f566529cb1221034e42d3c432
S2W_COMMIT=47ba44e4bb4faa50bc617a7da93987f94a934d3f
DLE_COMMIT=4733603577080dbd1bdcd51864f31e45d5196704
O=$W/e2e-orig-scripts
mkdir -p "$O"
declare -A HAVE WHY
peer() { # name ok|reason
  if [ "$2" = ok ]; then HAVE[$1]=1; else HAVE[$1]=0 WHY[$1]=$2; fi
}
hil() { # file sha
  fetch_pinned "$O/$1" "$2" roberthajdu92/nvidia-bert-wiki-preprocess $HILBERT_COMMIT "$1" "${HILBERT_GIT:-}"
}
hil formatting.py 1b2407c7e9a9e3023e29e9f375b6972c14ecf4b7411a951bbc153ec3a52a738e &&
  peer formatting ok || peer formatting "HILBERT's formatting.py cannot be obtained (HILBERT_GIT)"
hil filtering.py ebe775f4d52e3ed03b27fab42c793fe467ce226c1af98a5cda75152e2ca67477 &&
  peer filtering ok || peer filtering "HILBERT's filtering.py cannot be obtained (HILBERT_GIT)"
hil sharding.py 2751a2869cffb7043489375f1c01e72f809022213de0b4450cd7321404ed23d4 &&
  peer sharding ok || peer sharding "HILBERT's sharding.py cannot be obtained (HILBERT_GIT)"
hil create_hdf5_files.py c43f7e8bb695af8e41555b51ce3a7ffec26691a6a88880f63cf94dca5647cfdc &&
  peer create_hdf5 ok || peer create_hdf5 "HILBERT's create_hdf5_files.py cannot be obtained (HILBERT_GIT)"
CPD_SHA=2aac140e1e037411fd017052040ab2e49bbed8e9779030b51d9b455195592aff
TOK_SHA=01ba033a4ac2fec5aef36b27efd5fbc3ba07be5c6bcbb10258ca83c8689e8a52
if { hil create_pretraining_data.py $CPD_SHA ||
     fetch_pinned "$O/create_pretraining_data.py" $CPD_SHA NVIDIA/DeepLearningExamples $DLE_COMMIT \
       PyTorch/LanguageModeling/BERT/create_pretraining_data.py "${DLE_GIT:-}"; } &&
   { hil tokenization.py $TOK_SHA ||
     fetch_pinned "$O/tokenization.py" $TOK_SHA NVIDIA/DeepLearningExamples $DLE_COMMIT \
       PyTorch/LanguageModeling/BERT/tokenization.py "${DLE_GIT:-}"; }; then
  printf 'def cached_path(url_or_filename, cache_dir=None):\n    return url_or_filename\n' >"$O/file_utils.py"
  peer cpd ok
else
  peer cpd "create_pretraining_data.py/tokenization.py cannot be obtained (HILBERT_GIT, DLE_GIT)"
fi
fetch_pinned "$O/spmtrain.py" 501a884425af96384b76ecac303503355cc564eeee1423231e13b9ee4f8361fc \
  spyysalo/wiki-bert-pipeline $WBP_COMMIT_SPM scripts/spmtrain.py "${WBP_GIT:-}" ||
  # spmtrain.py is these lines: the same call without the file
  printf 'import sys\nfrom sentencepiece import SentencePieceTrainer\nSentencePieceTrainer.Train(" ".join(sys.argv[1:]))\n' >"$O/spmtrain-equivalent.py"
SPMTRAIN=$O/spmtrain.py
[ -f "$SPMTRAIN" ] || { SPMTRAIN=$O/spmtrain-equivalent.py; echo "bench: spmtrain.py cannot be obtained (WBP_GIT): running its one call, SentencePieceTrainer.Train(' '.join(argv[1:])), instead" >&2; }
fetch_pinned "$O/sent2wordpiece.py" 99cd753d8df8e652db99949177d1f22d630c8be9d0632742a0bfa038b6afba56 \
  spyysalo/sent2wordpiece $S2W_COMMIT sent2wordpiece.py "${S2W_GIT:-}" &&
  peer s2w ok || peer s2w "sent2wordpiece.py cannot be obtained (S2W_GIT)"

# Python peers: WikiExtractor in its own venv (we_setup); the rest in venv3.
if we_setup >/dev/null 2>&1; then peer we ok; else peer we "WikiExtractor 3.0.6 cannot be installed from PyPI"; fi
PY=$W/venv3/bin/python
VPKG="nltk==3.10.4 quntoken==3.3.2 langdetect==1.0.9 sentencepiece h5py numpy six tqdm"
if ! "$PY" -c 'import nltk, quntoken, langdetect, sentencepiece, h5py, numpy, six, tqdm' 2>/dev/null; then
  { [ -x "$PY" ] || python3 -m venv "$W/venv3"; } && "$W/venv3/bin/pip" install -q $VPKG >&2 || true
fi
if "$PY" -c 'import langdetect' 2>/dev/null; then :; else HAVE[filtering]=0 WHY[filtering]="langdetect cannot be installed"; fi
"$PY" -c 'import sentencepiece' 2>/dev/null && peer spm ok || peer spm "sentencepiece cannot be installed from PyPI"
"$PY" -c 'import h5py, numpy, six, tqdm' 2>/dev/null || { HAVE[cpd]=0 WHY[cpd]="h5py/numpy/six/tqdm cannot be installed"; }
if [ "$E2E_LANG" = hu ]; then
  "$PY" -c 'import quntoken' 2>/dev/null && peer split ok || peer split "quntoken cannot be installed from PyPI"
  SPLIT_NAME="quntoken -f spl -m sentence"
else
  if "$PY" -c 'import nltk' 2>/dev/null && punkt_setup >/dev/null 2>&1; then peer split ok; else peer split "NLTK or its Punkt model cannot be obtained"; fi
  SPLIT_NAME="NLTK Punkt per article (peer_split.py punkt)"
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/^Mem/ {print $2}') GB; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "language: $E2E_LANG; JOBS=$JOBS; sentences of the original: $SPLIT_NAME"
for k in we formatting split filtering spm s2w sharding create_hdf5 cpd; do
  [ "${HAVE[$k]:-0}" = 1 ] || echo "original: ${WHY[$k]}: that stage takes our output and is not timed"
done

# ---- timing and counting ----
# timed TSV STAGE SIDE LOG CMD...: runs CMD, appends "STAGE SIDE wall cpu
# rss_mb" to TSV; returns CMD's status (the row says "-" then).
timed() {
  local tsv=$1 stage=$2 side=$3 log=$4 s e u y m rc=0
  shift 4
  s=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$log.time" "$@" >>"$log" 2>&1 || rc=$?
  e=$(date +%s.%N)
  if [ $rc = 0 ]; then
    read -r u y m < <(tail -n1 "$log.time")
    printf '%s %s %.2f %.2f %.1f\n' "$stage" "$side" "$(echo "$e - $s" | bc)" "$(echo "$u + $y" | bc)" \
      "$(echo "$m / 1024" | bc -l)" >>"$tsv"
  else
    printf '%s %s - - -\n' "$stage" "$side" >>"$tsv"
    echo "bench: $side $stage failed (exit $rc); the end of $log:" >&2
    tail -n5 "$log" >&2
  fi
  return $rc
}
ndocs() { awk 'BEGIN { RS = "" } END { print NR }' "$@"; }
nsents() { cat "$@" | grep -c .; }

# ---- one size ----
run_size() {
  local n=$1 dump d od tsv hd mk ours_ok=1 t
  dump=$(bench_dump "$n" ${E2E_SAMPLE:+"$E2E_SAMPLE"}).multistream.xml.bz2
  d=$W/e2e-x$n od=$W/e2e-x$n/orig tsv=$E2E_OUT/e2e-x$n.tsv
  rm -rf "$d" && mkdir -p "$od"
  local vocab=${E2E_VOCAB:-8000} shards=${E2E_SHARDS:-$((2 * n))}
  echo "stage side wall_s cpu_s rss_mb" >"$tsv"
  echo
  echo "== x$n: $dump ($(stat -c %s "$dump") bytes bz2, $(bzip2 -dc "$dump" | wc -c) bytes XML); vocab $vocab, $shards shards; load $(cut -d' ' -f1-3 /proc/loadavg)"

  # ours
  mk=(make -s -C "$ROOT" NOBUILD=1 BIN="$BIN" JOBS="$JOBS" HU_FAITHFUL=1 WIKI_LANG="$E2E_LANG"
      WORKDIR="$d/ours" HU_DUMP="$dump" HU_VOCAB_SIZE="$vocab" HU_SHARDS="$shards")
  eval "$("${mk[@]}" print-demo-dirs)"
  hd=$HU_DIR
  for t in text:hu-text sentences:hu-sentences filter:hu-filtered vocab:hu-vocab shards:hu-shards \
           hdf5-128:hu-hdf5-phase1 hdf5-512:hu-hdf5-phase2; do
    timed "$tsv" "${t%%:*}" ours "$d/ours.log" "${mk[@]}" "${t#*:}" || { ours_ok=0; break; }
  done
  [ $ours_ok = 1 ] && "${mk[@]}" -q hu || { [ $ours_ok = 0 ] || echo "bench: make -q hu: not up to date after the stages" >&2; ours_ok=0; }

  # the original, in its own directory (its scripts write relative to it)
  local L=$E2E_LANG ot=$od/wikicorpus_$E2E_LANG.txt os=$od/wikicorpus_$E2E_LANG.spl of=$od/filtered.txt
  cp "$O"/*.py "$od/"
  take() { # what from to: our output in the original's place
    echo "original: $1: not run (${WHY[$4]}); our output used" >&2
    echo "$1" >>"$d/taken"
    rm -rf "$3" && cp -r "$2" "$3"
  }
  (
    cd "$od" || exit 1
    if [ "${HAVE[we]}" = 1 ] && [ "${HAVE[formatting]}" = 1 ]; then
      timed "$tsv" text original "$od/log" bash -c "bzip2 -dc '$dump' >wikicorpus_$L.xml &&
        '$WE_PY' -m wikiextractor.WikiExtractor --processes $JOBS wikicorpus_$L.xml &&
        '$PY' formatting.py --input_folder=text --output_file=wikicorpus_$L.txt" || take text "$hd/text/wikicorpus_$L.txt" "$ot" we
    else
      take text "$hd/text/wikicorpus_$L.txt" "$ot" we
    fi
    if [ "${HAVE[split]}" = 1 ]; then
      if [ "$L" = hu ]; then
        timed "$tsv" sentences original "$od/log" bash -c "'$W/venv3/bin/quntoken' -f spl -m sentence <'$ot' >'$os'"
      else
        timed "$tsv" sentences original "$od/log" bash -c "'$PY' '$ROOT/bench/peer_split.py' punkt '$ot' >'$os'"
      fi || take sentences "$hd/sentences/wikicorpus_$L.txt" "$os" split
    else
      take sentences "$hd/sentences/wikicorpus_$L.txt" "$os" split
    fi
    if [ "${HAVE[filtering]}" = 1 ]; then
      timed "$tsv" filter original "$od/log" bash -c "'$PY' filtering.py '$os' --word-chars $HU_CHARS --language $L --langdetect $L >'$of'" ||
        take filter "$hd/filtered/wikicorpus_$L.txt" "$of" filtering
    else
      take filter "$hd/filtered/wikicorpus_$L.txt" "$of" filtering
    fi
    if [ "${HAVE[spm]}" = 1 ] && [ "${HAVE[s2w]}" = 1 ]; then
      timed "$tsv" vocab original "$od/log" bash -c "'$PY' '$SPMTRAIN' --input=filtered.txt --model_prefix=bert --vocab_size=$vocab \
        --input_sentence_size=100000000 --shuffle_input_sentence=true --character_coverage=0.9999 --model_type=bpe &&
        '$PY' sent2wordpiece.py bert.vocab >vocab.txt" || take vocab "$hd/vocab/vocab.txt" "$od/vocab.txt" spm
    else
      take vocab "$hd/vocab/vocab.txt" "$od/vocab.txt" spm
    fi
    if [ "${HAVE[sharding]}" = 1 ]; then
      timed "$tsv" shards original "$od/log" "$PY" sharding.py --input_file=filtered.txt --num_shards="$shards" ||
        take shards "$hd/formatted_text" "$od/formatted_text" sharding
    else
      take shards "$hd/formatted_text" "$od/formatted_text" sharding
    fi
    rm -f formatted_text/.complete
    if [ "${HAVE[cpd]}" = 1 ]; then
      local seq pred
      for seq in 128 512; do
        pred=$([ $seq = 128 ] && echo 20 || echo 80)
        if [ "${HAVE[create_hdf5]}" = 1 ]; then
          PATH=$W/venv3/bin:$PATH timed "$tsv" hdf5-$seq original "$od/log" "$PY" "$ROOT/bench/e2e_tools.py" waitall \
            create_hdf5_files.py --max_seq_length $seq --max_predictions_per_seq $pred --vocab_file=vocab.txt --n_processes=$JOBS || true
        else
          # its closest equivalent: create_pretraining_data.py per shard, JOBS at a time
          mkdir -p "h5-$seq"
          timed "$tsv" hdf5-$seq original "$od/log" bash -c "ls formatted_text | xargs -P $JOBS -I{} '$PY' create_pretraining_data.py \
            --input_file=formatted_text/{} --output_file=h5-$seq/{}.hdf5 --vocab_file=vocab.txt --do_lower_case \
            --max_seq_length=$seq --max_predictions_per_seq=$pred --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=5" || true
        fi
      done
    else
      echo "original: hdf5: not run (${WHY[cpd]})" >&2
    fi
  )

  # ---- agreement ----
  ran() { ! grep -qx "$1" "$d/taken" 2>/dev/null; }
  echo "-- outputs (original | ours)"
  [ ! -s "$d/taken" ] || echo "(the original's stages that did not run, ours in their place: $(tr '\n' ' ' <"$d/taken"))"
  local a b
  printf '%-34s %18s | %s\n' "text: articles" "$(grep -c . "$ot")" "$(grep -c . "$hd/text/wikicorpus_$L.txt")"
  a=$(comm -12 <(grep . "$ot" | LC_ALL=C sort) <(grep . "$hd/text/wikicorpus_$L.txt" | LC_ALL=C sort) | wc -l)
  b=$(comm -12 <(grep . "$ot" | sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g' | LC_ALL=C sort) \
               <(grep . "$hd/text/wikicorpus_$L.txt" | LC_ALL=C sort) | wc -l)
  printf '%-34s %s\n' "text: articles identical" "$a of $(grep -c . "$ot"), $b after undoing WikiExtractor's &amp; &lt; &gt;$(cmp -s "$ot" "$hd/text/wikicorpus_$L.txt" \
    && echo "; the files are byte-identical" || echo " (in any order: formatting.py's is the directory listing's)")"
  printf '%-34s %18s | %s\n' "sentences: documents / lines" "$(ndocs "$os") / $(nsents "$os")" \
    "$(ndocs "$hd/sentences/wikicorpus_$L.txt") / $(nsents "$hd/sentences/wikicorpus_$L.txt")"
  printf '%-34s %18s | %s\n' "filter: documents kept / lines" "$(ndocs "$of") / $(nsents "$of")" \
    "$(ndocs "$hd/filtered/wikicorpus_$L.txt") / $(nsents "$hd/filtered/wikicorpus_$L.txt")"
  a=$(wc -l <"$od/vocab.txt") b=$(wc -l <"$hd/vocab/vocab.txt")
  printf '%-34s %18s | %s  (%s tokens in both)\n' "vocab.txt lines" "$a" "$b" \
    "$(comm -12 <(LC_ALL=C sort "$od/vocab.txt") <(LC_ALL=C sort "$hd/vocab/vocab.txt") | wc -l)"
  printf '%-34s %18s | %s\n' "shards: files / documents" \
    "$(ls "$od"/formatted_text/*.txt | wc -l) / $(ndocs "$od"/formatted_text/*.txt)" \
    "$(ls "$hd"/formatted_text/*.txt | wc -l) / $(ndocs "$hd"/formatted_text/*.txt)"
  local seq h5o h5u
  for seq in 128 512; do
    h5o=$(ls -d "$od"/hdf5_*seq_len_${seq}_*/textcorpus "$od/h5-$seq" 2>/dev/null | head -n1)
    h5u=$(ls -d "$hd"/hdf5_*seq_len_${seq}_*/textcorpus 2>/dev/null | head -n1)
    a=- b=-
    [ -n "$h5o" ] && a=$("$PY" "$ROOT/bench/e2e_tools.py" h5count "$h5o"/*.hdf5 2>/dev/null | awk '{print $1 " files, " $2 " x " $3}')
    [ -n "$h5u" ] && b=$("$PY" "$ROOT/bench/e2e_tools.py" h5count "$h5u"/*.hdf5 2>/dev/null | awk '{print $1 " files, " $2 " x " $3}')
    printf '%-34s %18s | %s\n' "hdf5 $seq: files, instances x seq" "${a:--}" "${b:--}"
  done

  # ---- the same input: ours on the original's output of the stage before ----
  # Where both chains read the same bytes the outputs must be identical:
  # make's own recipes (HU_DIR per check, the original's file put where
  # the target before is, `make -o` so that it is taken as it is).
  echo "-- ours on the original's input (make's recipe; must be identical except the language check)"
  local cx=$d/cross lines
  mkc() { "${mk[@]}" HU_DIR="$cx/$1" "${@:2}" >>"$d/cross.log" 2>&1; }
  mkdir -p "$cx/f/sentences" "$cx/v/filtered" "$cx/h/vocab"
  cp "$os" "$cx/f/sentences/wikicorpus_$L.txt"
  if ! ran filter; then :
  elif mkc f hu-filtered -o "$cx/f/sentences/wikicorpus_$L.txt"; then
    printf '%-34s %s\n' "filter: documents kept" "filtering.py $(ndocs "$of"), text_filter $(ndocs "$cx/f/filtered/wikicorpus_$L.txt")$(cmp -s "$of" "$cx/f/filtered/wikicorpus_$L.txt" &&
      echo ", identical output" || echo " (langdetect and our identifier differ on some documents)")"
  else echo "filter: make failed (see $d/cross.log)"; fi
  cp "$of" "$cx/v/filtered/wikicorpus_$L.txt"
  if mkc v hu-vocab hu-shards -o "$cx/v/filtered/wikicorpus_$L.txt"; then
    a=$(cmp -s "$od/bert.vocab" "$cx/v/vocab/bert.vocab" && echo identical || echo DIFFERENT)
    b=$(cmp -s "$od/vocab.txt" "$cx/v/vocab/vocab.txt" && echo identical || echo DIFFERENT)
    ! ran vocab || printf '%-34s %s\n' "vocab: bert.vocab / vocab.txt" "$a / $b"
    ! ran shards || printf '%-34s %s\n' "shards: formatted_text/" "$(diff -r -x .complete "$od/formatted_text" "$cx/v/formatted_text" >/dev/null && echo identical || echo DIFFERENT)"
  else echo "vocab, shards: make failed (see $d/cross.log)"; fi
  if ls "$od"/hdf5_*/textcorpus/*.hdf5 >/dev/null 2>&1; then
    cp -r "$od/formatted_text" "$cx/h/formatted_text" && touch "$cx/h/formatted_text/.complete"
    cp "$od/vocab.txt" "$cx/h/vocab/vocab.txt"
    if mkc h hu-hdf5 -o "$cx/h/formatted_text/.complete" -o "$cx/h/vocab/vocab.txt"; then
      for seq in 128 512; do
        a=0 b=0 lines=0
        # create_hdf5_files.py numbers its files in os.listdir order
        while read -r i name; do
          b=$((b + 1))
          "$PY" "$ROOT/bench/hdf5gen_ref.py" compare "$(ls -d "$od"/hdf5_*seq_len_${seq}_*)/textcorpus/text_training_$i.hdf5" \
            "$(ls -d "$cx"/h/hdf5_*seq_len_${seq}_*)/textcorpus/${name%.txt}.hdf5" >"$d/cmp.txt" 2>&1 &&
            a=$((a + 1)) lines=$((lines + $(sed -n 's/^identical: \([0-9]*\) rows$/\1/p' "$d/cmp.txt")))
        done < <("$PY" -c 'import os, sys; [print(i, n) for i, n in enumerate(os.listdir(sys.argv[1]))]' "$od/formatted_text")
        printf '%-34s %s\n' "hdf5 $seq: files identical" "$a of $b ($lines instances; six datasets, every value)"
      done
    else echo "hdf5: make failed (see $d/cross.log)"; fi
  fi

  # ---- table ----
  awk -v n="$n" '
    NR == 1 { next }
    { if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 }
      w[$1, $2] = $3; c[$1, $2] = $4; r[$1, $2] = $5 }
    function rat(a, b) { return (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.1fx", a / b) }
    END {
      printf "-- time per stage, x%s (ratio = original / ours)\n", n
      printf "%-10s | %9s %9s %8s | %9s %9s %8s | %7s %7s %7s\n", "stage", "orig wall", "orig cpu", "orig MB", "ours wall", "ours cpu", "ours MB", "wall", "cpu", "RSS"
      for (i = 1; i <= k; i++) {
        s = order[i]; ow = w[s, "original"]; uw = w[s, "ours"]
        printf "%-10s | %9s %9s %8s | %9s %9s %8s | %7s %7s %7s\n", s, ow == "" ? "-" : ow, c[s, "original"] == "" ? "-" : c[s, "original"],
          r[s, "original"] == "" ? "-" : r[s, "original"], uw == "" ? "-" : uw, c[s, "ours"] == "" ? "-" : c[s, "ours"], r[s, "ours"] == "" ? "-" : r[s, "ours"],
          rat(ow, uw), rat(c[s, "original"], c[s, "ours"]), rat(r[s, "original"], r[s, "ours"])
        if (uw != "" && uw != "-") { auw += uw; auc += c[s, "ours"]; amu = r[s, "ours"] + 0 > amu ? r[s, "ours"] + 0 : amu }
        if (ow != "" && ow != "-" && uw != "" && uw != "-") { both++; tow += ow; toc += c[s, "original"]; tuw += uw; tuc += c[s, "ours"]
          mo = r[s, "original"] + 0 > mo ? r[s, "original"] + 0 : mo; mu = r[s, "ours"] + 0 > mu ? r[s, "ours"] + 0 : mu }
        else skipped = skipped " " s
      }
      if (both) printf "%-10s | %9.2f %9.2f %8.1f | %9.2f %9.2f %8.1f | %7s %7s %7s\n", "total", tow, toc, mo, tuw, tuc, mu, rat(tow, tuw), rat(toc, tuc), rat(mo, mu)
      if (skipped != "") printf "(total over the stages both chains ran; not in it:%s; ours over all stages: wall %.2f s, cpu %.2f s, peak %.1f MB)\n", skipped, auw, auc, amu
      if (!both) { printf "total original - - -\n" > "/dev/stderr"; tuw = auw; tuc = auc; mu = amu }
      else
      printf "total original %.2f %.2f %.1f\n", tow, toc, mo > "/dev/stderr"
      printf "total ours %.2f %.2f %.1f\n", tuw, tuc, mu > "/dev/stderr"
    }' "$tsv" 2>>"$tsv.totals"
  awk '{ print $1 " " $2 " " $3 " " $4 " " $5 }' "$tsv.totals" >>"$tsv" && rm -f "$tsv.totals"
  python3 "$ROOT/bench/e2e_tools.py" svg "$tsv" \
    "x$n $(basename "${E2E_SAMPLE:-enwiki-206}" .xml.bz2) ($E2E_LANG), JOBS=$JOBS: original $(awk '$1=="total" && $2=="original" {print $3}' "$tsv") s, ours $(awk '$1=="total" && $2=="ours" {print $3}' "$tsv") s" \
    >"$E2E_OUT/e2e-x$n.svg"
  echo "written: $tsv, $E2E_OUT/e2e-x$n.svg; load now $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "${E2E_CLEAN:-0}" = 0 ] || rm -rf "$d"
  return $((1 - ours_ok))
}

rc=0
for n in $E2E_COPIES; do run_size "$n" || rc=1; done
exit $rc
