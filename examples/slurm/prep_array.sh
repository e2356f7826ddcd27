#!/usr/bin/env bash
# examples/slurm/prep_array.sh - the text stages of one Wikipedia dump in N
# parts, one Slurm array task per part: task I of N takes the I-th N-th of
# the dump's bz2 streams (from the multistream index), runs
# wiki_dump | wiki_strip -F lines | sent_split [| text_filter] on them and
# writes OUT_DIR/part_<I>.txt. Each part is made a whole dump of its own:
# the dump's first stream (<mediawiki> and <siteinfo>, which wiki_strip needs
# for the wiki's namespace names) + the part's streams + a one-stream
# </mediawiki> footer, so the parts in order hold exactly the pages of the
# whole dump. A finished part is kept on a requeue.
#
#   sbatch --array=0-31 --cpus-per-task=16 --mem=16G examples/slurm/prep_array.sh \
#       huwiki-20241101-pages-articles-multistream.xml.bz2 \
#       huwiki-20241101-pages-articles-multistream-index.txt.bz2 /scratch/wb/parts hu
#   TASK_INDEX=0 TASK_COUNT=4 examples/slurm/prep_array.sh DUMP INDEX OUT_DIR LANG
#
# TEXT_FILTER=1 adds the Hungarian workflow's filter
# (text_filter --langdetect LANG --language LANG). WIKIBERT_BIN names the
# programs' directory (default: bin/ of this checkout, else the PATH).
# Next: examples/slurm/shard.sh on OUT_DIR (examples/slurm/submit.sh chains it).
#SBATCH --job-name=wikibert-prep
#SBATCH --output=wikibert-prep-%A_%a.log
set -eu -o pipefail
[ $# -eq 4 ] || { echo "usage: prep_array.sh DUMP INDEX OUT_DIR LANG" >&2; exit 2; }
dump=$1 index=$2 out=$3 lang=$4
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${WIKIBERT_BIN:-$here/bin}
[ -x "$bin/wiki_dump" ] || bin=$(dirname "$(command -v wiki_dump)")
task=${TASK_INDEX:-${SLURM_ARRAY_TASK_ID:?not an array task: set TASK_INDEX and TASK_COUNT}}
count=${TASK_COUNT:-${SLURM_ARRAY_TASK_COUNT:?not an array task: set TASK_INDEX and TASK_COUNT}}
threads=${SLURM_CPUS_PER_TASK:-$(nproc)}
part=$(printf '%s/part_%05d.txt' "$out" "$task")
mkdir -p "$out"
if [ -e "$part" ]; then echo "$part: done before"; exit 0; fi

# stream offsets: the index's lines are OFFSET:PAGE_ID:TITLE, 100 pages a stream
mapfile -t offs < <(bzip2 -dc "$index" | cut -d: -f1 | uniq)
n=${#offs[@]}
first=$((task * n / count)) last=$(((task + 1) * n / count))
stream() { # the part's bytes; the last part runs to the end (the real footer)
  local start=${offs[$first]}
  if [ "$last" -lt "$n" ]; then
    dd if="$dump" iflag=skip_bytes,count_bytes skip="$start" count=$((offs[last] - start)) bs=4M status=none
    printf '</mediawiki>\n' | bzip2 -c
  else
    dd if="$dump" iflag=skip_bytes skip="$start" bs=4M status=none
  fi
}
filter() {
  if [ "${TEXT_FILTER:-0}" = 1 ]; then
    "$bin/text_filter" -q --langdetect "$lang" --language "$lang"
  else
    cat
  fi
}
if [ "$first" -ge "$last" ]; then : >"$part"; exit 0; fi # more tasks than streams
{ head -c "${offs[0]}" "$dump"; stream; } |
  "$bin/wiki_dump" -q -j "$threads" |
  "$bin/wiki_strip" -q -j "$threads" -F lines |
  "$bin/sent_split" -q -j "$threads" -l "$lang" | filter >"$part.tmp"
mv "$part.tmp" "$part"
echo "$part: streams $first to $((last - 1)) of $n"
