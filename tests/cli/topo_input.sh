#!/usr/bin/env bash
# Hostile topology input through the command line (`-t FILE`, `base:`):
# files that are not regular files, and files large enough that a quadratic
# loader would take minutes. One case per ctest entry:
#   topo_input.sh CASE /path/to/kernbench     run one case (from the repo root)
#   topo_input.sh --list                      list the cases
# A topology named on the command line that cannot be loaded is the user's
# mistake: exit status 2 (docs/reliability.md "Usage errors").
# Each run is under `timeout`: a hang or a quadratic load becomes a failure
# (exit 124), never a stuck test. The bounds are watchdogs, not measurements:
# each load takes a few seconds when linear (the 200,000-node line with its
# config dump about 12 s, over 30 s on a 2-core machine busy with other
# builds: hence 90 s for the 100k cases). Sanitizer builds set
# KB_TOPO_INPUT_N (tests/CMakeLists.txt) to run the large cases smaller:
# they check memory safety there, not time.
set -u
n=${KB_TOPO_INPUT_N:-100000}

cases=(dev_zero dev_urandom fifo fifo_bare_name directory base_dev_zero base_fifo nul_byte invalid_utf8
       deep_nesting graph_nodes_100k graph_line_100k unknown_keys_100k)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${cases[@]}"
  exit 0
fi

case_name=$1
KB=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }

# load SECONDS FILE [dir]: loads the topology FILE (from dir, default .)
# under a watchdog; sets $status and fills $tmp/out and $tmp/err.
load() {
  local limit=$1 file=$2 dir=${3:-.}
  (cd "$dir" && timeout "$limit" "$KB" ${extra:-} -t "$file" -e 'print(kb.topology.load())') </dev/null >"$tmp/out" 2>"$tmp/err"
  status=$?
  [ "$status" -ne 124 ] || fail "still loading $file after $limit s (a hang, or quadratic time)"
}
expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1; stderr: $(head -c 2000 "$tmp/err")"; }
expect_out() { grep -qF -- "$1" "$tmp/out" || fail "stdout lacks '$1'; stdout was: $(head -c 2000 "$tmp/out")"; }
expect_err() { grep -qF -- "$1" "$tmp/err" || fail "stderr lacks '$1'; stderr was: $(head -c 2000 "$tmp/err")"; }
expect_err_lines() {
  local n
  n=$(grep -c -- "$1" "$tmp/err")
  [ "$n" -eq "$2" ] || fail "stderr has $n lines with '$1', expected $2; stderr: $(head -c 2000 "$tmp/err")"
}

# A graph topology of n nodes n0 .. n{n-1} in a line, written out node by
# node and link by link (the `nodes:` / `links:` form).
graph_file() {
  awk -v n="$1" 'BEGIN {
    print "name: line" n; print "graph:"; print "  nodes:"
    for (i = 0; i < n; i++) printf "    - { id: n%d }\n", i
    print "  links:"
    for (i = 0; i + 1 < n; i++) printf "    - { src: n%d, dst: n%d }\n", i, i + 1
  }'
}

case $case_name in
dev_zero)
  load 20 /dev/zero; expect_status 2
  expect_err "/dev/zero: cannot read topology file: it is a character device, not a regular file" ;;
dev_urandom)
  load 20 /dev/urandom; expect_status 2
  expect_err "/dev/urandom: cannot read topology file: it is a character device, not a regular file" ;;
fifo)
  mkfifo "$tmp/pipe.yaml"
  load 20 "$tmp/pipe.yaml"; expect_status 2
  expect_err "$tmp/pipe.yaml: cannot read topology file: it is a FIFO (named pipe), not a regular file" ;;
fifo_bare_name)
  # A bare name is looked up in the current directory before the shipped
  # topologies: that look-up must not open (and so wait on) the FIFO either.
  mkfifo "$tmp/pipe"
  load 20 pipe "$tmp"; expect_status 2
  expect_err "pipe: cannot read topology file: it is a FIFO (named pipe), not a regular file" ;;
directory)
  load 20 "$tmp"; expect_status 2
  expect_err "$tmp: cannot read topology file: it is a directory, not a regular file" ;;
base_dev_zero)
  printf 'name: x\nbase: /dev/zero\n' >"$tmp/t.yaml"
  load 20 "$tmp/t.yaml"; expect_status 2
  expect_err "$tmp/t.yaml:2:7: base: /dev/zero: cannot read topology file: it is a character device" ;;
base_fifo)
  mkfifo "$tmp/pipe.yaml"
  printf 'base: pipe.yaml\n' >"$tmp/t.yaml"
  load 20 "$tmp/t.yaml"; expect_status 2
  expect_err "$tmp/t.yaml:1:7: base: $tmp/pipe.yaml: cannot read topology file: it is a FIFO" ;;
nul_byte)
  printf 'base: %s/topologies/small_1cube_1pe.yaml\nname: a\0b\n' "$PWD" >"$tmp/t.yaml"
  load 20 "$tmp/t.yaml"; expect_status 2
  expect_err "$tmp/t.yaml:2:8: NUL byte: a topology file is UTF-8 text" ;;
invalid_utf8)
  printf 'base: %s/topologies/small_1cube_1pe.yaml\nname: caf\xc3\xa9\ndescription: x\xff\n' "$PWD" >"$tmp/t.yaml"
  load 20 "$tmp/t.yaml"; expect_status 2
  expect_err "$tmp/t.yaml:3:15: invalid UTF-8 (byte 0xff): a topology file is UTF-8 text" ;;
deep_nesting)
  # 50,000 nested lists: refused at the 65th level, not a crash.
  { printf 'name: deep\nx: '; printf '[%.0s' $(seq 50000); printf '1'; printf ']%.0s' $(seq 50000); echo; } >"$tmp/t.yaml"
  load 20 "$tmp/t.yaml"; expect_status 2
  expect_err "$tmp/t.yaml:2:67: maps and lists nested more than 64 deep; a topology file may nest at most 64" ;;
graph_nodes_100k)
  graph_file "$n" >"$tmp/t.yaml"
  load 90 "$tmp/t.yaml"; expect_status 0
  expect_out "topology line$n ($n nodes)" ;;
graph_line_100k)
  # with --dump-config: its tree of 100,000 list elements is built in linear time too
  printf 'graph:\n  line: { count: %d }\n  nodes:\n' "$n" >"$tmp/line.yaml"
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "    - { id: m%d }\n", i }' >>"$tmp/line.yaml"
  printf '  links:\n    - { src: n0, dst: m0 }\n' >>"$tmp/line.yaml"
  awk -v n="$n" 'BEGIN { for (i = 0; i + 1 < n; i++) printf "    - { src: m%d, dst: m%d }\n", i, i + 1 }' >>"$tmp/line.yaml"
  extra="--dump-config $tmp/dump.yaml" load 90 "$tmp/line.yaml"; expect_status 0
  expect_out "topology line ($((2 * n)) nodes)"
  grep -qF -- "- id: m$((n - 1))  # $tmp/line.yaml:$((n + 3)):13" "$tmp/dump.yaml" ||
    fail "dump lacks node m$((n - 1)): $(tail -c 500 "$tmp/dump.yaml")" ;;
unknown_keys_100k)
  # 100,000 misspelt keys: the first 20 are listed, the rest counted.
  { printf 'base: %s/topologies/small_1cube_1pe.yaml\njunk:\n' "$PWD"
    awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "  k%d: 1\n", i }'
    printf 'cube:\n  links: { router_link_bw: 1 }\n'; } >"$tmp/t.yaml"
  load 90 "$tmp/t.yaml"; expect_status 2
  expect_err "$tmp/t.yaml:2:1: junk: unknown key (known keys here: name, description, profile, graph, system, sip, cube)"
  expect_err "$tmp/t.yaml:$((n + 4)):12: cube.links.router_link_bw: unknown key (known keys here: "
  expect_err_lines ": unknown key" 2
  # the nested keys of an unknown key are not listed: 2 problems
  printf 'base: %s/topologies/small_1cube_1pe.yaml\n' "$PWD" >"$tmp/u.yaml"
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "k%d: 1\n", i }' >>"$tmp/u.yaml"
  load 30 "$tmp/u.yaml"; expect_status 2
  expect_err "$tmp/u.yaml:2:1: k0: unknown key (known keys here: "
  expect_err "$tmp/u.yaml:21:1: k19: unknown key"
  expect_err_lines ": unknown key" 20
  expect_err "... and $((n - 20)) more unknown keys ($n in all)" ;;
*)
  fail "unknown case" ;;
esac
exit 0
