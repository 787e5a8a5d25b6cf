#!/usr/bin/env bash
# A real single-node SLURM cluster (munge + slurmctld + slurmd from the Debian packages
# slurm-wlm and munge) for kernbench's cluster test (tests/cluster/run.sh, `make
# test-cluster`): `kernbench sweep --backend slurm` submits its job arrays to it
# (docs/sweeps.md). Needs root. Everything lives under DIR; the daemons are stopped by
# the pids recorded there. The node has as many CPUs as the machine; the partition is
# `debug`; the ports are SLURM's defaults (6817, 6818), so one such cluster runs at a time.
#
#   slurm-single-node.sh start DIR   install if missing, start, wait until the node is idle,
#                                    print `export SLURM_CONF=...` for the caller to eval
#   slurm-single-node.sh stop DIR    stop the daemons started by `start DIR`
#   slurm-single-node.sh status DIR  show sinfo for the cluster in DIR
set -euo pipefail

die() { echo "slurm-single-node: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: $0 start|stop|status DIR"
cmd=$1; dir=$(mkdir -p "$2" && cd "$2" && pwd)
export SLURM_CONF=$dir/slurm.conf

install_if_missing() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null && return
  [ "$(id -u)" -eq 0 ] || die "slurm-wlm and munge are missing; run: apt-get install slurm-wlm munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; } ||
    die "could not install slurm-wlm and munge"
}

# Waits up to $1 seconds for the command that follows to succeed.
wait_for() { local t=$1; shift; for _ in $(seq 1 $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }

start() {
  [ "$(id -u)" -eq 0 ] || die "must run as root"
  install_if_missing
  [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null && die "already running in $dir"
  local host; host=$(hostname -s)
  mkdir -p "$dir"/{state,spool,log,munge,munge-key}
  chmod 755 "$dir"
  # munge: its own key (private dir) and socket (a dir everyone can enter), as the munge user.
  chown munge:munge "$dir/munge" "$dir/munge-key"; chmod 755 "$dir/munge"; chmod 700 "$dir/munge-key"
  [ -f "$dir/munge-key/munge.key" ] || { dd if=/dev/urandom of="$dir/munge-key/munge.key" bs=1024 count=1 2>/dev/null
    chown munge:munge "$dir/munge-key/munge.key"; chmod 400 "$dir/munge-key/munge.key"; }
  runuser -u munge -- munged --key-file="$dir/munge-key/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
  cat >"$dir/slurm.conf" <<EOF
ClusterName=local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  slurmctld -f "$dir/slurm.conf"
  wait_for 20 test -s "$dir/slurmctld.pid" || die "slurmctld did not start (see $dir/log/slurmctld.log)"
  slurmd -f "$dir/slurm.conf"
  wait_for 20 test -s "$dir/slurmd.pid" || die "slurmd did not start (see $dir/log/slurmd.log)"
  wait_for 60 bash -c "sinfo -h -o %t | grep -qx idle" || die "node not idle after 60 s: $(sinfo 2>&1 | tail -1)"
  echo "export SLURM_CONF=$dir/slurm.conf"
}

stop() {
  local f pid
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    [ -f "$dir/$f" ] || continue
    pid=$(cat "$dir/$f"); kill "$pid" 2>/dev/null || true
    wait_for 10 bash -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$f"
  done
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) sinfo ;;
  *) die "unknown command $cmd (start, stop, status)" ;;
esac
