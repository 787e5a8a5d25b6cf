#!/usr/bin/env bash
# Regenerates the conformance logs with SimPy 3 (Debian's python3-simpy3, run by
# /usr/bin/python3) and checks them against the committed NN_name.log files.
#   simpy.sh            write missing logs; print the diff and exit 1 when SimPy's
#                       output differs from a committed log
#   simpy.sh --update   overwrite logs that differ
# Also checks that every .py has a .lua and a .log and every .lua a .py.
set -u

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=/usr/bin/python3
update=0
case "${1:-}" in
  --update) update=1 ;;
  "") ;;
  *) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac

if ! [ -x "$python" ] || ! "$python" -c 'import simpy' >/dev/null 2>&1; then
  echo "simpy.sh: SimPy 3 is not importable by $python; install it as root with:"
  echo "  apt-get install -y --no-install-recommends python3-simpy3"
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

problems=0
total=0
written=0
updated=0

# Pairs: every scenario has its .py and .lua (a missing .log is written below).
names=$(for f in "$dir"/[0-9]*.py "$dir"/[0-9]*.lua "$dir"/[0-9]*.log; do
          [ -e "$f" ] && basename "${f%.*}"
        done | sort -u)
for name in $names; do
  for ext in py lua; do
    if [ ! -f "$dir/$name.$ext" ]; then
      echo "simpy.sh: $name has no $name.$ext"
      problems=$((problems + 1))
    fi
  done
done

for py in "$dir"/[0-9]*.py; do
  [ -e "$py" ] || continue
  total=$((total + 1))
  name=$(basename "${py%.py}")
  log="$dir/$name.log"
  if ! (cd "$dir" && "$python" "$py") >"$tmp/out" 2>"$tmp/err" </dev/null; then
    echo "simpy.sh: $name.py failed under SimPy:"
    sed 's/^/    /' "$tmp/err"
    problems=$((problems + 1))
    continue
  fi
  if [ ! -f "$log" ]; then
    cp "$tmp/out" "$log"
    echo "simpy.sh: wrote $name.log"
    written=$((written + 1))
  elif ! cmp -s "$log" "$tmp/out"; then
    if [ "$update" = 1 ]; then
      cp "$tmp/out" "$log"
      echo "simpy.sh: updated $name.log"
      updated=$((updated + 1))
    else
      echo "simpy.sh: SimPy's output for $name differs from $name.log (--update overwrites):"
      diff -u --label "$name.log (committed)" --label "$name.py (SimPy)" "$log" "$tmp/out"
      problems=$((problems + 1))
    fi
  fi
done

echo "simpy: $total scenarios, $written logs written, $updated updated, $problems problems"
[ "$problems" -eq 0 ]
