#!/usr/bin/env bash
# report/run_report.sh - one self-contained HTML page about a run: the
# training curves of a trainer's log.jsonl (loss, MLM and NSP accuracy,
# learning rate, sequences per second) and, for each workflow directory,
# the data funnel (pages -> articles -> sentences -> documents kept, with
# text_filter's per-check rejections -> shards -> instances), the
# sequence-length histogram, the masked-token shares and the [UNK] share of
# the HDF5 files. The plots are inline SVG: no script, no external file.
#
#   report/run_report.sh [-b BIN] [-f] [-o OUT.html] RUN
#
# RUN is a training output directory (log.jsonl in it or up to three levels
# below), a workflow's directory (text/, sentences/, hdf5_*/ ...) or a
# WORKDIR holding workflows and a training directory (out/demo after make
# demo). Parts that are missing are said to be missing in the page. The
# first log.jsonl found is drawn; when it is a two-phase run's
# (.../phase1/log.jsonl below RUN, pipelines/pretrain.sh), its
# phase2/log.jsonl is drawn after it, phase 2's steps counted on from
# phase 1's last.
#
# This script only gathers: it counts documents and lines in the stage
# files and runs bin/hdf5_check -v and bin/text_filter -v on them, and
# passes their raw output, one tagged line each, to report/render.awk,
# which parses it and writes the HTML (the tags are listed there).
#
# Options:
#   -b DIR         the programs (default: bin/ beside this folder)
#   -o FILE        write FILE (atomically) instead of stdout; -f overwrites
#   --vocab [WF=]FILE  vocab.txt (or tokenizer.json) for hdf5_check; WF=
#                  names the workflow it belongs to, else it is every
#                  workflow's; repeatable (default: the workflow's own
#                  vocab*/vocab.txt, else the shipped data/bert/vocab.txt,
#                  bert-base-uncased, make en's default VOCAB)
#   --dump [WF=]FILE  a workflow's dump, to count its pages (default: a
#                  *.xml* under its download/ of at most 64 MB); WF= names
#                  the workflow directory it belongs to (hu=FILE), else it
#                  is every workflow's; repeatable
#   --workflow DIR a workflow directory to draw beside RUN's log (repeatable)
#   --filter-opts "OPTS"  text_filter's options when the per-check counts
#                  are made again (default: --langdetect L --language L,
#                  with L from the file name wikicorpus_L.txt)
# Exit status: 0 page written, 1 nothing to report or an I/O error, 2 usage.
set -u -o pipefail
prog=run_report
here=$(cd "$(dirname "$0")" && pwd)
BIN=$here/../bin
out="" force=0 vocabs=() dumps=() filter_opts="" workflows=()
DUMP_MAX=$((64 * 1024 * 1024))

usage() { sed -n '/^#   report/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//'; }
bad() {
  echo "$prog: $1" >&2
  echo "$prog: try '$0 -h'" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
  -h | --help) usage; exit 0 ;;
  -b) [ $# -ge 2 ] || bad "-b needs a directory"; BIN=$2; shift ;;
  -o) [ $# -ge 2 ] || bad "-o needs a file"; out=$2; shift ;;
  -f | --force) force=1 ;;
  --vocab) [ $# -ge 2 ] || bad "--vocab needs a file"; vocabs+=("$2"); shift ;;
  --dump) [ $# -ge 2 ] || bad "--dump needs a file"; dumps+=("$2"); shift ;;
  --workflow) [ $# -ge 2 ] || bad "--workflow needs a directory"; workflows+=("${2%/}"); shift ;;
  --filter-opts) [ $# -ge 2 ] || bad "--filter-opts needs a value"; filter_opts=$2; shift ;;
  --) shift; break ;;
  -*) bad "unknown option '$1'" ;;
  *) break ;;
  esac
  shift
done
[ $# -eq 1 ] || bad "give one RUN directory"
run=${1%/}
[ -d "$run" ] || { echo "$prog: $run: no such directory" >&2; exit 1; }
[ -z "$out" ] || [ "$force" = 1 ] || [ ! -e "$out" ] || {
  echo "$prog: $out exists (-f overwrites)" >&2
  exit 1
}

# ---- counting ----

# documents (blank-line separated records) and non-blank lines of FILES
count_docs() { awk 'NF && !inrec { d++ } NF { l++ } { inrec = NF > 0 } END { print d + 0, l + 0 }' "$@"; }

# the first file matching each pattern, nothing when none does
first() { local f; for f in "$@"; do [ -f "$f" ] && { echo "$f"; return; }; done; }

# stage WF LABEL FILES...: one funnel line (documents and lines of FILES)
stage() {
  local wf=$1 label=$2 files=("${@:3}") n
  [ ${#files[@]} -gt 0 ] && [ -f "${files[0]}" ] || return 0
  n=$(count_docs "${files[@]}") || return 0
  printf 'stage\t%s\t%s\t%s\t%s\t%s\n' "$wf" "$label" "${n% *}" "${n#* }" "${#files[@]}"
}

# the pages of a dump: <page> elements of a .bz2 or plain XML file
count_pages() {
  case $1 in
  *.bz2) bzip2 -dc "$1" | grep -c '<page>' ;;
  *) grep -c '<page>' "$1" ;;
  esac
}

# the --dump (or, with a second argument, the --vocab) of workflow WF: its
# own (WF=FILE) or one for all (FILE)
dump_of() {
  local e f=""
  local -n list=${2:-dumps}
  for e in "${list[@]}"; do
    case $e in
    "$1="*) f=${e#*=} ;;
    *=*) ;;
    *) [ -n "$f" ] || f=$e ;;
    esac
  done
  echo "$f"
}

# workflow DIR NAME: every line the page needs about one workflow
workflow() {
  local d=$1 wf=$2 f lang d5 v vname files
  printf 'wf\t%s\t%s\n' "$wf" "$d"
  f=$(dump_of "$wf")
  [ -n "$f" ] || f=$(find "$d/download" -name '*.xml*' -size -$((DUMP_MAX / 1024))k 2>/dev/null | sort | head -1)
  if [ -n "$f" ] && [ -f "$f" ]; then
    printf 'stage\t%s\tpages\t%s\t\t1\n' "$wf" "$(count_pages "$f")"
  else
    printf 'note\t%s\tpages: not counted (no dump under %s/download of at most 64 MB; --dump FILE names one)\n' "$wf" "$d"
  fi
  stage "$wf" articles "$d"/text/*.txt
  stage "$wf" articles "$d"/formatted_one_article_per_line/*.txt
  stage "$wf" sentences "$d"/sentences/*.txt
  stage "$wf" kept "$d"/filtered/*.txt
  f=$(first "$d"/sentences/*.txt)
  if [ -n "$f" ] && [ -d "$d/filtered" ] && [ -x "$BIN/text_filter" ]; then
    lang=$(basename "$f" .txt)
    lang=${lang##*_}
    # shellcheck disable=SC2086
    "$BIN/text_filter" -v ${filter_opts:---langdetect $lang --language $lang} "$f" 2>&1 >/dev/null |
      sed "s|^|filterstat\t$wf\t|"
  fi
  for f in "$d"/formatted_text "$d"/sharded_*/*; do
    [ -d "$f" ] || continue
    files=("$f"/*.txt)
    [ -f "${files[0]}" ] || continue
    stage "$wf" shards "${files[@]}"
    # a shard of one document gives no random next sentence (NSP learns nothing)
    awk -v wf="$wf" 'function w() { if (f != "" && d < 2) printf "warn\t%s\t%s: %d document%s: no random next sentence (next-sentence prediction learns nothing)\n", wf, f, d, d == 1 ? "" : "s" }
      FNR == 1 { w(); f = FILENAME; d = 0; r = 0 } NF && !r { d++ } { r = NF > 0 } END { w() }' "${files[@]}"
  done
  for d5 in "$d"/hdf5_*; do
    [ -d "$d5" ] || continue
    files=("$d5"/*/*.hdf5)
    [ -f "${files[0]}" ] || { printf 'note\t%s\t%s: no HDF5 files\n' "$wf" "$d5"; continue; }
    v=$(dump_of "$wf" vocabs) vname=""
    if [ -z "$v" ]; then # the vocabulary of the same normalization, then the default one
      f=${d5##*/hdf5_lower_case_}
      v=$(first "$d/vocab_lower_case_${f%%_seq_len_*}/vocab.txt" "$d/vocab/vocab.txt")
    fi
    [ -n "$v" ] || v=$here/../data/bert/vocab.txt # make en's default VOCAB
    if [ -f "$v" ] && [ "$(realpath "$v")" = "$(realpath "$here/../data/bert/vocab.txt" 2>/dev/null)" ]; then
      vname="data/bert/vocab.txt (bert-base-uncased, the shipped vocabulary: make en's default VOCAB)"
    fi
    [ -f "$v" ] || v=""
    printf 'phase\t%s\t%s\t%s\n' "$wf" "${d5##*/}" "${vname:-${v:-BERT special ids}}"
    if [ -x "$BIN/hdf5_check" ]; then
      "$BIN/hdf5_check" -v ${v:+--vocab "$v"} "${files[@]}" 2>&1 | sed "s|^|h5\t$wf\t${d5##*/}\t|"
    else
      printf 'note\t%s\t%s/hdf5_check not found: no statistics\n' "$wf" "$BIN"
    fi
  done
}

# a workflow directory has one of the stage directories
is_workflow() {
  local s
  for s in "$1"/text "$1"/formatted_one_article_per_line "$1"/sentences "$1"/hdf5_*; do
    [ -d "$s" ] && return 0
  done
  return 1
}

gather() {
  local logf d n=0 drawn=()
  printf 'run\t%s\n' "$run"
  find "$run" -maxdepth 4 -name log.jsonl -type f 2>/dev/null | sort >"$tmp/logs"
  logf=$(head -1 "$tmp/logs")
  if [ -n "$logf" ]; then
    drawn=("$logf")
    case $logf in "$run/log.jsonl") ;; # RUN is phase1/ itself: that phase alone
    */phase1/log.jsonl)
      [ -f "${logf%/phase1/log.jsonl}/phase2/log.jsonl" ] && drawn+=("${logf%/phase1/log.jsonl}/phase2/log.jsonl") ;;
    esac
    for logf in "${drawn[@]}"; do
      printf 'log\t%s\n' "$logf"
      sed 's/^/json\t/' "$logf"
    done
    printf '%s\n' "${drawn[@]}" >"$tmp/drawn"
    grep -vxF -f "$tmp/drawn" "$tmp/logs" | sed 's/^/otherlog\t/'
  fi
  if is_workflow "$run"; then
    workflow "$run" "$(basename "$run")"
  else
    for d in "$run"/*/; do
      d=${d%/}
      if is_workflow "$d"; then workflow "$d" "$(basename "$d")"; fi
    done
  fi
  for d in "${workflows[@]}"; do
    is_workflow "$d" || { printf 'note\t%s\t%s: not a workflow directory\n' "$(basename "$d")" "$d"; continue; }
    workflow "$d" "$(basename "$d")"
  done
  return 0
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
gather >"$tmp/facts" || { echo "$prog: $run: reading the run failed" >&2; exit 1; }
grep -q '^\(json\|wf\)' "$tmp/facts" || {
  echo "$prog: $run: no log.jsonl and no workflow directory: nothing to report" >&2
  exit 1
}
awk -F '\t' -f "$here/render.awk" "$tmp/facts" >"$tmp/page.html" || { echo "$prog: rendering failed" >&2; exit 1; }
if [ -z "$out" ]; then
  cat "$tmp/page.html" || exit 1
else
  if ! { cp "$tmp/page.html" "$out.tmp.$$" && mv "$out.tmp.$$" "$out"; }; then
    rm -f "$out.tmp.$$"
    echo "$prog: $out: cannot write" >&2
    exit 1
  fi
fi
