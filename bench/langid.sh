#!/usr/bin/env bash
# bench/langid.sh - built-in language identification against PyPI
# langdetect (seeded, DetectorFactory.seed = 0) on the same texts:
#   1. the held-out Tatoeba sentences of >= 40 characters (test part of
#      bench/langid_data.sh): per-language accuracy side by side;
#   2. speed on those sentences: texts/s and MB/s of the identify calls
#      alone (model loading excluded on both sides), and the ratio;
#   3. the wikimedia-textcat short texts (LGPL, evaluation only), lines of
#      >= 20 characters, for the languages both tools know;
#   4. the held-out Wikipedia sentences (ours only: langdetect lacks some).
#
#   bash bench/langid.sh            (needs make, ../shared or $WIKIBERT_SHARED)
# langdetect comes from $LANGDETECT_PY, else the venv in $W/venv3, which is
# created (pip install langdetect) if missing.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
SHARED=${WIKIBERT_SHARED:-$ROOT/../shared}
MODEL=${LANGID_MODEL:-$ROOT/data/langid/model.txt}
D=$W/langid
PY=${LANGDETECT_PY:-$W/venv3/bin/python}
if ! "$PY" -c 'import langdetect' 2>/dev/null; then
  python3 -m venv "$W/venv3"
  "$W/venv3/bin/pip" install -q langdetect==1.0.9
  PY=$W/venv3/bin/python
fi
export LC_ALL=C
"$ROOT/bench/langid_data.sh" "$D" "$SHARED" >/dev/null
OURS_LANGS=" $(sed '/^grams/q' "$MODEL" | awk -F'\t' '$1 == "lang" {printf "%s ", $2}')"
LD_LANGS=" $("$PY" -c 'from langdetect import DetectorFactory as F, detector_factory as d
d.init_factory(); print(" ".join(sorted({l.split("-")[0] for l in d._factory.get_lang_list()})))') "

# compare GOLD_TEXT_TSV OURS_OUT LD_OUT: per-language table + totals
compare() {
  paste "$2" "$3" | awk -F'\t' -v ours="$OURS_LANGS" -v ld="$LD_LANGS" '
    $1 != $4 { print "bench: line " NR ": outputs out of step" > "/dev/stderr"; exit 1 }
    { n[$1]++; o[$1] += $1 == $2; l[$1] += $1 == $5 }
    END {
      printf "%-6s %7s %9s %11s\n", "lang", "texts", "ours %", "langdetect %"
      for (k in n) keys[++nk] = k
      for (i = 1; i <= nk; i++) for (j = i + 1; j <= nk; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
      for (i = 1; i <= nk; i++) {
        k = keys[i]; both = index(ld, " " k " ") && index(ours, " " k " ")
        printf "%-6s %7d %9.2f %11.2f%s\n", k, n[k], 100 * o[k] / n[k], 100 * l[k] / n[k], both ? "" : "  (not in langdetect)"
        N += n[k]; O += o[k]; L += l[k]
        if (both) { BN += n[k]; BO += o[k]; BL += l[k] }
      }
      printf "%-6s %7d %9.2f %11.2f\n", "all", N, 100 * O / N, 100 * L / N
      if (BN < N) printf "%-6s %7d %9.2f %11.2f\n", "both", BN, 100 * BO / BN, 100 * BL / BN
    }'
}

echo "== Tatoeba held-out sentences >= 40 characters ($(basename "$MODEL"))"
"$BIN/langid_train" --eval "$MODEL" --min-chars 40 "$D/test-tatoeba.tsv" >"$D/ours.tsv" 2>"$D/ours.log"
"$PY" "$ROOT/bench/langid_detect.py" --min-chars 40 <"$D/test-tatoeba.tsv" >"$D/ld.tsv" 2>"$D/ld.log"
compare "$D/test-tatoeba.tsv" "$D/ours.tsv" "$D/ld.tsv"

echo
echo "== speed on the same sentences (identify calls only, one thread)"
echo "ours:       $(sed 's/^langid_train: //' "$D/ours.log")"
echo "langdetect: $(cat "$D/ld.log")"
o_ts=$(grep -oE '[0-9.]+ texts/s' "$D/ours.log" | cut -d' ' -f1)
l_ts=$(grep -oE '[0-9.]+ texts/s' "$D/ld.log" | cut -d' ' -f1)
o_mb=$(grep -oE '[0-9.]+ MB/s' "$D/ours.log" | cut -d' ' -f1)
l_mb=$(grep -oE '[0-9.]+ MB/s' "$D/ld.log" | cut -d' ' -f1)
echo "ratio:      $(ratio "$o_ts" "$l_ts")x texts/s, $(ratio "$o_mb" "$l_mb")x MB/s"
t_ours=$(wall "$BIN/langid_train" --eval "$MODEL" --min-chars 40 "$D/test-tatoeba.tsv")
REPS=1 t_ld=$(wall bash -c "'$PY' '$ROOT/bench/langid_detect.py' --min-chars 40 <'$D/test-tatoeba.tsv'")
echo "wall, whole command incl. loading: ours ${t_ours} s, langdetect ${t_ld} s ($(ratio "$t_ld" "$t_ours")x)"

echo
echo "== wikimedia-textcat short texts, lines >= 20 characters"
declare -A TC=([afrikaans]=af [albanian]=sq [arabic]=ar [basque]=eu [belarussian]=be [bosnian]=bs
  [breton]=br [catalan]=ca [chinese]=zh [croatian]=hr [czech]=cs [danish]=da [dutch]=nl [english]=en
  [esperanto]=eo [french]=fr [german]=de [hebrew]=he [hungarian]=hu [icelandic]=is [indonesian]=id
  [irish]=ga [italian]=it [latin]=la [norwegian]=no [polish]=pl [portuguese]=pt [romanian]=ro
  [russian]=ru [serbian]=sr [slovak]=sk [slovenian]=sl [spanish]=es [ukrainian]=uk [welsh]=cy
  [yiddish]=yi [amharic]=am)
: >"$D/textcat.tsv"
for f in "$SHARED"/data/langid/textcat-shorttexts/*.txt; do
  code=${TC[$(basename "$f" .txt)]:-}
  [ -n "$code" ] || continue
  case "$OURS_LANGS" in *" $code "*) ;; *) continue ;; esac
  case "$LD_LANGS" in *" $code "*) ;; *) continue ;; esac
  tr -d '\r' <"$f" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' | awk -v c="$code" 'NF { print c "\t" $0 }' >>"$D/textcat.tsv"
done
"$BIN/langid_train" -q --eval "$MODEL" --min-chars 20 "$D/textcat.tsv" >"$D/ours-tc.tsv"
"$PY" "$ROOT/bench/langid_detect.py" --min-chars 20 <"$D/textcat.tsv" >"$D/ld-tc.tsv" 2>/dev/null
compare "$D/textcat.tsv" "$D/ours-tc.tsv" "$D/ld-tc.tsv"

echo
echo "== held-out Wikipedia sentences (ours; langdetect where it knows the language)"
"$BIN/langid_train" -q --eval "$MODEL" "$D/test-wiki.tsv" >"$D/ours-w.tsv"
"$PY" "$ROOT/bench/langid_detect.py" <"$D/test-wiki.tsv" >"$D/ld-w.tsv" 2>/dev/null
compare "$D/test-wiki.tsv" "$D/ours-w.tsv" "$D/ld-w.tsv" | awk 'NR == 1 || /^(all|both)/'
