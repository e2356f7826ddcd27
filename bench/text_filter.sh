#!/usr/bin/env bash
# bench/text_filter.sh - text_filter against TurkuNLP's filterdocs.py.
#
# Input (BERT format: sentence per line, blank line between documents), made
# here from real Wikipedia text through our prep stage:
#   hu     the one real huwiki page: every paragraph as a document, plus the
#          whole article as one (127 documents), split by quntoken
#          (`-f spl -m sentence`, the W-HU splitter)
#   mixed  hu + the articles of the 122 other-language Wikipedia minidumps
#          (155 documents), these split by NLTK Punkt: quntoken deletes
#          every non-Latin letter ("invalid character"), which would remove
#          what --foreign-ratio and --langdetect are there to catch
# TF_SPLIT=ours splits both with `$BIN/sent_split --lang hu` instead.
#
# filterdocs.py (spyysalo/wiki-bert-pipeline, fetched at bench time, see
# lib.sh filterdocs_setup) runs with every S1 (HILBERT filtering.py) value
# passed explicitly; ours with its defaults, which are those values.
#   (i)  language check off: filterdocs without -l (S4 semantics: a test
#        whose option is not given is skipped); ours with the documented way
#        to turn the check off, found by probing (TF_NOLANG overrides, e.g.
#        TF_NOLANG="--langdetect none"). The kept sets must be identical.
#   (ii) --langdetect hu in both (ours: its own language identifier;
#        filterdocs: the langdetect package), agreement and time.
# Speed: one core (taskset -c 0, ours -j1), the hu documents repeated
# TF_HU_COPIES times and the mixed set TF_MIX_COPIES times; then ours -j2.
#   bash bench/text_filter.sh
. "$(dirname "$0")/lib.sh"
TF_HU_COPIES=${TF_HU_COPIES:-100}
TF_MIX_COPIES=${TF_MIX_COPIES:-4}
PEER_REPS=${PEER_REPS:-2}
TF=$BIN/text_filter
S1_OPTS=(--avg-len 4 --digit-ratio 0.075 --foreign-ratio 0.02 --language hu --no-word-ratio 0.2
         --punct-ratio 0.075 --min-sents 3 --max-sents 1000 --min-toks 20 --max-toks 10000
         --upper-ratio 0.1 --min-words 30 --word-chars abcdefghijklmnopqrstuvwxyzáéíóöúüőű)
export PYTHONUTF8=1

peers_setup
filterdocs_setup
have_ours=1
[ -x "$TF" ] || { have_ours=0; echo "bench: $TF is not built: filterdocs.py only" >&2; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "peer: filterdocs.py at spyysalo/wiki-bert-pipeline@${WBP_COMMIT:0:8}, langdetect $("$PY" -c 'import importlib.metadata as m; print(m.version("langdetect"))')"

# ---- input ----
paras=$W/tf-hu-paras.txt mlp=$W/tf-ml-paras.txt
{
  "$BIN/wiki_dump" -q "$ROOT/tests/data/huwiki-berlin.xml.bz2" | "$BIN/wiki_strip" -q | grep -v -e '^<doc ' -e '^</doc>' | grep .
  "$BIN/wiki_dump" -q "$ROOT/tests/data/huwiki-berlin.xml.bz2" | "$BIN/wiki_strip" -q -F lines | grep .
} | sed 's/$/\n/' >"$paras"
for d in "$DATA"/wiki-multilang/minidumps/*/; do
  "$BIN/wiki_dump" -q "$d/wiki.xml.bz2" | "$BIN/wiki_strip" -q -F lines | grep . || true
done | sed 's/$/\n/' >"$mlp"
hu=$W/tf-hu.txt mix=$W/tf-mixed.txt
if [ "${TF_SPLIT:-}" = ours ]; then
  "$BIN/sent_split" --lang hu "$paras" >"$hu"
  "$BIN/sent_split" --lang hu "$mlp" >"$W/tf-ml.txt"
  split_by="sent_split --lang hu"
else
  "$QUNTOKEN" -f spl -m sentence <"$paras" >"$hu"
  punkt_setup
  "$PY" "$ROOT/bench/peer_split.py" punkt "$mlp" >"$W/tf-ml.txt"
  split_by="quntoken (hu), Punkt (other languages)"
fi
cat "$hu" "$W/tf-ml.txt" >"$mix"
ndocs() { awk 'BEGIN { RS = "" } END { print NR }' "$1"; }
echo "input: $hu ($(ndocs "$hu") documents, $(wc -c <"$hu") bytes); $mix ($(ndocs "$mix") documents, $(wc -c <"$mix") bytes); split by $split_by"
echo

fd() { "$PY" "$FILTERDOCS" "${S1_OPTS[@]}" "$@"; }

# The documented way to turn our language check off: the first candidate
# that exits 0 and keeps an English document (one that --langdetect hu
# drops, when ours can identify languages at all).
probe=$W/tf-probe.txt
printf '%s\n' "The river flows through the middle of the old town and the market." \
  "Most of the houses along the water were built during the last century." \
  "Visitors often walk across the bridge in the evening to see the lights." \
  "There are many small shops and cafes in the streets near the station." "" >"$probe"
nolang_opts() {
  local c o
  if [ -n "${TF_NOLANG+x}" ]; then echo "$TF_NOLANG"; return; fi
  for c in "--langdetect none" "--langdetect off" "--no-langdetect" "--langdetect=" "--langdetect -" "--langdetect la"; do
    # shellcheck disable=SC2086
    o=$("$TF" -q $c "$probe" 2>/dev/null) && [ -n "$o" ] && { echo "$c"; return; }
  done
  echo "bench: cannot find how to turn off text_filter's language check; set TF_NOLANG" >&2
  return 1
}

# ---- agreement ----
for set in hu mixed; do
  f=$hu; [ $set = mixed ] && f=$mix
  fd "$f" >"$W/tf-fd-$set-nolang.txt" 2>"$W/tf-fd-$set-nolang.err"
  fd -l hu "$f" >"$W/tf-fd-$set-hu.txt" 2>"$W/tf-fd-$set-hu.err"
done
ours_lang=0
if [ $have_ours = 1 ]; then
  NOLANG=$(nolang_opts)
  read -r -a nolang <<<"$NOLANG"
  echo "ours with the language check off: text_filter $NOLANG"
  if o=$("$TF" -q --langdetect hu "$probe" 2>"$W/tf-probe.err"); then
    ours_lang=1
    [ -z "$o" ] || echo "bench: note: ours keeps the English probe document with --langdetect hu" >&2
  else
    echo "ours with --langdetect hu: not available ($(tail -n1 "$W/tf-probe.err")): (ii) and its timings skipped"
  fi
  for set in hu mixed; do
    f=$hu; [ $set = mixed ] && f=$mix
    rc=0
    "$TF" "${nolang[@]}" "$f" >"$W/tf-ours-$set-nolang.txt" 2>"$W/tf-ours-$set-nolang.err" || rc=$?
    echo "(i) $set, language check off (must be identical):"
    if [ $rc != 0 ]; then
      echo "  ours failed (exit $rc): $(tail -n1 "$W/tf-ours-$set-nolang.err")"
    else
      "$PY" "$ROOT/bench/tf_compare.py" --diff "$W/tf-diff-$set-nolang.txt" "$f" filterdocs "$W/tf-fd-$set-nolang.txt" ours "$W/tf-ours-$set-nolang.txt" || echo "  DIFFERENT: the documents are in $W/tf-diff-$set-nolang.txt"
    fi
    echo "(ii) $set, --langdetect hu: filterdocs $(grep output "$W/tf-fd-$set-hu.err" | sed 's/.*: //')"
    [ $ours_lang = 1 ] || continue
    rc=0
    "$TF" --langdetect hu "$f" >"$W/tf-ours-$set-hu.txt" 2>"$W/tf-ours-$set-hu.err" || rc=$?
    if [ $rc != 0 ]; then
      echo "  ours failed (exit $rc): $(tail -n1 "$W/tf-ours-$set-hu.err")"
    else
      "$PY" "$ROOT/bench/tf_compare.py" --diff "$W/tf-diff-$set-hu.txt" "$f" filterdocs "$W/tf-fd-$set-hu.txt" ours "$W/tf-ours-$set-hu.txt" || echo "  (the documents on which the two language identifiers disagree: $W/tf-diff-$set-hu.txt)"
    fi
  done
else
  for set in hu mixed; do
    echo "filterdocs on $set: $(grep output "$W/tf-fd-$set-nolang.err" | sed 's/.*: //') without -l, $(grep output "$W/tf-fd-$set-hu.err" | sed 's/.*: //') with -l hu"
  done
fi
echo "(filterdocs' per-test counts: $W/tf-fd-*.err; ours: $W/tf-ours-*.err)"
echo

# ---- speed ----
hux=$W/tf-hu-x$TF_HU_COPIES.txt mixx=$W/tf-mixed-x$TF_MIX_COPIES.txt
for ((i = 0; i < TF_HU_COPIES; i++)); do cat "$hu"; done >"$hux"
for ((i = 0; i < TF_MIX_COPIES; i++)); do cat "$mix"; done >"$mixx"
echo "one core: ${CORE1:-no taskset, not pinned}; ours best of $REPS, filterdocs best of $PEER_REPS"
printf '%-44s %-10s %7s %8s %8s  %s\n' command text MB "wall s" "MB/s" "ours/peer (speed)"
row() { printf '%-44s %-10s %7.2f %8s %8s  %s\n' "$1" "$2" "$(echo "$3/1000000" | bc -l)" "$4" "$(mbps "$3" "$4")" "${5:-}"; }
for set in hu mixed; do
  f=$hux; [ $set = mixed ] && f=$mixx
  b=$(wc -c <"$f")
  for lang in off hu; do
    if [ $lang = hu ]; then fo=(-l hu) oo=(--langdetect hu); else fo=() oo=("${nolang[@]}"); fi
    tp=$(REPS=$PEER_REPS wall $CORE1 "$PY" "$FILTERDOCS" "${S1_OPTS[@]}" "${fo[@]}" "$f")
    row "filterdocs.py (language check $lang)" $set "$b" "$tp"
    [ $have_ours = 1 ] || continue
    [ $lang = off ] || [ $ours_lang = 1 ] || continue
    to=$(wall $CORE1 "$TF" -j1 "${oo[@]}" "$f")
    row "text_filter -j1 (language check $lang)" $set "$b" "$to" "$(printf '%.1fx' "$(echo "$tp / $to" | bc -l)")"
    t2=$(wall "$TF" -j2 "${oo[@]}" "$f")
    row "text_filter -j2, both cores" $set "$b" "$t2" "$(printf '%.1fx' "$(echo "$tp / $t2" | bc -l)")"
  done
done
# the cost of PCRE2 patterns (JIT): one of each kind, language check off
PATS=(--drop-lines '^(Források|Jegyzetek|Külső hivatkozások|Lásd még)\b'
      --drop-docs '(?i)\bwikip[eé]dia\b' --keep-docs '\p{Lu}\p{Ll}{3,}')
if [ $have_ours = 1 ]; then
  b=$(wc -c <"$hux")
  t0=$(wall $CORE1 "$TF" -j1 "${nolang[@]}" "$hux")
  row "text_filter -j1, no patterns" hu "$b" "$t0"
  t1=$(wall $CORE1 "$TF" -j1 "${nolang[@]}" "${PATS[@]}" "$hux")
  row "text_filter -j1 + 3 patterns" hu "$b" "$t1" "$(printf '%+.0f%% time' "$(echo "100 * ($t1 / $t0 - 1)" | bc -l)")"
fi
if [ $have_ours = 1 ]; then
  oo=("${nolang[@]}"); [ $ours_lang = 1 ] && oo=(--langdetect hu)
  "$TF" -j1 "${oo[@]}" "$mixx" >"$W/tf-j1.txt" 2>/dev/null
  "$TF" -j2 "${oo[@]}" "$mixx" >"$W/tf-j2.txt" 2>/dev/null
  if cmp -s "$W/tf-j1.txt" "$W/tf-j2.txt"; then echo "-j1 and -j2 output identical (${oo[*]}): yes"; else echo "-j1 and -j2 output identical (${oo[*]}): NO"; fi
fi
