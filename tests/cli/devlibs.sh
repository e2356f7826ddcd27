# mk/devlibs.sh: the bundle of headers and libraries for a machine without
# the -dev packages (a lent GPU machine). It holds every library the build
# and the programs need beyond the C library and CUDA (PCRE2, and HDF5's
# libcurl and libcrypto with what they load), checks itself with ldd, and
# a clean build against it alone works: the objects of the five files that
# include a library's headers are compiled anew with `make DEVLIBS=` (the
# others reused from this build), with the system's -dev headers hidden
# (a private mount namespace where unshare is allowed; either way their
# dependency files must name only the bundle's headers), and the programs
# linked from them run the data chain wiki_dump | wiki_strip | sent_split
# | hdf5gen with the system's copies of the bundled libraries hidden,
# writing the bytes the normal build writes.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
BUILD=$(dirname "$TESTBIN")
if [ "$(basename "$BUILD")" != build ] || ! [ -f "$BUILD/libwikibert.a" ] || ! [ -f "$BUILD/cuda.mk" ]; then
  echo "not run: $BUILD is not a plain build (a sanitizer build links other objects)"
  done_testing
  exit 0
fi
DL=$T/dl
run "$ROOT/mk/devlibs.sh" "$DL"
expect_rc "mk/devlibs.sh DIR" 0
ok "... checks itself: everything resolves into the bundle" grep -q "every library beyond the C library and CUDA resolves into the bundle" "$out"
for l in libhdf5.so libpcre2-8.so libicuuc.so libicudata.so libexpat.so libbz2.so libdeflate.so; do
  ok "... link name $l" test -e "$DL/lib/$l"
done
for h in hdf5.h pcre2.h unicode/uchar.h expat.h bzlib.h libdeflate.h; do
  ok "... header $h" test -f "$DL/include/$h"
done
hdf5=$(readlink -f "$DL/lib/libhdf5.so")
miss=$(readelf -d "$hdf5" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r n; do
  case "$n" in libc.so.* | libm.so.* | libdl.so.* | libpthread.so.*) continue ;; esac
  [ -e "$DL/lib/$n" ] || echo "$n"
done)
ok "... what HDF5 loads is there, libcurl's and libcrypto's closure too (missing: ${miss:-none})" [ -z "$miss" ]
sys=$(cd "$DL/lib" && ls libc.so.* libm.so.* libpthread.so.* libcudart.so.* libcublas.so.* libnccl.so.* 2>/dev/null)
ok "... no C library or CUDA library in it (${sys:-none})" [ -z "$sys" ]
ok "... the compiler's runtime apart, in lib/cc" eval 'test -e "$DL/lib/cc/libgomp.so.1" && ! test -e "$DL/lib/libgomp.so.1"'
mkdir -p "$T/bad/lib"
cp "$hdf5" "$T/bad/lib/"
run "$ROOT/mk/devlibs.sh" --check "$T/bad"
expect_rc "--check on a bundle that lacks HDF5's libsz" 1
expect_err "... names it" "*libhdf5*: libsz.so.* resolves outside the bundle*"

# the build: this build's objects, less those of the files that include a library's headers
B=$T/b
mkdir -p "$B"
for d in common prep tokenize vocab shard hdf5gen train; do
  mkdir -p "$B/$d"
  cp -a "$BUILD/$d"/*.o "$B/$d/"
done
cp -a "$BUILD/.deps-ok" "$BUILD/cuda.mk" "$B/"
mapfile -t own < <(cd "$ROOT" && grep -lE '^#include <(hdf5|unicode/|expat|pcre2|bzlib|libdeflate)' common/*.c prep/*.c hdf5gen/*.c)
ok "the files that include a library's headers: ${own[*]}" [ "${#own[@]}" = 5 ]
for f in "${own[@]}"; do rm -f "$B/${f%.c}.o"; done
progs=(wiki_dump wiki_strip sent_split hdf5gen hdf5_check)
mk=(make -C "$ROOT" --no-print-directory -j2 BUILD="$B" BIN="$T/bin" DEVLIBS="$DL" "${progs[@]/#/$T/bin/}")
hide_headers='mkdir -p "$0/empty" && mount --bind "$0/empty" /usr/include/hdf5 && mount --bind "$0/empty" /usr/include/unicode &&
  for h in pcre2.h expat.h expat_external.h bzlib.h libdeflate.h; do mount --bind /dev/null /usr/include/$h; done && exec "$@"'
hidden=0
if unshare -m true 2>/dev/null && [ -d /usr/include/hdf5 ]; then
  hidden=1
  run unshare -m sh -c "$hide_headers" "$T" "${mk[@]}"
else
  echo "not run: hiding the system's -dev headers (unshare -m is not allowed here): the dependency files are checked instead"
  run "${mk[@]}"
fi
expect_rc "make DEVLIBS=bundle: the five objects anew and five programs$([ $hidden = 1 ] && echo ', the system headers hidden')" 0
sysh=$(for f in "${own[@]}"; do cat "$B/${f%.c}.d"; done | tr ' \\' '\n\n' |
  grep -E '^/usr/include/(hdf5|unicode|pcre2|expat|bzlib|libdeflate)' | sort -u | tr '\n' ' ')
ok "... their headers all came from the bundle (system ones: ${sysh:-none})" [ -z "$sysh" ]
ok "... their dependency files name the bundle's" grep -q "$DL/include/hdf5.h" "$B/hdf5gen/h5file.d"
rp=$(readelf -d "$T/bin/hdf5gen" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p')
ok "... the programs' RPATH is the bundle's ($rp)" [ "$rp" = "$DL/lib" ]
run "$ROOT/mk/devlibs.sh" --check "$DL" "${progs[@]/#/$T/bin/}"
expect_rc "... ldd: every library they load resolves into the bundle" 0

# the data chain with the system's copies of the bundled libraries hidden
cat >"$T/chain.sh" <<'EOF'
# BINDIR OUTDIR DATA ROOT: the data chain of tests/data/enwiki-3 (only our
# programs and the shell: coreutils load PCRE2 through SELinux's library)
"$1/wiki_dump" "$3/enwiki-3.xml.bz2" | "$1/wiki_strip" -F lines | "$1/sent_split" -l en >"$2/en.txt" &&
  "$1/hdf5gen" -q --vocab "$4/data/bert/vocab.txt" --dupe-factor 1 --max-seq-length 64 \
    --max-predictions-per-seq 10 -o "$2/en.hdf5" "$2/en.txt" && cd "$2" && "$1/hdf5_check" en.hdf5 >check.txt
EOF
mkdir -p "$T/ref" "$T/new"
bash "$T/chain.sh" "$BIN" "$T/ref" "$DATA" "$ROOT" 2>/dev/null
if [ $hidden = 1 ]; then
  # (mount itself loads PCRE2: it runs with the bundle's, once the system's is hidden)
  # shellcheck disable=SC2016
  hide_libs='export LD_LIBRARY_PATH="$0/lib:$0/lib/cc"; for f in "$0"/lib/*.so.* "$0"/lib/cc/*.so.*; do
      for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /lib64 /usr/lib64; do
        [ -e "$d/${f##*/}" ] && mount --bind /dev/null "$(readlink -f "$d/${f##*/}")"
      done
    done; unset LD_LIBRARY_PATH; exec "$@"'
  run unshare -m sh -c "$hide_libs" "$DL" "$BIN/wiki_dump" --help
  ok "with the system's copies hidden, the normal build's programs do not start" eval '[ "$rc" != 0 ] && grep -q "error while loading shared libraries" "$err"'
  run unshare -m sh -c "$hide_libs" "$DL" env LD_LIBRARY_PATH="$DL/lib/cc" bash "$T/chain.sh" "$T/bin" "$T/new" "$DATA" "$ROOT"
  expect_rc "... those built against the bundle run the data chain (the compiler's runtime from lib/cc)" 0
else
  echo "not run: running with the system's libraries hidden (unshare -m is not allowed here)"
  run env LD_LIBRARY_PATH="$DL/lib/cc" bash "$T/chain.sh" "$T/bin" "$T/new" "$DATA" "$ROOT"
  expect_rc "the programs built against the bundle run the data chain" 0
fi
ok "... the same sentences as the normal build" cmp -s "$T/ref/en.txt" "$T/new/en.txt"
ok "... the same HDF5 bytes" cmp -s "$T/ref/en.hdf5" "$T/new/en.hdf5"
ok "... hdf5_check reads them alike" cmp -s "$T/ref/check.txt" "$T/new/check.txt"
done_testing
