"""Run NVIDIA's TextSharding.Sharding on BERT-format text (test-time only).

    python3 textsharding_run.py DIR_WITH_TextSharding.py INPUT OUTPREFIX NTRAIN NTEST FRACTION

bertPrep.py gives Sharding one-article-per-line files and an NLTK Punkt
segmenter. Here the input is already one sentence per line, so each
document (a run of non-blank lines) becomes one line with its stripped
sentences joined by U+0001 (not white space for str.strip/rstrip, and
checked to be absent), and the segmenter handed to
segment_articles_into_sentences splits on it again: Sharding then balances
and writes exactly those sentences, with no NLTK step in between. The
module still runs `import nltk; nltk.download('punkt')` at import time;
nltk.download is replaced by a no-op first so that nothing goes to the
network. TextSharding.py itself is never copied into the repository.
"""
import os
import sys
import tempfile

SEP = "\x01"


class SplitSegmenter:
    def segment_string(self, article):
        return article.split(SEP)


def main():
    src, inp, prefix, ntrain, ntest, frac = sys.argv[1:7]
    import nltk

    nltk.download = lambda *a, **k: True
    sys.path.insert(0, src)
    import TextSharding

    docs, cur = [], []
    with open(inp, encoding="utf-8", newline="\n") as f:
        for line in f:
            s = line.strip()
            if s:
                if SEP in s:
                    sys.exit("input contains U+0001")
                cur.append(s)
            elif cur:
                docs.append(cur)
                cur = []
    if cur:
        docs.append(cur)
    fd, tmp = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
        for d in docs:
            f.write(SEP.join(d) + "\n\n")
    try:
        sh = TextSharding.Sharding([tmp], prefix, int(ntrain), int(ntest), float(frac))
        sh.load_articles()
        sh.segment_articles_into_sentences(SplitSegmenter())
        sh.distribute_articles_over_shards()
        sh.write_shards_to_disk()
    finally:
        os.unlink(tmp)


if __name__ == "__main__":
    main()
