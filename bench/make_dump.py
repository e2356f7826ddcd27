#!/usr/bin/env python3
"""bench/make_dump.py - build a larger benchmark dump from a real sample.

Repeats the <page> elements of a real MediaWiki dump COPIES times (with new,
increasing page ids), then writes
  OUT.xml.bz2              one bz2 stream, as `bzip2 -9` makes it
  OUT.multistream.xml.bz2  Wikimedia's multistream layout: a stream for the
                           header, one per 100 pages, one for the footer
  OUT.multistream-index.txt.bz2   its index (offset:pageid:title)

usage: make_dump.py SAMPLE.xml.bz2 COPIES OUT
"""
import bz2
import re
import sys

src, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
xml = bz2.open(src, "rb").read()
first = xml.index(b"<page>")
head_end = xml.rfind(b"\n", 0, first) + 1
last = xml.rindex(b"</page>") + len(b"</page>\n")
header, body, footer = xml[:head_end], xml[head_end:last], xml[last:]
pages = re.findall(rb"[ \t]*<page>.*?</page>\n", body, re.S)

all_pages = []
pid = 1
for c in range(copies):
    for p in pages:
        p2 = re.sub(rb"(<ns>[^<]*</ns>\s*<id>)\d+(</id>)", rb"\g<1>%d\g<2>" % pid, p, count=1)
        title = re.search(rb"<title>(.*?)</title>", p2).group(1)
        all_pages.append((pid, title, p2))
        pid += 1

with open(out + ".xml.bz2", "wb") as f:
    comp = bz2.BZ2Compressor(9)
    f.write(comp.compress(header))
    for _, _, p in all_pages:
        f.write(comp.compress(p))
    f.write(comp.compress(footer))
    f.write(comp.flush())

index = []
with open(out + ".multistream.xml.bz2", "wb") as f:
    f.write(bz2.compress(header, 9))
    for i in range(0, len(all_pages), 100):
        off = f.tell()
        group = all_pages[i:i + 100]
        for pid_, title, _ in group:
            index.append(b"%d:%d:%s\n" % (off, pid_, title))
        f.write(bz2.compress(b"".join(p for _, _, p in group), 9))
    f.write(bz2.compress(footer, 9))
with open(out + ".multistream-index.txt.bz2", "wb") as f:
    f.write(bz2.compress(b"".join(index), 9))
print("%s: %d pages, %.1f MB XML" % (out, len(all_pages),
      (len(header) + len(footer) + sum(len(p) for _, _, p in all_pages)) / 1e6))
