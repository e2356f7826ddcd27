#!/usr/bin/env python3
"""bench/e2e_tools.py - the small Python parts of bench/e2e.sh.

    python e2e_tools.py waitall SCRIPT ARGS...
        Runs SCRIPT (HILBERT's create_hdf5_files.py) as `python3 SCRIPT
        ARGS...` would, then waits for every process it started. The script
        itself waits only for every n_processes-th shard and the last one, so
        earlier shards may still be running when it returns; waiting for all
        of them here makes the stage's wall time, and the CPU time that
        /usr/bin/time reports for this process and its children, cover the
        whole stage. Exits 1 when any of them failed.

    python e2e_tools.py h5count FILE.hdf5...
        Prints "FILES ROWS SEQ": the number of files, the rows of input_ids
        summed over them (instances) and the sequence length (the second
        dimension; "mixed" when the files differ).

    python e2e_tools.py svg TSV TITLE > OUT.svg
        A horizontal bar chart of the wall seconds per stage in TSV (rows
        "stage side wall_s cpu_s rss_mb", side original|ours, as e2e.sh
        writes them; the "total" row is left out): two bars per stage on one
        linear axis, each labelled with its seconds (ours with the ratio).
"""
import runpy
import subprocess
import sys


def waitall(argv):
    procs = []
    base = subprocess.Popen

    class Recorded(base):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            procs.append(self)

    subprocess.Popen = Recorded
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    bad = [p.args for p in procs if p.wait() != 0]
    for a in bad:
        print("e2e_tools: failed: %s" % a, file=sys.stderr)
    return 1 if bad else 0


def h5count(paths):
    import h5py
    rows, seqs = 0, set()
    for p in paths:
        with h5py.File(p, "r") as f:
            rows += f["input_ids"].shape[0]
            seqs.add(f["input_ids"].shape[1])
    seq = str(seqs.pop()) if len(seqs) == 1 else "mixed"
    print(len(paths), rows, seq)
    return 0


def svg(tsv, title):
    rows = []
    with open(tsv) as f:
        for line in f:
            t = line.split()
            if len(t) < 3 or t[0] in ("stage", "total") or t[2] == "-":
                continue
            rows.append((t[0], t[1], float(t[2])))
    stages = []
    for s, _, _ in rows:
        if s not in stages:
            stages.append(s)
    val = {(s, side): w for s, side, w in rows}
    top = max([w for _, _, w in rows] + [1e-9])
    left, width, bar, gap = 110, 560, 14, 12
    height = 50 + len(stages) * (2 * bar + gap) + 30
    color = {"original": "#d62728", "ours": "#1f77b4"}
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (left + width + 230, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="14">%s</text>' % title]
    y = 40
    for s in stages:
        out.append('<text x="10" y="%d">%s</text>' % (y + bar + 4, s))
        for i, side in enumerate(("original", "ours")):
            w = val.get((s, side))
            yy = y + i * bar
            if w is None:
                out.append('<text x="%d" y="%d" fill="#888">%s: not run</text>' % (left + 4, yy + bar - 3, side))
                continue
            px = max(1.0, w / top * width)
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (left, yy, px, bar - 2, color[side]))
            o = val.get((s, "original"))
            label = "%.2f s" % w
            if side == "ours" and o is not None and w > 0:
                label += " (original / ours = %.1fx)" % (o / w)
            out.append('<text x="%.1f" y="%d">%s</text>' % (left + px + 4, yy + bar - 3, label))
        y += 2 * bar + gap
    for i, side in enumerate(("original", "ours")):
        out.append('<rect x="%d" y="%d" width="12" height="10" fill="%s"/>' % (left + i * 110, y + 4, color[side]))
        out.append('<text x="%d" y="%d">%s</text>' % (left + i * 110 + 16, y + 13, side))
    out.append('<text x="%d" y="%d" fill="#555">wall seconds per stage</text>' % (left + 230, y + 13))
    out.append("</svg>")
    print("\n".join(out))
    return 0


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "waitall":
        return waitall(args)
    if cmd == "h5count":
        return h5count(args)
    if cmd == "svg":
        return svg(args[0], args[1])
    sys.exit("e2e_tools.py: unknown command '%s'" % cmd)


if __name__ == "__main__":
    sys.exit(main())
