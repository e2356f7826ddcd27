# CLI tests of hdf5_check: hdf5gen's files are valid and --dump gives back
# exactly the instances (inst_dump's rows); statistics, the [UNK] share of
# the text and its warning above 1 %; missing and non-HDF5
# files (exit 2) and damaged ones (exit 1; more in hdf5_damaged.sh); and,
# where Python's h5py is installed (python3-h5py), NVIDIA's reader (pretraining_dataset's way: whole datasets, labels filled
# with -1, the first-zero rule) sees the same rows, and files broken with
# h5py are reported with their instance index.
. "$TESTS/cli/lib.sh"
C=$BIN/hdf5_check
G=$BIN/hdf5gen
DUMP=${TESTBIN:-}/inst_dump
V=$TESTS/../data/bert/vocab.txt
not() { ! "$@"; }

run "$C" --help
expect_rc "help" 0
ok "help text" grep -q "^Usage: hdf5_check" "$out"
run "$C"
expect_rc "no files" 2
run "$C" "$T/nope.hdf5"
expect_rc "missing file" 2
expect_err "missing file named" "*nope.hdf5: No such file or directory*"
echo "plain text" >"$T/text.hdf5"
run "$C" "$T/text.hdf5"
expect_rc "not HDF5" 2
expect_err "not HDF5 message" "*text.hdf5: not an HDF5 file*"

"$BIN/wiki_dump" "$DATA/enwiki-3.xml.bz2" 2>/dev/null | "$BIN/wiki_strip" -F lines 2>/dev/null |
  "$BIN/sent_split" -j1 -l en 2>/dev/null >"$T/en.txt"
"$G" -q --vocab "$V" --dupe-factor 2 -o "$T/en.hdf5" "$T/en.txt"
"$G" -q --vocab "$V" --dupe-factor 1 --max-seq-length 512 --max-predictions-per-seq 80 -o "$T/en512.hdf5" "$T/en.txt"
"$G" -q --vocab "$V" --dupe-factor 1 --no-mask --nsp 0 -o "$T/plain.hdf5" "$T/en.txt"
run "$C" -v --vocab "$V" "$T/en.hdf5" "$T/en512.hdf5" "$T/plain.hdf5"
expect_rc "hdf5gen's files are valid" 0
ok "per-file line" grep -q "en.hdf5: [0-9]* instances, L 128, P 20" "$out"
ok "seq 512 line" grep -q "en512.hdf5: [0-9]* instances, L 512, P 80" "$out"
ok "masked share about 15 %" grep -q "en.hdf5: .* 1[45]\.[0-9]* % masked" "$out"
ok "no-mask file: 0 masked, no segment B" grep -q "plain.hdf5: .* 0.00 % masked.*with segment B 0.0 %" "$out"
ok "histogram" grep -q "length: <=16:" "$out"
ok "total line" grep -q "^total: " "$out"
# the [UNK] share of the text, counted independently from --dump's rows
# (a masked position counts its original id), and the warning above 1 %
unk_share() { # FILE UNK-ID: the share in %, from the dumped rows
  "$C" --dump "$1" | awk -F'\t' -v u="$2" '{ n = split($1, id, " "); k = split($3, p, " "); split($4, l, " ")
    for (i = 1; i <= k; i++) id[p[i] + 1] = l[i]
    for (i = 1; i <= n; i++) { t++; c += id[i] == u } } END { printf "%.2f", 100 * c / t }'
}
ok "no warning for a vocabulary that covers the text" not grep -q "UNK" "$err"
want=$(unk_share "$T/en.hdf5" 100)
ok "the [UNK] share ($want %) as --dump's rows give it" grep -q "en.hdf5: .*, \[UNK\] $want %$" "$out"
head -2100 "$V" >"$T/small.txt" # specials and characters, few words: most words are [UNK]
"$G" -q --vocab "$T/small.txt" --dupe-factor 1 -o "$T/small.hdf5" "$T/en.txt"
run "$C" --vocab "$T/small.txt" "$T/small.hdf5"
expect_rc "a file with many [UNK] is still valid" 0
want=$(unk_share "$T/small.hdf5" 100)
ok "... its [UNK] share ($want %) printed" grep -q "small.hdf5: .*, \[UNK\] $want %$" "$out"
ok "... above 1 %" awk -v w="$want" 'BEGIN { exit !(w > 1) }'
expect_err "... and warned, naming the file" "*small.hdf5: \[UNK\] is $want % of the tokens (above 1 %)*"
# the random-next share: about 50 % is quiet; one document gives none, and a warning
ok "no next-sentence warning for a file of several documents" not grep -q "random next .* far from 50" "$err"
awk 'NF { print } !NF { exit }' "$T/en.txt" >"$T/one.txt" # the first document only
"$G" -q --vocab "$V" --dupe-factor 5 -o "$T/one.hdf5" "$T/one.txt"
run "$C" --vocab "$V" "$T/one.hdf5" "$T/plain.hdf5"
expect_rc "a file of one document is still valid" 0
expect_err "... warned: 0 % random next, far from 50 %, naming the file and the cause" \
  "*one.hdf5: random next 0.0 % of [0-9]* instances, far from 50 %: next-sentence prediction learns little (a shard of one document gives no random next sentence*"
ok "... a file without segment B (--nsp 0) is not" not grep -q "plain.hdf5: random next" "$err"
run "$C" -q --vocab "$V" "$T/one.hdf5"
ok "... -q: no warning" [ ! -s "$err" ]
run "$C" --dump "$T/en.hdf5"
expect_rc "--dump" 0
if [ -n "${TESTBIN:-}" ] && [ -x "$DUMP" ]; then
  "$DUMP" --vocab "$V" --dupe 2 "$T/en.txt" >"$T/en-dump.txt"
  ok "--dump rows = the instances" cmp -s "$out" "$T/en-dump.txt"
else
  echo "not run: --dump against inst_dump (the driver is not built; run through make test)"
fi
# a vocabulary smaller than the ids used
head -200 "$V" >"$T/small-vocab.txt"
run "$C" --vocab "$T/small-vocab.txt" "$T/en.hdf5"
expect_rc "ids outside a smaller vocabulary" 1
expect_err "instance named" "*en.hdf5: instance 0: input_ids: * outside the vocabulary (200 ids)*"
# damaged: cut in half; bytes overwritten in the middle
size=$(stat -c %s "$T/en.hdf5")
head -c $((size / 2)) "$T/en.hdf5" >"$T/half.hdf5"
run "$C" "$T/half.hdf5"
expect_rc "truncated file: a damaged file, exit 1" 1
expect_err "truncated file: the superblock's size against the file's" \
  "hdf5_check: $T/half.hdf5: damaged HDF5 file (truncated: its superblock says $size bytes, the file has $((size / 2)))
hdf5_check: 1 of 1 file invalid"
cp "$T/en.hdf5" "$T/bad.hdf5"
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' |
  dd of="$T/bad.hdf5" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run "$C" "$T/bad.hdf5" "$T/en.hdf5"
expect_rc "damaged chunk: exit 1" 1
expect_err "damaged file named" "*bad.hdf5:*"
expect_err "count of bad files" "*1 of 2 files invalid"
ok "the other file checked" grep -q "^$T/en.hdf5: [0-9]* instances" "$out"

PY=$(py_with "h5py, numpy")
if [ -z "$PY" ]; then
  echo "not run: NVIDIA-reader and h5py-written checks (no Python with h5py; Debian: python3-h5py)"
  done_testing
  exit 0
fi
# NVIDIA's reader: the six datasets whole, labels -1 but at the positions before the first 0
cat >"$T/reader.py" <<'PYEOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
keys = ["input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids", "next_sentence_labels"]
ids, mask, seg, pos, lab, nsp = [np.asarray(f[k][:]) for k in keys]
assert [str(f[k].dtype) for k in keys] == ["int32", "int8", "int8", "int32", "int32", "int8"]
assert all(f[k].compression == "gzip" and f[k].compression_opts == 4 for k in keys)
P = pos.shape[1]
out = []
for i in range(ids.shape[0]):
    row = [int(x) for x in ids[i]]
    p = [int(x) for x in pos[i]]; l = [int(x) for x in lab[i]]
    labels = np.full(ids.shape[1], -1, dtype=np.int64)
    z = p.index(0) if 0 in p else P
    labels[p[:z]] = l[:z]
    n = int(mask[i].sum())
    mp = [j for j in range(len(labels)) if labels[j] != -1]
    out.append("%s\t%s\t%s\t%s\t%d" % (" ".join(map(str, row[:n])), "".join(str(int(x)) for x in seg[i][:n]),
               " ".join(map(str, mp)), " ".join(str(int(labels[j])) for j in mp), int(nsp[i])))
print("\n".join(out))
PYEOF
"$PY" "$T/reader.py" "$T/en.hdf5" >"$T/nv-rows.txt"
"$C" --dump "$T/en.hdf5" >"$T/our-rows.txt"
ok "NVIDIA's reader sees the rows hdf5_check sees" cmp -s "$T/nv-rows.txt" "$T/our-rows.txt"
if [ -f "$T/en-dump.txt" ]; then ok "NVIDIA's reader sees the instances" cmp -s "$T/nv-rows.txt" "$T/en-dump.txt"; fi
# files broken with h5py
cat >"$T/break.py" <<'PYEOF'
import sys, h5py, numpy as np
src, dst, how = sys.argv[1:4]
f = h5py.File(src, "r"); d = {k: np.asarray(f[k][:]) for k in f}
if how == "positions": d["masked_lm_positions"][7, :2] = d["masked_lm_positions"][7, 1::-1]
if how == "cls": d["input_ids"][3, 0] = 999
if how == "missing": del d["segment_ids"]
if how == "shape": d["input_mask"] = d["input_mask"][:, :64]
if how == "int64": d["input_ids"] = d["input_ids"].astype(np.int64)
if how == "float": d["input_ids"] = d["input_ids"].astype(np.float32)
g = h5py.File(dst, "w", libver=("earliest", "v110"))  # what libhdf5 1.10 reads
for k, v in d.items(): g.create_dataset(k, data=v, compression="gzip")
PYEOF
brk() { "$PY" "$T/break.py" "$T/en.hdf5" "$T/$1.hdf5" "$1"; run "$C" --vocab "$V" "${@:2}" "$T/$1.hdf5"; }
brk positions
expect_rc "swapped positions" 1
expect_err "swapped positions: instance 7" "*positions.hdf5: instance 7: masked_lm_positions not increasing*"
brk cls
expect_rc "no [CLS]" 1
expect_err "no [CLS]: instance 3" "*instance 3: input_ids[[]0[]] is 999, not [[]CLS[]] (101)*"
brk missing
expect_rc "missing dataset" 1
expect_err "missing dataset named" "*missing.hdf5: no dataset segment_ids*"
brk shape
expect_rc "wrong shape" 1
expect_err "wrong shape message" "*input_mask has shape (*, 64)*"
brk int64
expect_rc "int64 ids: a warning" 0
expect_err "int64 warning" "*input_ids: 8-byte signed integers, not NVIDIA's signed 32-bit*"
brk int64 --strict
expect_rc "int64 ids with --strict" 1
brk float
expect_rc "float ids" 1
expect_err "float message" "*input_ids is not an integer dataset*"
done_testing
