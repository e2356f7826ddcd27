#!/usr/bin/env bash
# bench/prep_speed.sh - speed of the prep stage against bzip2 and WikiExtractor.
#
# On the same file in the same run: `bzip2 -dc FILE`, our prep
# (wiki_dump FILE | wiki_strip) at -j1 and -j2, and WikiExtractor
# --processes 1 and 2; single-stream and multistream files alike. Prints wall
# times, MB/s of XML and the ratios.
#   bash bench/prep_speed.sh            (COPIES=10: a 61 MB XML dump)
. "$(dirname "$0")/lib.sh"
COPIES=${COPIES:-10}
P=$(bench_dump "$COPIES")
xml_mb=$(bzip2 -dc "$P.xml.bz2" | wc -c | awk '{printf "%.1f", $1/1e6}')
we_setup
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "input: $P.{xml,multistream.xml}.bz2, $xml_mb MB XML, best of $REPS"
printf '%-34s %9s %9s %9s\n' "command" "wall s" "MB/s" "ratio"
for kind in xml multistream.xml; do
  f=$P.$kind.bz2
  bz=$(wall bzip2 -dc "$f")
  printf '%-34s %9s %9.1f %9s\n' "bzip2 -dc ($kind)" "$bz" "$(echo "$xml_mb / $bz" | bc -l)" "1.00"
  for j in 1 2; do
    t=$(wall bash -c "'$BIN/wiki_dump' -j$j '$f' | '$BIN/wiki_strip' -j$j")
    printf '%-34s %9s %9.1f %9s\n' "wikibert prep -j$j" "$t" "$(echo "$xml_mb / $t" | bc -l)" "$(ratio "$t" "$bz")x bzip2"
    eval "ours_$j=$t"
  done
  for j in 1 2; do
    rm -rf "$W/we_out"
    t=$(REPS=1 wall "$WE_PY" -m wikiextractor.WikiExtractor --processes $j -q -o "$W/we_out" "$f")
    printf '%-34s %9s %9.1f %9s\n' "WikiExtractor --processes $j" "$t" "$(echo "$xml_mb / $t" | bc -l)" "$(ratio "$t" "$(eval echo \$ours_$j)")x ours"
  done
done
