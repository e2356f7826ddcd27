#!/usr/bin/env bash
# bench/scale.sh - how each stage's time, memory and disk grow with the dump.
#
# Input: the 206-page English sample (tests/data/enwiki-206.xml.bz2, 6.1 MB
# of XML) repeated SCALE_COPIES times (default "16 64 256 1024": 97 MB to
# 6.2 GB of XML) as Wikimedia multistream dumps by bench/make_dump.py with
# new page ids and --vary SCALE_VARY (default 0.03): in copy c >= 1, 3 % of
# the long lower-case words of the running text get c's letters as a suffix
# (copy 1 "a", 27 "bb"), so no two copies of an article are the same
# document (exact deduplication keeps them all) and the distinct words grow
# with the dump (about 3,700 new ones a copy) as a real dump's do, rather
# than staying those of one copy.
#
# Every size runs through both workflows with their default settings (the
# shard counts and vocabulary size they pick for that size; a small dump
# gets fewer, in one line), stage by stage:
#   hu  make hu WIKI_LANG=en: hu-text, hu-sentences, hu-filtered, hu-vocab,
#       hu-shards, hu-hdf5-phase1, hu-hdf5-phase2
#   en  make en: en-text, en-sentences, en-shards, en-hdf5-phase1,
#       en-hdf5-phase2
# each timed by /usr/bin/time around `make -s STAGE` (wall, CPU = user +
# system of make and every program it ran, and each of the two; peak RSS
# of the largest single process), after a sync (not timed: no stage is
# charged for writing out the files of the one before, which a small
# dump's next stage would otherwise do under NOCACHE and a large one's
# would not, as the kernel writes what has been dirty for 30 s on its
# own), and the bytes the stage left on disk (du of its output); before
# the sentences, a control row sentences-nul (the sentences, their control
# and the shards, a few CPU seconds each, run SCALE_REPS times, default 3,
# and keep the run of the median CPU time: see reps below):
# sent_split on the same text with its output to /dev/null (see control
# below; it runs first, while the text is in the page cache as the stage
# finds it: the stage drops it as it reads, NOCACHE). A
# workflow's directory is removed once measured (the dumps stay in $W for
# the next run unless SCALE_CLEAN_DUMPS=1).
# The original chain (bench/e2e.sh: HILBERT's scripts against make hu
# HU_FAITHFUL=1, with every check of that bench) runs on the same dumps at
# SCALE_ORIG_COPIES (default "16 64"; "" skips it) with the workflow's
# defaults (E2E_VOCAB 32000, E2E_SHARDS 50); above that it would take hours,
# and its figures are extrapolated from its own fit (scale_tools.py fit).
#
# Written to SCALE_OUT (default bench/results): scale.tsv (copies xml_mb
# workflow stage wall_s cpu_s rss_mb out_mb load user_s sys_s; rows of
# earlier runs may lack the last two), scale.svg (log-log: CPU
# seconds and peak RSS against MB of XML, a line per stage) and scale-fit.md
# (each stage's fitted exponent from x64 up, its RSS growth, its bytes per
# MB of XML, its figures extrapolated to enwiki). Programs: $BIN (make
# NOBUILD=1). JOBS as make's (default: the usable CPUs).
#   bash bench/scale.sh
#   SCALE_COPIES="16 64" SCALE_ORIG_COPIES= bash bench/scale.sh   (a quick look)
#   SCALE_COPIES= bash bench/scale.sh                   (the original chain only)
. "$(dirname "$0")/lib.sh"
SCALE_COPIES=${SCALE_COPIES-16 64 256 1024}
SCALE_ORIG_COPIES=${SCALE_ORIG_COPIES-16 64}
SCALE_VARY=${SCALE_VARY:-0.03}
SCALE_REPS=${SCALE_REPS:-3}
SCALE_OUT=${SCALE_OUT:-$ROOT/bench/results}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$SCALE_OUT"
SCALE_OUT=$(cd "$SCALE_OUT" && pwd)
TSV=$SCALE_OUT/scale.tsv
[ -x /usr/bin/time ] || { echo "bench: needs GNU time as /usr/bin/time" >&2; exit 1; }
for p in wiki_dump wiki_strip sent_split text_filter vocab_train shard_split hdf5gen; do
  [ -x "$BIN/$p" ] || { echo "bench: $BIN/$p is not built (make -j)" >&2; exit 1; }
done
export BENCH_VARY=$SCALE_VARY JOBS

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/^Mem/ {print $2}') GB; load $(cut -d' ' -f1-3 /proc/loadavg); JOBS=$JOBS"
echo "disk: $(df -h "$W" | awk 'NR == 2 {print $4 " free on " $6}')"
HEAD="copies xml_mb workflow stage wall_s cpu_s rss_mb out_mb load user_s sys_s"
[ -s "$TSV" ] || echo "$HEAD" >"$TSV"
sed -i "1s/.*/$HEAD/" "$TSV"

# du in MB of what a stage left: files, directories or glob patterns
# (expanded here, after the stage made them)
mb() {
  local pat
  for pat in "$@"; do eval "du -sb $pat" 2>/dev/null; done | awk '{ s += $1 } END { printf "%.1f", s / 1e6 }'
}

# MB of XML in a dump (counted once, kept beside it)
xml_mb() {
  [ -s "$1.mb" ] || { bzip2 -dc "$1" | wc -c | awk '{ printf "%.1f\n", $1 / 1e6 }' >"$1.mb.$$" && mv "$1.mb.$$" "$1.mb"; }
  cat "$1.mb"
}

# row N XMLMB WORKFLOW NAME WALL OUT LOG: append the row of a command
# timed into LOG.time (GNU time: user, system, peak KB) that took WALL
# seconds and left OUT MB ("-": nothing)
row() {
  local u y m
  read -r u y m < <(tail -n1 "$7.time")
  printf '%s %s %s %s %.2f %.2f %.1f %s %s %.2f %.2f\n' "$1" "$2" "$3" "$4" "$5" \
    "$(echo "$u + $y" | bc)" "$(echo "$m / 1024" | bc -l)" "$6" "$(cut -d' ' -f1 /proc/loadavg)" "$u" "$y" | tee -a "$TSV"
}

# failed N WORKFLOW NAME WHAT LOG: say so, with the end of LOG
failed() {
  echo "bench: x$1 $2 $3: $4 failed; the end of $5:" >&2
  tail -n5 "$5" >&2
  return 1
}

# stage N XMLMB WORKFLOW NAME TARGET OUTPUT... : time `make TARGET`, append a row
stage() {
  local n=$1 xml=$2 wf=$3 name=$4 target=$5 log=$W/scale-x$1-$3.log s
  shift 5
  sync
  s=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$log.time" "${MK[@]}" "$target" >>"$log" 2>&1 ||
    failed "$n" "$wf" "$name" "make $target" "$log" || return 1
  s=$(echo "$(date +%s.%N) - $s" | bc)
  row "$n" "$xml" "$wf" "$name" "$s" "$(mb "$@")" "$log"
}

# control N XMLMB WORKFLOW NAME INPUT: the sentences stage's program on the
# same input with its output to /dev/null, timed as a stage (a row NAME
# with no output): the stage's own work without the page cache's cost of
# writing the file (on this bench's VMs the page cache's new memory costs
# more per byte once it outgrows the memory it used before; the stage's
# --nocache reuses the input's)
control() {
  local n=$1 xml=$2 wf=$3 name=$4 in=$5 log=$W/scale-x$1-$3.log s
  sync
  s=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$log.time" "$BIN/sent_split" -q -j "$JOBS" -l en "$in" >/dev/null 2>>"$log" ||
    failed "$n" "$wf" "$name" sent_split "$log" || return 1
  row "$n" "$xml" "$wf" "$name" "$(echo "$(date +%s.%N) - $s" | bc)" - "$log"
}

# rewrite FILE...: write each file anew, same bytes and times, as the
# stage before leaves it (written a moment ago, in the page cache)
rewrite() {
  local f
  for f in "$@"; do cp -p "$f" "$f.rw" && mv "$f.rw" "$f"; done
}

# reps PREP CMD...: a stage of a few CPU seconds (the sentences, their
# control, shard_split), where one run's noise on a shared VM is as large
# as the growth measured: CMD (stage or control) run SCALE_REPS times, each
# after the shell line PREP (remove the output, rewrite the input as the
# stage before leaves it), and the row of the median CPU time kept
reps() {
  local prep=$1 r
  shift
  : >"$W/reps.tsv"
  for ((r = 0; r < SCALE_REPS; r++)); do
    eval "$prep"
    TSV=$W/reps.tsv "$@" >/dev/null || return 1
  done
  sort -k6,6n "$W/reps.tsv" | sed -n "$(((SCALE_REPS + 1) / 2))p" | tee -a "$TSV"
}

rc=0
for n in $SCALE_COPIES; do
  dump=$(bench_dump "$n").multistream.xml.bz2
  xml=$(xml_mb "$dump")
  d=$W/scale-x$n
  echo
  echo "== x$n: $dump ($(stat -c %s "$dump") bytes bz2, $xml MB XML); load $(cut -d' ' -f1-3 /proc/loadavg); $(df -h "$W" | awk 'NR == 2 {print $4}') free"
  sed -i "/^$n [^ ]* \(hu\|en\) /d" "$TSV"
  rm -rf "$d"
  MK=(make -s -C "$ROOT" NOBUILD=1 BIN="$BIN" JOBS="$JOBS" WORKDIR="$d" DUMP="$dump" WIKI_LANG=en)
  eval "$("${MK[@]}" print-demo-dirs)"
  h=$HU_DIR
  { stage "$n" "$xml" hu text hu-text "$h/text" &&
    reps "rewrite '$h/text/wikicorpus_en.txt'" \
      control "$n" "$xml" hu sentences-nul "$h/text/wikicorpus_en.txt" &&
    reps "rm -rf '$h/sentences'; rewrite '$h/text/wikicorpus_en.txt'" \
      stage "$n" "$xml" hu sentences hu-sentences "$h/sentences" &&
    stage "$n" "$xml" hu filter hu-filtered "$h/filtered" &&
    stage "$n" "$xml" hu vocab hu-vocab "$h/vocab" &&
    reps "rm -rf '$h/formatted_text'; rewrite '$h/filtered/wikicorpus_en.txt'" \
      stage "$n" "$xml" hu shards hu-shards "$h/formatted_text" &&
    stage "$n" "$xml" hu hdf5-128 hu-hdf5-phase1 "$h/hdf5_*_seq_len_128_*" &&
    stage "$n" "$xml" hu hdf5-512 hu-hdf5-phase2 "$h/hdf5_*_seq_len_512_*"; } || rc=1
  grep -h -i "fewer\|capped\|instead of" "$W/scale-x$n-hu.log" 2>/dev/null | sort -u | sed 's/^/hu: /' || true
  rm -rf "$h"
  MK=(make -s -C "$ROOT" NOBUILD=1 BIN="$BIN" JOBS="$JOBS" WORKDIR="$d" DUMP="$dump")
  e=$EN_DIR
  { stage "$n" "$xml" en text en-text "$e/formatted_one_article_per_line" &&
    reps "rewrite '$e'/formatted_one_article_per_line/*_one_article_per_line.txt" \
      control "$n" "$xml" en sentences-nul "$(echo "$e"/formatted_one_article_per_line/*_one_article_per_line.txt)" &&
    reps "rm -rf '$e/sentences'; rewrite '$e'/formatted_one_article_per_line/*_one_article_per_line.txt" \
      stage "$n" "$xml" en sentences en-sentences "$e/sentences" &&
    reps "rm -rf '$e'/sharded_*; rewrite '$e/sentences/wikicorpus_en.txt'" \
      stage "$n" "$xml" en shards en-shards "$e/sharded_*" &&
    stage "$n" "$xml" en hdf5-128 en-hdf5-phase1 "$e/hdf5_*_seq_len_128_*" &&
    stage "$n" "$xml" en hdf5-512 en-hdf5-phase2 "$e/hdf5_*_seq_len_512_*"; } || rc=1
  grep -h -i "fewer\|capped\|instead of" "$W/scale-x$n-en.log" 2>/dev/null | sort -u | sed 's/^/en: /' || true
  rm -rf "$d"
  case " $SCALE_ORIG_COPIES " in *" $n "*) ;; *) [ "${SCALE_CLEAN_DUMPS:-0}" = 0 ] || rm -f "${dump%.multistream.xml.bz2}".multistream*;; esac
done

# the original chain, through bench/e2e.sh on the same dumps
for n in $SCALE_ORIG_COPIES; do
  dump=$(bench_dump "$n").multistream.xml.bz2
  xml=$(xml_mb "$dump")
  echo
  echo "== x$n: the original chain (bench/e2e.sh)"
  if E2E_COPIES=$n E2E_OUT=$W/scale-e2e E2E_VOCAB=${E2E_VOCAB:-32000} E2E_SHARDS=${E2E_SHARDS:-50} E2E_CLEAN=1 \
     bash "$ROOT/bench/e2e.sh"; then :; else echo "bench: e2e.sh x$n: our chain failed" >&2; rc=1; fi
  sed -i "/^$n [^ ]* \(original\|faithful\) /d" "$TSV"
  awk -v n="$n" -v x="$xml" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'NR > 1 && $1 != "total" && $3 != "-" {
      printf "%s %s %s %s %s %s %s - %s\n", n, x, $2 == "ours" ? "faithful" : "original", $1, $3, $4, $5, l }' \
    "$W/scale-e2e/e2e-x$n.tsv" | tee -a "$TSV"
  [ "${SCALE_CLEAN_DUMPS:-0}" = 0 ] || rm -f "${dump%.multistream.xml.bz2}".multistream*
done

python3 "$ROOT/bench/scale_tools.py" fit "$TSV" >"$SCALE_OUT/scale-fit.md"
python3 "$ROOT/bench/scale_tools.py" svg "$TSV" \
  "x$(echo $SCALE_COPIES | awk '{print $1 "-x" $NF}') the enwiki sample, JOBS=$JOBS, $(nproc) cores" >"$SCALE_OUT/scale.svg"
cat "$SCALE_OUT/scale-fit.md"
echo "written: $TSV, $SCALE_OUT/scale.svg, $SCALE_OUT/scale-fit.md; load now $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
