#!/usr/bin/env python3
"""bench/peer_split.py - run a peer sentence splitter over our text format.

Reads FILE (one paragraph per line, blank line between documents, as
`wiki_strip -F lines` writes it), splits every paragraph into sentences and
writes one sentence per line with a blank line for each blank input line: the
same work `sent_split` does, done the way the replaced pipelines do it.

  punkt   nltk.sent_tokenize(paragraph) with the English Punkt model, as
          NVIDIA's TextSharding.NLTKSegmenter does per article
  pysbd   pysbd.Segmenter(language='en', clean=False).segment(paragraph),
          each sentence stripped

usage: peer_split.py punkt|pysbd FILE > OUT   (NLTK_DATA must hold punkt_tab)
"""
import sys


def main():
    tool, path = sys.argv[1], sys.argv[2]
    if tool == "punkt":
        import nltk
        split = nltk.sent_tokenize
    elif tool == "pysbd":
        import pysbd
        seg = pysbd.Segmenter(language="en", clean=False)
        split = lambda p: [s.strip() for s in seg.segment(p)]
    else:
        sys.exit("peer_split.py: unknown tool '%s'" % tool)
    out = sys.stdout
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip():
                for s in split(line):
                    if s:
                        out.write(s)
                        out.write("\n")
            else:
                out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
