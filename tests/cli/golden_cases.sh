#!/usr/bin/env bash
# Simulated results against digests committed in tests/golden/digests.txt
# (sourced by tests/cli/cli_test.sh; uses its helpers). A failure names the
# outputs that changed and keeps them for diffing.

golden_cases=(results_match_golden_digests golden_results_same_on_any_cpu)

results_match_golden_digests() {
  mkdir -p "$tmp/golden"
  bash tests/golden/golden.sh "$KB" "$tmp/golden" >"$tmp/digests" 2>"$tmp/err" \
    || fail "a golden run failed: $(cat "$tmp/err")"
  if ! cmp -s "$tmp/digests" tests/golden/digests.txt; then
    local kept; kept=$(mktemp -d "${TMPDIR:-/tmp}/kb-golden.XXXXXX")
    cp -r "$tmp/golden/." "$kept/"
    fail "simulated results changed (outputs kept in $kept; tests/golden/golden.sh --update rewrites the digests):
$(diff tests/golden/digests.txt "$tmp/digests")"
  fi
}

# What the golden runs write does not depend on the CPU that runs them
# (docs/decisions.md, "The device's arithmetic"). OpenBLAS, whose kernel
# changed with the core type, no longer reaches any output: kernbench links
# no BLAS library, dynamically or statically (no BLAS symbol in it). The C
# library's transcendental functions have variants for CPUs with and
# without FMA and AVX2; with glibc's tunable choosing those of an older CPU
# the golden runs give the committed digests.
golden_results_same_on_any_cpu() {
  local libs syms e=GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX,-AVX512F
  libs=$(ldd "$KB") || fail "ldd $KB failed"
  ! grep -Eiq 'blas|lapack' <<<"$libs" || fail "kernbench links a BLAS library: $(grep -Ei 'blas|lapack' <<<"$libs")"
  syms=$(nm -D "$KB"; nm "$KB" 2>/dev/null) || fail "nm $KB failed"
  ! grep -Eq ' (cblas_[a-z]+|[sd]gemm_?)$' <<<"$syms" \
    || fail "kernbench holds BLAS symbols: $(grep -E ' (cblas_[a-z]+|[sd]gemm_?)$' <<<"$syms" | head -3)"
  mkdir -p "$tmp/golden"
  env "$e" bash tests/golden/golden.sh "$KB" "$tmp/golden" >"$tmp/digests" 2>"$tmp/err" \
    || fail "a golden run under $e failed: $(cat "$tmp/err")"
  cmp -s "$tmp/digests" tests/golden/digests.txt \
    || fail "under $e the golden results differ:
$(diff tests/golden/digests.txt "$tmp/digests")"
}
