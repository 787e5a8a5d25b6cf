# Bash completion of kernbench: `make install` puts it in
# <prefix>/share/bash-completion/completions/kernbench, where bash-completion
# finds it; without bash-completion, `source` this file.
#
# Completes the subcommands (run, list, probe, help, draw, web, sweep), the options, bench
# names after `run` and `help`, topology names after -t/--topology, probe
# cases after `probe --case`, file names for scripts and output files, and
# YAML files after --ccl.
# Everything is asked of the kernbench being completed (the command word,
# e.g. ./build/bin/kernbench), at completion time: the options from
# `kernbench --help` (so they cannot drift from it), the benches from
# `kernbench list` (second column), the topologies from the *.yaml files of
# `kb.topology.dir`. Needs nothing from bash-completion.

# _kernbench_help_options PROG [probe]: one line per option of PROG's help
# (or its probe's), "NAME 1" if it takes an argument, else "NAME 0". An
# option line starts with two spaces and a dash: "  -t, --topology T  ...";
# the argument is the upper-case word after the names.
_kernbench_help_options() {
  "$1" ${2:+"$2"} --help 2>/dev/null | awk '
    /^  -/ {
      n = split(substr($0, 3), w, /[ ,]+/)
      for (i = 1; i <= n && w[i] ~ /^--?[A-Za-z][A-Za-z0-9-]*$/; i++) names[++k] = w[i]
      takes = (i <= n && w[i] ~ /^[A-Z][A-Z0-9_:=]*$/) ? 1 : 0
      for (j = 1; j <= k; j++) print names[j], takes
      k = 0
    }'
}

# Appends to COMPREPLY the directories and the files matching glob $1
# (default: every file) that complete $cur.
_kernbench_files() {
  local IFS=$'\n'
  compopt -o filenames 2>/dev/null
  if [ -n "${1:-}" ]; then
    COMPREPLY+=($(compgen -d -- "$cur") $(compgen -f -X "!$1" -- "$cur"))
  else
    COMPREPLY+=($(compgen -f -- "$cur"))
  fi
}

_kernbench_words() { # WORDS...: appends those completing $cur
  local IFS=$' \t\n'
  COMPREPLY+=($(compgen -W "$*" -- "$cur"))
}

_kernbench_benches() { "$1" list 2>/dev/null | awk 'NF >= 2 && $1 ~ /^[0-9]+$/ { print $2 }'; }

_kernbench_topologies() {
  local dir f
  dir=$("$1" -q -e 'print(kb.topology.dir)' 2>/dev/null) || return
  for f in "$dir"/*.yaml; do
    [ -e "$f" ] || continue
    f=${f##*/}
    printf '%s\n' "${f%.yaml}"
  done
}

_kernbench_probe_cases() {
  "$1" probe --help 2>/dev/null | sed -n 's/^cases: //p' | tr -d ','
}

_kernbench() {
  # bash splits words at '=' and ':' (COMP_WORDBREAKS): "--set a=1" arrives
  # as "--set" "a" "=" "1"; join them back into words[], the current one
  # being words[cword]. $cur stays bash's, the part readline replaces.
  local cur=${COMP_WORDS[COMP_CWORD]} words=() cword=0 j w
  for ((j = 0; j < ${#COMP_WORDS[@]}; j++)); do
    w=${COMP_WORDS[j]}
    if ((j > 1)) && [[ $w =~ ^[=:]+$ || ${COMP_WORDS[j - 1]} =~ [=:]$ ]]; then
      words[${#words[@]} - 1]+=$w
    else
      words+=("$w")
    fi
    ((j == COMP_CWORD)) && cword=$((${#words[@]} - 1))
  done
  local prev=
  ((cword > 0)) && prev=${words[cword - 1]}
  local prog=${words[0]}
  prog=${prog/#\~/$HOME}
  COMPREPLY=()

  # the options of the help, and which of them take an argument
  local spec names="" with_arg=" " name takes
  spec=$(_kernbench_help_options "$prog")
  while read -r name takes; do
    [ -n "$name" ] || continue
    names+="$name "
    [ "$takes" = 1 ] && with_arg+="$name "
  done <<<"$spec"

  # the subcommand (or the script): the first word that is neither an
  # option nor an option's argument
  local i=1 word sub= sub_at=0
  while [ "$i" -lt "$cword" ]; do
    word=${words[i]}
    if [ "$word" = -- ]; then
      i=$((i + 1))
      [ "$i" -lt "$cword" ] && { sub=${words[i]}; sub_at=$i; }
      break
    elif [[ $word == -?* && $word != *=* && $with_arg == *" $word "* ]]; then
      i=$((i + 2))
      continue
    elif [[ $word == -* ]]; then
      i=$((i + 1))
      continue
    fi
    sub=$word
    sub_at=$i
    break
  done

  # an argument of a global option
  if [ -z "$sub" ] || [ "$sub" = probe ]; then
    case $prev in
    -t | --topology)
      _kernbench_words "$(_kernbench_topologies "$prog")"
      [[ $cur == */* || $cur == .* ]] && _kernbench_files '*.yaml'
      return 0 ;;
    --trace | --stats-json | --op-log | --dump-config | --results-json)
      _kernbench_files; return 0 ;;
    --ccl)
      _kernbench_files '*.yaml'; return 0 ;;
    --device)
      _kernbench_words all sip:0 sip:1; return 0 ;;
    --case)
      [ "$sub" = probe ] && { _kernbench_words "$(_kernbench_probe_cases "$prog")"; return 0; } ;;
    esac
    if [[ $with_arg == *" $prev "* ]]; then
      return 0 # -e CODE, --set K=V, --param K=V ...: nothing to offer
    fi
  fi

  # an argument of a draw option
  if [ "$sub" = draw ]; then
    case $prev in
    --view) _kernbench_words system sip cube pe; return 0 ;;
    --format) _kernbench_words svg png dot; return 0 ;;
    --stats) _kernbench_files '*.json'; return 0 ;;
    -o | --output) _kernbench_files; return 0 ;;
    -t | --topology)
      _kernbench_words "$(_kernbench_topologies "$prog")"
      [[ $cur == */* || $cur == .* ]] && _kernbench_files '*.yaml'
      return 0 ;;
    --sip | --cube | --pe | --set | --route) return 0 ;;
    esac
    ((cword >= 2)) && [ "${words[cword - 2]}" = --route ] && return 0 # --route SRC DST
  fi

  # an argument of a web option
  if [ "$sub" = web ]; then
    case $prev in
    --stats) _kernbench_files '*.json'; return 0 ;;
    -t | --topology)
      _kernbench_words "$(_kernbench_topologies "$prog")"
      [[ $cur == */* || $cur == .* ]] && _kernbench_files '*.yaml'
      return 0 ;;
    --port | --set) return 0 ;;
    esac
  fi

  # an argument of a sweep option
  if [ "$sub" = sweep ]; then
    case $prev in
    --backend) _kernbench_words local parallel slurm; return 0 ;;
    --out) compopt -o filenames 2>/dev/null; local IFS=$'\n'; COMPREPLY+=($(compgen -d -- "$cur")); return 0 ;;
    --joblog) _kernbench_files; return 0 ;;
    -j | --jobs | --points-per-task | --max-running | --sshlogin | --parallel-opt | --slurm-opt) return 0 ;;
    esac
  fi

  case $sub in
  "")
    if [[ $cur == -* ]]; then
      _kernbench_words "$names"
    else
      _kernbench_words run list probe help draw web sweep
      _kernbench_files '*.lua'
    fi ;;
  run | help)
    if [ "$cword" -eq $((sub_at + 1)) ]; then
      _kernbench_words "$(_kernbench_benches "$prog")"
      [ "$sub" = run ] && _kernbench_files '*.lua'
    elif [ "$sub" = run ] && [[ $cur == -* ]]; then
      _kernbench_words --data --verify-data
    fi ;;
  list)
    if [[ $cur == -* ]]; then _kernbench_words --verbose
    else compopt -o filenames 2>/dev/null; local IFS=$'\n'; COMPREPLY+=($(compgen -d -- "$cur")); fi ;;
  probe)
    if [[ $cur == -* ]]; then
      _kernbench_words "$(_kernbench_help_options "$prog" probe | awk '{ print $1 }')"
    fi ;;
  draw)
    if [[ $cur == -* ]]; then
      _kernbench_words "$(_kernbench_help_options "$prog" draw | awk '{ print $1 }')"
    fi ;;
  web)
    if [[ $cur == -* ]]; then
      _kernbench_words "$(_kernbench_help_options "$prog" web | awk '{ print $1 }')"
    fi ;;
  sweep)
    if [[ $cur == -* ]]; then
      _kernbench_words "$(_kernbench_help_options "$prog" sweep | awk '{ print $1 }')"
    else
      _kernbench_files '*.lua'
    fi ;;
  *)
    _kernbench_files ;; # the script's arguments
  esac
  return 0
}

complete -F _kernbench kernbench
