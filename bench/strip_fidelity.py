#!/usr/bin/env python3
"""strip_fidelity.py - compare wiki_strip output with WikiExtractor's.

Usage:
  strip_fidelity.py compare WE_OUT OURS_OUT [--samples N]
  strip_fidelity.py brief LABEL WE_OUT OURS_OUT
  strip_fidelity.py matchall [--all] LABEL=WE_OUT=OURS_OUT...
  strip_fidelity.py leftover [--all] LABEL=OURS_OUT...

WE_OUT and OURS_OUT are <doc id=... title=...> ... </doc> streams (a file or
a directory of files, read in sorted order). Both sides are normalised the
same way before comparing:
  - WikiExtractor html-escapes its text (&amp; &lt; &gt;); that escaping is
    undone on both sides (it is a no-op on text that was not escaped);
  - the title line (first non-empty line equal to the title attribute) is
    not a paragraph;
  - a paragraph is a line with leading/trailing whitespace stripped; empty
    lines are not paragraphs.

A line has a BLANK BEFORE PUNCTUATION when it matches SPACE_PUNCT_RE: a
blank before , . : ; ! ? ) ] or », a spaced ellipsis (" ..") excepted. That
is what a removed template leaves in "from the Greek {{lang|..}}, i.e.".

A line has LEFTOVER MARKUP when it matches MARKUP_RE below: wiki link or
template brackets, table delimiters, a leading '|' (table row), an HTML
table attribute, a <ref, an opening, closing or self-closing tag, a named
character reference, two apostrophes, a language-converter bracket "-{",
or a leading list bullet ('*' or '#': WikiExtractor keeps ":*" items so).

A WikiExtractor paragraph we do not have is classified (see classify):
'grouped' (it writes {{formatnum}} figures as "3,769,495" in every
language, we keep the digits as written), 'longer' (ours has the same text
with more in it: chiefly the labels of interlanguage links "[[:de:Kiez|Kiez]]",
which it drops), 'year' ({{CURRENTYEAR}}: it writes the year it runs in,
we drop it) or 'other'. The first three are decisions, each kept in
tests/unit/test_wikitext.c; 'other' is what is left to examine.

Printed numbers (the bench is not a test: it always exits 0):
  docs            article ids on each side and in common
  para_match      share of WikiExtractor's markup-free paragraphs (in common
                  documents) that occur identically in ours for the same id
  decided         the same share counting the paragraphs that differ only
                  by a decision ('grouped', 'longer', 'year') as matching
  leftover        lines with leftover markup, WikiExtractor vs ours
  space_punct     lines with a blank before punctuation, WikiExtractor vs ours
  samples         WikiExtractor paragraphs we do not have, with our nearest
                  line, and our leftover lines
  brief           one line: label, para_match, leftover and space_punct
  matchall        brief for each dump (only those under 98 % unless --all),
                  then the totals over all of them
  leftover        per output file (only those with leftover lines unless
                  --all): documents, paragraphs, leftover lines and the first
                  of them; then the totals
"""
import collections
import difflib
import os
import re
import sys
import time

MARKUP_RE = re.compile(
    r"\[\[|\]\]|\{\{|\}\}|\{\||\|\}|^\s*\||colspan=|rowspan=|style=|class="
    r"|<ref|</|/>|<[a-z]+>|&[a-z]+;|''|-\{|^\s*[*#]")

SPACE_PUNCT_RE = re.compile(r" [,.:;!?)\]\u00bb](?!\.)")

# A figure grouped in threes with commas ("3,769,495"): WikiExtractor 3.1.0
# renders {{formatnum:3769495}} so in every language; wiki_strip keeps the
# digits as written (see DECIDED below).
GROUPED_RE = re.compile(r"(?<!\d)(?<!\d,)\d{1,3}(?:,\d{3})+(?!\d|,\d)")

DOC_RE = re.compile(r'<doc id="([^"]*)"[^>]*?title="([^"]*)"[^>]*>')


def unescape_min(s):
    """Undo Python's html.escape(quote=False)."""
    return s.replace('&lt;', '<').replace('&gt;', '>').replace('&amp;', '&')


def read_docs(path):
    """Return {id: (title, [paragraphs])} in document order."""
    files = []
    if os.path.isdir(path):
        for root, _, names in os.walk(path):
            files += [os.path.join(root, n) for n in names]
        files.sort()
    else:
        files = [path]
    docs = collections.OrderedDict()
    for f in files:
        cur = None
        with open(f, encoding='utf-8', errors='replace') as fh:
            for line in fh:
                line = line.rstrip('\n')
                m = DOC_RE.match(line)
                if m:
                    cur = (m.group(1), unescape_min(m.group(2)), [], [False])
                    continue
                if line == '</doc>':
                    if cur:
                        docs[cur[0]] = (cur[1], cur[2])
                    cur = None
                    continue
                if cur is None:
                    continue
                p = unescape_min(line).strip()
                if not p:
                    continue
                if not cur[3][0]:
                    cur[3][0] = True
                    if p == cur[1].strip():
                        continue
                cur[2].append(p)
    return docs


def has_markup(p):
    return MARKUP_RE.search(p) is not None


def excerpt(p, q, width=110):
    """The part of p and q around their first difference."""
    if q is None:
        return p[:2 * width], '(no similar line)'
    k = 0
    while k < min(len(p), len(q)) and p[k] == q[k]:
        k += 1
    s = max(0, k - width // 2)
    pre = '...' if s else ''
    return pre + p[s:s + 2 * width], pre + q[s:s + 2 * width]


def is_subsequence(q, c):
    """Whether the characters of q occur in c in order."""
    it = iter(c)
    return all(ch in it for ch in q)


def classify(p, paras):
    """Why WikiExtractor's paragraph p is not among our paragraphs `paras`
    (of the same document): 'grouped' when p with its comma-grouped figures
    written plainly is one of ours; 'longer' when one of our paragraphs is p
    (figures so written) with text inserted and nothing removed or changed
    (text that WikiExtractor drops and we keep: an interlanguage link's
    label, a {{lang}} argument, the blanks of a spaced ellipsis; p must be
    kept in runs of 3 characters or more, up to a tenth of it, so that
    scattered letters do not count); 'year' when p without this year's number
    is one of ours ({{CURRENTYEAR}}, which WikiExtractor renders as the year it
    runs in and wiki_strip drops so that its output does not depend on the
    day); else 'other'."""
    q = GROUPED_RE.sub(lambda m: m.group().replace(',', ''), p)
    if q != p and q in paras:
        return 'grouped'
    year = '%d ' % time.localtime().tm_year
    if year in q and any(q.replace(year, '', k) in paras for k in (1, 2, 3)):
        return 'year'
    for c in paras:
        if len(c) <= len(q) or not is_subsequence(q, c):
            continue
        ops = difflib.SequenceMatcher(None, q, c, autojunk=False).get_opcodes()
        if any(t not in ('equal', 'insert') for t, _, _, _, _ in ops):
            continue
        scattered = sum(i2 - i1 for t, i1, i2, _, _ in ops if t == 'equal' and i2 - i1 < 3)
        if scattered <= max(2, len(q) // 10):
            return 'longer'
    return 'other'


def stats(we, ours):
    """(matched, total, missing, WE leftover, our leftover, WE space_punct,
    our space_punct, {class: count of missing}) for two read_docs() results;
    missing holds (id, paragraph, class) and the classes are classify()'s."""
    total = matched = 0
    missing = []
    classes = collections.Counter()
    for d in we:
        if d not in ours:
            continue
        have = collections.Counter(ours[d][1])
        for p in we[d][1]:
            if has_markup(p):
                continue
            total += 1
            if have[p] > 0:
                have[p] -= 1
                matched += 1
            else:
                k = classify(p, ours[d][1])
                classes[k] += 1
                missing.append((d, p, k))

    def count(docs, rx):
        return sum(1 for v in docs.values() for p in v[1] if rx.search(p))
    return (matched, total, missing, count(we, MARKUP_RE), count(ours, MARKUP_RE),
            count(we, SPACE_PUNCT_RE), count(ours, SPACE_PUNCT_RE), classes)


def explained(st):
    """Identical paragraphs plus those that differ only in a decided way
    (every class of classify but 'other')."""
    return st[0] + st[7]['grouped'] + st[7]['longer'] + st[7]['year']


def brief_line(label, st):
    m, t, _, wl, ol, ws, os_, _ = st
    return ('  %-28s para_match %6d / %6d = %6.2f%%  decided %6.2f%%  leftover %4d / %4d'
            '  space_punct %4d / %4d' % (label, m, t, 100.0 * m / max(t, 1),
                                         100.0 * explained(st) / max(t, 1), wl, ol, ws, os_))


def matchall(triples, show_all):
    tot = [0] * 7 + [collections.Counter()]
    for triple in triples:
        label, we_path, ours_path = triple.split('=', 2)
        st = stats(read_docs(we_path), read_docs(ours_path))
        for i in (0, 1, 3, 4, 5, 6, 7):
            tot[i] += st[i]
        if show_all or st[0] < 0.98 * st[1]:
            print(brief_line(label, st))
    print(brief_line('TOTAL (%d dumps)' % len(triples), tot))
    c = tot[7]
    print('  differing paragraphs: %d grouped figures, %d ours longer, %d current year, %d other'
          % (c['grouped'], c['longer'], c['year'], c['other']))


def compare(we_path, ours_path, samples):
    we = read_docs(we_path)
    ours = read_docs(ours_path)
    common = [d for d in we if d in ours]
    only_we = [d for d in we if d not in ours]
    only_ours = [d for d in ours if d not in we]
    print('docs: WikiExtractor %d, ours %d, common %d' % (len(we), len(ours), len(common)))
    if only_we:
        print('  only in WikiExtractor: %s' % ' '.join(
            '%s(%s)' % (d, we[d][0]) for d in only_we[:20]))
    if only_ours:
        print('  only in ours: %s' % ' '.join(
            '%s(%s)' % (d, ours[d][0]) for d in only_ours[:20]))
    st = stats(we, ours)
    matched, total, missing, _, _, we_sp, our_sp, classes = st
    we_left = [(d, p) for d in we for p in we[d][1] if has_markup(p)]
    our_left = [(d, p) for d in ours for p in ours[d][1] if has_markup(p)]
    we_paras = sum(len(v[1]) for v in we.values())
    our_paras = sum(len(v[1]) for v in ours.values())
    print('paragraphs: WikiExtractor %d, ours %d' % (we_paras, our_paras))
    print('para_match: %d / %d = %.2f%%' % (matched, total, 100.0 * matched / max(total, 1)))
    print('decided: %d / %d = %.2f%% (identical, or differing only by grouped figures: %d, '
          'ours longer: %d, the current year: %d; other differences: %d)'
          % (explained(st), total, 100.0 * explained(st) / max(total, 1), classes['grouped'],
             classes['longer'], classes['year'], classes['other']))
    print('leftover markup lines: WikiExtractor %d, ours %d' % (len(we_left), len(our_left)))
    print('blank before punctuation lines: WikiExtractor %d, ours %d' % (we_sp, our_sp))
    if samples:
        for k in ('other', 'longer', 'grouped', 'year'):
            some = [(d, p) for d, p, c in missing if c == k][:samples]
            if not some:
                continue
            print('\n--- sample of WikiExtractor paragraphs missing from ours, %s (with our nearest line)' % k)
            for d, p in some:
                near = difflib.get_close_matches(p, ours[d][1], n=1, cutoff=0.5)
                a, b = excerpt(p, near[0] if near else None)
                print('[%s] WE  : %s' % (d, a))
                print('[%s] ours: %s' % (d, b))
        print('\n--- sample of our leftover-markup lines')
        for d, p in our_left[:samples]:
            print('[%s] %s' % (d, p[:300]))


def leftover(pairs, show_all):
    tot_docs = tot_paras = tot_left = 0
    for pair in pairs:
        label, _, path = pair.partition('=')
        ours = read_docs(path)
        paras = [(d, p) for d in ours for p in ours[d][1]]
        left = [(d, p) for d, p in paras if has_markup(p)]
        tot_docs += len(ours)
        tot_paras += len(paras)
        tot_left += len(left)
        if left or show_all:
            print('  %-24s docs %5d  paragraphs %7d  leftover %5d' % (label, len(ours), len(paras), len(left)))
            for d, p in left[:3]:
                print('      [%s] %s' % (d, p[:160]))
    print('  %-24s docs %5d  paragraphs %7d  leftover %5d' % ('TOTAL (%d files)' % len(pairs),
                                                              tot_docs, tot_paras, tot_left))


def main(argv):
    samples = 20
    show_all = False
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == '--samples':
            samples = int(argv[i + 1])
            i += 2
        elif argv[i] == '--all':
            show_all = True
            i += 1
        else:
            args.append(argv[i])
            i += 1
    if len(args) == 3 and args[0] == 'compare':
        compare(args[1], args[2], samples)
    elif len(args) == 4 and args[0] == 'brief':
        print(brief_line(args[1], stats(read_docs(args[2]), read_docs(args[3]))))
    elif len(args) >= 2 and args[0] == 'matchall':
        matchall(args[1:], show_all)
    elif len(args) >= 2 and args[0] == 'leftover':
        leftover(args[1:], show_all)
    else:
        sys.stderr.write(__doc__)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
