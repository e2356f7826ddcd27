#!/usr/bin/env bash
# bench/prep_memory.sh - peak memory of the prep stage on a 1 GB dump.
#
# Builds a ~1 GB XML dump (the 206-page English sample repeated, see
# make_dump.py; single-stream and multistream), runs wiki_dump and
# wiki_strip on it at several -j, and prints each program's peak RSS
# (GNU time %M). The goal is a bounded footprint: under 256 MB whatever the
# dump size.
#   bash bench/prep_memory.sh        COPIES=170 (about 1 GB of XML)
. "$(dirname "$0")/lib.sh"
COPIES=${COPIES:-170}
P=$(bench_dump "$COPIES")
size=$(bzip2 -dc "$P.xml.bz2" | wc -c)
echo "input: $P.xml.bz2 ($(stat -c %s "$P.xml.bz2") bytes bz2, $size bytes XML)"
printf '%-40s %10s %12s\n' "command" "wall s" "peak RSS MB"
for f in "$P.xml.bz2" "$P.multistream.xml.bz2"; do
  for j in 1 2 16; do
    /usr/bin/time -f '%e %M' -o "$W/t.dump" "$BIN/wiki_dump" -j$j "$f" |
      /usr/bin/time -f '%e %M' -o "$W/t.strip" "$BIN/wiki_strip" -j$j >/dev/null
    read -r e m <"$W/t.dump"
    printf '%-40s %10s %12.1f\n' "wiki_dump -j$j $(basename "$f")" "$e" "$(echo "$m / 1024" | bc -l)"
    read -r e m <"$W/t.strip"
    printf '%-40s %10s %12.1f\n' "  | wiki_strip -j$j" "$e" "$(echo "$m / 1024" | bc -l)"
  done
done
