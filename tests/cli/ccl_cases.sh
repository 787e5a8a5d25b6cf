#!/usr/bin/env bash
# --ccl FILE from the command line (sourced by tests/cli/cli_test.sh; uses
# its helpers): a FILE that does not exist is a usage error before anything
# runs, an existing one reaches kernbench.ccl.config as kb.ccl_path, which
# it then loads ahead of any other ccl.yaml.

ccl_cases=(ccl_missing_file_is_a_usage_error ccl_sets_kb_ccl_path ccl_file_is_used_first ccl_twice_is_a_usage_error)

ccl_missing_file_is_a_usage_error() {
  run --ccl "$tmp/none.yaml" -e 'print("ran")'; expect_status 2
  expect_err "kernbench: --ccl $tmp/none.yaml: No such file or directory"
  expect_err "usage: kernbench [options]"; expect_empty out
  run --ccl; expect_status 2; expect_err "option '--ccl' needs a ccl.yaml file"
}

ccl_sets_kb_ccl_path() {
  printf 'algorithms: {}\n' >"$tmp/c.yaml"
  run --ccl "$tmp/c.yaml" -e 'print(kb.ccl_path)'; expect_status 0; expect_out "$tmp/c.yaml"
  run "--ccl=$tmp/c.yaml" -e 'print(kb.ccl_path)'; expect_status 0; expect_out "$tmp/c.yaml"
  run -e 'print(kb.ccl_path)'; expect_status 0; expect_out "nil"
}

ccl_file_is_used_first() {
  # beside the script is a ccl.yaml too: --ccl wins over it
  mkdir -p "$tmp/b"
  printf 'defaults: {algorithm: a}\nalgorithms:\n  a: {module: kernbench.ccl.algorithms.lrab_hierarchical_allreduce}\n' \
    >"$tmp/b/ccl.yaml"
  printf 'defaults: {algorithm: mine, n_slots: 2}\nalgorithms:\n  mine: {module: kernbench.ccl.algorithms.lrab_hierarchical_allreduce}\n' >"$tmp/mine.yaml"
  printf 'local c = require "kernbench.ccl.config"\nlocal p, o = c.find()\nprint(o, c.resolve(c.load(p)).name)\n' >"$tmp/b/s.lua"
  run --ccl "$tmp/mine.yaml" "$tmp/b/s.lua"; expect_status 0; expect_out "explicit	mine"
  run "$tmp/b/s.lua"; expect_status 0
  grep -qx "bench	a" "$tmp/out" || fail "without --ccl the script's ccl.yaml: $(cat "$tmp/out")"
  printf 'algorithms:\n  a: {modul: x}\n' >"$tmp/bad.yaml"
  run --ccl "$tmp/bad.yaml" "$tmp/b/s.lua"; expect_status 2
  expect_err "$tmp/bad.yaml:2:7: algorithms.a.modul: unknown key in an algorithm entry"
}

ccl_twice_is_a_usage_error() {
  printf 'algorithms: {}\n' >"$tmp/c.yaml"
  run --ccl "$tmp/c.yaml" --ccl "$tmp/c.yaml" -e 'print(1)'; expect_status 2
  expect_err "option '--ccl' given twice"
}
