# pipelines/hdf5_array.sh under Debian's Open MPI, as examples/README.md shows it
# (mpirun -np N pipelines/hdf5_array.sh SHARD_DIR VOCAB OUT_DIR
# [hdf5gen options]): hdf5gen takes the rank and size from mpirun's
# variables, and the N ranks together write the files of one hdf5gen run,
# byte for byte (N = 2 and 3, over 6 shards); run again, they rewrite
# nothing (--skip-existing). openmpi-bin is installed when missing and run
# as root (mk/testdeps.sh tries it first); otherwise "not run", counting
# nothing. As root, mpirun needs --allow-run-as-root.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
unset TASK_INDEX TASK_COUNT WIKIBERT_BIN
for v in $(compgen -e | grep -E '^(SLURM|OMPI|PMI|PMIX)_'); do unset "$v"; done
if ! command -v mpirun >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends openmpi-bin >/dev/null 2>&1
fi
if ! command -v mpirun >/dev/null 2>&1 || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  echo "not run: no Open MPI mpirun (Debian: apt-get install openmpi-bin)"
  done_testing
  exit 0
fi
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
V=$ROOT/data/bert/vocab.txt
"$BIN/wiki_dump" -q "$DATA/enwiki-206.xml.bz2" | "$BIN/wiki_strip" -q -F lines | "$BIN/sent_split" -q -l en >"$T/en.txt"
"$BIN/shard_split" -q --train 5 --test 1 -o "$T/shards" "$T/en.txt"
opts=(--max-seq-length 128 --max-predictions-per-seq 20 --dupe-factor 2)
"$BIN/hdf5gen" -q --vocab "$V" "${opts[@]}" -o "$T/one/" "$T/shards"/*.txt
for n in 2 3; do
  # examples/README.md's command (the script finds bin/ beside itself)
  run timeout 120 "${mpi[@]}" -np $n "$ROOT/pipelines/hdf5_array.sh" "$T/shards" "$V" "$T/np$n" "${opts[@]}"
  expect_rc "mpirun -np $n pipelines/hdf5_array.sh" 0
  ok "... each rank took its share (batch part I of $n)" \
    eval '[ "$(grep -oE "batch part [0-9] of '$n'" "$err" | sort -u | wc -l)" = '$n' ]'
  ok "... together the 6 files of one hdf5gen run, byte for byte" diff -r "$T/np$n" "$T/one"
done
ok "... which are 6" [ "$(ls "$T/one" | wc -l)" = 6 ]
before=$(stat -c '%n %Y %i' "$T/np2"/*)
run timeout 120 "${mpi[@]}" -np 2 "$ROOT/pipelines/hdf5_array.sh" "$T/shards" "$V" "$T/np2" "${opts[@]}"
expect_rc "run again" 0
ok "... nothing rewritten (--skip-existing)" [ "$(stat -c '%n %Y %i' "$T/np2"/*)" = "$before" ]
done_testing
