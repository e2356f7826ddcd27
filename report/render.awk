# report/render.awk - the HTML page of report/run_report.sh: reads the
# tagged lines it gathers (tab-separated, the tag first) and writes one
# self-contained page, the plots as inline SVG drawn here (no script, no
# external file, so the page opens anywhere and can be mailed).
#
#   awk -F '\t' -f report/render.awk FACTS >page.html
#
# The tags:
#   run   DIR                          the directory reported on
#   log   FILE                         a training log drawn (two: phase 1's, then phase 2's)
#   otherlog FILE                      another one found (named only)
#   json  LINE                         one line of log.jsonl, as written
#   wf    NAME DIR                     a workflow directory begins
#   stage NAME LABEL DOCS LINES FILES  a stage's documents and non-blank lines
#   note  NAME TEXT                    something the page should say
#   warn  NAME TEXT                    a warning about the data (a shard of one document)
#   filterstat NAME LINE...            text_filter -v's stderr, one line
#   phase NAME DIR VOCAB               an HDF5 directory begins
#   h5    NAME DIR LINE                hdf5_check -v's output, one line
# Every SVG line plot draws one <polyline> per series, one point per log
# line with a finite value (tests/cli/report.sh counts them).

function esc(s) {
    gsub(/&/, "\\&amp;", s)
    gsub(/</, "\\&lt;", s)
    gsub(/>/, "\\&gt;", s)
    gsub(/"/, "\\&quot;", s)
    return s
}

# n with thousands separators (n a whole number)
function commas(n, s, neg) {
    s = sprintf("%d", n)
    neg = substr(s, 1, 1) == "-"
    if (neg)
        s = substr(s, 2)
    while (s ~ /[0-9][0-9][0-9][0-9]/)
        sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
    return (neg ? "-" : "") s
}

function plural(n, word) { return commas(n) " " word (n == 1 ? "" : "s") }

function fmt(v) {
    v = sprintf("%.4g", v)
    return v == "-0" ? "0" : v
}

function isnum(s) { return s ~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }

# the largest whole number at most q, taking q within 1e-9 of a whole
# number as that number (ticks: 1 / 0.2 is not quite 5 in floating point)
function floorq(q, r) {
    r = int(q)
    if (r > q) r--
    if (q - r > 1 - 1e-9) r++
    return r
}

# a round tick spacing giving about n ticks over range
function nice(range, n, raw, p, f) {
    if (range <= 0)
        return 1
    raw = range / n
    p = 10 ^ int(log(raw) / log(10) - (raw < 1 ? 1 : 0))
    f = raw / p
    while (f >= 10) { p *= 10; f /= 10 }
    f = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10
    return f * p
}

# the value of "key": in a flat JSON object line, "" when absent
function jget(line, key, s) {
    if (!match(line, "\"" key "\": *[^,}]*"))
        return ""
    s = substr(line, RSTART, RLENGTH)
    sub(/^"[^"]*": */, "", s)
    gsub(/[" ]/, "", s)
    return s
}

# ---- SVG pieces ----

function svg_open(w, h, title, cls) {
    printf "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">", cls, w, h, w, h
    printf "<title>%s</title>\n", esc(title)
    printf "<text x=\"8\" y=\"16\" class=\"t\">%s</text>\n", esc(title)
}

# a line plot of the log's columns named in keys (space-separated) against
# the step, the y axis labelled ylabel; ymin0: the y axis starts at 0 at
# most; yfix: [0, 1]. The series "loss" (the total) is drawn first, wide
# and pale, so that it stays visible where it lies on the MLM loss (an NSP
# loss near 0).
function line_plot(title, keys, ylabel, ymin0, yfix, k, nk, i, j, v, xmin, xmax, ymin, ymax, W, H, ml, mr, mt, mb, pw, ph, t, d, x, y, pts, np) {
    W = 600; H = 250; ml = 62; mr = 16; mt = 30; mb = 34
    pw = W - ml - mr; ph = H - mt - mb
    nk = split(keys, k, " ")
    xmin = step[1]; xmax = step[nrow]
    ymin = ""; ymax = ""
    for (j = 1; j <= nk; j++)
        for (i = 1; i <= nrow; i++) {
            v = val[k[j], i]
            if (!isnum(v))
                continue
            v += 0
            if (ymin == "" || v < ymin) ymin = v
            if (ymax == "" || v > ymax) ymax = v
        }
    if (ymin == "") { ymin = 0; ymax = 1 }
    if (ymin0 && ymin > 0) ymin = 0
    if (yfix) { ymin = 0; ymax = ymax > 1 ? ymax : 1 }
    if (ymax == ymin) { ymax = ymin + (ymin == 0 ? 1 : (ymin < 0 ? -ymin : ymin)) }
    d = nice(ymax - ymin, 5)
    ymin = d * floorq(ymin / d)
    ymax = d * -floorq(-ymax / d)
    if (ymax <= ymin) ymax = ymin + d
    svg_open(W, H, title, "plot curve")
    for (t = ymin; t <= ymax + d / 1000; t += d) {
        y = mt + ph - (t - ymin) / (ymax - ymin) * ph
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"g\"/>", ml, y, ml + pw, y
        printf "<text x=\"%d\" y=\"%.1f\" class=\"yl\">%s</text>\n", ml - 6, y + 4, fmt(t)
    }
    if (xmax > xmin) {
        d = nice(xmax - xmin, 6)
        for (t = -d * floorq(-xmin / d); t <= xmax; t += d) {
            x = ml + (t - xmin) / (xmax - xmin) * pw
            printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"g\"/>", x, mt, x, mt + ph
            printf "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%s</text>\n", x, mt + ph + 16, fmt(t)
        }
    }
    printf "<text x=\"%d\" y=\"%d\" class=\"xl\">step</text>\n", ml + pw / 2, H - 4
    printf "<text x=\"13\" y=\"%d\" class=\"ya\" transform=\"rotate(-90 13 %d)\">%s</text>\n", mt + ph / 2, mt + ph / 2, esc(ylabel)
    printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", ml, mt, pw, ph
    for (j = 1; j <= nk; j++) {
        pts = ""; np = 0
        for (i = 1; i <= nrow; i++) {
            v = val[k[j], i]
            if (!isnum(v))
                continue
            x = xmax > xmin ? ml + (step[i] - xmin) / (xmax - xmin) * pw : ml + pw / 2
            y = mt + ph - (v - ymin) / (ymax - ymin) * ph
            pts = pts (np++ ? " " : "") sprintf("%.1f,%.1f", x, y)
        }
        printf "<polyline class=\"s%d%s\" data-series=\"%s\" points=\"%s\"/>\n", j, k[j] == "loss" ? " total" : "", k[j], pts
        if (np == 1) # a polyline of one point draws nothing
            printf "<circle cx=\"%s\" cy=\"%s\" r=\"3\" class=\"f%d\"/>\n", substr(pts, 1, index(pts, ",") - 1), substr(pts, index(pts, ",") + 1), j
        printf "<rect x=\"%d\" y=\"8\" width=\"10\" height=\"10\" class=\"f%d\"/>", W - mr - 110 * (nk - j + 1), j
        printf "<text x=\"%d\" y=\"17\" class=\"lg\">%s</text>\n", W - mr - 110 * (nk - j + 1) + 14, k[j] == "loss" ? "loss (total)" : k[j]
    }
    print "</svg>"
}

# horizontal bars: bl[1..n] labels, bv[] values, bt[] the text beside the
# bar; logscale: widths by log10(1 + value)
function hbars(title, n, logscale, cls, W, H, ml, bw, i, max, w, y) {
    W = 700; ml = 150; bw = 270
    H = 30 + 26 * n + 8
    max = 0
    for (i = 1; i <= n; i++)
        if (bv[i] > max) max = bv[i]
    svg_open(W, H, title, "plot " cls)
    for (i = 1; i <= n; i++) {
        y = 30 + 26 * (i - 1)
        w = max <= 0 ? 0 : logscale ? log(1 + bv[i]) / log(1 + max) * bw : bv[i] / max * bw
        printf "<text x=\"%d\" y=\"%d\" class=\"yl\">%s</text>", ml - 8, y + 15, esc(bl[i])
        printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"20\" class=\"f%d\"/>", ml, y, (w > 0.5 || bv[i] == 0 ? w : 0.5), (i - 1) % 5 + 1
        printf "<text x=\"%.1f\" y=\"%d\" class=\"lg\">%s</text>\n", ml + w + 6, y + 15, esc(bt[i])
    }
    print "</svg>"
}

# vertical bars of a histogram: hl[1..n] bin labels, hv[] counts
function vbars(title, n, W, H, ml, mt, ph, bw, i, max, h, x) {
    W = 600; H = 230; ml = 62; mt = 30; ph = 160
    bw = int((W - ml - 16) / (n > 0 ? n : 1))
    max = 0
    for (i = 1; i <= n; i++)
        if (hv[i] > max) max = hv[i]
    svg_open(W, H, title, "plot hist")
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"ax\"/>\n", ml, mt + ph, ml + bw * n, mt + ph
    for (i = 1; i <= n; i++) {
        h = max > 0 ? hv[i] / max * ph : 0
        x = ml + bw * (i - 1)
        printf "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" class=\"f1\"/>", x + 2, mt + ph - h, bw - 4, h
        printf "<text x=\"%d\" y=\"%.1f\" class=\"xl\">%s</text>", x + bw / 2, mt + ph - h - 4, commas(hv[i])
        printf "<text x=\"%d\" y=\"%d\" class=\"xl\">%s</text>\n", x + bw / 2, mt + ph + 16, esc(hl[i])
    }
    printf "<text x=\"%d\" y=\"%d\" class=\"xl\">tokens per instance (bins up to the value shown)</text>\n", ml + bw * n / 2, H - 4
    print "</svg>"
}

# one bar split into shares: sl[1..n] labels, sv[] percentages
function stacked(title, n, W, ml, bw, i, x, w) {
    W = 600; ml = 20; bw = 560
    svg_open(W, 80, title, "plot shares")
    x = ml
    for (i = 1; i <= n; i++) {
        w = sv[i] / 100 * bw
        printf "<rect x=\"%.1f\" y=\"26\" width=\"%.1f\" height=\"24\" class=\"f%d\"/>", x, w, i
        printf "<rect x=\"%d\" y=\"58\" width=\"10\" height=\"10\" class=\"f%d\"/>", ml + 170 * (i - 1), i
        printf "<text x=\"%d\" y=\"67\" class=\"lg\">%s %.1f %%</text>\n", ml + 170 * (i - 1) + 14, esc(sl[i]), sv[i]
        x += w
    }
    print "</svg>"
}

# ---- gathering ----

$1 == "run" { run = $2 }
$1 == "log" { logfile = logfile (logfile == "" ? "" : " and ") $2 }
$1 == "otherlog" { others = others (others == "" ? "" : ", ") $2 }
$1 == "json" {
    line = substr($0, 6)
    if (line ~ /^\{"run": /) {
        # a trainer's start (its first line in log.jsonl): phase 2's steps
        # count on from phase 1's last; a resumed run logs again the steps
        # after its checkpoint, so the rows after that go (each step's last
        # line stays)
        offset = jget(line, "phase") == 2 ? jget(line, "phase1_end_step") + 0 : 0
        while (nrow > 0 && step[nrow] > offset + jget(line, "start_step"))
            nrow--
        next
    }
    s = jget(line, "step")
    if (!isnum(s))
        next
    step[++nrow] = s + offset
    for (c = 1; c <= ncols; c++)
        val[cols[c], nrow] = jget(line, cols[c])
    next
}
$1 == "wf" { wfs[++nwf] = $2; wfdir[$2] = $3; next }
$1 == "stage" {
    n = ++nstage[$2]
    stlabel[$2, n] = $3; stdocs[$2, n] = $4; stlines[$2, n] = $5; stfiles[$2, n] = $6
    next
}
$1 == "note" { notes[$2, ++nnote[$2]] = $3; next }
$1 == "warn" { notes[$2, ++nnote[$2]] = $3; notecls[$2, nnote[$2]] = "warn"; next }
$1 == "filterstat" {
    if ($4 ~ /^fail-/ && match($5, /^[0-9]+/)) {
        ck = substr($4, 6)
        if (!(($2, ck) in fcount))
            forder[$2, ++nfc[$2]] = ck
        fcount[$2, ck] += substr($5, 1, RLENGTH)
    } else if ($3 ~ /^text_filter: [0-9]+ documents in/) {
        split($3, a, " ")
        fin[$2] = a[2]
    }
    next
}
$1 == "phase" { n = ++nphase[$2]; phdir[$2, n] = $3; phvocab[$2, n] = $4; next }
$1 == "h5" {
    n = nphase[$2]; key = $2 SUBSEP n; l = $4
    if (l ~ /^  length: /) {
        nb = split(substr(l, 11), a, " ")
        for (b = 1; b + 1 <= nb; b += 2) {
            lab = a[b]; sub(/:$/, "", lab)
            bi = (b + 1) / 2
            hlab[key, bi] = lab
            hcnt[key, bi] += a[b + 1]
            if (bi > hbins[key]) hbins[key] = bi
        }
    } else if (l ~ /: [0-9]+ instances, L [0-9]+, P [0-9]+, [0-9]+ tokens/ && l !~ /^total: /) {
        f = ++nfile[key]
        file = l; sub(/: [0-9]+ instances, .*/, "", file)
        rest = substr(l, length(file) + 3)
        fname[key, f] = file
        fl[key, f, "inst"] = num(rest, "^[0-9]+ instances")
        fl[key, f, "L"] = num(rest, "L [0-9]+")
        fl[key, f, "P"] = num(rest, "P [0-9]+")
        fl[key, f, "tok"] = num(rest, "[0-9]+ tokens")
        fl[key, f, "masked"] = num(rest, "[0-9.]+ % masked")
        fl[key, f, "mask"] = num(rest, "\\[MASK\\] [0-9.]+")
        fl[key, f, "kept"] = num(rest, "kept [0-9.]+")
        fl[key, f, "other"] = num(rest, "other [0-9.]+")
        fl[key, f, "next"] = num(rest, "random next [0-9.]+")
        fl[key, f, "unk"] = num(rest, "\\[UNK\\] [0-9.]+")
    } else if (l !~ /^total: /) {
        h5msg[key, ++nh5msg[key]] = l
    }
    next
}

# the first number inside the match of re in s
function num(s, re) {
    if (!match(s, re))
        return ""
    s = substr(s, RSTART, RLENGTH)
    match(s, /[0-9.]+/)
    return substr(s, RSTART, RLENGTH) + 0
}

BEGIN {
    ncols = split("loss mlm_loss nsp_loss mlm_acc nsp_acc lr grad_norm seq_per_s", cols, " ")
}

# ---- the page ----

function training(i, sum, n) {
    print "<section id=\"training\"><h2>Training</h2>"
    if (nrow == 0) {
        printf "<p class=\"missing\">No training log: no log.jsonl under %s (a trainer's --output_dir holds one).</p>\n", esc(run)
        print "</section>"
        return
    }
    sum = 0; n = 0
    for (i = 1; i <= nrow; i++)
        if (isnum(val["seq_per_s", i])) { sum += val["seq_per_s", i]; n++ }
    printf "<p>%s: %d logged steps, step %s to %s.</p>\n", esc(logfile), nrow, step[1], step[nrow]
    print "<table><tr><th></th><th>loss</th><th>MLM loss</th><th>NSP loss</th><th>MLM accuracy</th><th>NSP accuracy</th><th>learning rate</th><th>seq/s</th></tr>"
    for (i = 1; i <= nrow; i += nrow - 1) {
        printf "<tr><td>step %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", step[i],
            esc(val["loss", i]), esc(val["mlm_loss", i]), esc(val["nsp_loss", i]), esc(val["mlm_acc", i]),
            esc(val["nsp_acc", i]), esc(val["lr", i]), esc(val["seq_per_s", i])
        if (nrow == 1) break
    }
    print "</table>"
    if (n) printf "<p>Mean throughput %s sequences per second.</p>\n", fmt(sum / n)
    if (others != "") printf "<p class=\"missing\">Not drawn (make a page of each): %s.</p>\n", esc(others)
    print "<div class=\"plots\">"
    line_plot("Loss", "loss mlm_loss nsp_loss", "cross-entropy (nats)", 1, 0)
    line_plot("Accuracy (masked tokens, next sentence)", "mlm_acc nsp_acc", "share predicted right", 0, 1)
    line_plot("Learning rate", "lr", "learning rate", 1, 0)
    line_plot("Throughput (sequences per second)", "seq_per_s", "sequences / s", 1, 0)
    line_plot("Gradient norm", "grad_norm", "L2 norm (before clipping)", 1, 0)
    print "</div></section>"
}

function workflow(wf, i, n, lab, key, f, t, inst) {
    printf "<section class=\"wf\"><h2>Workflow %s</h2><p>%s</p>\n", esc(wf), esc(wfdir[wf])
    # each bar counts in its own unit (pages, articles, sentences,
    # documents kept, shard sentences, instances); the text beside it
    # starts with that count and gives the others in brackets
    n = 0
    for (i = 1; i <= nstage[wf]; i++) {
        lab = stlabel[wf, i]
        n++
        if (lab == "pages") {
            bl[n] = "pages"; bv[n] = stdocs[wf, i]; bt[n] = plural(bv[n], "page") " in the dump"
        } else if (lab == "articles") {
            bl[n] = "articles"; bv[n] = stdocs[wf, i]; bt[n] = plural(bv[n], "article")
        } else if (lab == "sentences") {
            bl[n] = "sentences"; bv[n] = stlines[wf, i]
            bt[n] = plural(bv[n], "sentence") " (" plural(stdocs[wf, i], "document") ")"
        } else if (lab == "kept") {
            bl[n] = "documents kept"; bv[n] = stdocs[wf, i]
            bt[n] = plural(bv[n], "document") " (" plural(stlines[wf, i], "sentence") ")"
        } else if (lab == "shards") {
            bl[n] = "shard sentences"; bv[n] = stlines[wf, i]
            bt[n] = plural(bv[n], "sentence") " (" plural(stdocs[wf, i], "document") " in " plural(stfiles[wf, i], "file") ")"
        } else {
            bl[n] = lab; bv[n] = stdocs[wf, i]; bt[n] = plural(bv[n], "document")
        }
    }
    for (i = 1; i <= nphase[wf]; i++) {
        key = wf SUBSEP i; inst = 0
        for (f = 1; f <= nfile[key]; f++) inst += fl[key, f, "inst"]
        bl[++n] = "instances " (nfile[key] ? "L " fl[key, 1, "L"] : "")
        bv[n] = inst; bt[n] = plural(inst, "instance") " (" plural(nfile[key], "file") ")"
    }
    print "<h3>Data funnel</h3>"
    if (n) hbars("Data funnel (each bar in its own unit, its length on a log scale)", n, 1, "funnel")
    else print "<p class=\"missing\">No stage output found.</p>"
    for (i = 1; i <= nnote[wf]; i++)
        printf "<p class=\"%s\">%s</p>\n", notecls[wf, i] == "" ? "missing" : notecls[wf, i], esc(notes[wf, i])
    print "<h3>Document checks (text_filter)</h3>"
    if (fin[wf] == "")
        print "<p class=\"missing\">No filter stage in this workflow (or text_filter was not found).</p>"
    else {
        n = 0; t = 0
        for (i = 1; i <= nfc[wf]; i++) {
            f = forder[wf, i]
            bl[++n] = f; bv[n] = fcount[wf, f]; t += bv[n]
            bt[n] = commas(bv[n]) " (" sprintf("%.1f", fin[wf] ? 100 * bv[n] / fin[wf] : 0) " %)"
        }
        printf "<p>%s checked again (text_filter -v on the sentences), %s kept, %s rejected by the first check that failed:</p>\n",
            plural(fin[wf], "document"), commas(fin[wf] - t), commas(t)
        if (n) hbars("Documents rejected per check", n, 0, "checks")
        else print "<p>No document failed a check.</p>"
    }
    for (i = 1; i <= nphase[wf]; i++)
        phase(wf, i)
    if (!nphase[wf])
        print "<h3>HDF5</h3><p class=\"missing\">No HDF5 directory (hdf5_*) in this workflow.</p>"
    print "</section>"
}

function phase(wf, i, key, f, inst, tok, msk, wm, wk, wo, wn, unk, b, m) {
    key = wf SUBSEP i
    printf "<h3>%s</h3>\n<p>Vocabulary: %s.</p>\n", esc(phdir[wf, i]), esc(phvocab[wf, i])
    for (f = 1; f <= nh5msg[key]; f++)
        printf "<p class=\"%s\">%s</p>\n", h5msg[key, f] ~ /valid$/ ? "ok" : "warn", esc(h5msg[key, f])
    if (!nfile[key]) {
        print "<p class=\"missing\">No statistics from hdf5_check.</p>"
        return
    }
    inst = tok = msk = wm = wk = wo = wn = unk = 0
    for (f = 1; f <= nfile[key]; f++) {
        inst += fl[key, f, "inst"]; tok += fl[key, f, "tok"]
        m = fl[key, f, "tok"] * fl[key, f, "masked"] / 100
        msk += m
        wm += m * fl[key, f, "mask"]; wk += m * fl[key, f, "kept"]; wo += m * fl[key, f, "other"]
        wn += fl[key, f, "inst"] * fl[key, f, "next"]
        unk += fl[key, f, "tok"] * fl[key, f, "unk"]
    }
    printf "<table><tr><th>files</th><th>instances</th><th>tokens</th><th>per instance</th><th>masked</th><th>random next</th><th>[UNK]</th></tr>\n"
    printf "<tr><td>%d</td><td>%s</td><td>%s</td><td>%.1f</td><td>%.2f %%</td><td>%.1f %%</td><td class=\"%s\">%.2f %%</td></tr></table>\n",
        nfile[key], commas(inst), commas(tok), inst ? tok / inst : 0, tok ? 100 * msk / tok : 0, inst ? wn / inst : 0,
        (tok && unk / tok > 1 ? "warn" : "ok"), tok ? unk / tok : 0
    print "<div class=\"plots\">"
    if (hbins[key]) {
        for (b = 1; b <= hbins[key]; b++) { hl[b] = hlab[key, b]; hv[b] = hcnt[key, b] }
        vbars("Sequence lengths (" commas(inst) " instances)", hbins[key])
    }
    if (msk) {
        sl[1] = "[MASK]"; sv[1] = wm / msk
        sl[2] = "kept"; sv[2] = wk / msk
        sl[3] = "random token"; sv[3] = wo / msk
        stacked(sprintf("What the %.2f %% masked positions hold", 100 * msk / tok), 3)
    }
    print "</div>"
    printf "<details><summary>Per file (%d)</summary><table><tr><th>file</th><th>instances</th><th>tokens</th><th>masked</th><th>[MASK]</th><th>kept</th><th>other</th><th>random next</th><th>[UNK]</th></tr>\n", nfile[key]
    for (f = 1; f <= nfile[key]; f++)
        printf "<tr><td>%s</td><td>%s</td><td>%s</td><td>%.2f %%</td><td>%.1f %%</td><td>%.1f %%</td><td>%.1f %%</td><td>%.1f %%</td><td>%.2f %%</td></tr>\n",
            esc(fname[key, f]), commas(fl[key, f, "inst"]), commas(fl[key, f, "tok"]), fl[key, f, "masked"], fl[key, f, "mask"],
            fl[key, f, "kept"], fl[key, f, "other"], fl[key, f, "next"], fl[key, f, "unk"]
    print "</table></details>"
}

END {
    print "<!DOCTYPE html>"
    print "<html lang=\"en\"><head><meta charset=\"utf-8\">"
    printf "<title>Run report: %s</title>\n", esc(run)
    print "<style>"
    print "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1260px;color:#222;background:#fff;padding:0 16px}"
    print "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}h3{font-size:15px;word-break:break-all}"
    print "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}td:first-child{text-align:left}"
    print ".plots{display:flex;flex-wrap:wrap;gap:12px}svg.plot{border:1px solid #e4e4e4;background:#fcfcfc}"
    print ".missing{color:#777;font-style:italic}.warn{color:#b00}.ok{color:#070}"
    print "svg text{font:11px system-ui,sans-serif;fill:#333}svg .t{font-size:13px;font-weight:600}"
    print "svg .yl{text-anchor:end}svg .xl{text-anchor:middle}svg .g{stroke:#e6e6e6}svg .ax{stroke:#888}"
    print "svg .frame{fill:none;stroke:#bbb}svg polyline{fill:none;stroke-width:1.8}svg .total{stroke-width:6;stroke-opacity:.35}"
    print "svg .ya{text-anchor:middle}"
    print ".s1{stroke:#1f77b4}.s2{stroke:#ff7f0e}.s3{stroke:#2ca02c}.f1{fill:#1f77b4}.f2{fill:#ff7f0e}.f3{fill:#2ca02c}.f4{fill:#d62728}.f5{fill:#9467bd}"
    print "</style></head><body>"
    printf "<h1>Run report: %s</h1>\n", esc(run)
    training()
    if (!nwf)
        printf "<section id=\"data\"><h2>Data</h2><p class=\"missing\">No workflow directory (text/, sentences/, hdf5_*/) in or under %s.</p></section>\n", esc(run)
    for (w = 1; w <= nwf; w++)
        workflow(wfs[w])
    print "<footer><p>Written by report/run_report.sh from the stage files, log.jsonl, text_filter -v and hdf5_check -v.</p></footer>"
    print "</body></html>"
}
