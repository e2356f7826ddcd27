# bench/lib.sh - shared helpers for the benchmark scripts (sourced).
#
# Benchmarks run the peer tools on the same input in the same run and print
# the ratio. Peers are installed here at bench time, never committed.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BIN:-$ROOT/bin}
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

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# WikiExtractor from PyPI in a venv under $W: `we_setup [VERSION]` (default
# 3.0.6, in $W/venv; any other version in $W/venv-we-VERSION) sets WE_PY.
# On Python >= 3.11 the 3.0.x extract.py fails to import ("global flags not
# at the start of the expression"); its two inline (?i) flags are turned
# into scoped (?i:...) groups here, the same change as the upstream fix
# (PR #313). 3.1.0 imports unpatched (the sed then changes nothing).
we_setup() {
  local ver=${1:-3.0.6} venv=$W/venv
  [ "$ver" = 3.0.6 ] || venv=$W/venv-we-$ver
  WE_PY=$venv/bin/python
  if ! "$WE_PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('wikiextractor') != '$ver')" 2>/dev/null; then
    [ -x "$WE_PY" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q "wikiextractor==$ver"
  fi
  local ex
  ex=$("$WE_PY" -c 'import importlib.util as u; print(u.find_spec("wikiextractor").submodule_search_locations[0])')/extract.py
  sed -i -e "s/'\\\\\\[(((?i)' + '|'.join(wgUrlProtocols) + ')'/'\\\\[((?i:(' + '|'.join(wgUrlProtocols) + '))'/" \
         -e 's/\\.((?i)gif|png|jpg|jpeg)\$/\\.((?i:gif|png|jpg|jpeg))$/' "$ex"
  "$WE_PY" -c 'import wikiextractor.extract' || { echo "bench: WikiExtractor does not import" >&2; return 1; }
}

# A larger dump made from the 206-page English sample (see make_dump.py),
# or from another sample dump given as the second argument. BENCH_VARY=RATE
# (make_dump.py --vary: copies that are not exact repeats) makes only the
# multistream file, $W/...-xN-varyRATE.multistream.xml.bz2, compressed by
# JOBS processes and renamed into place when complete.
bench_dump() { # copies [sample] -> prints path prefix
  local n=$1 src=${2:-$ROOT/tests/data/enwiki-206.xml.bz2} p v=${BENCH_VARY:-0} f mb
  p=$W/$(basename "$src" .xml.bz2)-x$1
  [ -n "${2:-}" ] || p=$W/enwiki-x$1
  if [ "$v" = 0 ]; then
    [ -f "$p.xml.bz2" ] || python3 "$ROOT/bench/make_dump.py" "$src" "$n" "$p" >&2
  else
    p=$p-vary$v
    if [ ! -f "$p.multistream.xml.bz2" ]; then
      mb=$(python3 "$ROOT/bench/make_dump.py" --vary "$v" --multistream-only -j "${JOBS:-$(nproc)}" "$src" "$n" "$p.tmp") || return 1
      echo "$mb" >&2
      for f in multistream-index.txt.bz2 multistream.xml.bz2; do mv "$p.tmp.$f" "$p.$f"; done
      # its MB of XML as scale.sh counts them, from make_dump's last line
      # ("OUT: N pages, X MB XML"), so that scale.sh need not decompress it
      mb=${mb##*, } mb=${mb% MB XML}
      case $mb in *[!0-9.]* | "") ;; *) echo "$mb" >"$p.multistream.xml.bz2.mb" ;; esac
    fi
  fi
  echo "$p"
}

# Shared test data (never copied into the repo): ../shared/data beside the
# checkout, else $DATA.
if [ -z "${DATA:-}" ]; then
  if [ -d "$ROOT/../shared/data" ]; then DATA=$(cd "$ROOT/../shared/data" && pwd); else DATA=/work/shared/data; fi
fi

# One core for single-core timings (taskset when present).
if command -v taskset >/dev/null 2>&1; then CORE1="taskset -c 0"; else CORE1=""; fi

# Seconds -> MB/s for a file of $1 bytes.
mbps() { printf '%.3f' "$(echo "$1 / 1000000 / $2" | bc -l)"; }

# The sentence-splitting and filtering peers in one venv under $W:
# NLTK (Punkt), pySBD, sentencex (Wikimedia), sentence-splitter (a Python
# port of Moses' split-sentences.perl, LGPL), quntoken (nytud, GPL: used,
# never copied) and langdetect. Sets PY and QUNTOKEN.
PEER_PKGS="nltk==3.10.4 pysbd==0.3.4 sentencex==1.0.32 sentence-splitter==1.4 quntoken==3.3.2 langdetect==1.0.9"
PEER_IMPORTS="import nltk, pysbd, sentencex, sentence_splitter, quntoken, langdetect"
peers_setup() {
  PY=$W/venv3/bin/python
  QUNTOKEN=$W/venv3/bin/quntoken
  if ! "$PY" -c "$PEER_IMPORTS" 2>/dev/null; then
    [ -x "$PY" ] || python3 -m venv "$W/venv3"
    "$W/venv3/bin/pip" install -q $PEER_PKGS
  fi
  "$PY" -c "$PEER_IMPORTS" || { echo "bench: peer packages do not import" >&2; return 1; }
}

# NLTK's English Punkt model (the punkt_tab tables NLTK >= 3.8.2 loads; the
# same parameters as english.pickle). Sets and exports NLTK_DATA. Tried in
# this order:
#   1. $NLTK_DATA, if it holds tokenizers/punkt_tab/english;
#   2. $W/nltk_data from an earlier run;
#   3. nltk.download('punkt_tab') into $W/nltk_data (needs nltk_data's host);
#   4. the copy of nltk_data's punkt_tab that the PyPI wheel
#      llama-index-core==0.14.25 ships (llama_index/core/_static/nltk_cache/
#      tokenizers/punkt_tab/): `pip download --no-deps` the wheel into $W
#      and unzip only that folder; nothing of llama-index is installed.
# The model is then checked with nltk.sent_tokenize on a known sentence.
PUNKT_WHEEL=llama-index-core==0.14.25
punkt_setup() {
  local have='import os,sys; sys.exit(not os.path.isfile(os.path.join(sys.argv[1],"tokenizers/punkt_tab/english/ortho_context.tab")))'
  if [ -n "${NLTK_DATA:-}" ] && "$PY" -c "$have" "$NLTK_DATA"; then
    PUNKT_FROM="\$NLTK_DATA ($NLTK_DATA)"
  else
    NLTK_DATA=$W/nltk_data
    if "$PY" -c "$have" "$NLTK_DATA"; then
      PUNKT_FROM="$NLTK_DATA (earlier run)"
    elif timeout 60 "$PY" -c 'import nltk,sys; sys.exit(not nltk.download("punkt_tab", download_dir=sys.argv[1], quiet=True, raise_on_error=True))' "$NLTK_DATA" >/dev/null 2>&1 \
         && "$PY" -c "$have" "$NLTK_DATA"; then
      PUNKT_FROM="nltk.download('punkt_tab')"
    else
      rm -rf "$W/punkt_wheel" && mkdir -p "$W/punkt_wheel" "$NLTK_DATA/tokenizers"
      if "$W/venv3/bin/pip" download -q --no-deps "$PUNKT_WHEEL" -d "$W/punkt_wheel" >&2 \
         && (cd "$W/punkt_wheel" && unzip -q -o ./*.whl 'llama_index/core/_static/nltk_cache/tokenizers/punkt_tab/*') \
         && rm -rf "$NLTK_DATA/tokenizers/punkt_tab" \
         && mv "$W/punkt_wheel/llama_index/core/_static/nltk_cache/tokenizers/punkt_tab" "$NLTK_DATA/tokenizers/" \
         && "$PY" -c "$have" "$NLTK_DATA"; then
        PUNKT_FROM="the punkt_tab tables shipped in the $PUNKT_WHEEL wheel"
      else
        echo "bench: NLTK's English Punkt model (punkt_tab) cannot be obtained: nltk.download failed and" >&2
        echo "bench: the $PUNKT_WHEEL wheel could not be fetched. Set NLTK_DATA to a directory holding" >&2
        echo "bench: tokenizers/punkt_tab/english/ (nltk_data's packages/tokenizers/punkt_tab.zip unzipped)." >&2
        return 1
      fi
      rm -rf "$W/punkt_wheel"
    fi
  fi
  export NLTK_DATA
  local got
  got=$("$PY" -c 'import nltk; print("|".join(nltk.sent_tokenize("Mr. Smith went to Washington. He arrived at 5 p.m. on Friday. Was it late? Yes!")))') || got=
  if [ "$got" != "Mr. Smith went to Washington.|He arrived at 5 p.m. on Friday.|Was it late?|Yes!" ]; then
    echo "bench: Punkt model in $NLTK_DATA does not work: got '$got'" >&2
    return 1
  fi
}

# TurkuNLP's filterdocs.py (spyysalo/wiki-bert-pipeline scripts/filterdocs.py
# at the commit the spec describes; the repository carries no licence, so
# it is fetched at bench time and never committed). Sets FILTERDOCS. Tried
# in this order: $FILTERDOCS; $W/filterdocs.py from an earlier run; `git
# show` from a local clone named by $WBP_GIT; a download of the raw file at
# that commit. Whatever is found must have the recorded sha256.
WBP_COMMIT=d41970c9e1b71f4f566529cb1221034e42d3c432
WBP_SHA256=dc5d197ab0e7b7ce14c2af3021b48a8c6bc2aeac027e4c9f46cc974639630e93
filterdocs_setup() {
  local f=${FILTERDOCS:-$W/filterdocs.py} g
  sha_ok() { [ -f "$1" ] && [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$WBP_SHA256" ]; }
  if ! sha_ok "$f"; then
    f=$W/filterdocs.py
    for g in ${WBP_GIT:-}; do
      [ -d "$g" ] && git -C "$g" show "$WBP_COMMIT:scripts/filterdocs.py" >"$f.tmp" 2>/dev/null && mv "$f.tmp" "$f" && break
    done
    rm -f "$f.tmp"
    sha_ok "$f" || curl -fsSL --max-time 30 -o "$f" \
      "https://raw.githubusercontent.com/spyysalo/wiki-bert-pipeline/$WBP_COMMIT/scripts/filterdocs.py" 2>/dev/null || true
  fi
  if ! sha_ok "$f"; then
    echo "bench: filterdocs.py (spyysalo/wiki-bert-pipeline@$WBP_COMMIT scripts/filterdocs.py) cannot be" >&2
    echo "bench: obtained: set FILTERDOCS=/path/to/filterdocs.py or WBP_GIT=/path/to/a/clone" >&2
    return 1
  fi
  FILTERDOCS=$f
}

# fetch_pinned DEST SHA256 OWNER/REPO COMMIT PATH [GITDIR...]: the file
# PATH of OWNER/REPO at COMMIT, into DEST, for peers that are scripts in a
# repository (fetched at bench time, never committed). Tried in this order:
# DEST from an earlier run; `git show COMMIT:PATH` in each local clone
# given (bare or not); the raw file from GitHub. Whatever is found must
# have SHA256; returns 1 (DEST removed) when nothing does.
fetch_pinned() {
  local dest=$1 sha=$2 repo=$3 commit=$4 path=$5 g
  shift 5
  _pin_ok() { [ -f "$dest" ] && [ "$(sha256sum <"$dest" | cut -d' ' -f1)" = "$sha" ]; }
  _pin_ok && return 0
  for g in "$@"; do
    [ -n "$g" ] && [ -d "$g" ] && git -C "$g" show "$commit:$path" >"$dest.tmp" 2>/dev/null && mv "$dest.tmp" "$dest" && _pin_ok && return 0
  done
  rm -f "$dest.tmp"
  curl -fsSL --max-time 30 -o "$dest" "https://raw.githubusercontent.com/$repo/$commit/$path" 2>/dev/null || true
  _pin_ok || { rm -f "$dest"; return 1; }
}
