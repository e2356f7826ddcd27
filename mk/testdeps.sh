#!/usr/bin/env bash
# mk/testdeps.sh - optional Debian packages the comparison tests use
# (python3-sentencepiece: the tests check that SentencePiece loads and
# encodes with the models we write; python3-h5py: NVIDIA's HDF5 reader
# is run on the files hdf5gen writes; clang-format: tests/cli/format.sh
# checks that every C file is formatted; help2man: tests/cli/install.sh
# checks the man pages). Installed when run as root and
# apt-get is there; never fails: without them those checks say they did
# not run and count nothing. WIKIBERT_NO_INSTALL=1 skips the attempt.
#
#   mk/testdeps.sh
set -u
[ "${WIKIBERT_NO_INSTALL:-0}" = 1 ] && exit 0
want=()
/usr/bin/python3 -c 'import sentencepiece' >/dev/null 2>&1 || want+=(python3-sentencepiece)
/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1 || want+=(python3-h5py)
command -v clang-format >/dev/null 2>&1 || want+=(clang-format)
command -v help2man >/dev/null 2>&1 || want+=(help2man)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "testdeps: installing ${want[*]} (optional, for comparison tests)" >&2
  export DEBIAN_FRONTEND=noninteractive
  { timeout 300 apt-get update -qq && timeout 300 apt-get install -y -qq "${want[@]}"; } >/dev/null 2>&1 ||
    echo "testdeps: could not install ${want[*]}; the checks that need it will not run" >&2
else
  echo "testdeps: optional: apt-get install -y ${want[*]} (enables the comparison and format tests)" >&2
fi
exit 0
