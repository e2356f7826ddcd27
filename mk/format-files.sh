#!/usr/bin/env bash
# mk/format-files.sh - the C, CUDA and header files that make format
# rewrites and tests/cli/format.sh checks: every one of the tree's own
# source folders, one path a line, from the repository root.
#
#   mk/format-files.sh
set -eu
cd "$(dirname "$0")/.."
find common prep tokenize vocab shard hdf5gen train tests -type f \
  \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | LC_ALL=C sort
