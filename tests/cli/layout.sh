# The layout rules of README.md's "Layout" section, checked on the tree:
# every quoted include names its folder from the repository root and the
# file exists; production code never includes tests/; only h5file.c
# includes hdf5.h, only mwxml.c expat.h, only uniprop.c ICU; no program's
# main() is over 100 lines; no source file is over 2000 lines; no library
# file is named like a program with its underscore dropped.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
cd "$ROOT" || exit 1
: >"$err" # the checks run no program: nothing on stderr to show
mapfile -t files < <(mk/format-files.sh)
bad=$(for f in "${files[@]}"; do
  grep -o '^ *# *include *"[^"]*"' "$f" | sed 's/.*"\(.*\)"/\1/' | while read -r inc; do
    [ -f "$inc" ] || echo "$f: \"$inc\""
  done
done)
ok "includes name their folder from the root (${bad:-all do})" [ -z "$bad" ]
prod=(common prep tokenize vocab shard hdf5gen train)
bad=$(grep -rln '# *include *"tests/' "${prod[@]}")
ok "production code includes nothing of tests/ (${bad:-none does})" [ -z "$bad" ]
only() { # LIBRARY-HEADER-PATTERN FILE
  local got
  got=$(grep -rlE "# *include *<$1" "${prod[@]}" | sort | tr '\n' ' ')
  ok "only $2 includes the header matching <$1 (got: $got)" [ "$got" = "$2 " ]
}
only 'hdf5\.h>' hdf5gen/h5file.c
only 'expat\.h>' prep/mwxml.c
only 'unicode/' common/uniprop.c
only 'pcre2\.h>' common/pattern.c
for f in $(grep -lw '^int main' prep/*.c tokenize/*.c vocab/*.c shard/*.c hdf5gen/*.c train/*.c train/cuda/*.c); do
  n=$(awk '/^int main/ { s = NR } s && /^}/ { print NR - s + 1; exit }' "$f")
  ok "$f: main() is $n lines (at most 100)" [ "$n" -le 100 ]
done
big=$(for f in "${files[@]}"; do n=$(wc -l <"$f"); [ "$n" -gt 2000 ] && echo "$f ($n)"; done)
ok "no source file over 2000 lines (${big:-none})" [ -z "$big" ]
# shellcheck disable=SC2046
close=$(for p in $(grep -lw '^int main' $(printf '%s/*.c ' "${prod[@]}") train/cuda/*.c); do
  d=$(dirname "$p") b=$(basename "$p" .c)
  [ "${b//_/}" = "$b" ] && continue # hdf5gen: no underscore to drop
  for lib in "$d/${b//_/}.c" "$d/${b//_/}.h"; do [ -e "$lib" ] && echo "$lib"; done
done)
ok "no library file is a program's name without its underscore (${close:-none})" [ -z "$close" ]
done_testing
