# The cluster and container recipes in examples/: shell syntax (bash -n),
# the MPIJob's YAML (PyYAML when importable, else a structural check), the
# Dockerfile's packages against mk/deps.sh, every --option a recipe passes
# to one of our programs against that program's --help, and the Slurm prep
# array on a multistream sample: its parts together equal one run.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
EX=$ROOT/examples
: >"$err"
mapfile -t scripts < <(find "$EX" -name '*.sh' | sort)
ok "recipes found (${#scripts[@]} scripts)" [ "${#scripts[@]}" -ge 4 ]
for s in "${scripts[@]}" "$ROOT/pipelines/hdf5_array.sh"; do
  ok "bash -n ${s#"$ROOT"/}" bash -n "$s"
done

# ---- the MPIJob
Y=$EX/k8s/mpijob.yaml
py=$(py_with yaml)
if [ -n "$py" ]; then
  run "$py" -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["apiVersion"] == "kubeflow.org/v2beta1" and d["kind"] == "MPIJob", "api/kind"
r = d["spec"]["mpiReplicaSpecs"]
assert set(r) == {"Launcher", "Worker"}, "replica specs"
for k in r:
    c = r[k]["template"]["spec"]["containers"][0]
    assert c["image"] and c["name"], k
assert "nvidia.com/gpu" in r["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
print("ok")' "$Y"
  ok "mpijob.yaml parses (PyYAML): MPIJob v2beta1, Launcher + Worker with GPUs" [ "$rc" -eq 0 ]
else
  echo "note: no PyYAML; mpijob.yaml gets the structural check only"
fi
ok "mpijob.yaml: no tab characters" [ -z "$(grep -P '\t' "$Y")" ]
ok "mpijob.yaml: kind and apiVersion" grep -q '^kind: MPIJob$' "$Y"
ok "mpijob.yaml: apiVersion" grep -q '^apiVersion: kubeflow.org/v2beta1$' "$Y"
ok "mpijob.yaml: indentation in steps of two" \
  [ -z "$(grep -vE '^\s*(#|$)' "$Y" | awk '{ match($0, /^ */); if (RLENGTH % 2) print }')" ]

# ---- the Dockerfile: Debian 12, the build's -dev packages, make install
DF=$EX/docker/Dockerfile
ok "Dockerfile: Debian 12 base" grep -q '^FROM debian:12' "$DF"
pkgs=$(grep -oE '"[a-z0-9.-]+\|' "$ROOT/mk/deps.sh" | tr -d '"|')
miss=$(for p in $pkgs; do grep -qw -- "$p" "$DF" || echo "$p"; done | tr '\n' ' ')
ok "Dockerfile installs mk/deps.sh's packages (missing: ${miss:-none})" [ -z "$miss" ]
ok "Dockerfile: make install" grep -q 'make install PREFIX=' "$DF"

# ---- options: every --option after one of our programs on a command line
# (continuation lines joined; `|`, `;`, `&&` end a command;
# pipelines/hdf5_array.sh passes its options to hdf5gen)
help_of() { # PROG -> its --help on stdout
  if [ "$1" = train_bert ] && [ ! -x "$BIN/train_bert" ]; then "$TESTBIN/train_bert_emu" --help; else "$BIN/$1" --help; fi
}
mapfile -t progs < <(cd "$BIN" && ls; echo train_bert)
uses=$(for f in "${scripts[@]}" "$Y" "$DF"; do
  sed -E 's/^[[:space:]]*#+//' "$f" | awk '/\\$/ { sub(/\\$/, ""); buf = buf $0 " "; next } { print buf $0; buf = "" }' |
    sed -E 's/(\|\||&&|[|;])/\n/g' | while read -r -a w; do
    prog=""
    for t in "${w[@]}"; do
      t=${t//\"/} t=${t//\'/}
      b=${t##*/}
      [ "$b" = hdf5_array.sh ] && b=hdf5gen
      if [ -z "$prog" ]; then
        for p in "${progs[@]}"; do [ "$b" = "$p" ] && prog=$p; done
        [ -n "$prog" ] && echo "$prog - ${f#"$ROOT"/}"
      elif [[ "$t" =~ ^--[A-Za-z][A-Za-z0-9_-]*(=|$) ]]; then
        echo "$prog ${t%%=*} ${f#"$ROOT"/}"
      fi
    done
  done
done | sort -u)
n=$(grep -vc ' - ' <<<"$uses")
ok "the recipes pass options to our programs ($n uses)" [ "$n" -ge 15 ]
bad=$(while read -r prog opt file; do
  [ "$opt" = - ] && continue
  help_of "$prog" 2>/dev/null | grep -qE -- "(^|[^A-Za-z0-9_-])$opt([^A-Za-z0-9_-]|$)" || echo "$file: $prog $opt"
done <<<"$uses")
ok "every option exists in its program's --help (${bad:-all do})" [ -z "$bad" ]
for p in wiki_dump wiki_strip sent_split shard_split hdf5gen train_bert; do
  ok "a recipe runs $p" grep -q "^$p " <<<"$uses"
done

# ---- the prep array on a multistream sample, in 3 parts
D=$DATA/elwikivoyage-17.multistream.xml.bz2 I=$DATA/elwikivoyage-17.multistream-index.txt.bz2
for i in 0 1 2; do
  run env TASK_INDEX=$i TASK_COUNT=3 WIKIBERT_BIN="$BIN" bash "$EX/slurm/prep_array.sh" "$D" "$I" "$T/parts" en
  expect_rc "prep_array.sh task $i of 3" 0
done
"$BIN/wiki_dump" -q "$D" | "$BIN/wiki_strip" -q -F lines | "$BIN/sent_split" -q -l en >"$T/whole.txt"
cat "$T"/parts/part_*.txt >"$T/joined.txt"
ok "3 parts joined equal one run" cmp -s "$T/joined.txt" "$T/whole.txt"
ok "... which is not empty" [ -s "$T/whole.txt" ]
run env TASK_INDEX=1 TASK_COUNT=3 WIKIBERT_BIN="$BIN" bash "$EX/slurm/prep_array.sh" "$D" "$I" "$T/parts" en
ok "a finished part is kept on a requeue" grep -q "done before" "$out"
run env WIKIBERT_BIN="$BIN" bash "$EX/slurm/shard.sh" "$T/parts" "$T/shards" --train 2 --test 1
ok "shard.sh on the parts" [ "$rc" -eq 0 -a -f "$T/shards/wikicorpus_en_training_1.txt" ]
done_testing
