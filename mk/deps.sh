#!/usr/bin/env bash
# mk/deps.sh - find the Debian packages this build needs by compiling a tiny
# probe program against each library (not by asking dpkg), install what is
# missing when run as root, otherwise print the exact apt-get line and fail.
#
#   mk/deps.sh [CC]        exit 0 when every library links
set -u
CC=${1:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# package | header | function call | link flags
probes=(
  "libbz2-dev|bzlib.h|BZ2_bzlibVersion()|-lbz2"
  "libexpat1-dev|expat.h|XML_ExpatVersion()|-lexpat"
  "libpcre2-dev|pcre2.h|pcre2_compile(0,0,0,0,0,0)|-lpcre2-8"
  "libicu-dev|unicode/uchar.h|u_isalpha(65)|-licuuc"
  "libhdf5-dev|hdf5.h|H5open()|HDF5"
  "libdeflate-dev|libdeflate.h|libdeflate_alloc_compressor(4)|-ldeflate"
)
tools=("hdf5-tools|h5dump" "bzip2|bzip2")

hdf5_flags() {
  local inc lib
  inc=$(ls -d /usr/include/hdf5/serial 2>/dev/null)
  lib=$(ls -d /usr/lib/*/hdf5/serial 2>/dev/null | head -1)
  echo "${inc:+-I$inc} ${lib:+-L$lib} -lhdf5"
}

missing=()
probe_all() {
  missing=()
  for p in "${probes[@]}"; do
    IFS='|' read -r pkg hdr call flags <<<"$p"
    [ "$flags" = HDF5 ] && flags=$(hdf5_flags)
    if [ "$pkg" = libpcre2-dev ]; then
      printf '#define PCRE2_CODE_UNIT_WIDTH 8\n#include <%s>\nint main(void){ (void)%s; return 0; }\n' "$hdr" "$call" >"$tmp/p.c"
    else
      printf '#include <%s>\nint main(void){ (void)%s; return 0; }\n' "$hdr" "$call" >"$tmp/p.c"
    fi
    # shellcheck disable=SC2086
    $CC "$tmp/p.c" -o "$tmp/p" $flags >/dev/null 2>&1 || missing+=("$pkg")
  done
  for t in "${tools[@]}"; do
    IFS='|' read -r pkg cmd <<<"$t"
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  done
}

probe_all
[ ${#missing[@]} -eq 0 ] && exit 0
line="apt-get install -y ${missing[*]}"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Another apt (a fresh machine's own update) may hold the locks: wait for
  # it, up to 10 minutes, instead of failing the build.
  lockwait=(-o DPkg::Lock::Timeout=600)
  for i in $(seq 120); do
    fuser /var/lib/apt/lists/lock /var/lib/dpkg/lock-frontend >/dev/null 2>&1 || break
    [ "$i" = 1 ] && echo "deps: waiting for another apt-get to finish" >&2
    sleep 5
  done
  { apt-get "${lockwait[@]}" update -qq && apt-get "${lockwait[@]}" install -y -qq "${missing[@]}"; } >&2 || {
    echo "deps: installation failed; run: $line" >&2; exit 1; }
  probe_all
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "deps: still missing after install: ${missing[*]}" >&2
  exit 1
fi
echo "deps: missing Debian packages. Run as root:" >&2
echo "  apt-get update && $line" >&2
exit 1
