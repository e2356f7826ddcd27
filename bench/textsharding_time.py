"""Time NVIDIA's TextSharding.Sharding phase by phase (bench only).

    python textsharding_time.py TS_DIR punkt ARTICLES.txt OUTPREFIX NTRAIN NTEST FRACTION
    python textsharding_time.py TS_DIR split BERT.txt   OUTPREFIX NTRAIN NTEST FRACTION

punkt: what `bertPrep.py --action sharding` runs: one article per line,
       NLTKSegmenter (nltk.sent_tokenize, English Punkt; NLTK_DATA must
       hold punkt_tab), then distribute and write.
split: BERT-format input (one sentence per line, blank line between
       documents): every document becomes one line with its sentences
       joined by U+0001 and the segmenter splits there again, so the
       balancing and writing get exactly the sentences shard_split gets.
nltk.download (called at import time) is replaced by a no-op. Prints one
"phase seconds" line per phase, then "total", then "maxrss_mb".
"""
import os
import resource
import sys
import tempfile
import time

SEP = "\x01"


class SplitSegmenter:
    def segment_string(self, article):
        return article.split(SEP)


def main():
    src, mode, inp, prefix, ntrain, ntest, frac = sys.argv[1:8]
    import nltk

    nltk.download = lambda *a, **k: True
    sys.path.insert(0, src)
    import TextSharding

    t = {}
    t0 = time.time()
    tmp = None
    if mode == "split":
        fd, tmp = tempfile.mkstemp(suffix=".txt")
        with open(inp, encoding="utf-8", newline="\n") as f, os.fdopen(fd, "w", encoding="utf-8", newline="\n") as g:
            cur = []
            for line in f:
                s = line.strip()
                if s:
                    cur.append(s)
                elif cur:
                    g.write(SEP.join(cur) + "\n\n")
                    cur = []
            if cur:
                g.write(SEP.join(cur) + "\n\n")
        inp = tmp
        segmenter = SplitSegmenter()
    else:
        segmenter = TextSharding.NLTKSegmenter()
    t["prepare"] = time.time() - t0
    sh = TextSharding.Sharding([inp], prefix, int(ntrain), int(ntest), float(frac))
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        for phase, fn in (("load", sh.load_articles),
                          ("segment", lambda: sh.segment_articles_into_sentences(segmenter)),
                          ("distribute", sh.distribute_articles_over_shards),
                          ("write", sh.write_shards_to_disk)):
            s = time.time()
            fn()
            t[phase] = time.time() - s
    finally:
        sys.stdout = out
        if tmp:
            os.unlink(tmp)
    for k, v in t.items():
        print(k, "%.3f" % v)
    print("total", "%.3f" % (time.time() - t0))
    print("maxrss_mb", "%.0f" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


if __name__ == "__main__":
    main()
