#!/usr/bin/env python3
"""bench/sentseg_eval.py - sentence-splitter accuracy, ours against the peers.

Two case sets, each scored as "the sentence list is exactly the expected one"
after collapsing runs of whitespace to one space and stripping each sentence
(empty sentences dropped):

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

Ours runs once per case (`$BIN/sent_split --lang L`, the case as one
document). Our input format has one paragraph per line, so an empty line
inside a case (a paragraph break, as quntoken reads it) becomes a line break
and a single line break becomes a space. The peers get the case text as it
is. Failures are written to --failures FILE.

usage: sentseg_eval.py [--bin DIR] [--failures FILE] golden FILE
       sentseg_eval.py [--bin DIR] [--failures FILE] quntoken FILE...
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


def tool_punkt():
    import nltk
    nltk.sent_tokenize("Warm up. The model loads now.")
    return nltk.sent_tokenize


def tool_pysbd():
    import pysbd
    seg = pysbd.Segmenter(language="en", clean=False)
    return lambda text: [s.strip() for s in seg.segment(text)]


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


def row(name, ok, n, note=""):
    print("%-44s %4d / %-4d %6.1f %%  %s" % (name, ok, n, 100.0 * ok / n if n else 0.0, note))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bin"))
    ap.add_argument("--failures", default=os.devnull)
    ap.add_argument("set", choices=["golden", "quntoken"])
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
