#!/usr/bin/env python3
"""bench/scale_tools.py - the tables and the chart of bench/scale.sh.

    python scale_tools.py fit TSV [FROM]
        Markdown tables from scale.sh's rows (copies xml_mb workflow stage
        wall_s cpu_s rss_mb out_mb load [user_s sys_s]): per workflow and
        stage, the fitted exponent k of time ~ size^k (least squares on the
        logs, over the sizes of FROM copies and up, default 64; CPU, wall,
        and user and system apart where every row has them), the
        peak RSS at the smallest and largest of those sizes and their ratio,
        the MB written per MB of XML at the largest size, and the figures
        extrapolated to enwiki (ENWIKI_MB of XML, default 95,000) from the
        fit: CPU seconds and, for memory, the RSS at the largest size times
        the measured growth carried on (flat stays flat). A workflow measured
        at fewer than two sizes from FROM up (the original chain) is fitted
        over all its sizes, and says so. A control row (a stage named
        *-nul: a program with its output to /dev/null) is listed apart and
        left out of the totals, of vms and of the chart.

    python scale_tools.py vms TSV [WORKFLOW]
        The expected wall time of a whole enwiki (ENWIKI_MB of XML; DUMP_NAME
        names another dump of that size) through WORKFLOW
        (default hu: make hu WIKI_LANG=en) on 1, 4 and 16 VMs of VM_CORES
        cores (default 16), from the largest size measured: each stage's CPU
        seconds per MB of XML there, carried on linearly (on the fit where
        its exponent is above 1); the text stages and the HDF5 stages spread
        over every core of every VM, the vocabulary and the shard index are
        one job each, side by side, on one VM, at the parallelism they showed
        (CPU / wall). Then each stage's peak RSS for enwiki (as fit; for the
        stages in SCALE_CAPPED, default vocab, whose sample is full at the
        largest size, as measured there, and their CPU too plus the reading of
        the rest, SCALE_CAPPED_READ CPU seconds a GB of XML) and the disk: the bytes each stage leaves per MB of XML, in all, and at most
        two stages' output at a time (PRUNE=1).

    python scale_tools.py svg TSV TITLE > OUT.svg
        Two log-log panels: CPU seconds and peak RSS against MB of XML, one
        line per workflow and stage (hu solid, en dashed, the original
        dotted), each labelled in the legend with its fitted CPU exponent.
"""
import math
import os
import sys
from collections import OrderedDict

ENWIKI_MB = float(os.environ.get("ENWIKI_MB", "95000"))
DUMP_NAME = os.environ.get("DUMP_NAME", "enwiki")  # vms: the dump of ENWIKI_MB
NAMES = {"hu": "make hu WIKI_LANG=en", "en": "make en", "original": "original chain",
         "faithful": "make hu HU_FAITHFUL=1"}


def is_control(stage):
    """a control row: a stage's program with its output to /dev/null"""
    return stage.endswith("-nul")


def load(tsv, controls=True):
    rows = OrderedDict()
    with open(tsv) as f:
        for line in f:
            t = line.split()
            if not t or t[0] == "copies" or t[4] == "-":
                continue
            key = (t[2], t[3])
            if not controls and is_control(t[3]):
                continue
            rows.setdefault(key, []).append({
                "copies": int(t[0]), "xml": float(t[1]), "wall": float(t[4]),
                "cpu": float(t[5]), "rss": float(t[6]),
                "out": None if t[7] == "-" else float(t[7]),
                "user": float(t[9]) if len(t) > 10 else None,
                "sys": float(t[10]) if len(t) > 10 else None})
    for v in rows.values():
        v.sort(key=lambda r: r["copies"])
    return rows


def slope(pts):
    """Least-squares slope and intercept of log y on log x."""
    pts = [(math.log(x), math.log(max(y, 1e-3))) for x, y in pts]
    n = len(pts)
    if n < 2:
        return float("nan"), float("nan")
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return float("nan"), float("nan")
    k = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
    return k, my - k * mx


def fmt_time(s):
    if s != s:
        return "-"
    if s < 120:
        return "%.0f s" % s
    if s < 7200:
        return "%.0f min" % (s / 60)
    return "%.1f h" % (s / 3600)


def fit(tsv, start):
    rows = load(tsv)
    workflows = []
    for wf, _ in rows:
        if wf not in workflows:
            workflows.append(wf)
    out = []
    for wf in workflows:
        stages = [(s, rows[(w, s)]) for (w, s) in rows if w == wf]
        sizes = sorted({r["copies"] for _, rs in stages for r in rs})
        use = [c for c in sizes if c >= start]
        note = ""
        if len(use) < 2:
            use = sizes
            note = " (fewer than two sizes from x%d up: fitted over x%s)" % (start, ", x".join(map(str, sizes)))
        out.append("### %s, x%d to x%d%s\n" % (NAMES.get(wf, wf), use[0], use[-1], note))
        out.append("| stage | CPU s at x%d | exponent (CPU) | exponent (wall) | exponent (user / system) | peak RSS MB x%d → x%d | RSS ratio | "
                   "MB written per MB XML | enwiki (%.0f GB XML): CPU | enwiki: peak RSS |" % (use[-1], use[0], use[-1], ENWIKI_MB / 1000))
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        tot_cpu = 0.0
        tot_en = 0.0
        for s, rs in stages:
            sel = [r for r in rs if r["copies"] in use]
            if not sel:
                continue
            kc, bc = slope([(r["xml"], r["cpu"]) for r in sel])
            kw, _ = slope([(r["xml"], r["wall"]) for r in sel])
            us = "-"
            if all(r["user"] is not None and r["user"] > 0 and r["sys"] > 0 for r in sel):
                ku, _ = slope([(r["xml"], r["user"]) for r in sel])
                ks, _ = slope([(r["xml"], r["sys"]) for r in sel])
                us = "%.2f / %.2f" % (ku, ks)
            first, last = sel[0], sel[-1]
            control = is_control(s)
            ratio = last["rss"] / first["rss"] if first["rss"] else float("nan")
            # enwiki CPU: the fit carried on; RSS: the growth per x of size carried on
            en_cpu = math.exp(bc) * ENWIKI_MB ** kc if kc == kc else float("nan")
            kr, _ = slope([(r["xml"], r["rss"]) for r in sel])
            en_rss = last["rss"] * (ENWIKI_MB / last["xml"]) ** max(kr, 0) if kr == kr else float("nan")
            per = "%.2f" % (last["out"] / last["xml"]) if last["out"] is not None else "-"
            if not control:
                tot_cpu += last["cpu"]
                tot_en += en_cpu if en_cpu == en_cpu else 0
            out.append("| %s | %.2f | %.2f | %.2f | %s | %.1f → %.1f | %.2f× | %s | %s | %s |" % (
                s + (" (control: output to /dev/null)" if control else ""), last["cpu"], kc, kw, us,
                first["rss"], last["rss"], ratio, per, fmt_time(en_cpu),
                "%.0f MB" % en_rss if en_rss < 10000 else "%.1f GB" % (en_rss / 1000)))
        out.append("| **all** | %.2f | | | | | | | %s | |" % (tot_cpu, fmt_time(tot_en)))
        out.append("")
    return "\n".join(out) + "\n"


VM_CORES = int(os.environ.get("VM_CORES", "16"))
ONE_JOB = ("vocab", "shards")  # one job each, side by side, between the text and the HDF5 stages
# stages whose input is capped and full at the largest size measured (the
# vocabulary's sample of VOCAB_SAMPLE sentences): their memory stays as there
CAPPED = tuple(os.environ.get("SCALE_CAPPED", "vocab").split())
# ... whose CPU beyond it is reading the rest of the text to draw the sample:
# CPU seconds a GB of XML (vocab_train drawing 20,000 of the 3.9 M lines of
# x256's filtered text, 513 MB from 1.56 GB of XML: 0.89 s)
CAPPED_READ = float(os.environ.get("SCALE_CAPPED_READ", "0.57"))


def enwiki_cpu(rs, start, capped=False):
    """CPU seconds for ENWIKI_MB: linear from the largest size, or the fit where it grows faster;
    a capped stage: as at the largest size plus CAPPED_READ a GB of the XML beyond it"""
    sel = [r for r in rs if r["copies"] >= start]
    if len(sel) < 2:
        sel = rs
    k, b = slope([(r["xml"], r["cpu"]) for r in sel])
    last = sel[-1]
    if capped:
        return last["cpu"] + CAPPED_READ * max(ENWIKI_MB - last["xml"], 0) / 1000, k
    lin = last["cpu"] / last["xml"] * ENWIKI_MB
    return max(lin, math.exp(b) * ENWIKI_MB ** k) if k == k and k > 1 else lin, k


def vms(tsv, wf, start=64):
    rows = load(tsv, controls=False)
    stages = [(s, rs) for (w, s), rs in rows.items() if w == wf]
    if not stages:
        sys.exit("scale_tools.py: no rows of workflow %s in %s" % (wf, tsv))
    par, jobs, out = 0.0, {}, []
    top = max(r["copies"] for _, rs in stages for r in rs)
    out.append("### %s: %s (%.0f GB of XML) from x%d, %d-core VMs\n" % (NAMES.get(wf, wf), DUMP_NAME, ENWIKI_MB / 1000, top, VM_CORES))
    out.append("| stage | CPU s per GB XML | exponent (CPU) | %s: CPU | runs as | %s: peak RSS | MB written per MB XML |" % (DUMP_NAME, DUMP_NAME))
    out.append("|---|---|---|---|---|---|---|")
    disk = []  # (stage, MB written per MB of XML)
    for s, rs in stages:
        cpu, k = enwiki_cpu(rs, start, s in CAPPED)
        last = rs[-1]
        sel = [r for r in rs if r["copies"] >= start] or rs
        kr, _ = slope([(r["xml"], r["rss"]) for r in sel])
        rss = last["rss"] * (ENWIKI_MB / last["xml"]) ** max(kr, 0) if kr == kr else last["rss"]
        if s in CAPPED:  # its sample is full at the largest size: its memory stays there
            rss = last["rss"]
        if s in ONE_JOB:
            p = max(1.0, min(float(VM_CORES), last["cpu"] / last["wall"])) if last["wall"] > 0 else 1.0
            jobs[s] = cpu / p
            how = "one job (%.1f cores)" % p
        else:
            par += cpu
            how = "all cores"
        per = last["out"] / last["xml"] if last["out"] is not None else None
        disk.append((s, per or 0.0))
        out.append("| %s | %.0f | %.2f | %s | %s | %s | %s |" % (
            s, last["cpu"] / last["xml"] * 1000, k, fmt_time(cpu), how,
            "%.0f MB" % rss if rss < 10000 else "%.1f GB" % (rss / 1000), "%.2f" % per if per is not None else "-"))
    serial = max(jobs.values()) if jobs else 0.0
    out.append("")
    out.append("| VMs | wall (expected) | of which one-job stages |")
    out.append("|---|---|---|")
    for n in (1, 4, 16):
        out.append("| %d | %s | %s |" % (n, fmt_time(par / (VM_CORES * n) + serial), fmt_time(serial)))
    total = sum(d for _, d in disk) * ENWIKI_MB / 1000
    # PRUNE=1: a text stage's output goes once the stages that read it are
    # done, so two of them are on disk at a time; the shards stay until the
    # last HDF5 stage is done, the HDF5 files stay
    text = [d for s, d in disk if not s.startswith("hdf5") and s != "vocab"]
    h5 = sum(d for s, d in disk if s.startswith("hdf5"))
    peak = max([a + b for a, b in zip(text, text[1:])] + [(text[-1] if text else 0.0) + h5]) * ENWIKI_MB / 1000
    out.append("")
    out.append("Disk for " + DUMP_NAME + " beside the dump: %.0f GB if every stage's output is kept, at most %.0f GB at a time "
               "with PRUNE=1 (two text stages' output, then the shards and the HDF5 files; %.0f GB of HDF5 stay)."
               % (total, peak, h5 * ENWIKI_MB / 1000))
    return "\n".join(out) + "\n"


COLORS = {"text": "#1f77b4", "sentences": "#ff7f0e", "filter": "#2ca02c", "vocab": "#d62728",
          "shards": "#9467bd", "hdf5-128": "#8c564b", "hdf5-512": "#e377c2"}
DASH = {"hu": "", "en": "6,3", "original": "2,3", "faithful": "1,2"}


def svg(tsv, title):
    rows = load(tsv, controls=False)
    allx = [r["xml"] for rs in rows.values() for r in rs]
    if not allx:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    pw, ph, ml, mt, gap = 360, 300, 60, 50, 80
    legend_w = 300
    width = ml + 2 * pw + gap + legend_w
    height = max(mt + ph + 60, mt + 20 + 14 * len(rows))  # the legend: a line per workflow and stage
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
         'font-size="11">' % (width, height),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="10" y="20" font-size="14">%s</text>' % title]

    def decades(lo, hi):
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        if a == b:
            b += 1
        return a, b

    xa, xb = decades(min(allx), max(allx))
    panels = [("cpu", "CPU seconds", 0), ("rss", "peak RSS, MB", 1)]
    for key, label, i in panels:
        vals = [r[key] for rs in rows.values() for r in rs if r[key] > 0]
        ya, yb = decades(min(vals), max(vals))
        x0 = ml + i * (pw + gap)
        fx = lambda v: x0 + (math.log10(v) - xa) / (xb - xa) * pw
        fy = lambda v: mt + ph - (math.log10(max(v, 10 ** ya)) - ya) / (yb - ya) * ph
        o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (x0, mt, pw, ph))
        for e in range(xa, xb + 1):
            x = fx(10 ** e)
            o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>' % (x, mt, x, mt + ph))
            o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, mt + ph + 15, "%g" % 10 ** e))
        for e in range(ya, yb + 1):
            y = fy(10 ** e)
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (x0, y, x0 + pw, y))
            o.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (x0 - 4, y + 4, "%g" % 10 ** e))
        o.append('<text x="%d" y="%d" text-anchor="middle">MB of XML</text>' % (x0 + pw // 2, mt + ph + 32))
        o.append('<text x="%d" y="%d" text-anchor="middle" font-size="13">%s</text>' % (x0 + pw // 2, mt - 8, label))
        for (wf, st), rs in rows.items():
            pts = [(fx(r["xml"]), fy(r[key])) for r in rs if r[key] > 0]
            col = COLORS.get(st, "#333")
            dash = DASH.get(wf, "")
            o.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.6"%s/>' % (
                " ".join("%.1f,%.1f" % p for p in pts), col, ' stroke-dasharray="%s"' % dash if dash else ""))
            for p in pts:
                o.append('<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>' % (p[0], p[1], col))
    lx, ly = ml + 2 * pw + gap + 20, mt
    o.append('<text x="%d" y="%d">CPU exponent from x64 up (fit)</text>' % (lx, ly))
    ly += 16
    for (wf, st), rs in rows.items():
        sel = [r for r in rs if r["copies"] >= 64] or rs
        if len(sel) < 2:
            sel = rs
        k, _ = slope([(r["xml"], r["cpu"]) for r in sel])
        col = COLORS.get(st, "#333")
        dash = DASH.get(wf, "")
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>' % (
            lx, ly - 4, lx + 24, ly - 4, col, ' stroke-dasharray="%s"' % dash if dash else ""))
        o.append('<text x="%d" y="%d">%s %s: %.2f</text>' % (lx + 30, ly, wf, st, k))
        ly += 14
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main(argv):
    if len(argv) >= 2 and argv[0] == "fit":
        sys.stdout.write(fit(argv[1], int(argv[2]) if len(argv) > 2 else 64))
    elif len(argv) >= 2 and argv[0] == "vms":
        sys.stdout.write(vms(argv[1], argv[2] if len(argv) > 2 else "hu"))
    elif len(argv) == 3 and argv[0] == "svg":
        sys.stdout.write(svg(argv[1], argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
