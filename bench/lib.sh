# bench/lib.sh - shared helpers for the benchmark scripts (sourced).
#
# Benchmarks run the peer tools on the same input in the same run and print
# the ratio. Peers are installed here at bench time, never committed.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
W=${BENCH_TMP:-/tmp/wikibert-bench}
mkdir -p "$W"

# Wall-clock seconds of a command (its output discarded), best of $REPS.
REPS=${REPS:-3}
wall() {
  local best= s e t i
  for ((i = 0; i < REPS; i++)); do
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "bench: command failed: $*" >&2; return 1; }
    e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  printf '%.3f' "$best"
}

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }

# WikiExtractor 3.0.6 from PyPI in a venv under $W. On Python >= 3.11 its
# extract.py fails to import ("global flags not at the start of the
# expression"); the two inline (?i) flags are turned into scoped (?i:...)
# groups here, the same change as the upstream fix (PR #313).
we_setup() {
  WE_PY=$W/venv/bin/python
  if [ ! -x "$WE_PY" ]; then
    python3 -m venv "$W/venv"
    "$W/venv/bin/pip" install -q wikiextractor==3.0.6
  fi
  local ex
  ex=$("$WE_PY" -c 'import importlib.util as u; print(u.find_spec("wikiextractor").submodule_search_locations[0])')/extract.py
  sed -i -e "s/'\\\\\\[(((?i)' + '|'.join(wgUrlProtocols) + ')'/'\\\\[((?i:(' + '|'.join(wgUrlProtocols) + '))'/" \
         -e 's/\\.((?i)gif|png|jpg|jpeg)\$/\\.((?i:gif|png|jpg|jpeg))$/' "$ex"
  "$WE_PY" -c 'import wikiextractor.extract' || { echo "bench: WikiExtractor does not import" >&2; return 1; }
}

# A larger dump made from the 206-page English sample (see make_dump.py).
bench_dump() { # copies -> prints path prefix
  local n=$1 p=$W/enwiki-x$1
  [ -f "$p.xml.bz2" ] || python3 "$ROOT/bench/make_dump.py" "$ROOT/tests/data/enwiki-206.xml.bz2" "$n" "$p" >&2
  echo "$p"
}
