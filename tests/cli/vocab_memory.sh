# CLI test: vocab_train's memory. (1) The sampled line numbers: a regular
# file of 8,000,000 lines sampled down to 6,000,000 keeps 4 bytes a line
# (24 MB; 8 bytes, 48 MB, before), and the peak stays under 85 MB (64 MB
# measured, 110 MB before). (2) A text whose distinct words grow with its
# size: the 206-page English sample made into 12 copies in which a fifth of
# the words of 4 letters or more carry the copy's own suffix (as
# bench/make_dump.py --vary does); about 90,000 distinct words train in
# under 64 MB (51-54 MB measured), for -j1 and -j2, with the same model.
. "$TESTS/cli/lib.sh"
need_maxrss vocab_train
if [ -n "$SAN" ]; then # every check here is one of memory
  done_testing
  exit 0
fi

$BIN/wiki_dump "$TESTS/data/enwiki-206.xml.bz2" | $BIN/wiki_strip -F lines | $BIN/sent_split -j1 -l en >"$T/one.txt"
awk -v copies=12 '{ line[NR] = $0 }
END {
  s = 12345
  for (c = 0; c < copies; c++)
    for (i = 1; i <= NR; i++) {
      n = split(line[i], w, " ")
      out = ""
      for (k = 1; k <= n; k++) {
        s = (s * 1103515245 + 12345) % 2147483648
        if (c > 0 && length(w[k]) >= 4 && int(s / 65536) % 100 < 20) w[k] = w[k] "q" c
        out = out (k > 1 ? " " : "") w[k]
      }
      print out
    }
}' "$T/one.txt" >"$T/many.txt"

# train PREFIX FILE J: peak KiB into $kib, distinct words into $words
train() {
  run "$RSS" "$T/rss" "$BIN/vocab_train" -v -j "$3" -f -o "$T/m-$1" --vocab-size 8000 \
    --hard-vocab-limit false --bert --wordpiece "$T/m-$1.vocab.txt" "$2"
  kib=$(cat "$T/rss")
  words=$(grep -o '[0-9]* distinct' "$err" | cut -d' ' -f1)
}
for j in 1 2; do
  train one "$T/one.txt" "$j"
  expect_rc "vocab_train -j$j on one copy" 0
  base=$kib
  train many "$T/many.txt" "$j"
  expect_rc "vocab_train -j$j on 12 copies" 0
  cp "$T/m-many.model" "$T/many-j$j.model"
  ok "-j$j: $words distinct words (want > 80000)" [ "$words" -gt 80000 ]
  ok "-j$j: peak $kib KiB (one copy: $base KiB), want < 64 MiB" [ "$kib" -lt 65536 ]
done
ok "the same model for -j1 and -j2" cmp -s "$T/many-j1.model" "$T/many-j2.model"

yes "a b" | head -n 8000000 >"$T/lines.txt"
run "$RSS" "$T/rss" "$BIN/vocab_train" -q -j2 -f -o "$T/lines" --vocab-size 8 \
  --hard-vocab-limit false --input-sentence-size 6000000 --shuffle "$T/lines.txt"
expect_rc "a sample of 6,000,000 of 8,000,000 lines" 0
ok "... peak $(cat "$T/rss") KiB, want < 85 MiB" [ "$(cat "$T/rss")" -lt 87040 ]
done_testing
