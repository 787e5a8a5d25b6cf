#!/usr/bin/env bash
# Model layers from the command line (sourced by tests/cli/cli_test.sh; uses
# its helpers): the GQA Llama-70B milestone writes verified panels (decode
# panels with exactly 2 * n_ranks GEMMs), re-renders them with fast=1
# without simulating, refuses a missing or foreign sweep.json, and a run
# stopped early leaves no result file.

models_cases=(milestone_gqa_writes_verified_panels milestone_gqa_fast_rerenders milestone_gqa_stopped_leaves_nothing)

# check_sweep FILE: the sweep's schema, panels and the model's invariants
check_sweep() {
  python3 - "$1" <<'PY' || fail "sweep.json: $(cat "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "kernbench.gqa_sweep" and d["version"] == 1 and d["verified"] is True, d
assert d["model"] == {"name": "llama-70b", "n_heads": 64, "n_kv_heads": 8, "head_dim": 128}, d["model"]
names = [p["name"] for p in d["panels"]]
assert names == ["single_user_prefill", "multi_user_prefill", "single_user_decode", "multi_user_decode"], names
for p in d["panels"] + d["scaling"]:
    R, c = p["n_ranks"], p["counts"]
    assert (R, p["rank_axis"]) in ((8, 0), (4, 1)), p
    assert p["worst_error"] is not None and p["worst_error"] < 1e-3, p
    assert p["sim_ns"] > 0 and c["ipcq_send"] == c["ipcq_recv"] > 0, p
    if p["kind"] == "decode":
        assert c["gemm"] == 2 * R, p                      # one-shot partial attention per rank
        assert c["ipcq_send"] == 3 * R * (R - 1), p       # (m, l, o) around the ring
    else:
        assert c["gemm"] == 2 * R * R, p                  # two GEMMs per K/V block per rank
        assert c["ipcq_send"] == 2 * R * (R - 1), p       # K and V around the ring
    e = p["engine_busy_ns"]
    assert 0 < e["pe_gemm"] < p["sim_ns"] and 0 < e["pe_math"] < p["sim_ns"], p
heads = [(p["name"], p["q_heads_per_rank"]) for p in d["scaling"]]
assert heads == [(n, h) for n in ("multi_user_prefill", "multi_user_decode") for h in (1, 2, 4, 8)], heads
# more query heads per cube never take less time
for n in ("multi_user_prefill", "multi_user_decode"):
    t = [p["sim_ns"] for p in d["scaling"] if p["name"] == n]
    assert t == sorted(t), t
PY
}

milestone_gqa_writes_verified_panels() {
  run -q --param out="$tmp/g" --results-json "$tmp/r.json" run milestone-gqa-llama70b; expect_status 0
  expect_out "every panel verified against the host reference"
  check_sweep "$tmp/g/sweep.json"
  [ "$(wc -l <"$tmp/g/gqa_sweep.csv")" -eq 13 ] || fail "the CSV should have a header and 12 rows"
  if command -v gnuplot >/dev/null; then
    for f in gqa_op_log_single_user_prefill gqa_op_log_multi_user_prefill gqa_op_log_single_user_decode \
             gqa_op_log_multi_user_decode gqa_comparison gqa_scaling; do
      [ "$(head -c 4 "$tmp/g/$f.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$f.png is not a PNG"
    done
  fi
  ! ls -a "$tmp/g" | grep -q partial || fail "temporary files left: $(ls -a "$tmp/g")"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="ok" and d["result"]["schema"]=="kernbench.gqa_sweep", d' \
    "$tmp/r.json" || fail "results: $(cat "$tmp/r.json")"
  # the same inputs give the same bytes
  run -q --param out="$tmp/g2" run milestone-gqa-llama70b; expect_status 0
  cmp -s "$tmp/g/sweep.json" "$tmp/g2/sweep.json" || fail "sweep.json differs between two runs"
}

milestone_gqa_fast_rerenders() {
  run -q --param out="$tmp/g" run milestone-gqa-llama70b; expect_status 0
  cp "$tmp/g/gqa_sweep.csv" "$tmp/csv.before"; cp "$tmp/g/sweep.json" "$tmp/json.before"
  rm -f "$tmp/g/gqa_sweep.csv" "$tmp/g"/*.png
  run -q --param out="$tmp/g" --param fast=1 run milestone-gqa-llama70b; expect_status 0
  expect_out "nothing simulated (fast=1: re-rendered $tmp/g/sweep.json)"
  cmp -s "$tmp/csv.before" "$tmp/g/gqa_sweep.csv" || fail "the re-rendered CSV differs"
  cmp -s "$tmp/json.before" "$tmp/g/sweep.json" || fail "fast=1 rewrote sweep.json"
  if command -v gnuplot >/dev/null; then [ -f "$tmp/g/gqa_scaling.png" ] || fail "no re-rendered plot"; fi
  MILESTONE_FAST=1 run -q --param out="$tmp/none" run milestone-gqa-llama70b; expect_status 1
  expect_err "fast=1 re-renders an existing sweep, but $tmp/none/sweep.json cannot be read"
  [ ! -e "$tmp/none" ] || fail "fast=1 created the output directory"
  mkdir "$tmp/bad"; echo '{"schema": "other", "version": 1}' >"$tmp/bad/sweep.json"
  run -q --param out="$tmp/bad" --param fast=1 run milestone-gqa-llama70b; expect_status 1
  expect_err "is not a kernbench.gqa_sweep version 1 document"
  [ ! -e "$tmp/bad/gqa_sweep.csv" ] || fail "a refused sweep wrote a CSV"
}

milestone_gqa_stopped_leaves_nothing() {
  run -q --max-events 20000 --param out="$tmp/g" run milestone-gqa-llama70b; expect_status 4
  [ -z "$(ls -A "$tmp/g" 2>/dev/null | grep -v '\.dat$\|\.gp$')" ] || fail "a stopped run left: $(ls -A "$tmp/g")"
}
