# CLI tests of the make workflows (pipelines/hu.mk, en.mk): both run end to
# end on the samples (huwiki's Berlin article, 206 enwiki pages); every
# stage's output exists and the HDF5 files pass hdf5_check; a second make
# does nothing; a touched vocabulary reruns the HDF5 stages only; a failing
# stage leaves no target; make -j2 writes the bytes make -j1 writes; the
# download stage against a file:// mirror (resume, checksum, errors); the
# batch-array script gives the files of one run; `make list`; the
# Hungarian sequence on English keeps out of the English workflow's
# directory; the Hungarian normalization (lower-case, accents kept, one
# vocabulary for the tokenizer: [UNK] below 0.5 %), HU_CASED=1 and
# HU_FAITHFUL=1; PRUNE=1 removes the text stages' files and gives the same
# HDF5 files.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
not() { ! "$@"; }
# mk WORKDIR [ARGS...]: the workflows on the samples, with the programs under test
mk() {
  local w=$1
  shift
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" WORKDIR="$w" HU_DUMP="$DATA/huwiki-berlin.xml.bz2" \
    EN_DUMP="$DATA/enwiki-206.xml.bz2" EN_VOCAB="$T/vocab.txt" HU_VOCAB_SIZE=1000 HU_SHARDS=1 EN_TRAIN_SHARDS=3 \
    EN_TEST_SHARDS=1 JOBS=1 "$@"
}
cp "$ROOT/data/bert/vocab.txt" "$T/vocab.txt"
H1=hdf5_lower_case_1_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5
H2=hdf5_lower_case_1_seq_len_512_max_pred_80_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5
HH1=hdf5_lower_case_1_strip_accents_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5
HH2=hdf5_lower_case_1_strip_accents_0_seq_len_512_max_pred_80_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5
SH=sharded_training_shards_3_test_shards_1_fraction_0.1
W=$T/w1

# ---- end to end ----
run mk "$W" hu en
expect_rc "make hu en" 0
for f in hu/text/wikicorpus_hu.txt hu/sentences/wikicorpus_hu.txt hu/filtered/wikicorpus_hu.txt \
  hu/vocab/bert.model hu/vocab/bert.vocab hu/vocab/vocab.txt hu/formatted_text/formatted_text_training_0.txt \
  hu/$HH1/textcorpus/formatted_text_training_0.hdf5 hu/$HH2/textcorpus/formatted_text_training_0.hdf5 \
  en/formatted_one_article_per_line/wikicorpus_en_one_article_per_line.txt en/sentences/wikicorpus_en.txt \
  en/$SH/wikicorpus_en/wikicorpus_en_training_0.txt en/$SH/wikicorpus_en/wikicorpus_en_training_2.txt \
  en/$SH/wikicorpus_en/wikicorpus_en_test_0.txt en/$H1/wikicorpus_en/wikicorpus_en_training_0.hdf5 \
  en/$H1/wikicorpus_en/wikicorpus_en_test_0.hdf5 en/$H2/wikicorpus_en/wikicorpus_en_training_2.hdf5; do
  ok "stage output $f" [ -s "$W/$f" ]
done
ok "no .tmp directories left" eval '[ -z "$(find "$W" -name "*.tmp*")" ]'
ok "the English HDF5 files are 4 per phase" eval '[ "$(ls "$W"/en/$H1/wikicorpus_en/*.hdf5 | wc -l)" = 4 ]'
ok "Hungarian sentences: one per line, more lines than articles" \
  eval '[ "$(wc -l <"$W/hu/sentences/wikicorpus_hu.txt")" -gt 100 ]'

# ---- the Hungarian sequence on another language: never the English workflow's directory ----
run mk "$T/w7" hu en WIKI_LANG=en HU_DUMP="$DATA/enwiki-206.xml.bz2"
expect_rc "make hu en WIKI_LANG=en" 0
ok "... without make's 'overriding recipe'" not grep -qi "overriding" "$err"
ok "... the Hungarian sequence under en-hu-sequence" \
  [ -s "$T/w7/en-hu-sequence/$HH1/textcorpus/formatted_text_training_0.hdf5" ]
ok "... the English workflow under en" [ -s "$T/w7/en/$H1/wikicorpus_en/wikicorpus_en_training_0.hdf5" ]
run mk "$T/w8" -n hu LANG=de
ok "LANG=de: under de" grep -q "$T/w8/de/text/wikicorpus_de.txt" "$out"
run mk "$T/w8" -n hu HU_DIR="$T/w8/x" EN_DIR="$T/w8/x"
expect_rc "HU_DIR = EN_DIR" 2
expect_err "... refused, naming both" "*HU_DIR and EN_DIR are both $T/w8/x*"
ok "vocab.txt has the special tokens" grep -qx "\[MASK\]" "$W/hu/vocab/vocab.txt"

# ---- unsafe variables: refused as make reads the workflows, naming the variable ----
# (an empty HU_DIR gave `rm -rf /formatted_text`, a WORKDIR with a space ran rm -rf on its first word)
refused() { # NAME GLOB VAR=VALUE...: make -n hu en refuses, prints no command
  local name=$1 glob=$2
  shift 2
  run mk "$T/w8" -n hu en "$@"
  expect_rc "$name: refused" 2
  expect_err "... naming the variable" "$glob"
  ok "... before any recipe" [ ! -s "$out" ]
}
refused "WORKDIR=''" "*WORKDIR is empty*" WORKDIR=
refused "HU_DIR=''" "*HU_DIR is empty*" HU_DIR=
refused "EN_DIR=''" "*EN_DIR is empty*" EN_DIR=
refused "BIN=''" "*BIN is empty*" BIN=
refused "WORKDIR with a space" "*WORKDIR='$T/a b': whitespace*" WORKDIR="$T/a b"
refused "DUMP with a space" "*DUMP='$T/my dump.xml.bz2': whitespace*" DUMP="$T/my dump.xml.bz2"
refused "EN_VOCAB with a tab" "*EN_VOCAB=*whitespace*" EN_VOCAB="$T/a	b.txt"
refused "SEQ1='128 /' (a space inside an HDF5 directory name)" "*SEQ1='128 /': whitespace*" SEQ1="128 /"
refused "WORKDIR with a shell glob" "*WORKDIR='$T/w\*': '\*'*" WORKDIR="$T/w*"
refused "HU_DIR with a ';'" "*HU_DIR='$T/x;y': ';'*" HU_DIR="$T/x;y"
refused "EN_DATASET=''" "*EN_DATASET is empty*" EN_DATASET=
refused "EN_DATASET=../x" "*EN_DATASET='../x': a name, not a path*" EN_DATASET=../x
refused "MIRROR with a quote" "*MIRROR=*in a URL*" MIRROR='x"y'
for root in / /. // /.. /tmp/.. "$T/../../../../../../../.."; do
  refused "WORKDIR=$root" "*WORKDIR='$root' is the filesystem root*" WORKDIR="$root"
done
refused "HU_DIR=//" "*HU_DIR='//' is the filesystem root*" HU_DIR=//
refused "EN_DIR=/." "*EN_DIR='/.' is the filesystem root*" EN_DIR=/.
mkdir -p "$T/sp/en/sentences" && : >"$T/sp/en/sentences/keep"
run mk "$T/sp ace" en
expect_rc "make en WORKDIR='DIR ace' (not -n)" 2
ok "... leaves DIR untouched" [ -e "$T/sp/en/sentences/keep" ]
run mk "$T/w8" -n hu HU_DUMP= HU_VOCAB=
expect_rc "HU_DUMP='' and HU_VOCAB='': the defaults, as for DUMP and VOCAB" 0
ok "... the download location and the trained vocabulary" \
  eval 'grep -q "wiki_dump .*$T/w8/hu/download/huwiki-latest-" "$out" && grep -q "hdf5gen .*--vocab $T/w8/hu/vocab/vocab.txt" "$out"'
run mk "$T/w8" -n en WORKDIR="$T/w8"
expect_rc "an ordinary WORKDIR passes" 0
run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL WORKDIR= make -C "$ROOT" --no-print-directory -n list
expect_rc "a goal that runs no workflow is not held up by them" 0
run mk "$W" hu-check en-check
expect_rc "hdf5_check on every HDF5 file" 0
ok "statistics for all 10 files" eval '[ "$(grep -v "^total:" "$out" | grep -c "instances, L")" = 10 ]'
ok "phase 2 files are 512 / 80" grep -q "$H2/wikicorpus_en/wikicorpus_en_test_0.hdf5: [0-9]* instances, L 512, P 80" "$out"
# [UNK] share of each Hungarian file, in per cent
hu_unk() { grep "$1" "$out" | grep "/hu/" | sed -n 's/.*\[UNK\] \([0-9.]*\) %.*/\1/p'; }
ok "Hungarian [UNK] below 0.5 % in both phases (the original workflow: ~8 %)" \
  eval '[ "$(hu_unk "$HH1/" | awk "\$1 < 0.5" | wc -l)" = 1 ] && [ "$(hu_unk "$HH2/" | awk "\$1 < 0.5" | wc -l)" = 1 ]'
ok "... no [UNK] warning for them" not grep -q "/hu/.*more than" "$err"
ok "the check warns: the Hungarian shard of one document, its files' 0 % random next" \
  eval 'grep -q "^check: warning: .*/hu/formatted_text/formatted_text_training_0.txt: 1 document: no random next sentence" "$err" &&
  [ "$(grep -c "/hu/.*random next 0.0 % of [0-9]* instances, far from 50 %" "$err")" = 2 ]'
ok "... and not the English files of several documents a shard" not grep -q "/en/.*far from 50 %\|/en/.*1 document" "$err"

# ---- small and odd dumps: the workflows' own defaults ----
# mk0 WORKDIR [ARGS...]: as mk, without the sample's smaller shards and vocabulary
mk0() {
  local w=$1
  shift
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory NOBUILD=1 BIN="$BIN" WORKDIR="$w" \
    HU_DUMP="$DATA/huwiki-berlin.xml.bz2" EN_DUMP="$DATA/enwiki-206.xml.bz2" EN_VOCAB="$T/vocab.txt" JOBS=1 "$@"
}
run mk0 "$T/w10" hu-hdf5-phase1 en-shards
expect_rc "make hu (50 shards, 32,000 pieces) and en (256 + 256 shards) on the samples" 0
expect_err "... fewer shards for the one Hungarian document, said" \
  "*shard_split: 1 document for 50 shards: 1 training shard instead (--fit-shards)*"
expect_err "... a vocabulary of the pieces the article gives, said" \
  "*vocab_train: the text gives * pieces, fewer than --vocab-size 32000: a vocabulary of * (--hard-vocab-limit false)*"
expect_err "... 26 English shards for 105 documents, said" \
  "*shard_split: 105 documents for 512 shards: 23 training + 3 test shards instead, about four documents each*"
ok "... the files: 1 Hungarian shard and its HDF5 file, 23 + 3 English shards" \
  eval '[ -s "$T/w10/hu/$HH1/textcorpus/formatted_text_training_0.hdf5" ] &&
  [ "$(ls "$T"/w10/en/sharded_training_shards_256_test_shards_256_fraction_0.1/wikicorpus_en | grep -c _training_)" = 23 ] &&
  [ "$(ls "$T"/w10/en/sharded_training_shards_256_test_shards_256_fraction_0.1/wikicorpus_en | grep -c _test_)" = 3 ]'
# a filter that keeps nothing stops there, with the counts
run mk0 "$T/w10" hu-vocab LANG=el HU_DUMP="$DATA/elwikivoyage-17.xml.bz2"
ok "make hu LANG=el on the Greek sample: stops at the filter (exit $rc)" [ "$rc" -ne 0 ]
expect_err "... with text_filter's rejection counts" "*text_filter: no document kept of 16 (fail-*): nothing to write*"
ok "... no filtered file and no vocabulary stage run" \
  eval '[ ! -e "$T/w10/el/filtered/wikicorpus_el.txt" ] && ! grep -q vocab_train "$err"'

# ---- the Hungarian normalization ----
V=$W/hu/vocab/vocab.txt
ok "vocab.txt: punctuation as words of their own" eval 'grep -qx "," "$V" && grep -qx "\." "$V" && grep -qx "(" "$V"'
ok "... every character both as c and ##c" \
  eval '[ -z "$(grep -v "^\[" "$V" | sed "s/^##//" | grep -x "." | sort -u | while read -r c; do grep -qxF "$c" "$V" && grep -qxF "##$c" "$V" || echo "$c"; done)" ]'
ok "... lower-case pieces, accents kept" eval '! grep -v "^\[" "$V" | grep -q "[A-ZÁÉÍÓÖŐÚÜŰ]" && grep -q "[áéíóöőúüű]" "$V"'
cp -a "$W" "$T/wc" # a copy, so that $W keeps the default run only
run mk "$T/wc" HU_CASED=1 hu-hdf5
expect_rc "HU_CASED=1" 0
ok "... a cased vocabulary of its own" eval 'grep -v "^\[" "$T/wc/hu/vocab_lower_case_0/vocab.txt" | grep -q "[A-Z]"'
ok "... HDF5 directories named lower_case_0" \
  [ -s "$T/wc/hu/${H1/lower_case_1/lower_case_0}/textcorpus/formatted_text_training_0.hdf5" ]
ok "... the text stages not rerun" not grep -q "wiki_strip\|sent_split\|text_filter\|shard_split" "$out"
ok "... the default ones left as they were" [ -e "$T/wc/hu/$HH1/.complete" ]
run mk "$W" -n HU_FAITHFUL=1 hu
expect_rc "HU_FAITHFUL=1 -n" 0
ok "... under hu-faithful, WikiExtractor 3.0's text" grep -q "wiki_strip .*--faithful .*$W/hu-faithful/text/" "$out"
ok "... spmtrain.py's vocabulary" eval 'grep "vocab_train" "$out" | grep -q "hu-faithful/vocab/" && ! grep "vocab_train" "$out" | grep -q -- --bert'
ok "... lower-casing and stripping accents, as create_pretraining_data.py" \
  grep -q "hdf5gen .*--do-lower-case 1 --strip-accents 1 .*hu-faithful/$H1.tmp/" "$out"
run mk "$W" HU_FAITHFUL=1 hu hu-check
expect_rc "HU_FAITHFUL=1 end to end" 0
ok "... the original's [UNK] share, above 5 %, with hdf5_check's warning" \
  eval '[ "$(grep "/hu-faithful/$H1/" "$out" | sed -n "s/.*\[UNK\] \([0-9.]*\) %.*/\1/p" | awk "\$1 > 5" | wc -l)" = 1 ] && grep -q "hu-faithful.*above 1 %" "$err"'
ok "... its sentences, one per line" \
  eval '[ "$(wc -l <"$W/hu-faithful/sentences/wikicorpus_hu.txt")" -gt 100 ]'
rm -rf "$W/hu-faithful" # $W keeps the default run only
run mk "$W" -n HU_FAITHFUL=1 HU_DIR="$W/hu" hu
expect_rc "HU_FAITHFUL=1 in a directory of the default text" 2
expect_err "... refused" "*holds the text of HU_FAITHFUL=0*"
run mk "$W" -n HU_FAITHFUL=1 HU_CASED=1 hu
expect_rc "HU_FAITHFUL=1 HU_CASED=1" 2

# ---- incremental ----
run mk "$W" -q hu en
expect_rc "a second make has nothing to do (make -q)" 0
run mk "$W" hu en
ok "a second make runs no command" not grep -q "bin/" "$out"
touch "$W/hu/vocab/vocab.txt" "$T/vocab.txt"
run mk "$W" -n hu en
ok "touched vocabularies: hdf5gen reruns" grep -q "hdf5gen" "$out"
ok "... for all four HDF5 directories" eval '[ "$(grep -c "/hdf5gen " "$out")" = 4 ]'
ok "... and nothing before it" not grep -qE "wiki_dump|wiki_strip|sent_split|text_filter|vocab_train|shard_split" "$out"
sha() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum); }
sha "$W" >"$T/before.sha"
run mk "$W" hu en
expect_rc "rerun after touching the vocabularies" 0
sha "$W" >"$T/after.sha"
ok "the rerun writes the same bytes" cmp -s "$T/before.sha" "$T/after.sha"

# ---- make -j2 = make -j1 (same directory: the BPE model records its paths) ----
mv "$W" "$T/w1-j1"
run mk "$W" -j2 JOBS=2 hu en
expect_rc "make -j2 JOBS=2" 0
sha "$W" >"$T/j2.sha"
ok "make -j2 writes the bytes of make -j1" cmp -s "$T/after.sha" "$T/j2.sha"

# ---- PRUNE=1: each stage's text removed once its readers are done ----
P=$T/wp
cp "$T/vocab.txt" "$T/vocab-p.txt"
pmk() { mk "$P" EN_VOCAB="$T/vocab-p.txt" "$@"; }
run pmk -j2 JOBS=2 PRUNE=1 hu en
expect_rc "make hu en PRUNE=1" 0
ok "... no text, sentences, filtered text or shards left" eval '[ -z "$(find "$P" -name "*.txt" ! -path "*/vocab*/*")" ]'
ok "... the HDF5 files of a run without PRUNE" eval '(cd "$P" && find . -name "*.hdf5" | LC_ALL=C sort | xargs sha256sum) >"$T/p.sha" &&
  (cd "$W" && find . -name "*.hdf5" | LC_ALL=C sort | xargs sha256sum) | cmp -s - "$T/p.sha" && [ -s "$T/p.sha" ]'
run pmk -q PRUNE=1 hu en
expect_rc "... and then nothing to do (make -q)" 0
run pmk -q hu en
expect_rc "... not even without PRUNE: the removed stages are not remade" 0
run pmk hu-check en-check
expect_rc "... hu-check and en-check without the shards" 0
touch "$T/vocab-p.txt"
run pmk -n PRUNE=1 en
ok "... a touched vocabulary remakes what the HDF5 stage needs, from the dump" \
  eval 'grep -q "wiki_dump" "$out" && grep -q "hdf5gen" "$out"'

# ---- failures leave no target ----
head -c 300000 "$DATA/enwiki-206.xml.bz2" >"$T/cut.xml.bz2"
run mk "$T/w3" EN_DUMP="$T/cut.xml.bz2" en-text
ok "a truncated dump fails the text stage" [ "$rc" -ne 0 ]
ok "... and leaves no text file" not eval 'ls "$T"/w3/en/formatted_one_article_per_line/*.txt 2>/dev/null | grep -q .'
grep -v '^\[MASK\]$' "$ROOT/data/bert/vocab.txt" >"$T/nomask.txt"
run mk "$W" EN_VOCAB="$T/nomask.txt" en-hdf5-phase1
ok "a vocabulary without [MASK] fails the HDF5 stage" [ "$rc" -ne 0 ]
ok "... naming the token" grep -q "MASK" "$err"
ok "... and leaves no HDF5 directory (not even a .tmp)" not eval 'ls -d "$W"/en/hdf5_*seq_len_128* 2>/dev/null | grep -q .'
run mk "$W" en-hdf5-phase1
expect_rc "the fixed stage runs again" 0
ok "... and writes what it wrote before" eval 'sha "$W" | cmp -s - "$T/after.sha"'
run mk "$T/w4" HU_SHARDS=0 hu-shards
ok "a shard stage that fails (HU_SHARDS=0)" [ "$rc" -ne 0 ]
ok "... saying so" grep -q "train" "$err"
ok "... and leaves no shard directory" not eval 'ls -d "$T"/w4/hu/formatted_text* 2>/dev/null | grep -q .'

# ---- a stage interrupted (Ctrl-C to the whole process group) ----
K=$T/w9
(cd "$ROOT" && exec setsid env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory NOBUILD=1 BIN="$BIN" \
  WORKDIR="$K" EN_DUMP="$DATA/enwiki-206.xml.bz2" JOBS=1 en-sentences >/dev/null 2>&1) &
kpid=$!
sleep 0.1
kill -INT -- -"$kpid" 2>/dev/null || true
wait "$kpid" || true
ok "interrupted: no temporary file left" eval '[ -z "$(find "$K" -name "*.tmp*" 2>/dev/null)" ]'
ok "interrupted: what exists is whole" eval 'for f in $(cd "$K" 2>/dev/null && find . -type f); do cmp -s "$K/$f" "$W/$f" || exit 1; done'
run mk "$K" en-sentences
expect_rc "interrupted, then make again" 0
ok "... gives the bytes of an uninterrupted run" cmp -s "$K/en/sentences/wikicorpus_en.txt" "$W/en/sentences/wikicorpus_en.txt"

# ---- a directory stage stopped by a signal: no DIR.tmp, no process left ----
# The HDF5 stage is held at a known point: its last shard is a FIFO, which
# hdf5gen (-j 1, shards in order) opens after writing the other shards' files.
# Signals as they come: `kill MAKE` (make passes SIGTERM to its recipe and
# exits), Ctrl-C (SIGINT to the process group), a batch system's SIGTERM to it.
in_session() { # SID: a line per process of session SID (/proc/PID/stat's 6th field)
  cat /proc/[0-9]*/stat 2>/dev/null | sed 's/^.*) //' | awk -v s="$1" '$4 == s'
}
stop_h5() { # HOW: make-term, group-int or group-term
  local K=$T/stop-$1 i=0 mp holder kids k
  mkdir -p "$K" && cp -a "$W/en" "$K/" && rm -rf "$K"/en/hdf5_*
  local fifo=$K/en/$SH/wikicorpus_en/wikicorpus_en_training_2.txt
  rm "$fifo" && mkfifo "$fifo"
  (cd "$ROOT" && exec setsid env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory NOBUILD=1 \
    BIN="$BIN" WORKDIR="$K" EN_VOCAB="$T/vocab.txt" EN_TRAIN_SHARDS=3 EN_TEST_SHARDS=1 JOBS=1 \
    en-hdf5-phase1 >"$K.log" 2>&1) &
  mp=$!
  timeout 300 bash -c 'exec 3>"$0"; echo open >"$1"; exec sleep 300' "$fifo" "$K.open" &
  holder=$! # holds the FIFO open: hdf5gen waits in its read
  while [ ! -s "$K.open" ] && [ "$i" -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
  ok "$1: hdf5gen reached the FIFO shard" [ -s "$K.open" ]
  ok "... having written the shards before it" eval '[ "$(find "$K"/en/hdf5_*.tmp -name "*.hdf5" | wc -l)" = 3 ]'
  kids=$(grep -ls "^PPid:[[:space:]]*$mp\$" /proc/[0-9]*/status | cut -d/ -f3 | tr '\n' ' ') # make's children
  case $1 in
  make-term) kill -TERM "$mp" ;;
  group-int) kill -INT -- -"$mp" ;;
  group-term) kill -TERM -- -"$mp" ;;
  esac
  rc=0
  wait "$mp" || rc=$?
  ok "... make reports the interruption (exit $rc)" [ "$rc" -ne 0 ]
  kill "$holder" 2>/dev/null # the FIFO's end: a stage still running would now finish its files
  wait "$holder" 2>/dev/null
  for k in $kids; do # make itself does not wait for its recipe after a SIGTERM
    i=0
    while kill -0 "$k" 2>/dev/null && [ "$i" -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
    ok "... its recipe ended" not kill -0 "$k" 2>/dev/null
  done
  # and every process of the run (make started its own session, id $mp): a stage's
  # cleanup may still run in a grandchild when make's child has ended
  i=0
  while [ -n "$(in_session "$mp")" ] && [ "$i" -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
  ok "... no process of the run left" [ -z "$(in_session "$mp")" ]
  ok "... no temp directory or file left" eval '[ -z "$(find "$K" -name "*.tmp*")" ]'
  ok "... no HDF5 directory" not eval 'ls -d "$K"/en/hdf5_* 2>/dev/null | grep -q .'
}
for how in make-term group-int group-term; do stop_h5 "$how"; done
K=$T/stop-make-term
rm "$K/en/$SH/wikicorpus_en/wikicorpus_en_training_2.txt"
cp -p "$W/en/$SH/wikicorpus_en/wikicorpus_en_training_2.txt" "$K/en/$SH/wikicorpus_en/"
run mk "$K" en-hdf5-phase1
expect_rc "stopped, then make again" 0
ok "... the bytes of an uninterrupted run" diff -r "$K/en/$H1" "$W/en/$H1"

# ---- download ----
M=$T/mirror/huwiki
mkdir -p "$M/latest" "$M/20240101"
cp "$DATA/huwiki-berlin.xml.bz2" "$M/20240101/huwiki-20240101-pages-articles-multistream.xml.bz2"
(cd "$M/20240101" && sha1sum huwiki-20240101-pages-articles-multistream.xml.bz2 >huwiki-20240101-sha1sums.txt)
printf '<rss><channel><link>https://dumps.wikimedia.org/huwiki/20240101</link></channel></rss>\n' \
  >"$M/latest/huwiki-latest-pages-articles-multistream.xml.bz2-rss.xml"
D5=$T/w5/hu/download/huwiki-latest-pages-articles-multistream.xml.bz2
mkdir -p "$(dirname "$D5")"
head -c 9000 "$DATA/huwiki-berlin.xml.bz2" >"$D5.part" # an interrupted download
if command -v curl >/dev/null; then
  run mk "$T/w5" HU_DUMP= MIRROR="file://$T/mirror" hu-download
  expect_rc "hu-download from a file:// mirror" 0
  ok "the dump arrived whole" cmp -s "$D5" "$DATA/huwiki-berlin.xml.bz2"
  ok "it resumed the interrupted download" grep -q "Resuming transfer from byte position 9000" "$err"
  ok "checksum reported" grep -q "SHA-1 [0-9a-f]* ok" "$err"
  ok "no .part left" [ ! -e "$D5.part" ]
  run mk "$T/w5" HU_DUMP= MIRROR="file://$T/mirror" -q hu-download
  expect_rc "downloaded once: make -q hu-download" 0
  printf 'corrupt' >>"$M/20240101/huwiki-20240101-pages-articles-multistream.xml.bz2"
  run mk "$T/w6" HU_DUMP= MIRROR="file://$T/mirror" hu-download
  ok "a dump that does not match sha1sums.txt fails" [ "$rc" -ne 0 ]
  expect_err "... with both checksums" "*SHA-1 * sha1sums.txt says *"
  ok "... and leaves neither the dump nor a .part" not eval 'ls "$T"/w6/hu/download/* 2>/dev/null | grep -q .'
  run mk "$T/w7" HU_DUMP= MIRROR="file://$T/mirror" DUMP_DATE=20991231 hu-download
  ok "a dump date the mirror does not have fails" [ "$rc" -ne 0 ]
  expect_err "... naming the checksum file" "*huwiki-20991231-sha1sums.txt: cannot read*"
else
  echo "not run: download checks (no curl)"
fi

# ---- batch array: N tasks write what one run writes ----
S=$W/en/$SH/wikicorpus_en
"$BIN/hdf5gen" -q -j1 --vocab "$T/vocab.txt" --dupe-factor 2 -o "$T/one/" "$S"/*.txt
for i in 0 1 2; do
  TASK_INDEX=$i TASK_COUNT=3 WIKIBERT_BIN=$BIN "$ROOT/pipelines/hdf5_array.sh" "$S" "$T/vocab.txt" "$T/arr" \
    -q --dupe-factor 2 || echo "task $i failed"
done
ok "array tasks 0..2 of 3 write the files of one run" diff -r "$T/one" "$T/arr"
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 WIKIBERT_BIN=$BIN "$ROOT/pipelines/hdf5_array.sh" "$S" \
  "$T/vocab.txt" "$T/slurm" -q --dupe-factor 2
ok "a Slurm array task writes its share only" eval '[ "$(ls "$T/slurm" | wc -l)" = 1 ] && [ -s "$T/slurm/wikicorpus_en_training_0.hdf5" ]'
ok "... the same bytes" cmp -s "$T/slurm/wikicorpus_en_training_0.hdf5" "$T/one/wikicorpus_en_training_0.hdf5"
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 WIKIBERT_BIN=$BIN "$ROOT/pipelines/hdf5_array.sh" "$S" \
  "$T/vocab.txt" "$T/mpi" -q --dupe-factor 2
ok "under mpirun rank 0 of 2 writes shards 0 and 2" \
  eval '[ "$(ls "$T/mpi" | tr "\n" " ")" = "wikicorpus_en_test_0.hdf5 wikicorpus_en_training_1.hdf5 " ]'

# ---- LANG: the same sequence for another wiki ----
run mk "$T/w8" HU_DUMP="$DATA/enwiki-3.xml.bz2" LANG=en WORD_CHARS=abcdefghijklmnopqrstuvwxyz -n hu-filtered
ok "LANG=en on the command line: English sentence rules" grep -q "sent_split .*-l en .*w8/en-hu-sequence/sentences/wikicorpus_en.txt" "$out"
ok "... and text_filter's English checks" grep -q "text_filter .*--langdetect en --language en -W 'abcdefghijklmnopqrstuvwxyz'" "$out"
(export LANG=C.UTF-8 && run mk "$T/w8" -n hu-sentences)
ok "the environment's LANG (the locale) does not change the workflow" grep -q "sent_split .*-l hu .*w8/hu/" "$out"

# ---- make list ----
run env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory list
for t in hu hu-download hu-text hu-sentences hu-filtered hu-vocab hu-shards hu-hdf5 en en-download en-text \
  en-sentences en-shards en-hdf5 hu-pretrain en-pretrain demo; do
  ok "make list: $t" grep -q "^  $t: " "$out"
done
done_testing
