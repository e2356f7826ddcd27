#!/usr/bin/env python3
"""bench/langid_detect.py - the peer for bench/langid.sh: PyPI langdetect on
"lang<TAB>text" lines.

    python3 langid_detect.py [--min-chars N] < test.tsv > guesses.tsv

Writes "gold<TAB>guess" per text of at least N characters (code points),
zh-cn/zh-tw as zh, "und" where langdetect raises (no features). Seeded
(DetectorFactory.seed = 0) so that runs repeat. Prints one line on stderr:
"N texts, T s, X texts/s, Y MB/s" counting only the detect() calls.
"""
import sys
import time

from langdetect import DetectorFactory, detect
from langdetect.lang_detect_exception import LangDetectException


def main():
    min_chars = 0
    if len(sys.argv) == 3 and sys.argv[1] == "--min-chars":
        min_chars = int(sys.argv[2])
    DetectorFactory.seed = 0
    detect("warm up the profiles")  # loading is not part of the timing
    n, nbytes, secs = 0, 0, 0.0
    out = []
    for line in sys.stdin.buffer:
        line = line.rstrip(b"\n")
        gold, sep, raw = line.partition(b"\t")
        if not sep:
            continue
        text = raw.decode("utf-8", errors="replace")
        if len(text) < min_chars:
            continue
        t0 = time.perf_counter()
        try:
            guess = detect(text)
        except LangDetectException:
            guess = "und"
        secs += time.perf_counter() - t0
        if guess.startswith("zh-"):
            guess = "zh"
        n += 1
        nbytes += len(raw)
        out.append("%s\t%s\n" % (gold.decode(), guess))
    sys.stdout.write("".join(out))
    print("%d texts, %.3f s, %.0f texts/s, %.3f MB/s" % (n, secs, n / secs if secs else 0,
          nbytes / secs / 1e6 if secs else 0), file=sys.stderr)


if __name__ == "__main__":
    main()
