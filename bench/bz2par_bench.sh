#!/bin/sh
# bz2par_bench.sh - time prep/bz2par.c against `bzip2 -dc`.
#
# Usage: bench/bz2par_bench.sh [-r REPS] [FILE.bz2 ...]
#
# Builds a tiny driver (bz2par -> stdout) in a temp dir from prep/bz2par.c
# and common/*.c, checks that its output is byte-identical to bzip2 -dc for
# -j1 and -j2, then prints the best-of-REPS wall time of bzip2 -dc and of
# the driver with 1, 2 and nproc threads (all writing to /dev/null), the
# ratios to bzip2, and the peak RSS at -j16.
# Without FILE arguments it makes two test files in $BENCH_DIR (default
# /tmp/bz2par_bench): ~330 MB of XML from the shared Wikipedia samples,
# compressed with bzip2 -9 as one stream and, 100 pages per stream, as a
# multistream file with its index. Run from the repository root.
set -eu

reps=3
if [ "${1:-}" = "-r" ]; then reps=$2; shift 2; fi
[ -f prep/bz2par.c ] || { echo "run from the repository root" >&2; exit 2; }
ls common/*.c >/dev/null 2>&1 || { echo "common/*.c missing" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bz2par_bench_bin.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

cat >"$work/drv.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bz2par.h"

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    Bz2ParOpts o = {.nthreads = atoi(argv[1]), .name = argv[2],
                    .index_path = argc > 3 ? argv[3] : NULL};
    int fd = strcmp(argv[2], "-") ? open(argv[2], O_RDONLY) : 0;
    if (fd < 0) { perror(argv[2]); return 2; }
    Err err;
    Bz2Par *b = bz2par_open(fd, &o, &err);
    if (!b) { fprintf(stderr, "%s\n", err.msg); return 1; }
    const char *p;
    size_t n;
    int r;
    while ((r = bz2par_next(b, &p, &n, &err)) > 0)
        if (fwrite(p, 1, n, stdout) != n) return 1;
    bz2par_close(b);
    if (r < 0) { fprintf(stderr, "%s\n", err.msg); return 1; }
    return 0;
}
EOF
gcc -O2 -std=gnu11 -pthread -Icommon -Iprep "$work/drv.c" prep/bz2par.c prep/bzdec.c common/*.c -lbz2 \
    -o "$work/drv"
drv="$work/drv"

if [ $# -eq 0 ]; then
    dir=${BENCH_DIR:-/tmp/bz2par_bench}
    mkdir -p "$dir"
    s1=/work/shared/data/wiki-multistream/sample-pages-articles.xml.bz2
    s2=/work/shared/data/wiki-en/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
    if [ ! -f "$dir/big.xml.bz2" ] || [ ! -f "$dir/big-ms.xml.bz2" ]; then
        if [ ! -f "$s1" ] || [ ! -f "$s2" ]; then echo "no samples; pass FILE.bz2" >&2; exit 2; fi
        echo "making test files in $dir ..."
        bzip2 -dc "$s1" >"$dir/a.xml"
        bzip2 -dc "$s2" >"$dir/b.xml"
        i=0
        : >"$dir/big.xml"
        while [ $i -lt 20 ]; do cat "$dir/a.xml" "$dir/b.xml" >>"$dir/big.xml"; i=$((i + 1)); done
        bzip2 -9 -c "$dir/big.xml" >"$dir/big.xml.bz2"
        python3 - "$dir/big.xml" "$dir/big-ms.xml.bz2" "$dir/big-ms-index.txt" <<'EOF'
import bz2, re, sys
data = open(sys.argv[1], 'rb').read()
out = open(sys.argv[2], 'wb')
idx = open(sys.argv[3], 'w', encoding='utf-8')
first = data.index(b'<page>')
ends = [m.end() for m in re.finditer(rb'</page>\n', data)]
off = 0
def put(chunk):
    global off
    c = bz2.compress(chunk, 9)
    out.write(c)
    o = off
    off += len(c)
    return o
put(data[:first])
start, pid = first, 0
for i in range(0, len(ends), 100):
    e = ends[min(i + 99, len(ends) - 1)]
    o = put(data[start:e])
    for m in re.finditer(rb'<title>(.*?)</title>', data[start:e]):
        pid += 1
        idx.write('%d:%d:%s\n' % (o, pid, m.group(1).decode('utf-8', 'replace')))
    start = e
if start < len(data):
    put(data[start:])
EOF
        bzip2 -9 -f "$dir/big-ms-index.txt"
        rm -f "$dir/a.xml" "$dir/b.xml" "$dir/big.xml"
    fi
    set -- "$dir/big.xml.bz2" "$dir/big-ms.xml.bz2"
fi

# best wall time (seconds) of REPS runs of the command
best() {
    b=""
    k=0
    while [ $k -lt "$reps" ]; do
        t0=$(date +%s.%N)
        "$@" >/dev/null
        t1=$(date +%s.%N)
        t=$(echo "$t1 - $t0" | bc)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
        k=$((k + 1))
    done
    printf '%.2f' "$b"
}

np=$(nproc)
for f in "$@"; do
    idx=""
    case $f in *big-ms.xml.bz2) [ -f "${f%.xml.bz2}-index.txt.bz2" ] && idx="${f%.xml.bz2}-index.txt.bz2" ;; esac
    want=$(bzip2 -dc "$f" | md5sum)
    for j in 1 2; do
        got=$("$drv" $j "$f" | md5sum)
        [ "$got" = "$want" ] || { echo "$f: -j$j output differs from bzip2 -dc" >&2; exit 1; }
    done
    size=$(wc -c <"$f")
    tb=$(best bzip2 -dc "$f")
    t1=$(best "$drv" 1 "$f")
    t2=$(best "$drv" 2 "$f")
    tn=$(best "$drv" "$np" "$f")
    echo "$f ($size bytes): bzip2 -dc ${tb}s; -j1 ${t1}s ($(echo "scale=2; $t1 / $tb" | bc)x);" \
        "-j2 ${t2}s ($(echo "scale=2; $t2 / $tb" | bc)x); -j$np ${tn}s"
    if [ -n "$idx" ]; then
        got=$("$drv" 2 "$f" "$idx" | md5sum)
        [ "$got" = "$want" ] || { echo "$f: output with index differs" >&2; exit 1; }
        ti=$(best "$drv" 2 "$f" "$idx")
        echo "  with index $idx: -j2 ${ti}s"
    fi
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "  peak RSS at -j16: %M KB" "$drv" 16 "$f" >/dev/null
    fi
done
