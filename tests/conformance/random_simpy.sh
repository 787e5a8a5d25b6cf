#!/usr/bin/env bash
# The random models of random_models.lua against real SimPy 3: for each seed,
# kernbench's log (`random_models.lua SEED COUNT kb`) must equal the log of
# random_models.py (the same generator and runner, ported to Python, run with
# Debian's python3-simpy3 by /usr/bin/python3).
#   random_simpy.sh KERNBENCH [SEED [COUNT]]     seeds SEED .. SEED+COUNT-1
#                                               (default 1 1000)
# Seeds run in batches of 1000 (one kernbench and one Python process each). On
# the first differing seed it prints a few lines of both logs, which side
# simpy_model.lua agrees with, and the commands that reproduce it, and exits 1;
# otherwise it prints a summary line.
set -u

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=/usr/bin/python3
batch=1000

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 KERNBENCH [SEED [COUNT]]" >&2
  exit 2
fi
kb=$1
first=${2:-1}
count=${3:-1000}
case "$first$count" in
  *[!0-9-]*) echo "usage: $0 KERNBENCH [SEED [COUNT]]" >&2; exit 2 ;;
esac
if [ ! -x "$kb" ]; then
  echo "random_simpy.sh: $kb is not executable" >&2
  exit 2
fi
if ! [ -x "$python" ] || ! "$python" -c 'import simpy' >/dev/null 2>&1; then
  echo "random_simpy.sh: SimPy 3 is not importable by $python; install it as root with:"
  echo "  apt-get install -y --no-install-recommends python3-simpy3"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# first_diff A B: the first line number where files A and B differ (empty if
# they are the same)
first_diff() {
  awk 'NR == FNR { a[NR] = $0; na = NR; next }
       { nb = FNR; if (FNR > na || a[FNR] != $0) { print FNR; found = 1; exit } }
       END { if (!found && nb < na) print nb + 1 }' "$1" "$2"
}

# every seed's log ends with its `main final state` line (or a BUILD ERROR)
end_re='^t=[0-9]+ main final state |^BUILD ERROR: '

# seed_log FILE SEED0 SEED: the log of SEED in FILE (a batch from SEED0)
seed_log() {
  awk -v want=$(($3 - $2)) -v re="$end_re" '{ if (n == want) print } $0 ~ re { n++ }' "$1"
}

start=$(date +%s)
lines=0
s=$first
end=$((first + count))
while [ "$s" -lt "$end" ]; do
  n=$((end - s))
  [ "$n" -gt "$batch" ] && n=$batch
  if ! "$kb" -q "$dir/random_models.lua" "$s" "$n" kb >"$tmp/kb" 2>"$tmp/kb.err"; then
    echo "random_simpy.sh: kernbench failed on seeds $s..$((s + n - 1)):"
    sed 's/^/    /' "$tmp/kb.err"
    exit 1
  fi
  if ! "$python" "$dir/random_models.py" "$s" "$n" >"$tmp/py" 2>"$tmp/py.err"; then
    echo "random_simpy.sh: random_models.py failed on seeds $s..$((s + n - 1)):"
    sed 's/^/    /' "$tmp/py.err"
    exit 1
  fi
  line=$(first_diff "$tmp/kb" "$tmp/py")
  if [ -n "$line" ]; then
    seed=$((s + $(head -n $((line - 1)) "$tmp/kb" | grep -Ec "$end_re")))
    seed_log "$tmp/kb" "$s" "$seed" >"$tmp/kb1"
    seed_log "$tmp/py" "$s" "$seed" >"$tmp/py1"
    "$kb" -q "$dir/random_models.lua" "$seed" 1 model >"$tmp/model1" 2>&1
    at=$(first_diff "$tmp/kb1" "$tmp/py1")
    echo "random simpy: seed $seed differs from SimPy at line $at of its log"
    for side in kb:kernbench py:SimPy; do
      echo "-- ${side#*:}"
      awk -v lo=$((at - 8)) -v hi=$((at + 3)) 'FNR >= lo && FNR <= hi { printf "  %4d  %s\n", FNR, $0 }' \
        "$tmp/${side%%:*}1"
    done
    if cmp -s "$tmp/model1" "$tmp/py1"; then
      echo "-- simpy_model.lua agrees with SimPy"
    elif cmp -s "$tmp/model1" "$tmp/kb1"; then
      echo "-- simpy_model.lua agrees with kernbench (both differ from SimPy)"
    else
      echo "-- simpy_model.lua agrees with neither (at line $(first_diff "$tmp/model1" "$tmp/py1") with SimPy)"
    fi
    if [ -s "$tmp/py.err" ]; then
      echo "-- random_models.py stderr:"
      sed 's/^/    /' "$tmp/py.err"
    fi
    echo "reproduce:"
    echo "  $kb -q $dir/random_models.lua $seed 1 kb      # (model: simpy_model.lua's log)"
    echo "  $python $dir/random_models.py $seed 1"
    echo "  $kb -q $dir/random_models.lua $seed 1 desc    # the model"
    exit 1
  fi
  lines=$((lines + $(wc -l <"$tmp/kb")))
  s=$((s + n))
done
echo "random simpy: $count seeds ($first..$((end - 1))), $lines log lines, all identical to SimPy" \
  "($(($(date +%s) - start))s)"
