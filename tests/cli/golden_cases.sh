#!/usr/bin/env bash
# Simulated results against digests committed in tests/golden/digests.txt
# (sourced by tests/cli/cli_test.sh; uses its helpers). A failure names the
# outputs that changed and keeps them for diffing.

golden_cases=(results_match_golden_digests)

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
