# Sourced by the benchmark scripts in this directory: reads one NAME=VALUE
# field of a benchmark's result line.

field() { # field NAME LINE: the value of " NAME=" in LINE, or ""
  local v
  v=$(grep -o " $1=[^ ]*" <<<"$2" | head -1)
  echo "${v#*=}"
}
