# The progress meter in pipelines (common/progress.h), without timing: the
# modes are forced with WIKIBERT_PROGRESS=MODE:0 (a line on every update)
# and, where script(1) exists, checked on a real pseudo-terminal too.
# A terminal is emulated by render(): "\r" returns to column 0 and
# "\033[K" erases to the end of the line; what it shows must be one clean
# line per message, each of a single program.
. "$TESTS/cli/lib.sh"
PIPE="$BIN/wiki_dump -v -j2 $DATA/enwiki-206.xml.bz2 | $BIN/wiki_strip -v | $BIN/sent_split -v -l en |
  $BIN/text_filter -v -l none -f -o $T/out.txt"
PROGS='wiki_dump|wiki_strip|sent_split|text_filter'

render() { # FILE: the lines a terminal would show at the end
  awk '{
    n = split($0, parts, "\r"); cur = ""
    for (i = 1; i <= n; i++) {
      p = parts[i]; pos = 0
      while (1) {
        k = index(p, "\033[K"); t = k ? substr(p, 1, k - 1) : p
        cur = substr(cur, 1, pos) t substr(cur, pos + length(t) + 1); pos += length(t)
        if (!k) break
        cur = substr(cur, 1, pos); p = substr(p, k + 3)
      }
    }
    print cur
  }' "$1"
}

mixed() { # FILE: rendered lines that are not one program's message
  render "$1" | grep -v '^$' | grep -vE "^(($PROGS): |stdin:)" ; render "$1" | grep -E "($PROGS): .*($PROGS): "
}

# tty mode: only the last stage draws; every message clears the line first
run env WIKIBERT_PROGRESS=tty:0 bash -c "$PIPE"
expect_rc "tty mode pipeline" 0
ok "tty: the last stage drew" grep -q $'\rtext_filter: [0-9]* documents' "$err"
drew=$(sed 's/\r\x1b\[K//g' "$err" | grep -ao $'\r[a-z_]*:' | tr -d '\r' | sort -u | tr '\n' ' ')
ok "tty: only the last stage drew (got: $drew)" [ "$drew" = "text_filter: " ]
ok "tty: no two programs on one shown line ($(mixed "$err" | head -2))" [ -z "$(mixed "$err")" ]
for p in wiki_dump wiki_strip sent_split text_filter; do
  ok "tty: $p's summary shown on a line of its own" grep -qE "^$p: .* in [0-9.]+ s" <(render "$err")
done
ok "tty: stderr ends with a newline" [ "$(tail -c 1 "$err" | od -An -c | tr -d ' ')" = '\n' ]

# a real terminal
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
  script -qec "$PIPE" /dev/null >"$T/tty.txt" 2>&1 </dev/null
  tr -d '\r' <"$T/tty.txt" | grep -q . # not empty
  sed 's/\r$//' "$T/tty.txt" >"$T/tty2.txt"
  ok "pty: no two programs on one shown line ($(mixed "$T/tty2.txt" | head -2))" [ -z "$(mixed "$T/tty2.txt")" ]
  ok "pty: the summaries are shown" [ "$(render "$T/tty2.txt" | grep -cE "^($PROGS): .* in [0-9.]+ s")" -eq 4 ]
fi

# log mode: newline-terminated lines from every stage, no carriage returns
run env WIKIBERT_PROGRESS=log:0 bash -c "$PIPE"
expect_rc "log mode pipeline" 0
ok "log: no carriage return or escape" bash -c "! grep -q $'[\r\x1b]' '$err'"
for p in wiki_dump wiki_strip sent_split; do
  ok "log: $p wrote progress lines" grep -qE "^$p: [0-9]+ [a-z]+, [0-9.]+ MB, [0-9.]+ MB/s" "$err"
done
ok "log: every line is one program's ($(mixed "$err" | head -2))" [ -z "$(mixed "$err")" ]
ok "log: ends with a newline" [ "$(tail -c 1 "$err" | od -An -c | tr -d ' ')" = '\n' ]
# log mode at the default level, for batch jobs without -v
run env WIKIBERT_PROGRESS=log:0 $BIN/text_filter -l none "$T/out.txt"
ok "log at the default level" grep -qE '^text_filter: [0-9]+ documents, ' "$err"

# no terminal, no -v, no setting: summaries only, nothing redrawn
run bash -c "${PIPE//-v /}"
ok "auto without a terminal: no carriage return" bash -c "! grep -q $'\r' '$err'"
run env WIKIBERT_PROGRESS=off:0 bash -c "$PIPE"
ok "off: no progress lines" bash -c "! grep -qE 'MB/s, (ETA|[0-9]+:)' '$err'"
done_testing
