# make install's layout (mk/install.sh): install into a DESTDIR under the
# temp dir, run the installed programs without WIKIBERT_DATA (two that read
# data: wp_tokenize's default vocabulary, sent_split -l hu's abbreviations),
# check the man pages, move the tree and run again, then uninstall and check
# that nothing is left.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
unset WIKIBERT_DATA
export WIKIBERT_NO_INSTALL=1 # no apt-get from a test
mapfile -t progs < <(cd "$BIN" && ls)
D=$T/dest P=/opt/wb
run "$ROOT/mk/install.sh" install "$BIN" "$D" "$P" "${progs[@]}"
expect_rc "install" 0
top=$D$P
missing=$(for p in "${progs[@]}"; do [ -x "$top/bin/$p" ] || echo "$p"; done)
ok "every program in PREFIX/bin (${missing:-all})" [ -z "$missing" ]
s=$top/share/wikibert
ok "data under PREFIX/share/wikibert" [ -f "$s/bert/vocab.txt" -a -f "$s/abbrev/hu.txt" -a -f "$s/langid/model.txt" ]
ok "the data's own terms are installed with it" [ -f "$top/share/wikibert/bert/SOURCES.md" ]
ok "LICENSE in share/doc" cmp -s "$ROOT/LICENSE" "$top/share/doc/wikibert/LICENSE"

printf 'Hello, world! Tokenizers split unaffable words.\n' >"$T/en.txt"
printf 'Ez egy mondat, pl. ez is az. Kovács dr. Nagy Jánossal jött. Itt a vége.\n' >"$T/hu.txt"
"$BIN/wp_tokenize" -q "$T/en.txt" >"$T/tok.want"
"$BIN/sent_split" -q -l hu "$T/hu.txt" >"$T/sent.want"
check_tree() { # TOP WHAT
  run "$1/bin/wp_tokenize" -q "$T/en.txt"
  expect_rc "$2: wp_tokenize with its default vocabulary" 0
  ok "$2: wp_tokenize output as the build's" cmp -s "$out" "$T/tok.want"
  run "$1/bin/wp_tokenize" --help
  # (not the build-time data directory, the last resort)
  ok "$2: wp_tokenize's default vocabulary is the tree's" grep -qF "$1/share/wikibert/bert/vocab.txt" "$out"
  run "$1/bin/sent_split" -q -l hu "$T/hu.txt"
  expect_rc "$2: sent_split -l hu with its abbreviations" 0
  ok "$2: sent_split output as the build's" cmp -s "$out" "$T/sent.want"
}
check_tree "$top" "installed"
if command -v help2man >/dev/null 2>&1; then
  nman=$(ls "$top/share/man/man1" | wc -l)
  ok "a man page per program ($nman of ${#progs[@]})" [ "$nman" -eq "${#progs[@]}" ]
  ok "wp_tokenize.1 has a NAME and the options" grep -q '^\.SH NAME' "$top/share/man/man1/wp_tokenize.1"
  ok "wp_tokenize.1 names the installed data" grep -qF "$P/share/wikibert/bert/vocab.txt" "$top/share/man/man1/wp_tokenize.1"
  ok "no build machine's core count in the man pages" [ -z "$(grep -l ' here)' "$top"/share/man/man1/*.1)" ]
else
  echo "not run: the man page checks (no help2man; apt-get install help2man)"
fi

mv "$D" "$T/moved"
check_tree "$T/moved$P" "moved"
mv "$T/moved" "$D"

run "$ROOT/mk/install.sh" uninstall "$BIN" "$D" "$P" "${progs[@]}"
expect_rc "uninstall" 0
left=$(find "$D" -type f -o -type l | head -5)
ok "nothing left after uninstall (${left:-none})" [ -z "$left" ]
run "$ROOT/mk/install.sh" install "$BIN" "$D" relative "${progs[@]}"
expect_rc "a relative PREFIX is refused" 2
done_testing
