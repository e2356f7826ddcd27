#!/usr/bin/env bash
# mk/slurm_local.sh - a Slurm cluster of two nodes on this one machine, to
# try the recipes of examples/slurm (and for tests/cli/slurm.sh): Debian
# 12's munged, slurmctld and two slurmd (nodes n1 and n2), everything they
# write (config, key, state, spool, logs, PIDs) in one folder of their own,
# without systemd or cgroups. Root only: slurmd runs the jobs.
#
#   mk/slurm_local.sh install          apt-get install munge slurmctld slurmd slurm-client
#   mk/slurm_local.sh start DIR        start; prints "export SLURM_CONF=DIR/slurm.conf"
#   mk/slurm_local.sh stop DIR         cancel the jobs, end the daemons (by their PIDs)
#
# Each node has WB_NODE_CPUS (default 4) CPUs and WB_NODE_MEM (4000) MB whatever the machine
# has (SlurmdParameters=config_overrides), and 8 GPUs as GRES (device
# files made with mknod in DIR: there is no GPU behind them; jobs see
# CUDA_VISIBLE_DEVICES as on a GPU node). Three free TCP ports are picked
# at start. Jobs' exit codes: DIR/jobcomp.txt (no slurmdbd). The facts
# that make this work: proctrack/linuxproc, task/none, select/cons_tres
# with CR_CPU_Memory, jobacct_gather/none, accounting_storage/none,
# SlurmUser=root, per-node spool, PID and log names (%n), slurmd -N NODE.
# Exit status: 0 ok; 1 a daemon did not start (its log's end is shown);
# 2 bad usage, not root, or the programs are missing.
set -eu -o pipefail
usage() {
  echo "usage: mk/slurm_local.sh install | start DIR | stop DIR" >&2
  exit 2
}
[ $# -ge 1 ] || usage
need=(munged slurmctld slurmd sbatch)

install() {
  local p missing=()
  for p in "${need[@]}"; do command -v "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || {
    echo "slurm_local: ${missing[*]} missing: apt-get install munge slurmctld slurmd slurm-client (as root)" >&2
    return 2
  }
  export DEBIAN_FRONTEND=noninteractive
  local apt=(apt-get install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client)
  timeout 300 "${apt[@]}" >/dev/null 2>&1 ||
    { timeout 300 apt-get update -qq >/dev/null 2>&1 && timeout 300 "${apt[@]}" >/dev/null 2>&1; } || {
    echo "slurm_local: apt-get install munge slurmctld slurmd slurm-client failed" >&2
    return 2
  }
}

# free_ports N: the first of N free consecutive TCP ports (none listening)
free_ports() {
  local used base i ok
  used=$(for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] && tail -n +2 "$f"
  done | while read -r _ addr _ st _; do [ "$st" = 0A ] && echo $((16#${addr##*:})); done | sort -u)
  for _ in $(seq 50); do
    base=$((20000 + RANDOM % 40000)) ok=1
    for ((i = 0; i < $1; i++)); do grep -qx "$((base + i))" <<<"$used" && ok=0; done
    [ $ok = 1 ] && { echo "$base"; return 0; }
  done
  echo "slurm_local: no free TCP ports found" >&2
  return 1
}

# wait_for SECONDS CMD...: until CMD succeeds; status 1 after SECONDS
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}

start() {
  local d=$1 host port p
  [ "$(id -u)" = 0 ] || { echo "slurm_local: start needs root (slurmd runs the jobs)" >&2; exit 2; }
  for p in "${need[@]}"; do
    command -v "$p" >/dev/null 2>&1 || { echo "slurm_local: $p is not installed (mk/slurm_local.sh install)" >&2; exit 2; }
  done
  mkdir -p "$d"
  d=$(cd "$d" && pwd)
  [ ! -e "$d/pids" ] || { echo "slurm_local: $d: started before (mk/slurm_local.sh stop $d)" >&2; exit 2; }
  mkdir -p "$d/munge" "$d/state" "$d/spool/n1" "$d/spool/n2" "$d/log" "$d/gres"
  chmod 755 "$d" "$d/munge" # munged wants its socket's folder open to all
  : >"$d/pids"
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge/munge.key"
  munged -F --key-file="$d/munge/munge.key" --socket="$d/munge/socket" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/log/munged.log" --seed-file="$d/munge/seed" >"$d/log/munged.out" 2>&1 &
  echo "munged $!" >>"$d/pids"
  wait_for 10 test -S "$d/munge/socket" || { tail -5 "$d/log/munged.out" >&2; stop "$d"; exit 1; }
  for i in 0 1 2 3 4 5 6 7; do
    mknod "$d/gres/gpu$i" c 1 3 2>/dev/null || : >"$d/gres/gpu$i"
  done
  host=$(uname -n) host=${host%%.*}
  port=$(free_ports 3)
  cat >"$d/slurm.conf" <<EOF
# written by mk/slurm_local.sh: two nodes on $host, everything under $d
ClusterName=wblocal
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$d/jobcomp.txt
MpiDefault=none
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
NodeName=n[1-2] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((port + 1))-$((port + 2))] CPUs=${WB_NODE_CPUS:-4} RealMemory=${WB_NODE_MEM:-4000} Gres=gpu:8 State=UNKNOWN
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$d/gres.conf" <<EOF
AutoDetect=off
NodeName=n[1-2] Name=gpu File=$d/gres/gpu[0-7]
EOF
  export SLURM_CONF=$d/slurm.conf
  slurmctld -D >"$d/log/slurmctld.out" 2>&1 &
  echo "slurmctld $!" >>"$d/pids"
  for n in n1 n2; do
    slurmd -D -N "$n" >"$d/log/slurmd-$n.out" 2>&1 &
    echo "slurmd-$n $!" >>"$d/pids"
  done
  if ! wait_for 30 eval '[ "$(sinfo -h -N -o %T 2>/dev/null | grep -c "^idle")" = 2 ]'; then
    echo "slurm_local: the nodes did not come up in 30 s:" >&2
    tail -n 5 "$d"/log/*.log "$d"/log/*.out >&2 || true
    stop "$d"
    exit 1
  fi
  echo "export SLURM_CONF=$d/slurm.conf"
}

none_alive() { # PID...: none of them runs
  local p
  for p in "$@"; do ! kill -0 "$p" 2>/dev/null || return 1; done
}

stop() {
  local d=$1 pid p
  [ -e "$d/pids" ] || return 0
  d=$(cd "$d" && pwd)
  if [ -e "$d/slurm.conf" ]; then # the jobs first, while slurmctld is there to end them
    export SLURM_CONF=$d/slurm.conf
    local jobs
    jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u) || true
    [ -z "$jobs" ] || timeout 10 scancel $jobs 2>/dev/null || true
    wait_for 10 eval '[ -z "$(timeout 5 squeue -h 2>/dev/null)" ]' || true
  fi
  # all at once (each takes a second or two to end), then what is left by force
  local pids
  pids=$(awk '{ print $2 }' "$d/pids")
  kill $pids 2>/dev/null || true
  wait_for 10 none_alive $pids || true
  kill -9 $pids 2>/dev/null || true
  # what is left when jobs did not end in time: a slurmstepd (it holds a
  # daemon's log open) and the jobs' processes (SLURM_JOB_ID and this
  # cluster's SLURM_CONF in their environment)
  local env
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" != $$ ] || continue
    if readlink "$p"/fd/* 2>/dev/null | grep -q "^$d/log/"; then
      kill -9 "$pid" 2>/dev/null || true
    elif env=$(tr '\0' '\n' 2>/dev/null <"$p/environ") && grep -qxF "SLURM_CONF=$d/slurm.conf" <<<"$env" &&
      grep -q '^SLURM_JOB_ID=' <<<"$env"; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$d/pids"
}

case $1 in
install) [ $# -eq 1 ] || usage; install ;;
start) [ $# -eq 2 ] || usage; start "$2" ;;
stop) [ $# -eq 2 ] || usage; stop "$2" ;;
*) usage ;;
esac
