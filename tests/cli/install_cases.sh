#!/usr/bin/env bash
# kernbench installed like a tool, plots, and the quiet build (sourced by
# tests/cli/cli_test.sh; uses its helpers): `cmake --install` puts the docs,
# the man page and the bash completion under the prefix; every option of
# `kernbench --help` is in the man page and completed; the GEMM milestone's
# plots print their labels literally and are skipped with one line without
# gnuplot; `make build/run/test` keep the compiler's output in a log unless
# it fails or V=1. (install_runs_anywhere, in cli_test.sh, runs the
# installed kernbench from /.)

install_cases=(install_docs install_man_page install_completion install_every_option_documented
               milestone_plot_labels_literal milestone_plot_skipped_without_gnuplot
               make_quiet_build make_quiet_build_failure)

# install_prefix: cmake --install of the build tree holding $KB into
# $tmp/prefix (once per case)
install_prefix() {
  [ -x "$tmp/prefix/bin/kernbench" ] && return
  cmake --install "$(dirname "$(dirname "$KB")")" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
    fail "cmake --install failed: $(cat "$tmp/install.log")"
}

# help_options: the options of `kernbench --help`, one a line: the names
# at the start of its option lines ("  -t, --topology T  ..." gives -t and
# --topology; the bare "--" and "-" are not options to complete)
help_options() {
  "$KB" --help | grep -E '^  -' | grep -oE '^  (-[A-Za-z], )?--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^  //; s/, /\n/'
}

# man_text FILE: the man page as a reader sees it (man, else groff, else the
# roff source with its escapes removed)
man_text() {
  if command -v man >/dev/null; then LC_ALL=C MANWIDTH=200 man -l "$1" 2>/dev/null | col -b
  elif command -v groff >/dev/null; then groff -man -Tascii "$1" 2>/dev/null | col -b
  else sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"
  fi
}

# complete_words COMPLETION WORDS...: calls the completion function in a
# new bash with COMP_WORDS=WORDS and COMP_CWORD on the last word; prints
# COMPREPLY, one a line (sorted)
complete_words() {
  local script=$1
  shift
  bash -c 'source "$1" || exit 1; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
           _kernbench; printf "%s\n" "${COMPREPLY[@]}"' _ "$script" "$@" | LC_ALL=C sort
}

# expect_all WHAT EXPECTED_FILE GOT_FILE: every line of EXPECTED is in GOT
expect_all() {
  [ -s "$2" ] || fail "$1: nothing expected (the expected list is empty)"
  local missing
  missing=$(LC_ALL=C sort -u "$2" | LC_ALL=C comm -23 - <(LC_ALL=C sort -u "$3"))
  [ -z "$missing" ] || fail "$1: missing $(echo $missing); got: $(echo $(cat "$3"))"
}

install_docs() {
  install_prefix
  local doc=$tmp/prefix/share/doc/kernbench f
  for f in docs/*.md README.md; do
    cmp -s "$f" "$doc/$(basename "$f")" || fail "$f not installed as $doc/$(basename "$f"): $(ls "$doc" 2>&1)"
  done
}

install_man_page() {
  install_prefix
  local page=$tmp/prefix/share/man/man1/kernbench.1
  cmp -s docs/kernbench.1 "$page" || fail "the man page is not installed as $page"
  man_text "$page" >"$tmp/man.txt"
  for s in "KERNBENCH(1)" NAME SYNOPSIS DESCRIPTION SUBCOMMANDS OPTIONS ENVIRONMENT "EXIT STATUS" FILES EXAMPLES \
           "kernbench list [--verbose] [DIR]" "kernbench help BENCH" KERNBENCH_PATH KERNBENCH_HISTORY \
           "--param KEY=VALUE" "--results-json FILE"; do
    grep -qF -- "$s" "$tmp/man.txt" || fail "the rendered man page lacks '$s': $(head -c 2000 "$tmp/man.txt")"
  done
  if command -v man >/dev/null; then # `man kernbench` finds it under the prefix
    MANPATH=$tmp/prefix/share/man man -w kernbench >"$tmp/out" 2>"$tmp/err" || fail "man -w: $(cat "$tmp/err")"
    expect_out "$page"
  fi
  if command -v groff >/dev/null; then # no roff warnings
    groff -man -Tutf8 -ww -z "$page" 2>"$tmp/err" || fail "groff failed: $(cat "$tmp/err")"
    expect_empty err
  fi
}

install_completion() {
  install_prefix
  local comp=$tmp/prefix/share/bash-completion/completions/kernbench kb=$tmp/prefix/bin/kernbench
  cmp -s tools/kernbench.bash "$comp" || fail "the completion is not installed as $comp"
  bash -c 'source "$1" && complete -p kernbench' _ "$comp" >"$tmp/out" 2>"$tmp/err" || fail "$(cat "$tmp/err")"
  expect_out "-F _kernbench"
  cd / || fail "cd /"
  # subcommands, and scripts, for the first word
  complete_words "$comp" "$kb" "" >"$tmp/got"
  printf '%s\n' run list probe help >"$tmp/want"; expect_all "subcommands" "$tmp/want" "$tmp/got"
  # the options of --help after a dash
  complete_words "$comp" "$kb" - >"$tmp/got"
  help_options >"$tmp/want"; expect_all "options" "$tmp/want" "$tmp/got"
  grep -qx -- --param "$tmp/got" || fail "--param not completed"
  # the benches of `kernbench list` after run and help, also after options with values
  "$kb" list | awk '{ print $2 }' >"$tmp/want"
  grep -qx sharded-gemm "$tmp/want" || fail "kernbench list lacks sharded-gemm: $(cat "$tmp/want")"
  complete_words "$comp" "$kb" run "" >"$tmp/got"; expect_all "benches after run" "$tmp/want" "$tmp/got"
  complete_words "$comp" "$kb" -t small_2x2 --param rows = 64 run "" >"$tmp/got"
  expect_all "benches after run, after -t and --param" "$tmp/want" "$tmp/got"
  complete_words "$comp" "$kb" help milestone-ge >"$tmp/got"
  [ "$(cat "$tmp/got")" = milestone-gemm ] || fail "help milestone-ge completes to: $(cat "$tmp/got")"
  # the shipped topologies after -t / --topology
  ls "$tmp/prefix/share/kernbench/topologies" | sed -n 's/\.yaml$//p' >"$tmp/want"
  grep -qx default "$tmp/want" || fail "no default topology installed"
  complete_words "$comp" "$kb" -t "" >"$tmp/got"; expect_all "topologies after -t" "$tmp/want" "$tmp/got"
  complete_words "$comp" "$kb" --topology small_1 >"$tmp/got"
  printf '%s\n' small_1cube_1pe small_1cube_8pe >"$tmp/want"
  cmp -s "$tmp/want" "$tmp/got" || fail "--topology small_1 completes to: $(cat "$tmp/got")"
  # probe cases after probe --case; list --verbose
  complete_words "$comp" "$kb" probe --case h2d-2 >"$tmp/got"
  [ "$(cat "$tmp/got")" = h2d-2hop ] || fail "probe --case h2d-2 completes to: $(cat "$tmp/got")"
  complete_words "$comp" "$kb" list --v >"$tmp/got"
  [ "$(cat "$tmp/got")" = --verbose ] || fail "list --v completes to: $(cat "$tmp/got")"
  # file names: a script, the script's arguments, an output file
  mkdir -p "$tmp/w" && cd "$tmp/w" && touch my_bench.lua my_data.txt || fail "scratch files"
  complete_words "$comp" "$kb" my_ >"$tmp/got"
  [ "$(cat "$tmp/got")" = my_bench.lua ] || fail "my_ completes to: $(cat "$tmp/got") (scripts: *.lua)"
  complete_words "$comp" "$kb" my_bench.lua my_d >"$tmp/got"
  [ "$(cat "$tmp/got")" = my_data.txt ] || fail "a script argument completes to: $(cat "$tmp/got")"
  complete_words "$comp" "$kb" --trace my_d >"$tmp/got"
  [ "$(cat "$tmp/got")" = my_data.txt ] || fail "--trace completes to: $(cat "$tmp/got")"
  # the command word found on PATH
  PATH="$tmp/prefix/bin:$PATH" complete_words "$comp" kernbench -t de >"$tmp/got"
  [ "$(cat "$tmp/got")" = default ] || fail "kernbench -t de (on PATH) completes to: $(cat "$tmp/got")"
}

install_every_option_documented() {
  # every option of --help, in the man page and in the completion: they cannot drift
  help_options >"$tmp/want"
  grep -qx -- --topology "$tmp/want" && grep -qx -- -q "$tmp/want" || fail "options not parsed: $(cat "$tmp/want")"
  man_text docs/kernbench.1 | grep -oE -- '--?[A-Za-z][A-Za-z0-9-]*' >"$tmp/got"
  expect_all "options in docs/kernbench.1" "$tmp/want" "$tmp/got"
  complete_words tools/kernbench.bash "$KB" - >"$tmp/got"
  expect_all "options completed by tools/kernbench.bash" "$tmp/want" "$tmp/got"
  # and the probe's
  "$KB" probe --help | grep -oE '^  (-[A-Za-z], )?--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^  //; s/, /\n/' >"$tmp/want"
  man_text docs/kernbench.1 | sed -n '/^PROBE OPTIONS/,/^ENVIRONMENT/p' | grep -oE -- '--?[A-Za-z][A-Za-z0-9-]*' >"$tmp/got"
  expect_all "probe options in the man page's PROBE OPTIONS" "$tmp/want" "$tmp/got"
  complete_words tools/kernbench.bash "$KB" probe - >"$tmp/got"
  expect_all "probe options completed" "$tmp/want" "$tmp/got"
}

# milestone_quick [ENV...]: the GEMM milestone's quick sweep, run from
# $tmp/ms with its default output directory; stdout+stderr in $tmp/out
milestone_quick() {
  local bench=$PWD/benches/milestone_gemm.lua
  mkdir -p "$tmp/ms"
  (cd "$tmp/ms" && env "$@" MILESTONE_QUICK=1 "$KB" -q "$bench") >"$tmp/out" 2>&1
  status=$?
}

milestone_plot_labels_literal() {
  # gnuplot's enhanced text would make "load_ref" "load" with a subscript "r"
  mkdir -p "$tmp/bin"
  printf '#!/bin/sh\ncp "$1" "%s/plot.gp.seen"\nexit 1\n' "$tmp" >"$tmp/bin/gnuplot"
  chmod +x "$tmp/bin/gnuplot"
  milestone_quick PATH="$tmp/bin:$PATH"; expect_status 0
  local gp=$tmp/plot.gp.seen
  [ -f "$gp" ] || fail "gnuplot was not run: $(cat "$tmp/out")"
  grep -qx 'set termoption noenhanced' "$gp" || fail "plot.gp lacks 'set termoption noenhanced': $(cat "$gp")"
  [ "$(grep -n -m1 '^set termoption noenhanced' "$gp" | cut -d: -f1)" -lt "$(grep -n -m1 '^set output' "$gp" | cut -d: -f1)" ] ||
    fail "noenhanced must come before the first plot"
  grep -qF '"32x32x32/load_ref/pe"' "$tmp/ms/out/milestone_gemm/plot.dat" || fail "labels: $(cat "$tmp/ms/out/milestone_gemm/plot.dat")"
  if command -v gnuplot >/dev/null 2>&1; then # the real one writes PNGs
    rm -rf "$tmp/ms"
    milestone_quick; expect_status 0
    local png
    for png in efficiency stage_breakdown; do
      [ "$(head -c 4 "$tmp/ms/out/milestone_gemm/$png.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
        fail "$png.png is not a PNG: $(cat "$tmp/out")"
    done
  fi
}

milestone_plot_skipped_without_gnuplot() {
  # a PATH with every program but gnuplot
  mkdir -p "$tmp/nognuplot"
  local d
  for d in /usr/local/bin /usr/bin /bin; do
    [ -d "$d" ] && find "$d"/ -maxdepth 1 ! -name 'gnuplot*' ! -type d -exec ln -sf -t "$tmp/nognuplot" {} + 2>/dev/null
  done
  milestone_quick PATH="$tmp/nognuplot"; expect_status 0
  [ -s "$tmp/ms/out/milestone_gemm/gemm_sweep.csv" ] || fail "no CSV: $(cat "$tmp/out")"
  [ "$(grep -ci gnuplot "$tmp/out")" -eq 1 ] || fail "expected one line about gnuplot: $(cat "$tmp/out")"
  expect_out "apt-get install gnuplot-nox"
  ! ls "$tmp/ms/out/milestone_gemm" | grep -q png || fail "PNGs without gnuplot: $(ls "$tmp/ms/out/milestone_gemm")"
}

# quiet_project: a scratch CMake project in $tmp/proj driven by this
# repository's Makefile: ok.c builds, bin/kernbench prints its arguments
# (what `make run` runs) and one test passes (what `make test` runs)
quiet_project() {
  mkdir -p "$tmp/proj"
  cat >"$tmp/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(quiet C)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(kernbench ok.c)
enable_testing()
add_test(NAME runs COMMAND kernbench)
CMAKE
  printf '#include <stdio.h>\nint main(int argc, char **argv) {\n  for (int i = 1; i < argc; i++) printf("ran %%s\\n", argv[i]);\n  return 0;\n}\n' \
    >"$tmp/proj/ok.c"
}

# qmake ARGS...: make -f <this Makefile> in $tmp/proj with no Debian
# packages to check; output (both streams) in $tmp/out
qmake() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$tmp/proj" -f "$PWD/Makefile" \
    BUILD=b DEB_PACKAGES= JOBS=2 "$@" >"$tmp/out" 2>&1
  status=$?
}

make_quiet_build() {
  quiet_project
  qmake build; expect_status 0
  expect_out "built b/"; expect_out "b/build.log"
  ! grep -qE 'Building C object|Configuring done|Linking C' "$tmp/out" || fail "compiler noise shown: $(cat "$tmp/out")"
  grep -qF "Building C object" "$tmp/proj/b/build.log" || fail "no build log: $(cat "$tmp/proj/b/build.log")"
  # make run and make test: the result, not the build
  touch "$tmp/proj/ok.c"
  qmake run; expect_status 0
  grep -q '^ran ' "$tmp/out" || fail "make run did not run bin/kernbench: $(cat "$tmp/out")"
  ! grep -qE 'Building C object|Linking C' "$tmp/out" || fail "make run shows the compiler: $(cat "$tmp/out")"
  touch "$tmp/proj/ok.c"
  qmake test; expect_status 0
  expect_out "100% tests passed"
  ! grep -qE 'Building C object|Linking C' "$tmp/out" || fail "make test shows the compiler: $(cat "$tmp/out")"
  # V=1 shows everything
  touch "$tmp/proj/ok.c"
  qmake build V=1; expect_status 0
  expect_out "Building C object"
}

make_quiet_build_failure() {
  quiet_project
  printf '#error deliberately broken\n' >"$tmp/proj/ok.c"
  qmake test; [ "$status" -ne 0 ] || fail "a failing build exits 0: $(cat "$tmp/out")"
  expect_out "error: #error deliberately broken"
  expect_out "build failed in b/: the full log is b/build.log"
  qmake build; [ "$status" -ne 0 ] || fail "make build exits 0 after a failed build: $(cat "$tmp/out")"
  expect_out "error: #error deliberately broken"
  ! grep -qE '^\[ *[0-9]+%\]|tests passed' "$tmp/out" || fail "progress lines or tests after a failed build: $(cat "$tmp/out")"
  # a configure error shows cmake's message
  printf 'project(\n' >"$tmp/proj/CMakeLists.txt"
  qmake build; [ "$status" -ne 0 ] || fail "a failing configure exits 0: $(cat "$tmp/out")"
  expect_out "CMake Error"; expect_out "cmake configure failed in b/"
}
