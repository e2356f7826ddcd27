#!/usr/bin/env bash
# bench/strip_fidelity.sh - how close wiki_strip's text is to WikiExtractor's.
#
# Two peers: WikiExtractor 3.1.0 (the main one: wiki_strip's default text
# follows it) and WikiExtractor 3.0.6 (the one the original workflow's
# corpora were made with: wiki_strip --faithful reproduces it byte for
# byte). Both are installed at bench time into venvs under $BENCH_TMP
# (default /tmp/wikibert-bench) by we_setup in bench/lib.sh, which patches
# 3.0.6 to import on Python >= 3.11 (see there). No WikiExtractor code is
# committed here.
#
# 1. On the 206-page English sample, each WikiExtractor (default <doc>
#    output, --processes 2) and our prep stage in both modes (bin/wiki_dump
#    --keep-redirects FILE | bin/wiki_strip --format doc [--faithful]) run
#    side by side; bench/strip_fidelity.py compares them: the article ids
#    on each side (3.1.0 skips redirect pages), the share of WikiExtractor's
#    markup-free paragraphs that we reproduce exactly (para_match), the
#    lines with leftover markup on each side (MARKUP_RE in
#    strip_fidelity.py) and the lines with a blank before punctuation
#    (SPACE_PUNCT_RE). The default text is compared with 3.1.0 in full,
#    with samples of the differences, then every mode with every peer in
#    one line each.
# 2. Every other shared dump (Hungarian, the other English samples, the 122
#    DBpedia minidumps): any failure of our prep stage, our leftover-markup
#    lines per file, and para_match of our default text against 3.1.0 and
#    of --faithful against 3.0.6 (per dump under 98 %, then in total).
#
# Prints numbers and always exits 0; it is not a test.
#   bash bench/strip_fidelity.sh          SAMPLES=N: sample lines (default 20)
#   DATA=/path/to/shared/data             default /work/shared/data
. "$(dirname "$0")/lib.sh"
set +e
DATA=${DATA:-/work/shared/data}
SAMPLES=${SAMPLES:-20}
PY=$ROOT/bench/strip_fidelity.py
EN=$DATA/wiki-en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
PEERS="3.1.0 3.0.6"

ours() { # DUMP OUT [wiki_strip options]
  local f=$1 o=$2
  shift 2
  "$BIN/wiki_dump" -q --keep-redirects "$f" | "$BIN/wiki_strip" -q --format doc "$@" >"$o"
}

if [ ! -x "$BIN/wiki_dump" ] || [ ! -x "$BIN/wiki_strip" ]; then
  make -C "$ROOT" -s all >/dev/null 2>&1 || { echo "strip_fidelity: bin/ not built and make failed"; exit 0; }
fi
[ -f "$EN" ] || { echo "strip_fidelity: $EN missing (set DATA)"; exit 0; }

declare -A WEPY
for v in $PEERS; do
  if we_setup "$v" >/dev/null 2>&1; then
    WEPY[$v]=$WE_PY
  else
    echo "strip_fidelity: WikiExtractor $v unavailable, its comparison skipped"
  fi
done

we_run() { # VERSION DUMP.xml OUT
  local d=$W/we_tmp
  rm -rf "$d"
  "${WEPY[$1]}" -m wikiextractor.WikiExtractor -q --processes 2 -o "$d" "$2" >/dev/null 2>&1 || return 1
  cat "$d"/*/wiki_* >"$3"
}

echo "== 1. fidelity on $(basename "$EN")"
bzip2 -dc "$EN" >"$W/en.xml"
s=$(date +%s.%N)
ours "$EN" "$W/ours_en.txt" || echo "strip_fidelity: our prep stage FAILED (exit $?)"
e=$(date +%s.%N)
printf 'ours: %.2f s (wiki_dump | wiki_strip)\n' "$(echo "$e - $s" | bc)"
ours "$EN" "$W/ours_en_faithful.txt" --faithful || echo "strip_fidelity: our prep stage --faithful FAILED"
for v in $PEERS; do
  [ -n "${WEPY[$v]:-}" ] || continue
  s=$(date +%s.%N)
  we_run "$v" "$W/en.xml" "$W/we_en_$v.txt" || echo "strip_fidelity: WikiExtractor $v FAILED"
  e=$(date +%s.%N)
  printf 'WikiExtractor %s: %.2f s (--processes 2)\n' "$v" "$(echo "$e - $s" | bc)"
done
if [ -n "${WEPY[3.1.0]:-}" ]; then
  echo
  echo "-- default text vs WikiExtractor 3.1.0"
  python3 "$PY" compare "$W/we_en_3.1.0.txt" "$W/ours_en.txt" --samples "$SAMPLES"
fi
echo
echo "-- every mode vs every peer (leftover and space_punct: WikiExtractor / ours)"
for v in $PEERS; do
  [ -n "${WEPY[$v]:-}" ] || continue
  python3 "$PY" brief "default vs $v" "$W/we_en_$v.txt" "$W/ours_en.txt"
  python3 "$PY" brief "--faithful vs $v" "$W/we_en_$v.txt" "$W/ours_en_faithful.txt"
done

echo
echo "== 2. other dumps: our prep stage (failures, leftover markup, para_match)"
pairs=() fails=0
declare -A triples
dumps=("$DATA"/wiki-hu/wiki.xml.bz2 "$DATA"/wiki-en/*.bz2 "$DATA"/wiki-multilang/minidumps/*/wiki.xml.bz2)
mkdir -p "$W/fid"
for f in "${dumps[@]}"; do
  [ -f "$f" ] || continue
  case $f in
  */minidumps/*) label=$(basename "$(dirname "$f")") ;;
  *) label=$(basename "$(dirname "$f")")/$(basename "$f" .bz2) ;;
  esac
  out=$W/fid/$(echo "$label" | tr / _).txt
  if ! ours "$f" "$out" 2>"$out.err" || ! ours "$f" "$out.faithful" --faithful 2>>"$out.err"; then
    fails=$((fails + 1))
    echo "  FAILED: $label: $(head -c 200 "$out.err")"
  fi
  pairs+=("$label=$out")
  bzip2 -dc "$f" >"$W/fid/in.xml" || continue
  for v in $PEERS; do
    [ -n "${WEPY[$v]:-}" ] || continue
    mine=$out
    [ "$v" = 3.0.6 ] && mine=$out.faithful
    we_run "$v" "$W/fid/in.xml" "$out.we-$v" && triples[$v]+="$label=$out.we-$v=$mine "
  done
done
echo "ours: ${#pairs[@]} dumps, $fails failed"
python3 "$PY" leftover "${pairs[@]}"
for v in $PEERS; do
  [ -n "${triples[$v]:-}" ] || continue
  mode=default
  [ "$v" = 3.0.6 ] && mode=--faithful
  echo "our $mode text vs WikiExtractor $v (dumps under 98 %, then all; leftover and space_punct: WikiExtractor / ours):"
  # shellcheck disable=SC2086
  python3 "$PY" matchall ${triples[$v]}
done
exit 0
