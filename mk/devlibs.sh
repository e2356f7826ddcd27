#!/usr/bin/env bash
# mk/devlibs.sh - bundle every header and shared library the build and the
# programs need beyond the C library and CUDA into one directory, for a
# machine without the Debian -dev packages and without a package mirror (a
# lent GPU machine): `make DEVLIBS=DIR` builds against it there (include
# path, library path and RPATH point into DIR; mk/deps.sh is skipped), and
# programs built here with an RPATH into it run there.
#
#   mk/devlibs.sh DIR [PROGRAM...]          make DIR, then check it
#   mk/devlibs.sh --check DIR [PROGRAM...]  check only
#
# DIR/include  the headers our sources include: HDF5 (serial), ICU, expat,
#              bzip2, libdeflate, PCRE2
# DIR/lib      the libraries -l names (libhdf5.so, libicuuc.so, ...: link
#              names pointing at the files named by their sonames) and
#              everything they load, walked with ldd (HDF5's libcurl,
#              libcrypto and their own dependencies included)
# DIR/lib/cc   the compiler's runtime (libstdc++, libgcc_s, libgomp) and
#              what the PROGRAMs load beyond the libraries above: for
#              programs built here; a build on the other machine links
#              its own compiler's, so DEVLIBS puts only DIR/lib on the
#              RPATH
#
# Left out: the C library (libc, libm, libpthread, libdl, librt, libresolv,
# the dynamic loader) and CUDA (libcuda, libcudart, libcublas, libcublasLt,
# libnccl), which every machine that runs train_bert has.
#
# The check: `ldd` of every library in DIR and of every PROGRAM, with only
# DIR/lib and DIR/lib/cc on LD_LIBRARY_PATH, finds nothing "not found" and
# resolves every library outside the C library and CUDA into DIR (a
# program's own RPATH comes first: a program built with `make DEVLIBS=DIR`
# or one without an RPATH passes; one whose RPATH names the system's
# libraries does not). Exit 0 when all resolve, 1 with one line per
# library that does not.
set -eu
prog=mk/devlibs.sh
check_only=0
if [ "${1:-}" = --check ]; then
  check_only=1
  shift
fi
out=${1:?usage: mk/devlibs.sh [--check] DIR [PROGRAM...]}
shift
CC=${CC:-cc}

# the C library's and CUDA's sonames: never bundled
system_lib() {
  case "$1" in
  linux-vdso.so* | linux-gate.so* | ld-linux*.so* | ld64.so* | libc.so.* | libm.so.* | libmvec.so.* | \
    libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | \
    libnsl.so.* | libcuda.so* | libcudart.so.* | libcublas.so.* | libcublasLt.so.* | libnccl.so.*)
    return 0
    ;;
  esac
  return 1
}
# the compiler's runtime: DIR/lib/cc
cc_runtime() {
  case "$1" in libstdc++.so.* | libgcc_s.so.* | libgomp.so.* | libatomic.so.* | libquadmath.so.*) return 0 ;; esac
  return 1
}

# "NAME PATH" for each library FILE loads (PATH "not" when not found)
deps() {
  LD_LIBRARY_PATH="$out/lib:$out/lib/cc" ldd "$1" 2>/dev/null | awk '
    $2 == "=>" && $3 == "not" { print $1, "not"; next }
    $2 == "=>" && $3 ~ /^\// { print $1, $3 }'
}

check() {
  local bad=0 f name path n=0
  [ -d "$out/lib" ] || { echo "$prog: $out/lib: no such directory" >&2; return 1; }
  for f in "$out"/lib/*.so* "$out"/lib/cc/*.so* "$@"; do
    [ -e "$f" ] || continue
    [ -L "$f" ] && continue # a link name: its target is checked
    n=$((n + 1))
    while read -r name path; do
      system_lib "$name" && continue
      if [ "$path" = not ]; then
        echo "$prog: $f: $name not found" >&2
        bad=1
      else
        case "$(readlink -f "$path")" in
        "$(readlink -f "$out")"/*) ;;
        *)
          echo "$prog: $f: $name resolves outside the bundle, to $path" >&2
          bad=1
          ;;
        esac
      fi
    done < <(deps "$f")
  done
  [ $bad = 0 ] || return 1
  echo "$prog: $out: $n files checked: every library beyond the C library and CUDA resolves into the bundle"
}

if [ $check_only = 1 ]; then
  check "$@"
  exit
fi

for p in "$@"; do
  [ -f "$p" ] || { echo "$prog: $p: no such program" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/include" "$out/lib/cc"
# headers: exactly those our sources include (grep '#include <' common prep hdf5gen)
hdf5inc=$(ls -d /usr/include/hdf5/serial 2>/dev/null || true)
for h in "$hdf5inc/hdf5.h" /usr/include/unicode /usr/include/expat.h /usr/include/expat_external.h \
  /usr/include/bzlib.h /usr/include/libdeflate.h /usr/include/pcre2.h; do
  [ -e "$h" ] || { echo "$prog: $h not found (install the -dev packages here first: mk/deps.sh)" >&2; exit 1; }
done
cp -a "$hdf5inc/." "$out/include/"
cp -a /usr/include/unicode "$out/include/"
cp -a /usr/include/expat.h /usr/include/expat_external.h /usr/include/bzlib.h /usr/include/libdeflate.h \
  /usr/include/pcre2.h "$out/include/"

# copy a library file under NAME (its soname) into lib/ or lib/cc/
add() { # NAME PATH
  local dest=$out/lib
  cc_runtime "$1" && dest=$out/lib/cc
  [ -e "$dest/$1" ] && return 0
  cp -L "$2" "$dest/$1"
  chmod u+w "$dest/$1"
  return 0
}
# the libraries -l names: the file the -dev package's link name points at
link_names=(hdf5 icuuc icudata expat bz2 deflate pcre2-8)
for l in "${link_names[@]}"; do
  f=""
  if [ "$l" = hdf5 ]; then
    f=$(ls /usr/lib/*/hdf5/serial/libhdf5.so 2>/dev/null | head -1 || true)
  else
    f=$("$CC" -print-file-name="lib$l.so")
    [ "$f" = "lib$l.so" ] && f=""
  fi
  [ -n "$f" ] && [ -e "$f" ] || { echo "$prog: lib$l.so not found (install the -dev packages here first: mk/deps.sh)" >&2; exit 1; }
  so=$(readelf -d "$(readlink -f "$f")" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ -n "$so" ] || { echo "$prog: $f: no soname" >&2; exit 1; }
  add "$so" "$f"
  ln -sf "$so" "$out/lib/lib$l.so"
done
# the compiler's runtime, for programs built here
for l in libstdc++.so.6 libgcc_s.so.1 libgomp.so.1; do
  f=$("$CC" -print-file-name="$l")
  [ "$f" != "$l" ] && [ -e "$f" ] && add "$l" "$f"
done
# everything those and the programs load (ldd lists the whole closure;
# a second round finds nothing new unless a library was added)
for round in 1 2; do
  for f in "$out"/lib/*.so* "$out"/lib/cc/*.so* "$@"; do
    [ -L "$f" ] && continue
    while read -r name path; do
      system_lib "$name" && continue
      if [ "$path" = not ]; then
        echo "$prog: $f needs $name, which is not found here" >&2
        exit 1
      fi
      add "$name" "$path"
    done < <(deps "$f")
  done
done
# shared libraries of a distribution are stripped already; strip what is not
if command -v strip >/dev/null; then
  for f in "$out"/lib/*.so* "$out"/lib/cc/*.so*; do
    [ -L "$f" ] || strip --strip-unneeded "$f" 2>/dev/null || true
  done
fi
check "$@"
echo "$prog: $out: $(find "$out/lib" -type f | wc -l) libraries, $(du -sm "$out" | cut -f1) MB" \
  "($(du -sm "$out/include" | cut -f1) MB of headers)"
