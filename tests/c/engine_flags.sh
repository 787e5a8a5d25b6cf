#!/usr/bin/env bash
# The arithmetic engine computes the same bits whatever builds it
# (docs/decisions.md, "The device's arithmetic"):
#   engine_flags.sh [WORKDIR]     (from the repository root)
# builds tests/c/engine_digest.c with the engine's sources under gcc and
# clang at several optimisation levels, native instruction sets included,
# always with the project's own floating-point options last, as
# CMakeLists.txt puts them after any CFLAGS; every build must print the
# same digests. Two controls show the check can fail: with contraction
# turned back on (and FMA instructions) the GEMM digests must change, and
# with -ffast-math after the project's options engine.h must refuse to
# compile.
set -euo pipefail
work=${1:-$(mktemp -d)}
mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }
for cc in gcc clang; do
  command -v "$cc" >/dev/null || fail "$cc not found (make test installs it)"
done

sources=(tests/c/engine_digest.c src/tensor/engine.c src/tensor/gemm.c src/tensor/runs.c src/mem/dtype.c)
project=(-std=c11 -D_XOPEN_SOURCE=700 -Isrc -Wall -Wextra -Werror -fno-fast-math -ffp-contract=off)

# build NAME CC OPTIONS... [-- LATE OPTIONS...]: OPTIONS before the
# project's, LATE ones after them
build() {
  local name=$1 cc=$2; shift 2
  local early=() late=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do early+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  late=("$@")
  "$cc" "${early[@]}" "${project[@]}" "${late[@]}" "${sources[@]}" -lm -o "$work/$name" 2>"$work/$name.log"
}

configs=(
  "gcc-O0|gcc -O0"
  "gcc-O2|gcc -O2"
  "gcc-O3|gcc -O3"
  "gcc-Os|gcc -Os"
  "gcc-O3-native|gcc -O3 -march=native"
  "gcc-O3-fastmath-cflags|gcc -O3 -march=native -ffast-math -ffp-contract=fast"
  "clang-O0|clang -O0"
  "clang-O3|clang -O3"
  "clang-O3-native|clang -O3 -march=native"
)
ref=
for c in "${configs[@]}"; do
  name=${c%%|*}
  # shellcheck disable=SC2086
  build "$name" ${c#*|} || fail "$name did not build: $(cat "$work/$name.log")"
  "$work/$name" >"$work/$name.out" || fail "$name failed to run"
  [ "$(wc -l <"$work/$name.out")" -gt 40 ] || fail "$name printed too few digests: $(cat "$work/$name.out")"
  if [ -z "$ref" ]; then ref=$name; continue; fi
  cmp -s "$work/$ref.out" "$work/$name.out" \
    || fail "$name computes other values than $ref:
$(diff "$work/$ref.out" "$work/$name.out")"
done
echo "same digests from ${#configs[@]} builds"

# The C library's transcendental functions (exp, log, erf, tanh, sin,
# cos) have variants for CPUs with and without FMA and AVX2, which may
# differ in the last bit of a double; stored in memory's dtypes the values
# must not differ. glibc's tunable picks the variants of an older CPU.
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX,-AVX512F "$work/$ref" >"$work/old_cpu.out"
if ! cmp -s <(cut -d' ' -f1,3 "$work/$ref.out") <(cut -d' ' -f1,3 "$work/old_cpu.out"); then
  fail "with the C library's functions for a CPU without FMA and AVX, stored values differ:
$(diff <(cut -d' ' -f1,3 "$work/$ref.out") <(cut -d' ' -f1,3 "$work/old_cpu.out"))"
fi
echo "the C library's functions for a CPU without FMA and AVX: same stored values" \
  "($(cmp -s "$work/$ref.out" "$work/old_cpu.out" && echo "and doubles" || echo "doubles differ in $(diff "$work/$ref.out" "$work/old_cpu.out" | grep -c '^>') group(s)"))"

# Control: contraction on after the project's options, with FMA
# instructions, changes the f32 GEMM (where the CPU has FMA to run it).
if grep -qw fma /proc/cpuinfo; then
  build fused gcc -O2 -- -mfma -ffp-contract=fast || fail "the fused build did not build: $(cat "$work/fused.log")"
  "$work/fused" >"$work/fused.out"
  grep '^matmul_f32_37x300x45 ' "$work/fused.out" >"$work/fused.line"
  grep '^matmul_f32_37x300x45 ' "$work/$ref.out" >"$work/ref.line"
  ! cmp -s "$work/fused.line" "$work/ref.line" \
    || fail "a build with fused multiply-add gave the same GEMM digest: the check cannot see contraction"
  echo "control: a build with fused multiply-add computes other GEMM values"
else
  echo "control skipped: this CPU has no FMA instructions"
fi

# Control: -ffast-math after the project's options is refused.
if build fastmath gcc -O2 -- -ffast-math; then
  fail "a -ffast-math build of the engine compiled"
fi
grep -q "the arithmetic engine needs IEEE floating point" "$work/fastmath.log" \
  || fail "a -ffast-math build failed without engine.h's message: $(head -5 "$work/fastmath.log")"
echo "control: -ffast-math is refused"
