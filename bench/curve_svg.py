#!/usr/bin/env python3
"""bench/curve_svg.py - the learning curves of bench/gpu_first.sh's call 2
(curve.tsv: step, train_bert's loss, PyTorch's, their MLM accuracies, the
learning rate) as one SVG line plot: each step faint, a moving average of
WINDOW steps bold, train_bert in blue and PyTorch in red. Standard library
only.

    python3 bench/curve_svg.py CURVE.TSV OUT.SVG [TITLE] [WINDOW]
"""
import sys


def moving(v, w):
    out, s = [], 0.0
    for i, x in enumerate(v):
        s += x
        if i >= w:
            s -= v[i - w]
        out.append(s / min(i + 1, w))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: curve_svg.py CURVE.TSV OUT.SVG [TITLE] [WINDOW]")
    title = sys.argv[3] if len(sys.argv) > 3 else "loss per step"
    w = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    steps, ours, torch = [], [], []
    with open(sys.argv[1]) as f:
        next(f)
        for line in f:
            c = line.rstrip("\n").split("\t")
            if len(c) < 3 or c[2] == "-":
                continue
            steps.append(int(c[0]))
            ours.append(float(c[1]))
            torch.append(float(c[2]))
    if not steps:
        sys.exit("curve_svg.py: %s: no step with both losses" % sys.argv[1])
    W, H, L, R, T, B = 900, 420, 60, 20, 40, 40
    lo = min(min(ours), min(torch))
    hi = max(max(ours), max(torch))
    lo, hi = lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo)
    s0, s1 = steps[0], steps[-1]

    def x(s):
        return L + (W - L - R) * (s - s0) / max(1, s1 - s0)

    def y(v):
        return T + (H - T - B) * (hi - v) / (hi - lo)

    def path(vals, color, width, opacity):
        pts = " ".join("%.1f,%.1f" % (x(s), y(v)) for s, v in zip(steps, vals))
        return ('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" '
                'stroke-opacity="%s"/>' % (pts, color, width, opacity))

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="10" y="20" font-size="14">%s</text>' % title]
    for i in range(6):
        v = lo + (hi - lo) * i / 5
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, y(v), y(v)))
        o.append('<text x="5" y="%.1f">%.2f</text>' % (y(v) + 4, v))
    for i in range(6):
        s = s0 + (s1 - s0) * i / 5
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(s), H - B + 18, s))
    o.append('<text x="%d" y="%d" text-anchor="middle">step</text>' % ((W + L) / 2, H - 5))
    o.append(path(ours, "#1f77b4", 1, 0.3))
    o.append(path(torch, "#d62728", 1, 0.3))
    o.append(path(moving(ours, w), "#1f77b4", 2.5, 1))
    o.append(path(moving(torch, w), "#d62728", 2.5, 1))
    o.append('<text x="%d" y="%d" fill="#1f77b4">train_bert (%d-step mean bold)</text>' % (W - 330, T + 15, w))
    o.append('<text x="%d" y="%d" fill="#d62728">PyTorch BertForPreTraining</text>' % (W - 330, T + 32))
    o.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(o) + "\n")


if __name__ == "__main__":
    main()
