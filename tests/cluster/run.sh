#!/usr/bin/env bash
# The cluster test of `kernbench sweep` (`make test-cluster`; docs/sweeps.md "Backends"):
# a 24-point sweep (sweeps/scale_probe.lua, SCALE_POINTS=24: one probe case per point)
# is run with the local backend for reference, then through each remote backend:
#
#   slurm     on a real single-node SLURM cluster (tests/cluster/slurm-single-node.sh,
#             started in a temporary directory and stopped on exit), 3 points per task;
#   parallel  GNU parallel with the local login `--sshlogin :`.
#
# Each remote run is killed (SIGKILL, the sweep process alone: its job array or its GNU
# parallel runs on) once part of the points are journaled, then resumed with --resume,
# which follows what still runs and runs what is missing. The test then checks that
# results.csv and results.json are byte for byte those of the local run and that the
# journal holds every point once. Needs root (the cluster's daemons) and the Debian
# packages slurm-wlm, munge and parallel: without them it says so and fails.
#
#   tests/cluster/run.sh [KERNBENCH]     default: build/bin/kernbench
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kb=$(cd "$root" && realpath "${1:-build/bin/kernbench}")
sweep=$root/sweeps/scale_probe.lua
export SCALE_POINTS=24
t_start=$(date +%s)

fail() { echo "test-cluster: FAILED: $*" >&2; exit 1; }
say() { echo "test-cluster: $*"; }

[ -x "$kb" ] || fail "no kernbench at $kb (build it first: make build)"
[ "$(id -u)" = 0 ] || fail "needs root to start the SLURM daemons (slurmctld, slurmd, munged); not run"
for c in sbatch squeue scontrol slurmctld slurmd munged parallel; do
  command -v "$c" >/dev/null || fail "$c is missing: apt-get install slurm-wlm munge parallel (make test-cluster does)"
done

tmp=$(mktemp -d /tmp/kb_cluster.XXXXXX)
chmod 755 "$tmp" # the munge user enters it (its socket and key live below)
sweep_pid=
cleanup() {
  [ -n "$sweep_pid" ] && kill -9 "$sweep_pid" 2>/dev/null
  if [ -n "${SLURM_CONF:-}" ]; then
    ids=$(cut -d' ' -f1 "$tmp"/slurm/slurm/jobs.txt 2>/dev/null | tr '\n' ' ')
    [ -n "$ids" ] && scancel $ids 2>/dev/null
  fi
  # a GNU parallel left running by a failed check (its process group)
  if [ -f "$tmp/parallel/parallel/pid" ]; then
    read -r p _ <"$tmp/parallel/parallel/pid" && kill -TERM -- "-$p" 2>/dev/null
  fi
  "$here/slurm-single-node.sh" stop "$tmp/cluster" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

say "starting a single-node SLURM cluster in $tmp/cluster"
env_line=$("$here/slurm-single-node.sh" start "$tmp/cluster") || fail "could not start SLURM (see $tmp/cluster/log)"
eval "$env_line"
[ -n "${SLURM_CONF:-}" ] || fail "the cluster script printed no SLURM_CONF"
sinfo -h -o '%P %t %c' | sed 's/^/test-cluster: sinfo: /'

cd "$root" || exit 1
say "reference run: --backend local"
"$kb" sweep "$sweep" --out "$tmp/local" -j 2 >"$tmp/local.log" 2>&1 || { cat "$tmp/local.log"; fail "the local run failed"; }

journaled() { [ -f "$1/journal.jsonl" ] && wc -l <"$1/journal.jsonl" || echo 0; }

# failed_points OUT: each failed point's journal line and the end of its log.
failed_points() {
  grep -v '"status":"ok"' "$1/journal.jsonl" 2>/dev/null | sed 's/^/test-cluster: journal: /'
  for f in "$1"/logs/*; do
    [ -f "$f" ] && grep -qiE 'error|fail|killed|signal' "$f" && { echo "test-cluster: log $f:"; tail -5 "$f"; }
  done
}

# run_killed NAME ARGS...: starts the sweep, kills it (SIGKILL) once at least 6 and fewer
# than 24 points are journaled, resumes it, and compares its results with the local run's.
run_killed() {
  local name=$1; shift
  local out=$tmp/$name
  say "$name: $*; killed part-way, then resumed"
  "$kb" sweep "$sweep" --out "$out" "$@" >"$tmp/$name.1.log" 2>&1 &
  sweep_pid=$!
  local n=0 waited=0
  while kill -0 "$sweep_pid" 2>/dev/null; do
    n=$(journaled "$out")
    [ "$n" -ge 6 ] && break
    sleep 0.05
    waited=$((waited + 1))
    [ "$waited" -gt 2400 ] && { cat "$tmp/$name.1.log"; fail "$name: no 6 points journaled in 120 s"; }
  done
  kill -0 "$sweep_pid" 2>/dev/null || { cat "$tmp/$name.1.log"; fail "$name: the sweep ended before it could be killed"; }
  kill -9 "$sweep_pid"
  wait "$sweep_pid" 2>/dev/null
  sweep_pid=
  n=$(journaled "$out")
  say "$name: killed with $n of 24 points journaled"
  [ "$n" -lt 24 ] || fail "$name: all points were journaled before the kill; nothing left to resume"
  "$kb" sweep "$sweep" --out "$out" "$@" --resume >"$tmp/$name.2.log" 2>&1 ||
    { cat "$tmp/$name.1.log" "$tmp/$name.2.log"; failed_points "$out"; fail "$name: the resumed run failed"; }
  grep -E 'following|adopted|point\(s\):' "$tmp/$name.2.log" | sed "s/^/test-cluster: $name: /"
  for f in results.csv results.json; do
    cmp -s "$tmp/local/$f" "$out/$f" || { diff "$tmp/local/$f" "$out/$f" | head -20; fail "$name: $f differs from the local run's"; }
  done
  local lines ids
  lines=$(wc -l <"$out/journal.jsonl")
  ids=$(grep -o '"id":"[0-9a-f]*"' "$out/journal.jsonl" | sort -u | wc -l)
  [ "$lines" = 24 ] && [ "$ids" = 24 ] || fail "$name: the journal has $lines lines for $ids points (24 expected, each once)"
  say "$name: results.csv and results.json equal the local run's; the journal holds each point once"
}

run_killed slurm --backend slurm --points-per-task 3 --max-running 8 --slurm-opt partition=debug --slurm-opt time=10
[ -s "$tmp/slurm/slurm/sweep.sbatch" ] || fail "slurm: no sweep.sbatch written"
[ "$(wc -l <"$tmp/slurm/slurm/jobs.txt")" -ge 1 ] || fail "slurm: no job recorded in jobs.txt"
run_killed parallel --backend parallel --sshlogin : -j 2

say "passed in $(( $(date +%s) - t_start )) s"
