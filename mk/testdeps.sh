#!/usr/bin/env bash
# mk/testdeps.sh - optional Debian packages the comparison tests use
# (python3-sentencepiece: the tests check that SentencePiece loads and
# encodes with the models we write; python3-h5py: NVIDIA's HDF5 reader
# is run on the files hdf5gen writes; clang-format: tests/cli/format.sh
# checks that every C file is formatted; help2man: tests/cli/install.sh
# checks the man pages; munge, slurmctld, slurmd, slurm-client: the local
# Slurm of tests/cli/slurm.sh, which runs the recipes of examples/slurm;
# openmpi-bin: tests/cli/mpi.sh runs pipelines/hdf5_array.sh under mpirun).
# Installed when run as root and apt-get is there (Slurm's and Open MPI's
# without recommended packages); never fails: without them those checks
# say they did not run and count nothing (the Slurm and MPI tests try the
# install once more themselves). Installing slurmd and munge starts no
# daemon the tests use: tests/cli/slurm.sh starts its own (mk/slurm_local.sh).
# WIKIBERT_NO_INSTALL=1 skips the attempt.
#
#   mk/testdeps.sh
set -u
[ "${WIKIBERT_NO_INSTALL:-0}" = 1 ] && exit 0
want=()
/usr/bin/python3 -c 'import sentencepiece' >/dev/null 2>&1 || want+=(python3-sentencepiece)
/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1 || want+=(python3-h5py)
command -v clang-format >/dev/null 2>&1 || want+=(clang-format)
command -v help2man >/dev/null 2>&1 || want+=(help2man)
lean=() # installed without their recommended packages (Slurm's recommend dozens of plugins)
command -v munged >/dev/null 2>&1 || lean+=(munge)
command -v slurmctld >/dev/null 2>&1 || lean+=(slurmctld)
command -v slurmd >/dev/null 2>&1 || lean+=(slurmd)
command -v sbatch >/dev/null 2>&1 || lean+=(slurm-client)
command -v mpirun >/dev/null 2>&1 || lean+=(openmpi-bin)
[ $((${#want[@]} + ${#lean[@]})) -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "testdeps: installing ${want[*]} ${lean[*]} (optional, for comparison tests)" >&2
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 apt-get update -qq >/dev/null 2>&1
  if [ ${#want[@]} -gt 0 ]; then
    timeout 300 apt-get install -y -qq "${want[@]}" >/dev/null 2>&1 ||
      echo "testdeps: could not install ${want[*]}; the checks that need it will not run" >&2
  fi
  if [ ${#lean[@]} -gt 0 ]; then
    timeout 300 apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null 2>&1 ||
      echo "testdeps: could not install ${lean[*]}; the checks that need it will not run" >&2
  fi
else
  echo "testdeps: optional: apt-get install -y ${want[*]} ${lean[*]} (enables the comparison and format tests)" >&2
fi
exit 0
