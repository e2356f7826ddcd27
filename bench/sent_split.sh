#!/usr/bin/env bash
# bench/sent_split.sh - sent_split against NLTK Punkt, pySBD, sentencex,
# Moses' splitter and quntoken.
#
# 1. Accuracy (bench/sentseg_eval.py): the English Golden Rules for ours
#    (--lang en), Punkt and pySBD; quntoken's own Hungarian sentence cases
#    (snt_boundary, snt_newline, sntcorr_all, sntcorr_segfault, read from the
#    shared data at run time, never copied) for ours (--lang hu) and
#    quntoken, with Punkt and pySBD's English models for reference; and
#    mixed-genre English: the test part of Universal Dependencies English
#    EWT (weblogs, newsgroups, e-mails, reviews, Yahoo! answers; CC BY-SA
#    4.0, read at run time, never copied) for ours, Punkt, pySBD, sentencex
#    and Moses' split-sentences (the sentence-splitter package). There F1
#    is boundary-level: a boundary is a cut between two sentences inside a
#    paragraph; P = correct cuts / cuts made, R = correct cuts / cuts in the
#    treebank, F1 = 2PR/(P+R), micro-averaged per genre and overall (see
#    sentseg_eval.py). The treebank is found by ewt_setup below: $EWT (a
#    folder or a file), a git clone named by $EWT_GIT (read with git show),
#    $W/UD_English-EWT from an earlier run, or a shallow git clone of
#    github.com/UniversalDependencies/UD_English-EWT into it; without any,
#    that part is skipped with a message.
# 2. Speed on one core (taskset -c 0; ours -j1) on real Wikipedia text made
#    by our prep stage (wiki_dump | wiki_strip -F lines: one article per
#    line, blank line between articles):
#      English: the 206-page sample repeated EN_COPIES times (make_dump.py)
#               ours --lang en, Punkt (bench/peer_split.py punkt), and pySBD
#               on the first SBD_BYTES of it only (it is ~1000x slower; its
#               MB/s is measured on that slice and the ratio is taken
#               between MB/s figures, not on the same bytes)
#      Hungarian: the one real huwiki page repeated HU_COPIES times
#               ours --lang hu, `quntoken -f spl -m sentence`, Punkt
#    Then ours -j2 and quntoken unpinned (both cores), and a check that -j1
#    and -j2 write identical output.
# Peers come from PyPI into $W/venv3 (bench/lib.sh peers_setup); the Punkt
# model is found or fetched by punkt_setup (see lib.sh for the order; set
# NLTK_DATA to use a local copy).
#   bash bench/sent_split.sh
#   BIN=/path/to/bin EN_COPIES=4 HU_COPIES=50 REPS=5 bash bench/sent_split.sh
. "$(dirname "$0")/lib.sh"
EN_COPIES=${EN_COPIES:-10}
HU_COPIES=${HU_COPIES:-200}
SBD_BYTES=${SBD_BYTES:-150000}
PEER_REPS=${PEER_REPS:-2}
SS=$BIN/sent_split
HU_CASES="test_default_snt_boundary.txt test_default_snt_newline.txt test_default_sntcorr_all.txt test_default_sntcorr_segfault.txt"

peers_setup
punkt_setup

# The UD English EWT test file (see the header). Sets EWT_TEST or leaves it
# empty.
ewt_setup() {
  local f=ewt-ud-test.conllu
  EWT_TEST=
  if [ -n "${EWT:-}" ] && [ -f "$EWT" ]; then EWT_TEST=$EWT; return; fi
  if [ -n "${EWT:-}" ] && [ -f "$EWT/en_$f" ]; then EWT_TEST=$EWT/en_$f; return; fi
  if [ -n "${EWT_GIT:-}" ] && git --git-dir="$EWT_GIT" show "HEAD:en_$f" >"$W/en_$f.tmp" 2>/dev/null; then
    mv "$W/en_$f.tmp" "$W/en_$f" && EWT_TEST=$W/en_$f && return
  fi
  rm -f "$W/en_$f.tmp"
  [ -f "$W/UD_English-EWT/en_$f" ] ||
    timeout 120 git clone -q --depth 1 https://github.com/UniversalDependencies/UD_English-EWT \
      "$W/UD_English-EWT" >/dev/null 2>&1 || true
  [ -f "$W/UD_English-EWT/en_$f" ] && EWT_TEST=$W/UD_English-EWT/en_$f
  return 0
}
ewt_setup
have_ours=1
[ -x "$SS" ] || { have_ours=0; echo "bench: $SS is not built: peers only, no ratios" >&2; }
# wiki_strip -F lines output, named rather than sniffed when sent_split can.
SSIN=()
[ $have_ours = 0 ] || ! "$SS" --help | grep -q -e '--input-format' || SSIN=(--input-format lines)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "peers: $("$PY" -c 'import importlib.metadata as m; print(", ".join(p + " " + m.version(p) for p in ("nltk", "pysbd", "sentencex", "sentence-splitter", "quntoken")))')"
echo "Punkt model: $PUNKT_FROM"
echo "UD English EWT test part: ${EWT_TEST:-not found}"
echo

# ---- accuracy ----
fails=$W/sentseg-failures.txt
: >"$fails"
en_rules=$ROOT/tests/data/sentseg/golden_rules_en.jsonl
[ -f "$en_rules" ] || en_rules=$DATA/sentseg-en/golden_rules_en.jsonl
"$PY" "$ROOT/bench/sentseg_eval.py" --bin "$BIN" --failures "$fails" golden "$en_rules"
echo
hu=()
for f in $HU_CASES; do hu+=("$DATA/sentseg-hu/$f"); done
"$PY" "$ROOT/bench/sentseg_eval.py" --bin "$BIN" --failures "$fails" quntoken "${hu[@]}"
echo
if [ -n "$EWT_TEST" ]; then
  "$PY" "$ROOT/bench/sentseg_eval.py" --bin "$BIN" --failures "$fails" ud "$EWT_TEST"
else
  echo "mixed-genre English: UD English EWT not found (set EWT=/path/to/en_ewt-ud-test.conllu or EWT_GIT): skipped"
fi
echo "(every failed case, with the expected and the produced sentences: $fails)"
echo

# ---- speed ----
P=$(bench_dump "$EN_COPIES")
en=$W/sent-en-x$EN_COPIES.txt
"$BIN/wiki_dump" -q "$P.xml.bz2" | "$BIN/wiki_strip" -q -F lines >"$en"
hp=$W/huwiki-x$HU_COPIES
[ -f "$hp.xml.bz2" ] || python3 "$ROOT/bench/make_dump.py" "$ROOT/tests/data/huwiki-berlin.xml.bz2" "$HU_COPIES" "$hp" >&2
hut=$W/sent-hu-x$HU_COPIES.txt
"$BIN/wiki_dump" -q "$hp.xml.bz2" | "$BIN/wiki_strip" -q -F lines >"$hut"
# pySBD's slice: whole articles from the start of the English text.
sbd=$W/sent-en-slice.txt
python3 - "$en" "$sbd" "$SBD_BYTES" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
cut = data.find(b"\n\n", int(sys.argv[3]))
open(sys.argv[2], "wb").write(data[: len(data) if cut < 0 else cut + 2])
EOF
en_b=$(wc -c <"$en"); hu_b=$(wc -c <"$hut"); sbd_b=$(wc -c <"$sbd")
echo "English text: $en ($(mbps "$en_b" 1) MB, $(grep -c . "$en") articles: the 206-page sample x$EN_COPIES)"
echo "Hungarian text: $hut ($(mbps "$hu_b" 1) MB: the one huwiki page x$HU_COPIES)"
echo "pySBD slice: first $(mbps "$sbd_b" 1) MB of the English text"
echo "one core: ${CORE1:-no taskset, not pinned}; ours best of $REPS, peers best of $PEER_REPS"
printf '%-40s %-9s %8s %9s %9s  %s\n' "command" "text" "MB" "wall s" "MB/s" "ours/peer (speed)"

line() { # name text bytes seconds [ratio note]
  printf '%-40s %-9s %8.2f %9s %9s  %s\n' "$1" "$2" "$(echo "$3 / 1000000" | bc -l)" "$4" "$(mbps "$3" "$4")" "${5:-}"
}
speedup() { # ours_bytes ours_s peer_bytes peer_s -> ours MB/s / peer MB/s
  printf '%.1fx' "$(echo "($1 / $2) / ($3 / $4)" | bc -l)"
}

if [ $have_ours = 1 ]; then
  o_en=$(wall $CORE1 "$SS" "${SSIN[@]}" --lang en -j1 "$en"); line "sent_split --lang en -j1" en "$en_b" "$o_en" "1.0"
  o_sbd=$(wall $CORE1 "$SS" "${SSIN[@]}" --lang en -j1 "$sbd"); line "sent_split --lang en -j1" en-slice "$sbd_b" "$o_sbd" "(slice; start-up dominated)"
fi
p_en=$(REPS=$PEER_REPS wall $CORE1 "$PY" "$ROOT/bench/peer_split.py" punkt "$en")
line "Punkt (peer_split.py punkt)" en "$en_b" "$p_en" "$([ $have_ours = 1 ] && echo "$(speedup "$en_b" "$o_en" "$en_b" "$p_en") (goal >= 10x)")"
s_en=$(REPS=$PEER_REPS wall $CORE1 "$PY" "$ROOT/bench/peer_split.py" pysbd "$sbd")
line "pySBD (peer_split.py pysbd)" en-slice "$sbd_b" "$s_en" "$([ $have_ours = 1 ] && echo "$(speedup "$en_b" "$o_en" "$sbd_b" "$s_en") (MB/s vs ours on the full text)")"

if [ $have_ours = 1 ]; then
  o_hu=$(wall $CORE1 "$SS" "${SSIN[@]}" --lang hu -j1 "$hut"); line "sent_split --lang hu -j1" hu "$hu_b" "$o_hu" "1.0"
fi
q_hu=$(REPS=$PEER_REPS wall $CORE1 bash -c "'$QUNTOKEN' -f spl -m sentence < '$hut'")
line "quntoken -f spl -m sentence" hu "$hu_b" "$q_hu" "$([ $have_ours = 1 ] && echo "$(speedup "$hu_b" "$o_hu" "$hu_b" "$q_hu") (goal >= 20x)")"
p_hu=$(REPS=$PEER_REPS wall $CORE1 "$PY" "$ROOT/bench/peer_split.py" punkt "$hut")
line "Punkt, English model" hu "$hu_b" "$p_hu" "$([ $have_ours = 1 ] && speedup "$hu_b" "$o_hu" "$hu_b" "$p_hu")"

echo "two cores (not pinned):"
if [ $have_ours = 1 ]; then
  o2_en=$(wall "$SS" "${SSIN[@]}" --lang en -j2 "$en"); line "sent_split --lang en -j2" en "$en_b" "$o2_en" "$(speedup "$en_b" "$o2_en" "$en_b" "$o_en") speed-up over -j1"
  o2_hu=$(wall "$SS" "${SSIN[@]}" --lang hu -j2 "$hut"); line "sent_split --lang hu -j2" hu "$hu_b" "$o2_hu" "$(speedup "$hu_b" "$o2_hu" "$hu_b" "$o_hu") speed-up over -j1"
fi
q2_hu=$(REPS=$PEER_REPS wall bash -c "'$QUNTOKEN' -f spl -m sentence < '$hut'")
line "quntoken (4-process pipe)" hu "$hu_b" "$q2_hu" "$([ $have_ours = 1 ] && echo "$(speedup "$hu_b" "$o2_hu" "$hu_b" "$q2_hu") (ours -j2)")"

if [ $have_ours = 1 ]; then
  for l in en hu; do
    f=$en; [ $l = hu ] && f=$hut
    "$SS" "${SSIN[@]}" --lang $l -j1 "$f" >"$W/ss-$l-j1.txt"
    "$SS" "${SSIN[@]}" --lang $l -j2 "$f" >"$W/ss-$l-j2.txt"
    if cmp -s "$W/ss-$l-j1.txt" "$W/ss-$l-j2.txt"; then
      echo "-j1 and -j2 output identical ($l): yes ($(grep -c . "$W/ss-$l-j1.txt") sentences)"
    else
      echo "-j1 and -j2 output identical ($l): NO (see $W/ss-$l-j1.txt $W/ss-$l-j2.txt)"
    fi
  done
fi
