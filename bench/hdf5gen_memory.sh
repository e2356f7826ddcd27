#!/usr/bin/env bash
# bench/hdf5gen_memory.sh - hdf5gen's peak memory and time as its shards grow.
#
# The workflows run one hdf5gen over all shards (pipelines/common.mk's
# h5_recipe: -j JOBS, shards in parallel) at a fixed shard count, so each
# shard grows with the dump: make en's 256 shards hold about 0.6 MB of text
# each at x64, 10 MB at x1024, 55 MB for all of enwiki. This cuts two shards
# of each size in MEM_SIZES (MB; default "0.7 2.6 10 40") from MEM_TEXT at
# document boundaries, the second from the text after the first (copies of it
# where the text is too short), and runs hdf5gen over the two with the
# h5_recipe's options, -j MEM_JOBS (default 2, as make's JOBS on two cores),
# at 128/20 and 512/80, in make en's settings (data/bert/vocab.txt,
# lower-cased) and make hu's (a 32,000-piece vocabulary trained on MEM_TEXT
# as hu-vocab does, or MEM_HU_VOCAB; --strip-accents 0). Each run is timed
# by GNU time (wall, CPU = user + system, peak RSS), best of MEM_REPS
# (default 2) for the times. The workflows' case, one process over many
# shards, runs too: MEM_MANY shards (default 16; 0: not run) of each size,
# cut one after another, in make en's settings (MEM_MANY_HU=1: make hu's
# too). MEM_BINS lists LABEL:DIR pairs (default "now:$BIN"), so a build
# from before a change can run beside this one.
#   bash bench/hdf5gen_memory.sh
#   MEM_TEXT=sentences.txt MEM_BINS="before:/tmp/old/bin now:bin" bash bench/hdf5gen_memory.sh
# MEM_TEXT: one sentence per line, a blank line between documents (default:
# the 206-page enwiki sample's text, wiki_dump | wiki_strip | sent_split).
# Prints a TSV: bin settings seq shard_mb shards wall_s cpu_s rss_mb.
. "$(dirname "$0")/lib.sh"
MEM_SIZES=${MEM_SIZES:-0.7 2.6 10 40}
MEM_JOBS=${MEM_JOBS:-2}
MEM_REPS=${MEM_REPS:-2}
MEM_MANY=${MEM_MANY:-16}
MEM_BINS=${MEM_BINS:-now:$BIN}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time as /usr/bin/time" >&2; exit 1; }
D=$W/hdf5gen-memory
rm -rf "$D" && mkdir -p "$D"
if [ -z "${MEM_TEXT:-}" ]; then
  MEM_TEXT=$D/text.txt
  "$BIN/wiki_dump" -q "$ROOT/tests/data/enwiki-206.xml.bz2" | "$BIN/wiki_strip" -q -F lines |
    "$BIN/sent_split" -q -l en >"$MEM_TEXT"
fi
HU_VOCAB=${MEM_HU_VOCAB:-}
if [ -z "$HU_VOCAB" ]; then
  mkdir -p "$D/vocab"
  "$BIN/vocab_train" -q -j "$MEM_JOBS" -f -o "$D/vocab/bert" --vocab-size 32000 --hard-vocab-limit false \
    --input-sentence-size 1000000 --shuffle --wordpiece "$D/vocab/vocab.txt" "$MEM_TEXT"
  HU_VOCAB=$D/vocab/vocab.txt
fi

# cut FROM_BYTE MB OUT: whole documents from byte FROM_BYTE of the text
# (wrapping around) until MB megabytes; prints the byte after the last one
cut_shard() {
  local lim
  lim=$(awk -v m="$2" 'BEGIN { printf "%d", m * 1e6 }')
  { tail -c +"$(($1 + 1))" "$MEM_TEXT" && while cat "$MEM_TEXT"; do :; done; } 2>/dev/null |
    awk -v lim="$lim" -v out="$3" '{ n += length($0) + 1; print >out } !NF && n >= lim { exit }
      END { print n }'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "text: $MEM_TEXT ($(stat -c %s "$MEM_TEXT") bytes); hu vocabulary: $HU_VOCAB ($(wc -l <"$HU_VOCAB") pieces)"
printf 'bin\tsettings\tseq\tshard_mb\tshards\twall_s\tcpu_s\trss_mb\n'
total=$(stat -c %s "$MEM_TEXT")
# measure LABEL DIR CFG SEQ PRED MB SHARD...: one row, best of MEM_REPS
measure() {
  local label=$1 dir=$2 cfg=$3 seq=$4 pred=$5 mb=$6
  shift 6
  local vopt bw= bc= rss=0 e u y m c
  if [ "$cfg" = en ]; then vopt=(--vocab "$ROOT/data/bert/vocab.txt" --do-lower-case 1)
  else vopt=(--vocab "$HU_VOCAB" --do-lower-case 1 --strip-accents 0); fi
  for ((i = 0; i < MEM_REPS; i++)); do
    rm -rf "$D/out"
    /usr/bin/time -f '%e %U %S %M' -o "$D/time" "$dir/hdf5gen" -q -j "$MEM_JOBS" "${vopt[@]}" \
      --max-seq-length "$seq" --max-predictions-per-seq "$pred" --masked-lm-prob 0.15 --random-seed 12345 \
      --dupe-factor 5 -o "$D/out/" "$@"
    read -r e u y m <"$D/time"
    c=$(echo "$u + $y" | bc)
    if [ -z "$bw" ] || [ "$(echo "$e < $bw" | bc)" = 1 ]; then bw=$e; fi
    if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc)" = 1 ]; then bc=$c; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  printf '%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.1f\n' "$label" "$cfg" "$seq" "$mb" $# "$bw" "$bc" "$(echo "$rss / 1024" | bc -l)"
}
for mb in $MEM_SIZES; do
  S=$D/shards-$mb
  mkdir -p "$S"
  n=$(cut_shard 0 "$mb" "$S/s_training_0.txt")
  cut_shard $((n % total)) "$mb" "$S/s_training_1.txt" >/dev/null
  M=$D/many-$mb
  if [ "$MEM_MANY" -gt 0 ]; then
    mkdir -p "$M"
    at=0
    for ((k = 0; k < MEM_MANY; k++)); do
      at=$(($(cut_shard "$at" "$mb" "$M/s_training_$k.txt") + at))
      at=$((at % total))
    done
  fi
  for b in $MEM_BINS; do
    label=${b%%:*} dir=${b#*:}
    for cfg in en hu; do
      for sp in "128 20" "512 80"; do
        set -- $sp
        measure "$label" "$dir" $cfg "$1" "$2" "$mb" "$S"/*.txt
        if [ "$MEM_MANY" -gt 0 ] && { [ $cfg = en ] || [ "${MEM_MANY_HU:-0}" = 1 ]; }; then
          measure "$label" "$dir" $cfg "$1" "$2" "$mb" "$M"/*.txt
        fi
      done
    done
  done
  rm -rf "$M"
done
rm -rf "$D/out"
