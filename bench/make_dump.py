#!/usr/bin/env python3
"""bench/make_dump.py - build a larger benchmark dump from a real sample.

Repeats the <page> elements of a real MediaWiki dump COPIES times (with new,
increasing page ids), then writes
  OUT.xml.bz2              one bz2 stream, as `bzip2 -9` makes it
  OUT.multistream.xml.bz2  Wikimedia's multistream layout: a stream for the
                           header, one per 100 pages, one for the footer
  OUT.multistream-index.txt.bz2   its index (offset:pageid:title)

The pages are streamed: memory holds the sample and a few groups of 100
pages, whatever COPIES is, so a dump of 6 GB of XML (x1024 the 206-page
sample) is written in about 100 MB.

Options (before the arguments):
  --vary RATE         copies 1, 2, ... (copy 0 is the sample as it is) are
                      not exact repeats: in each page's <text>, RATE of the
                      lower-case words of six or more letters that stand
                      between a blank and a blank, comma, period or
                      semicolon (running text, not markup) get the copy's
                      number as a suffix of letters (copy 1: "a", 27: "bb"),
                      at positions drawn per copy and page by a seeded
                      random.Random. Every page of some length thus differs
                      from its other copies (exact deduplication of documents
                      keeps them; most sentences of more than a few words
                      differ too), and the distinct words grow with the
                      copies, as a real dump's do (0.03: about 2,000 new
                      words a copy). Default 0: exact repeats.
  --multistream-only  write only OUT.multistream.xml.bz2 and its index
  -j N                compress with N processes (default 1); the bytes do
                      not depend on N

usage: make_dump.py [--vary RATE] [--multistream-only] [-j N] SAMPLE.xml.bz2 COPIES OUT
"""
import bz2
import multiprocessing
import random
import re
import sys

GROUP = 100
WORD = re.compile(rb"(?<= )[a-z]{6,}(?=[ ,.;])")


def letters(n):
    """1 -> a, 26 -> z, 27 -> aa, ...: the copy's suffix."""
    s = b""
    while n > 0:
        n -= 1
        s = bytes([97 + n % 26]) + s
        n //= 26
    return s


class Page:
    """One sample page: its bytes split where the id goes and where words
    may be varied."""

    def __init__(self, raw):
        m = re.search(rb"(<ns>[^<]*</ns>\s*<id>)\d+(</id>)", raw)
        self.pre, self.post = raw[:m.end(1)], raw[m.start(2):]
        self.title = re.search(rb"<title>(.*?)</title>", raw).group(1)
        t = re.search(rb"<text[^>]*>(.*?)</text>", self.post, re.S)
        # word ends inside post (offsets), only within <text>
        self.words = [] if t is None else [
            w.end() + t.start(1) for w in WORD.finditer(t.group(1))]

    def copy(self, pid, c, rate, index):
        head = b"%s%d" % (self.pre, pid)
        if c == 0 or rate <= 0 or not self.words:
            return head + self.post
        rng = random.Random(c * 1000003 + index)
        k = int(len(self.words) * rate + rng.random())
        ends = sorted(self.words[i] for i in rng.sample(range(len(self.words)), min(k, len(self.words))))
        suf, parts, at = letters(c), [head], 0
        for e in ends:
            parts += [self.post[at:e], suf]
            at = e
        parts.append(self.post[at:])
        return b"".join(parts)


def groups(pages, copies, rate):
    """(first pid, [(pid, title, bytes)]) for each group of GROUP pages."""
    group, pid = [], 1
    for c in range(copies):
        for i, p in enumerate(pages):
            group.append((pid, p.title, p.copy(pid, c, rate, i)))
            pid += 1
            if len(group) == GROUP:
                yield group
                group = []
    if group:
        yield group


def compress(group):
    return bz2.compress(b"".join(b for _, _, b in group), 9), [(pid, t) for pid, t, _ in group], \
        sum(len(b) for _, _, b in group)


def main(argv):
    rate, only_multi, jobs = 0.0, False, 1
    while argv and argv[0].startswith("-"):
        a = argv.pop(0)
        if a == "--vary":
            rate = float(argv.pop(0))
        elif a == "--multistream-only":
            only_multi = True
        elif a == "-j":
            jobs = int(argv.pop(0))
        else:
            sys.exit("make_dump.py: unknown option %s\n%s" % (a, __doc__))
    if len(argv) != 3:
        sys.exit(__doc__)
    src, copies, out = argv[0], int(argv[1]), argv[2]
    xml = bz2.open(src, "rb").read()
    first = xml.index(b"<page>")
    head_end = xml.rfind(b"\n", 0, first) + 1
    last = xml.rindex(b"</page>") + len(b"</page>\n")
    header, body, footer = xml[:head_end], xml[head_end:last], xml[last:]
    pages = [Page(p) for p in re.findall(rb"[ \t]*<page>.*?</page>\n", body, re.S)]

    total = len(header) + len(footer)
    if not only_multi:
        with open(out + ".xml.bz2", "wb") as f:
            comp = bz2.BZ2Compressor(9)
            f.write(comp.compress(header))
            for g in groups(pages, copies, rate):
                for _, _, b in g:
                    f.write(comp.compress(b))
            f.write(comp.compress(footer))
            f.write(comp.flush())

    index = bz2.BZ2Compressor(9)
    npages = 0
    pool = multiprocessing.Pool(jobs) if jobs > 1 else None
    try:
        with open(out + ".multistream.xml.bz2", "wb") as f, \
                open(out + ".multistream-index.txt.bz2", "wb") as fi:
            f.write(bz2.compress(header, 9))
            it = groups(pages, copies, rate)
            done = pool.imap(compress, it, 4) if pool else map(compress, it)
            for data, ids, n in done:
                off = f.tell()
                fi.write(index.compress(b"".join(b"%d:%d:%s\n" % (off, pid, t) for pid, t in ids)))
                f.write(data)
                npages += len(ids)
                total += n
            f.write(bz2.compress(footer, 9))
            fi.write(index.flush())
    finally:
        if pool:
            pool.close()
            pool.join()
    print("%s: %d pages, %.1f MB XML" % (out, npages, total / 1e6))


if __name__ == "__main__":
    main(sys.argv[1:])
