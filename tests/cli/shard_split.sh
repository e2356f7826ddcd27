# CLI tests for shard_split on real text: the English sample through
# wiki_dump | wiki_strip | sent_split; every document exactly once across
# the shards, byte counts, file names, stdin and several inputs, the -o DIR
# refusal and -f, failed and interrupted runs (no shard left behind),
# errors and exit codes. When the original scripts are at hand (the bench
# fetches them into $W: TextSharding.py @4733603 and the HILBERT
# sharding.py, checked by sha256), the shards are compared with theirs byte
# for byte; otherwise that part says "not run" and counts nothing.
. "$TESTS/cli/lib.sh"
SS=$BIN/shard_split
W=${BENCH_TMP:-/tmp/wikibert-bench}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# ---- options ----
run $SS --help
expect_rc "help" 0
ok "help: usage line" grep -q "^Usage: shard_split \[OPTIONS\] -o DIR" "$out"
ok "help: layouts" grep -q -- "-L, --layout L" "$out"
ok "help: bertPrep's directory" grep -q "sharded_training_shards_<N>_test_" "$out"
ok "help: differences from the originals" grep -q "drops the last document" "$out"
ok "help: test fraction default and its history" grep -q "0.1 as in bertPrep.py since July 2020" "$out"
run $SS -V
expect_rc "version" 0
ok "version line" grep -q "^shard_split [0-9]" "$out"
run $SS --bogus
expect_rc "bad option" 2
expect_err "bad option message" "*unknown option '--bogus'*Try*"
run $SS "$T/x"
expect_rc "no -o" 2
expect_err "no -o message" "*no output directory (-o DIR)*"
run $SS --layout google -o "$T/o" /dev/null
expect_rc "bad --layout" 2
run $SS -L hu -t 3 -o "$T/o" /dev/null
expect_rc "hu with test shards" 2
expect_err "hu with test shards message" "*--layout hu has no test shards*"
run $SS -F 1.5 -o "$T/o" /dev/null
expect_rc "--test-fraction out of range" 2
run $SS -n 0 -o "$T/o" /dev/null
expect_rc "--train 0" 2
run $SS -N a/b -o "$T/o" /dev/null
expect_rc "--name with a slash" 2
touch "$T/afile"
run $SS -n 1 -t 0 -o "$T/afile" /dev/null
expect_rc "-o names a file" 2
expect_err "-o names a file message" "*afile: exists and is not a directory*"
run $SS -o "$T/o" "$T/nope.txt"
expect_rc "missing input" 1
expect_err "missing input message" "shard_split: */nope.txt: No such file or directory*"
ok "missing input: no directory made" [ ! -e "$T/o" ]

# ---- real data ----
en=$T/en.txt
$BIN/wiki_dump -q "$TESTS/data/enwiki-206.xml.bz2" | $BIN/wiki_strip -q | $BIN/sent_split -q -l en >"$en"
ndocs=$(awk 'BEGIN { RS = "" } END { print NR }' "$en")
ok "sample: over 100 documents" [ "$ndocs" -gt 100 ]
# documents as single lines (sentences joined by a tab), sorted
docs() { awk 'BEGIN { RS = ""; FS = "\n"; OFS = "\t" } { $1 = $1; print }' "$@" | LC_ALL=C sort; }
docs "$en" >"$T/want.docs"

run $SS -v -n 8 -t 4 -o "$T/nv" "$en"
expect_rc "nvidia 8+4" 0
names=$(cd "$T/nv" && ls | LC_ALL=C sort | tr '\n' ' ')
want=$(for i in 0 1 2 3; do echo "wikicorpus_en_test_$i.txt"; done; for i in 0 1 2 3 4 5 6 7; do echo "wikicorpus_en_training_$i.txt"; done)
ok "nvidia: file names" [ "$names" = "$(LC_ALL=C sort <<<"$want" | tr '\n' ' ')" ]
docs "$T"/nv/*.txt >"$T/got.docs"
ok "nvidia: every document exactly once" cmp -s "$T/got.docs" "$T/want.docs"
ok "nvidia: bytes add up" [ "$(cat "$T"/nv/*.txt | wc -c)" -eq "$(wc -c <"$en")" ]
ok "nvidia: each file ends with an empty line" bash -c "for f in '$T'/nv/*.txt; do [ \"\$(tail -c 2 \"\$f\" | od -An -c | tr -d ' ')\" = '\n\n' ] || exit 1; done"
ok "nvidia: no blank line inside a document" [ "$(cat "$T"/nv/*.txt | awk 'prev == "" && $0 == "" && NR > 1 { n++ } { prev = $0 } END { print n + 0 }')" -eq 0 ]
expect_err "summary line" "shard_split: $ndocs documents, * sentences, * MB -> 12 shards in $T/nv (8 training, 4 test); sentences per shard min/median/max: training */*/*, test */*/*; * s"
ntrain=$(cat "$T"/nv/*_training_*.txt | grep -c .)
ntest=$(cat "$T"/nv/*_test_*.txt | grep -c .)
ok "nvidia: test shards hold about 10% of the sentences" [ $((ntest * 100 / (ntrain + ntest))) -ge 8 ] && [ $((ntest * 100 / (ntrain + ntest))) -le 12 ]

# stdin (spooled), '-', and two inputs split at a document boundary
run bash -c "cat '$en' | $SS -n 8 -t 4 -o '$T/nv-stdin'"
expect_rc "stdin" 0
ok "stdin: same shards" diff -rq "$T/nv" "$T/nv-stdin"
run bash -c "$SS -n 8 -t 4 -o '$T/nv-dash' - < '$en'"
ok "- from a redirected file: same shards" diff -rq "$T/nv" "$T/nv-dash"
half=$(awk 'BEGIN { RS = "" } END { print int(NR / 2) }' "$en")
awk -v h="$half" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= h' "$en" >"$T/a.txt"
awk -v h="$half" 'BEGIN { RS = ""; ORS = "\n\n" } NR > h' "$en" >"$T/b.txt"
run $SS -n 8 -t 4 -o "$T/nv-two" "$T/a.txt" "$T/b.txt"
ok "two inputs: same shards" diff -rq "$T/nv" "$T/nv-two"
run bash -c "cat '$T/b.txt' | $SS -n 8 -t 4 -o '$T/nv-mixed' '$T/a.txt' -"
ok "a file and stdin: same shards" diff -rq "$T/nv" "$T/nv-mixed"

# the output directory
run $SS -n 8 -t 4 -o "$T/nv" "$en"
expect_rc "non-empty DIR without -f" 2
expect_err "non-empty DIR message" "*$T/nv: exists and is not empty (use -f to replace its shards)*"
mkdir "$T/empty"
run $SS -n 8 -t 4 -o "$T/empty" "$en"
expect_rc "an existing empty DIR" 0
ok "quiet by default" [ ! -s "$err" ]
run $SS -n 8 -t 4 -o "$T/deep/er/dir" "$en"
expect_rc "parents are created" 0
touch "$T/nv/notes.txt"
run $SS -f -n 4 -t 2 -o "$T/nv" "$en"
expect_rc "-f" 0
expect_err "-f: stale shards reported" "*removed 6 shard files of an earlier run*"
ok "-f: 6 shards and the unrelated file" [ "$(ls "$T/nv" | wc -l)" -eq 7 ] && [ -f "$T/nv/notes.txt" ]
docs "$T"/nv/*_t*.txt >"$T/got.docs"
ok "-f: every document exactly once" cmp -s "$T/got.docs" "$T/want.docs"

# errors: fewer documents than shards; nothing is created
run $SS -o "$T/toofew" "$en"
expect_rc "default 256+256 shards on $ndocs documents" 1
expect_err "fewer documents message names the counts" "shard_split: $ndocs documents for 512 shards (256 training + 256 test): each shard needs at least one document*"
ok "fewer documents: no directory" [ ! -e "$T/toofew" ]
# --fit-shards: fewer documents than shards, about four a shard instead
run $SS --fit-shards -o "$T/fit" "$en"
expect_rc "--fit-shards: 256+256 shards on $ndocs documents" 0
nfit=$((ndocs / 4))
nft=$(awk -v n=$nfit 'BEGIN { t = int(n * 0.1 + 0.5); print t < 1 ? 1 : t }')
expect_err "... one line says how many (-q or not)" "shard_split: $ndocs documents for 512 shards: $((nfit - nft)) training + $nft test shards instead, about four documents each (--fit-shards)*"
ok "... those shards" eval '[ "$(ls "$T/fit" | grep -c _training_)" = $((nfit - nft)) ] && [ "$(ls "$T/fit" | grep -c _test_)" = $nft ]'
docs "$T"/fit/*.txt >"$T/fit.docs"
ok "... every document exactly once" cmp -s "$T/fit.docs" "$T/want.docs"
ok "... every shard with two documents or more" eval '[ "$(for f in "$T"/fit/*.txt; do grep -c "^$" "$f"; done | sort -n | head -1)" -ge 2 ]'
awk 'NF { print } !NF { exit }' "$en" >"$T/one.txt"
run $SS -q --fit-shards -L hu -n 50 -o "$T/fit1" "$T/one.txt"
expect_rc "--fit-shards -L hu: one document for 50 shards" 0
expect_err "... one shard, said even with -q" "shard_split: 1 document for 50 shards: 1 training shard instead (--fit-shards)*"
ok "... formatted_text_training_0.txt only" eval '[ "$(ls "$T/fit1")" = formatted_text_training_0.txt ]'
run $SS --fit-shards -n 4 -t 2 -f -o "$T/fit2" "$en"
ok "--fit-shards with documents enough: the shards asked for, silently" eval '[ "$(ls "$T/fit2" | wc -l)" = 6 ] && [ ! -s "$err" ] &&
  cmp -s <(cat "$T"/fit2/*) <(cat "$T"/nv/*_t*.txt)'
run $SS -n 2 -t 1 -o "$T/empty-in" /dev/null
expect_rc "empty input" 1
expect_err "empty input message" "*0 documents for 3 shards*"

# a full disk and an interruption while writing: no shard, no temp file
if [ -f "$INJECT" ]; then
  for call in fwrite fflush fclose; do
    run env WB_INJECT=$call LD_PRELOAD="$INJECT" $SS -n 8 -t 4 -o "$T/FAILME-$call" "$en"
    expect_rc "$call fails" 1
    expect_err "$call message" "*No space left on device*"
    ok "$call: nothing left in DIR" [ -z "$(ls -A "$T/FAILME-$call")" ]
  done
  run env WB_INJECT=sigint WB_INJECT_AT=60 LD_PRELOAD="$INJECT" $SS -n 8 -t 4 -o "$T/FAILME-int" "$en"
  ok "SIGINT while writing: killed by the signal (exit $rc)" [ "$rc" -eq 130 ]
  ok "SIGINT while writing: nothing left in DIR" [ -z "$(ls -A "$T/FAILME-int")" ]
  # -f over complete shards: an interrupted run leaves the old ones intact
  $SS -q -n 8 -t 4 -o "$T/FAILME-old" "$en"
  cp -r "$T/FAILME-old" "$T/old-copy"
  run env WB_INJECT=sigint WB_INJECT_AT=30 LD_PRELOAD="$INJECT" $SS -f -n 8 -t 4 -o "$T/FAILME-old" "$T/a.txt"
  ok "SIGINT under -f: killed by the signal (exit $rc)" [ "$rc" -eq 130 ]
  ok "SIGINT under -f: the earlier shards are untouched" diff -rq "$T/FAILME-old" "$T/old-copy"
else
  echo "not run: fault injection ($INJECT missing)"
fi

# ---- hu layout ----
run $SS -L hu -n 10 -o "$T/hu" "$en"
expect_rc "hu 10" 0
ok "hu: file names" [ "$(ls "$T/hu" | LC_ALL=C sort | head -2 | tr '\n' ' ')" = "formatted_text_training_0.txt formatted_text_training_1.txt " ] && [ "$(ls "$T/hu" | wc -l)" -eq 10 ]
docs "$T"/hu/*.txt >"$T/got.docs"
ok "hu: every document exactly once" cmp -s "$T/got.docs" "$T/want.docs"
# no blank line at the end: sharding.py would drop the last document
head -c -1 "$en" >"$T/noblank.txt"
run $SS -L hu -n 10 -o "$T/hu-nb" "$T/noblank.txt"
docs "$T"/hu-nb/*.txt >"$T/got.docs"
ok "hu: the last document is kept without a final blank line" cmp -s "$T/got.docs" "$T/want.docs"
# doubled and tripled blank lines: empty sentences, as in sharding.py:
# [a1 a2] ["" b1] [""] [c1 c2] [d1], placed longest first, highest id first
printf 'a1\na2\n\n\nb1\n\n\n\nc1\nc2\n\nd1\n\n' >"$T/blanks.txt"
run $SS -v -L hu -n 1 -o "$T/hu-b" "$T/blanks.txt"
ok "hu: blank-line blocks" cmp -s "$T/hu-b/formatted_text_training_0.txt" <(printf 'c1\nc2\n\n\nb1\n\na1\na2\n\nd1\n\n\n\n')
expect_err "hu: 5 documents" "*5 documents, 8 sentences*"

# ---- the originals, when available ----
sha_ok() { [ -f "$1" ] && [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$2" ]; }
TS=$W/TextSharding.py
PYN=$(py_with nltk)
if sha_ok "$TS" 1a11bdead9f4b451728a88c9769e3d8711783592efc263b4cce8984accf49335 && [ -n "$PYN" ]; then
  for cfg in "8 4 0.1" "8 4 0.2" "50 50 0.1" "3 1 0.5" "1 1 0"; do
    set -- $cfg
    mkdir -p "$T/ts-$1-$2-$3"
    PYTHONUTF8=1 "$PYN" "$TESTS/cli/textsharding_run.py" "$W" "$en" "$T/ts-$1-$2-$3/wikicorpus_en" "$1" "$2" "$3" >/dev/null 2>&1
    run $SS -n "$1" -t "$2" -F "$3" -o "$T/ours-$1-$2-$3" "$en"
    ok "TextSharding.py $cfg: identical shards" diff -rq "$T/ours-$1-$2-$3" "$T/ts-$1-$2-$3"
  done
else
  echo "not run: comparison with TextSharding.py (needs $TS @4733603 and a Python with nltk; bench/shard_split.sh fetches it)"
fi
HS=$W/hilbert_sharding.py
PY3=$(command -v python3 || true)
if sha_ok "$HS" 2751a2869cffb7043489375f1c01e72f809022213de0b4450cd7321404ed23d4 && [ -n "$PY3" ]; then
  for input in "$en" "$T/blanks.txt"; do
    for n in 1 7 50; do
      [ "$n" -gt "$(awk 'BEGIN { RS = "" } END { print NR }' "$input")" ] && continue
      rm -rf "$T/hs" "$T/ours-hu" && mkdir "$T/hs"
      (cd "$T/hs" && PYTHONUTF8=1 "$PY3" "$HS" --input_file="$input" --num_shards="$n" >/dev/null 2>&1)
      run $SS -L hu -n "$n" -o "$T/ours-hu" "$input"
      ok "sharding.py $(basename "$input") $n: identical shards" diff -rq "$T/ours-hu" "$T/hs/formatted_text"
    done
  done
  rm -rf "$T/hs" && mkdir "$T/hs"
  (cd "$T/hs" && PYTHONUTF8=1 "$PY3" "$HS" --input_file="$T/noblank.txt" --num_shards=10 >/dev/null 2>&1)
  ok "sharding.py drops the last document without a final blank line (documented difference)" \
    [ "$(docs "$T"/hs/formatted_text/*.txt | wc -l)" -eq $((ndocs - 1)) ]
else
  echo "not run: comparison with the HILBERT sharding.py (needs $HS; bench/shard_split.sh fetches it)"
fi
done_testing
