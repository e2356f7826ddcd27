#!/usr/bin/env python3
"""bench/sentseg_eval.py - sentence-splitter accuracy, ours against the peers.

Three case sets. The first two are scored per case, as "the sentence list is
exactly the expected one" after collapsing runs of whitespace to one space
and stripping each sentence (empty sentences dropped):

  golden FILE.jsonl     the English Golden Rules ({"id", "text", "sentences"}
                        per line); tools: ours (--lang en), NLTK Punkt
                        (sent_tokenize, English model), pySBD
                        (Segmenter(language='en', clean=False)).
  quntoken FILE.txt...  quntoken's own test files: "IN : text" lines followed
                        by "OUT: <s>..</s><ws> </ws><s>..</s>" lines; a case is
                        a run of IN lines (joined with newlines) and the run
                        of OUT lines after it; the expected sentences are the
                        <s> contents. Tools: ours (--lang hu), quntoken in
                        sentence mode, quntoken as its own test harness runs
                        it (the modules named by the file name, exact output
                        string), and Punkt / pySBD with their English models
                        (neither has a Hungarian one) for reference.

  ud FILE.conllu...     Universal Dependencies treebanks with sentence
                        boundaries (UD English EWT: weblogs, newsgroups,
                        e-mails, reviews, answers). A paragraph is the
                        "# text =" lines from one "# newpar"/"# newdoc" to the
                        next, joined with one space; the genre is the document
                        id's prefix ("# newdoc id = email-enronsent..."). Each
                        tool splits each paragraph, as it would a line of our
                        Wikipedia text. Scored by boundaries, not cases: a
                        boundary is a cut between two sentences inside a
                        paragraph (paragraph ends are given and not counted),
                        located by the number of non-space characters before
                        it, so whitespace a tool adds or drops does not
                        matter. P = correct cuts / cuts made, R = correct cuts
                        / cuts in the treebank, F1 = 2PR / (P + R), summed
                        over all paragraphs of a genre (micro average) and
                        over all genres (overall). Tools: ours (--lang en),
                        Punkt, pySBD, sentencex (segment("en", text)) and
                        Moses' split-sentences.perl as the sentence-splitter
                        package ports it (SentenceSplitter(language="en")).

Ours runs once per case (`$BIN/sent_split --lang L`, the case as one
document). Our input format has one paragraph per line, so an empty line
inside a case (a paragraph break, as quntoken reads it) becomes a line break
and a single line break becomes a space. The peers get the case text as it
is. Failures are written to --failures FILE.

usage: sentseg_eval.py [--bin DIR] [--failures FILE] golden FILE
       sentseg_eval.py [--bin DIR] [--failures FILE] quntoken FILE...
       sentseg_eval.py [--bin DIR] [--failures FILE] ud FILE.conllu...
Run it with the peers' venv python (see bench/lib.sh peers_setup).
"""
import argparse
import html
import json
import os
import re
import subprocess
import sys


def norm(sents):
    out = []
    for s in sents:
        s = " ".join(s.split())
        if s:
            out.append(s)
    return out


# ---- case sets ----

def load_golden(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                cases.append(("golden#%d" % d["id"], d["text"], d["sentences"], None))
    return cases


S_RE = re.compile(r"<s>(.*?)</s>", re.S)


def load_quntoken(path):
    """Cases of one quntoken test file: (name, input, expected sentences, raw OUT)."""
    cases, inp, out, state = [], None, None, None
    base = os.path.basename(path)

    def flush():
        if inp is not None:
            exp = [html.unescape(x) for x in S_RE.findall(out or "")]
            cases.append(("%s#%d" % (base, len(cases) + 1), inp, exp, out or ""))

    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            for tag, kind in (("IN :", "in"), ("OUT:", "out")):
                if line == tag or line.startswith(tag + " "):
                    text = line[len(tag) + 1:]
                    break
            else:
                continue
            if kind == "in":
                if state != "in":
                    flush()
                    inp, out = text, None
                else:
                    inp += "\n" + text
            else:
                out = text if state != "out" else out + "\n" + text
            state = kind
    flush()
    return cases


def load_ud(paths):
    """Paragraphs of CoNLL-U files: [(genre, paragraph id, [sentence, ...])]."""
    paras = []
    for path in paths:
        genre, pid = "?", None
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# newdoc id"):
                    doc = line.split("=", 1)[1].strip()
                    genre = doc.split("-", 1)[0]
                    pid = None
                    paras.append((genre, doc, []))
                elif line.startswith("# newpar"):
                    pid = line.split("=", 1)[1].strip() if "=" in line else "%s-p" % genre
                    paras.append((genre, pid, []))
                elif line.startswith("# text ="):
                    if not paras:
                        paras.append((genre, path, []))
                    paras[-1][2].append(line.split("=", 1)[1].strip())
    return [p for p in paras if p[2]]


# ---- tools: each maps a case text to a list of sentences ----

def tool_ours(binary, lang):
    cmd = [binary, "--lang", lang]
    usage = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    if b"--input-format" in usage:  # no sniffing: a case may look like JSON
        cmd += ["--input-format", "text"]

    def run(text):
        paras = [" ".join(p.split("\n")) for p in re.split(r"\n[ \t]*\n", text)]
        doc = "".join(p + "\n" for p in paras if p.strip())
        r = subprocess.run(cmd, input=doc.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()))
        return r.stdout.decode().split("\n")
    return run


def tool_ours_lines(binary, lang):
    """Ours on many paragraphs in one run: the paragraphs go through one
    sent_split process (one paragraph per line, --keep-paragraphs) at the
    first call and are then answered from its output."""
    cache = {}

    def run(text):
        if text not in cache:
            raise KeyError("paragraph not prepared")
        return cache[text]

    def prepare(texts):
        cmd = [binary, "--lang", lang, "--keep-paragraphs", "--input-format", "lines"]
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        doc = "".join(" ".join(t.split()) + "\n" for t in todo)
        r = subprocess.run(cmd, input=doc.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()))
        blocks = r.stdout.decode().split("\n\n")
        blocks = [b for b in blocks if b.strip()]
        if len(blocks) != len(todo):
            raise RuntimeError("%d paragraphs in, %d out" % (len(todo), len(blocks)))
        for t, b in zip(todo, blocks):
            cache[t] = b.split("\n")
    run.prepare = prepare
    return run


def tool_punkt():
    import nltk
    nltk.sent_tokenize("Warm up. The model loads now.")
    return nltk.sent_tokenize


def tool_pysbd():
    import pysbd
    seg = pysbd.Segmenter(language="en", clean=False)
    return lambda text: [s.strip() for s in seg.segment(text)]


def tool_sentencex():
    from sentencex import segment
    return lambda text: list(segment("en", text))


def tool_moses():
    from sentence_splitter import SentenceSplitter
    sp = SentenceSplitter(language="en")
    return sp.split


def quntoken_modules(fname):
    """The module chain quntoken's own test harness uses for a test file."""
    kind = os.path.basename(fname).split("_")[2]
    chain = {"snt": "preproc snt", "sntcorr": "preproc snt sntcorr sntcorr",
             "preproc": "preproc", "hyphen": "preproc hyphen",
             "token": "preproc snt sntcorr sntcorr token"}[kind]
    return chain.split() + ["convxml"]


def tool_quntoken():
    from quntoken.quntoken import call_modules
    mods = "preproc snt sntcorr sntcorr convxml".split()  # = quntoken -m sentence
    return lambda text: [html.unescape(x) for x in S_RE.findall("".join(call_modules([text], mods)))]


# ---- scoring ----

def score(name, fn, cases, fails):
    ok = 0
    for cid, text, exp, _ in cases:
        try:
            got = norm(fn(text))
        except Exception as e:  # a crash on a case is a failed case
            got = ["<error: %s>" % e]
        if got == norm(exp):
            ok += 1
        else:
            fails.write("%s  %s\n  text: %r\n  want: %r\n  got:  %r\n" % (name, cid, text, norm(exp), got))
    return ok


def cuts(sents):
    """Inner boundaries of a sentence list, as non-space character counts."""
    out, pos = set(), 0
    for x in sents:
        pos += sum(1 for ch in x if not ch.isspace())
        out.add(pos)
    out.discard(pos)
    out.discard(0)
    return out


def score_ud(name, fn, paras, fails):
    """Per genre [correct, made, expected] boundary counts; failures written."""
    by = {}
    if hasattr(fn, "prepare"):
        fn.prepare([" ".join(sents) for _, _, sents in paras])
    for genre, pid, sents in paras:
        text = " ".join(sents)
        try:
            got = [x for x in fn(text) if x.strip()]
        except Exception as e:  # a crash on a paragraph: no cuts made
            got = [text]
            fails.write("%s  %s  error: %s\n" % (name, pid, e))
        want, made = cuts(sents), cuts(got)
        if sum(1 for ch in "".join(got) if not ch.isspace()) != sum(1 for ch in text if not ch.isspace()):
            fails.write("%s  %s  the tool changed the text\n" % (name, pid))
        c = by.setdefault(genre, [0, 0, 0])
        c[0] += len(want & made)
        c[1] += len(made)
        c[2] += len(want)
        if want != made:
            fails.write("%s  %s\n  want: %r\n  got:  %r\n" % (name, pid, norm(sents), norm(got)))
    return by


def prf(c):
    p = c[0] / c[1] if c[1] else 1.0
    r = c[0] / c[2] if c[2] else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def row(name, ok, n, note=""):
    print("%-44s %4d / %-4d %6.1f %%  %s" % (name, ok, n, 100.0 * ok / n if n else 0.0, note))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bin"))
    ap.add_argument("--failures", default=os.devnull)
    ap.add_argument("set", choices=["golden", "quntoken", "ud"])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    ours = os.path.join(a.bin, "sent_split")
    have_ours = os.access(ours, os.X_OK)
    fails = open(a.failures, "a", encoding="utf-8")

    if a.set == "golden":
        cases = load_golden(a.files[0])
        print("English Golden Rules (%s): %d cases" % (a.files[0], len(cases)))
        if have_ours:
            row("wikibert sent_split --lang en", score("ours-en", tool_ours(ours, "en"), cases, fails), len(cases))
        else:
            print("%-44s not built (%s missing): not counted" % ("wikibert sent_split --lang en", ours))
        row("NLTK Punkt sent_tokenize (english)", score("punkt", tool_punkt(), cases, fails), len(cases))
        row("pySBD Segmenter(en, clean=False)", score("pysbd", tool_pysbd(), cases, fails), len(cases))
        return 0

    if a.set == "ud":
        paras = load_ud(a.files)
        genres = sorted({g for g, _, _ in paras})
        nb = sum(len(p[2]) - 1 for p in paras)
        print("UD mixed-genre English (%s): %d paragraphs, %d sentences, %d boundaries inside them" % (
            ", ".join(os.path.basename(f) for f in a.files), len(paras), sum(len(p[2]) for p in paras), nb))
        print("boundaries per genre: " + ", ".join(
            "%s %d" % (g, sum(len(p[2]) - 1 for p in paras if p[0] == g)) for g in genres))
        print("F1 per genre and overall (F1 = 2PR/(P+R) over boundaries inside paragraphs)")
        print("%-44s %6s %6s %6s  %s" % ("tool", "P", "R", "F1", " ".join("%9s" % g[:9] for g in genres)))
        tools = []
        if have_ours:
            tools.append(("wikibert sent_split --lang en", "ours-en", tool_ours_lines(ours, "en")))
        else:
            print("%-36s not built (%s missing): not counted" % ("wikibert sent_split --lang en", ours))
        tools += [("NLTK Punkt sent_tokenize (english)", "punkt", tool_punkt()),
                  ("pySBD Segmenter(en, clean=False)", "pysbd", tool_pysbd()),
                  ("sentencex segment(\"en\", text)", "sentencex", tool_sentencex()),
                  ("Moses split-sentences (sentence-splitter)", "moses", tool_moses())]
        for title, tag, fn in tools:
            by = score_ud(tag, fn, paras, fails)
            tot = [sum(c[i] for c in by.values()) for i in range(3)]
            p, r, f1 = prf(tot)
            print("%-44s %6.3f %6.3f %6.3f  %s" % (title, p, r, f1, " ".join(
                "%9.3f" % prf(by.get(g, [0, 0, 0]))[2] for g in genres)))
        return 0

    per_file = [(f, load_quntoken(f)) for f in a.files]
    cases = [c for _, cs in per_file for c in cs]
    print("quntoken test cases: %d in %d files (%s)" % (
        len(cases), len(per_file), ", ".join("%s %d" % (os.path.basename(f), len(cs)) for f, cs in per_file)))
    tools = []
    if have_ours:
        tools.append(("wikibert sent_split --lang hu", "ours-hu", tool_ours(ours, "hu"), ""))
    else:
        print("%-44s not built (%s missing): not counted" % ("wikibert sent_split --lang hu", ours))
    tools.append(("quntoken -m sentence (<s> contents)", "quntoken", tool_quntoken(), ""))
    tools.append(("NLTK Punkt (english model)", "punkt-hu", tool_punkt(), "no Hungarian model"))
    tools.append(("pySBD (en)", "pysbd-hu", tool_pysbd(), "no Hungarian support"))
    for title, tag, fn, note in tools:
        total = 0
        detail = []
        for f, cs in per_file:
            ok = score(tag, fn, cs, fails)
            total += ok
            detail.append("%s %d/%d" % (os.path.basename(f).replace("test_default_", "").replace(".txt", ""), ok, len(cs)))
        row(title, total, len(cases), (note + "; " if note else "") + ", ".join(detail))

    # quntoken as its own harness runs it: per-file module chain, exact string.
    from quntoken.quntoken import call_modules
    total = 0
    for f, cs in per_file:
        mods = quntoken_modules(f)
        for cid, text, _, raw in cs:
            got = "".join(call_modules([text], mods))
            if got == raw:
                total += 1
            else:
                fails.write("quntoken-harness  %s\n  text: %r\n  want: %r\n  got:  %r\n" % (cid, text, raw, got))
    row("quntoken, own harness (exact output)", total, len(cases), "modules per file as in its test_quntoken.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
