#!/usr/bin/env bash
# pipelines/fetch_dump.sh - download one Wikipedia dump file from a
# Wikimedia dump mirror, resumably, and check it against the dump's
# sha1sums.txt before it appears under its final name.
#
#   pipelines/fetch_dump.sh MIRROR WIKI DATE KIND OUT
#   pipelines/fetch_dump.sh https://dumps.wikimedia.org huwiki latest \
#       pages-articles-multistream.xml.bz2 work/hu/download/huwiki-latest-pages-articles-multistream.xml.bz2
#
# DATE is YYYYMMDD or "latest"; "latest" is resolved to the dated dump the
# mirror's latest/WIKI-latest-KIND-rss.xml points to, so that the file and
# its checksum come from the same run. The download goes to OUT.part and
# continues from where an interrupted one stopped (curl -C -); OUT appears
# only when the SHA-1 matches (a mismatching OUT.part is removed). MIRROR
# may be any URL curl reads, file:// included. Exit 0, or 1 with a
# one-line message.
set -eu -o pipefail
prog=fetch_dump
[ $# -eq 5 ] || { echo "usage: $prog MIRROR WIKI DATE KIND OUT" >&2; exit 2; }
mirror=${1%/} wiki=$2 date=$3 kind=$4 out=$5
die() { echo "$prog: $*" >&2; exit 1; }
command -v curl >/dev/null || die "curl is needed (Debian: apt-get install curl)"
get() { curl -fsSL --retry 3 "$1"; }

if [ "$date" = latest ]; then
  rss="$mirror/$wiki/latest/$wiki-latest-$kind-rss.xml"
  date=$(get "$rss" | grep -o '/[0-9]\{8\}' | tail -1 | tr -d /) || die "$rss: cannot read the latest dump's date"
  [ -n "$date" ] || die "$rss: no dump date in it"
fi
name="$wiki-$date-$kind"
sums="$mirror/$wiki/$date/$wiki-$date-sha1sums.txt"
want=$(get "$sums" | awk -v n="$name" '$2 == n { print $1 }') || die "$sums: cannot read"
[ -n "$want" ] || die "$sums: no checksum for $name"

url="$mirror/$wiki/$date/$name"
echo "$prog: $url -> $out" >&2
# curl fails on a .part that is already whole (nothing left to resume);
# the checksum decides
curl -fL --retry 5 -C - -o "$out.part" "$url" || echo "$prog: curl exited $?; checking what arrived" >&2
[ -f "$out.part" ] || die "$url: nothing downloaded"
got=$(sha1sum <"$out.part" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  rm -f "$out.part"
  die "$out.part: SHA-1 $got, the dump's sha1sums.txt says $want (removed; run again)"
fi
mv "$out.part" "$out"
echo "$prog: $out: $name, SHA-1 $got ok" >&2
