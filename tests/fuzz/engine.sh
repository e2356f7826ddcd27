#!/usr/bin/env bash
# tests/fuzz/engine.sh - can CC link a libFuzzer program under ASan/UBSan?
#
#   tests/fuzz/engine.sh [CC]      exit 0: yes; 1: no (make fuzz then uses
#                                  the plain driver, tests/fuzz/driver.c)
# libFuzzer's runtime is Debian's libclang-rt-<version>-dev: installed here
# when missing and run as root (as mk/deps.sh installs the libraries),
# otherwise the apt-get line is printed.
set -u
CC=${1:-clang}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$tmp/p.c"
probe() { "$CC" -fsanitize=fuzzer,address,undefined "$tmp/p.c" -o "$tmp/p" >/dev/null 2>&1; }

if ! command -v "$CC" >/dev/null 2>&1; then
  echo "fuzz: no $CC: the plain driver runs the targets (for libFuzzer: apt-get install -y clang libclang-rt-dev)" >&2
  exit 1
fi
probe && exit 0
ver=$("$CC" -dumpversion 2>/dev/null | cut -d. -f1)
pkg=libclang-rt-${ver:-14}-dev
line="apt-get install -y $pkg"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "fuzz: installing $pkg (libFuzzer's runtime)" >&2
  export DEBIAN_FRONTEND=noninteractive
  { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$pkg"; } >&2 && probe && exit 0
  echo "fuzz: $CC still cannot link libFuzzer: the plain driver runs the targets" >&2
  exit 1
fi
echo "fuzz: $CC cannot link libFuzzer; as root run: apt-get update && $line" >&2
echo "fuzz: meanwhile the plain driver runs the targets" >&2
exit 1
