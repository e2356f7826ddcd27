#!/usr/bin/env bash
# bench/long_line.sh - peak memory of every reader of lines on one long line
# (BENCHMARKS.md "Memory on one long line").
#
#   bash bench/long_line.sh [MB_OVER] [MB_UNDER]
#
# Two inputs of one line each: MB_OVER MB (default 256) of 'a' without a
# newline, which every program must refuse at --max-line-bytes (64 MiB) with
# its memory near the limit, and MB_UNDER MB (default 60) of short sentences
# joined into one line and ended by a newline, which they take: the cost of
# the longest line the default lets through. Peak RSS from GNU time %M, the
# programs of bin/ with their default -j.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/bin
over=${1:-256} under=${2:-60}
command -v /usr/bin/time >/dev/null || { echo "bench/long_line.sh needs GNU time (apt-get install time)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c $((over << 20)) /dev/zero | tr '\0' a >"$tmp/over.txt"
yes "Word word word. Another sentence here!" | head -c $((under << 20)) | tr '\n' ' ' >"$tmp/under.txt"
echo >>"$tmp/under.txt"
measure() { # NAME INPUT ARGS...: "peak-MB exit" of ARGS run on INPUT
  local name=$1 in=$2
  shift 2
  rm -rf "$tmp/out"*
  local rc=0
  /usr/bin/time -f %M -o "$tmp/rss" "$@" "$in" >/dev/null 2>"$tmp/err" || rc=$?
  printf '%6d MB (exit %d)' $(($(tail -1 "$tmp/rss") / 1024)) "$rc"
}
printf '| program | %d MB, no newline | %d MB line |\n|---|---|---|\n' "$over" "$under"
while read -r name args; do
  # shellcheck disable=SC2086 # args are words
  printf '| %s | %s | %s |\n' "$name" "$(measure "$name" "$tmp/over.txt" "$B/$name" $args)" \
    "$(measure "$name" "$tmp/under.txt" "$B/$name" $args)"
done <<EOF
wiki_strip -o $tmp/out
sent_split -o $tmp/out
text_filter -o $tmp/out
wp_tokenize -o $tmp/out
vocab_normalize -o $tmp/out
vocab_convert -o $tmp/out
langid_train -o $tmp/out
vocab_train --vocab-size 30 -o $tmp/out
hdf5gen -j1 --vocab $ROOT/data/bert/vocab.txt -o $tmp/out.hdf5
shard_split --train 1 --test 0 -o $tmp/out
EOF
