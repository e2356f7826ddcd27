#!/usr/bin/env bash
# pipelines/dir_stage.sh - one directory stage of the workflows (common.mk's
# dir_stage): COMMAND writes into DIR.tmp; when it succeeds, DIR.tmp/.complete
# is made and DIR.tmp renamed to DIR; when it fails or a signal stops it,
# DIR.tmp is removed, so no stage leaves a temp directory behind.
#
#   pipelines/dir_stage.sh DIR COMMAND [ARG...]
#   pipelines/dir_stage.sh work/en/hdf5_... bin/hdf5gen ... -o work/en/hdf5_....tmp/wikicorpus_en/ SHARDS...
#
# What gets a signal: `kill MAKE` makes make send SIGTERM to its recipe's
# process (this script: the recipe line execs it) and exit at once; a Ctrl-C
# reaches the whole foreground process group; a batch system or `timeout`
# signals the process group. A shell runs its trap only after the command
# it waits for ends, so COMMAND runs in the background and this script
# waits for it: on SIGINT, SIGTERM or SIGHUP the trap sends SIGTERM to
# COMMAND (a background command of a script ignores SIGINT), waits until it
# has removed its own temp files, removes DIR.tmp, and ends by the same
# signal, so that make sees the interruption. An older DIR, and a DIR.tmp
# that a kill -9 left, are removed first.
set -eu
dir=$1
shift
running=0
stop() {
  # the same signal may come again while this cleans up (SIGTERM to the
  # process group, then make's own SIGTERM to its recipe): ignored until
  # DIR.tmp is gone, then this script ends by the first one
  trap '' INT TERM HUP
  if [ "$running" = 1 ] && [ -n "${!:-}" ]; then # $!: set as soon as COMMAND started
    kill -TERM "$!" 2>/dev/null || true
    wait "$!" 2>/dev/null || true
  fi
  rm -rf -- "$dir.tmp"
  trap - "$1"
  kill -"$1" $$
}
for sig in INT TERM HUP; do
  # shellcheck disable=SC2064 # the signal's name, now
  trap "stop $sig" "$sig"
done
rm -rf -- "$dir" "$dir.tmp"
running=1
"$@" &
rc=0
wait "$!" || rc=$?
running=0
if [ "$rc" -ne 0 ]; then
  rm -rf -- "$dir.tmp"
  exit "$rc"
fi
touch "$dir.tmp/.complete"
mv -- "$dir.tmp" "$dir"
