#!/usr/bin/env bash
# mk/ncpus.sh - the CPUs this shell may use, for make's JOBS default: nproc
# (which honours the affinity mask: taskset, Slurm cpusets) capped by the
# cgroup CPU quota (containers, Kubernetes limits), which nproc ignores.
# The same rules as common/cpus.c: v2 cpu.max, v1 cpu.cfs_quota_us /
# cpu.cfs_period_us, of the process's cgroup and those above it, rounded
# up, at least 1.
#
#   mk/ncpus.sh [ROOT]      ROOT is prepended to /proc and /sys (tests)
set -u
root=${1:-}
n=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)

# ceil(quota / period) of one directory, or nothing
dir_limit() { # DIR v1|v2
  local q p
  if [ "$2" = v2 ]; then
    read -r q p 2>/dev/null <"$1/cpu.max" || return 0
  else
    read -r q 2>/dev/null <"$1/cpu.cfs_quota_us" || return 0
    read -r p 2>/dev/null <"$1/cpu.cfs_period_us" || return 0
  fi
  p=${p:-100000}
  [[ "$q" =~ ^[0-9]+$ && "$p" =~ ^[0-9]+$ ]] || return 0
  [ "$q" -gt 0 ] && [ "$p" -gt 0 ] || return 0
  echo $(((q + p - 1) / p))
}

best=0
take() { [ -n "$1" ] && { [ "$best" -eq 0 ] || [ "$1" -lt "$best" ]; } && best=$1; return 0; }

# from MOUNT/CGROUP up to MOUNT (a container's host path may not exist below it)
walk() { # MOUNT CGROUP v1|v2
  local d=$1${2%/}
  while :; do
    take "$(dir_limit "$d" "$3")"
    [ "${#d}" -le "${#1}" ] && break
    d=${d%/*}
    [ "${#d}" -lt "${#1}" ] && d=$1
  done
}

if [ -r "$root/proc/self/cgroup" ]; then
  while IFS=: read -r id ctrl cg; do
    if [ "$id" = 0 ] && [ -z "$ctrl" ]; then
      walk "$root/sys/fs/cgroup" "$cg" v2
    elif [[ ",$ctrl," == *,cpu,* ]]; then
      for m in cpu cpu,cpuacct cpuacct,cpu; do
        [ -e "$root/sys/fs/cgroup/$m" ] && { walk "$root/sys/fs/cgroup/$m" "$cg" v1; break; }
      done
    fi
  done <"$root/proc/self/cgroup"
fi
[ "$best" -gt 0 ] && [ "$best" -lt "$n" ] && n=$best
echo "$n"
