#!/usr/bin/env bash
# bench/langid_data.sh - prepare the language-identification data: labelled
# "lang<TAB>text" lines from the shared Tatoeba pairs and Wikipedia
# minidumps, split into train/dev/test by langid_train --select.
#
#   bench/langid_data.sh OUTDIR [SHARED]
#
# SHARED defaults to $WIKIBERT_SHARED or the shared/ folder beside the
# checkout. Writes into OUTDIR:
#   tatoeba.tsv, wiki.tsv         every labelled line
#   train.tsv, dev.tsv            the training and held-out (temperature) parts
#   test-tatoeba.tsv              held-out Tatoeba sentences (the benchmark)
#   test-wiki.tsv                 held-out Wikipedia sentences
# The Wikipedia text is wiki_strip --faithful's (WikiExtractor 3.0's bytes),
# the text data/langid/model.txt was trained on, so that the model rebuilds
# byte for byte. The split is by a hash of each text's letters
# (langid_split_part), so a text in a test file never occurs in train.tsv,
# in whichever file or language it appears. Needs bin/ built (make). Data sources and licences:
# data/langid/SOURCES.md.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
OUT=${1:?usage: langid_data.sh OUTDIR [SHARED]}
SHARED=${2:-${WIKIBERT_SHARED:-$ROOT/../shared}}
TAT=$SHARED/data/langid/tatoeba-manythings
WIKI=$SHARED/data/wiki-multilang/minidumps
export LC_ALL=C
mkdir -p "$OUT"

# ---- Tatoeba: "English<TAB>other"; ISO 639-3 -> the codes langdetect uses
declare -A ISO=([bul]=bg [cat]=ca [ces]=cs [dan]=da [ell]=el [est]=et [fin]=fi [hrv]=hr
  [hun]=hu [ind]=id [isl]=is [lit]=lt [lvs]=lv [nld]=nl [nob]=no [pol]=pl [ron]=ro [slk]=sk
  [slv]=sl [srp]=sr [swe]=sv [vie]=vi [zsm]=ms)
for f in "$TAT"/*.txt; do
  b=$(basename "$f" .txt)
  code=${ISO[$b]:?no code for $b}
  tr -d '\r' <"$f" | awk -F'\t' -v code="$code" 'NF >= 2 && $1 != "" && $2 != "" {
      print "en\t" $1; print code "\t" $2 }'
done | awk '!seen[$0]++' >"$OUT/tatoeba.tsv"

# ---- Wikipedia: article text, cut into sentences at ". ", "! ", "? ",
# the danda and the ideographic full stop.
# Left out: editions with under 10 kB of text, and varieties written much
# like a bigger neighbour in the set (sh: hr/sr/bs, sco: en, als: de,
# azb: fa, pnb: ur); Simple English counts as en.
MIN_BYTES=10000
SKIP=" sh sco als azb pnb "
: >"$OUT/wiki.tsv"
for d in "$WIKI"/*/; do
  w=$(basename "$d")
  case "$SKIP" in *" $w "*) continue ;; esac
  code=$w
  [ "$w" = simple ] && code=en
  "$BIN/wiki_dump" -q "$d/wiki.xml.bz2" | "$BIN/wiki_strip" -q -j1 -F lines --faithful >"$OUT/.wiki.txt"
  [ "$w" = simple ] || [ "$(wc -c <"$OUT/.wiki.txt")" -ge $MIN_BYTES ] || continue
  awk -v code="$code" 'NF {
      gsub(/\t/, " ")
      n = split($0, parts, /([.!?] |\xe0\xa5\xa4 ?|\xe3\x80\x82)/)
      for (i = 1; i <= n; i++) {
        s = parts[i]
        # long runs without sentence marks (Thai, lists): pieces of about
        # 200-400 bytes cut at spaces
        while (length(s) > 400) {
          j = index(substr(s, 201), " ")
          if (!j) break
          if (j + 200 >= 20) print code "\t" substr(s, 1, j + 199)
          s = substr(s, j + 201)
        }
        if (length(s) >= 20) print code "\t" s
      }
    }' "$OUT/.wiki.txt" >>"$OUT/wiki.tsv"
done
rm -f "$OUT/.wiki.txt"

"$BIN/langid_train" -q --select train "$OUT/tatoeba.tsv" "$OUT/wiki.tsv" >"$OUT/train.tsv"
"$BIN/langid_train" -q --select dev "$OUT/tatoeba.tsv" "$OUT/wiki.tsv" >"$OUT/dev.tsv"
"$BIN/langid_train" -q --select test "$OUT/tatoeba.tsv" >"$OUT/test-tatoeba.tsv"
"$BIN/langid_train" -q --select test "$OUT/wiki.tsv" >"$OUT/test-wiki.tsv"
for f in tatoeba wiki train dev test-tatoeba test-wiki; do
  printf '%-14s %8d lines %6d languages\n' "$f.tsv" "$(wc -l <"$OUT/$f.tsv")" "$(cut -f1 "$OUT/$f.tsv" | sort -u | wc -l)"
done
