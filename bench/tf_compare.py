#!/usr/bin/env python3
"""bench/tf_compare.py - compare the documents two filters kept.

INPUT is the text both filters read (sentence per line, blank line between
documents); A and B are their outputs. Each filter prints the documents it
keeps, in input order, with every sentence right-stripped; so each output
must be a subsequence of the input documents, and the kept set is recovered
by walking input and output together. Prints the counts, whether the two
outputs are byte-identical, and the first LIMIT documents kept by only one
of them (all of them go to --diff FILE).

usage: tf_compare.py [--limit N] [--diff FILE] INPUT NAME_A A NAME_B B
Exit status 0 when the kept sets are identical, 1 otherwise.
"""
import argparse
import sys


def docs(path):
    """Documents of a file read as filterdocs.py reads it (universal newlines)."""
    out, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip()
            if line:
                cur.append(line)
            elif cur:
                out.append(tuple(cur))
                cur = []
    if cur:
        out.append(tuple(cur))
    return out


def kept(inp, got, name):
    ks, j = set(), 0
    for i, d in enumerate(inp):
        if j < len(got) and got[j] == d:
            ks.add(i)
            j += 1
    if j != len(got):
        sys.exit("tf_compare.py: %s output document %d is not an input document in order: %r"
                 % (name, j + 1, got[j][:2]))
    return ks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--diff", default=None)
    ap.add_argument("input")
    ap.add_argument("name_a")
    ap.add_argument("a")
    ap.add_argument("name_b")
    ap.add_argument("b")
    o = ap.parse_args()
    inp = docs(o.input)
    ka = kept(inp, docs(o.a), o.name_a)
    kb = kept(inp, docs(o.b), o.name_b)
    only_a, only_b = sorted(ka - kb), sorted(kb - ka)
    same = open(o.a, "rb").read() == open(o.b, "rb").read()
    print("  documents in: %d; kept by %s: %d, by %s: %d, by both: %d; dropped by both: %d"
          % (len(inp), o.name_a, len(ka), o.name_b, len(kb), len(ka & kb), len(inp) - len(ka | kb)))
    print("  agreement: %d / %d documents (%.2f %%); only %s: %d, only %s: %d; outputs byte-identical: %s"
          % (len(inp) - len(only_a) - len(only_b), len(inp),
             100.0 * (len(inp) - len(only_a) - len(only_b)) / max(1, len(inp)),
             o.name_a, len(only_a), o.name_b, len(only_b), "yes" if same else "no"))
    diffs = [(i, o.name_a) for i in only_a] + [(i, o.name_b) for i in only_b]
    diffs.sort()
    lines = []
    for i, who in diffs:
        d = inp[i]
        lines.append("  doc %d (%d sentences, %d chars) kept only by %s: %s"
                     % (i + 1, len(d), sum(len(s) for s in d), who, d[0][:90]))
    for ln in lines[: o.limit]:
        print(ln)
    if len(lines) > o.limit:
        print("  ... %d more" % (len(lines) - o.limit))
    if o.diff:
        with open(o.diff, "w", encoding="utf-8") as f:
            for i, who in diffs:
                f.write("# doc %d kept only by %s\n%s\n\n" % (i + 1, who, "\n".join(inp[i])))
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
