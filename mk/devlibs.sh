#!/usr/bin/env bash
# mk/devlibs.sh - bundle the headers and shared libraries the build needs
# (HDF5, ICU, expat, bzip2, libdeflate) into one directory, for a machine
# that lacks the Debian -dev packages and cannot reach a package mirror
# (a lent GPU machine): copy DIR there and build with `make DEVLIBS=DIR`
# (include path, library path and rpath point into DIR; mk/deps.sh is
# skipped).
#
#   mk/devlibs.sh build/devlibs
set -eu
out=${1:?usage: mk/devlibs.sh DIR}
rm -rf "$out"
mkdir -p "$out/include" "$out/lib"
cp -a /usr/include/hdf5/serial/. "$out/include/"
cp -a /usr/include/unicode "$out/include/"
cp -a /usr/include/expat.h /usr/include/expat_external.h /usr/include/bzlib.h /usr/include/libdeflate.h "$out/include/"
# each library: the versioned file its soname names, and the name -l looks for
bundle() { # -l name, file pattern
  local f
  f=$(ls /usr/lib/*/$2 2>/dev/null | head -1)
  [ -n "$f" ] || { echo "mk/devlibs.sh: $2 not found (install the -dev packages here first)" >&2; exit 1; }
  cp -L "$f" "$out/lib/"
  ln -sf "$(basename "$f")" "$out/lib/lib$1.so"
}
bundle hdf5 'libhdf5_serial.so.[0-9]*[0-9]'
bundle sz 'libsz.so.[0-9]'
bundle aec 'libaec.so.[0-9]'
bundle icuuc 'libicuuc.so.[0-9][0-9]'
bundle icudata 'libicudata.so.[0-9][0-9]'
bundle expat 'libexpat.so.[0-9]'
bundle bz2 'libbz2.so.1.0'
bundle deflate 'libdeflate.so.[0-9]'
du -sh "$out"
