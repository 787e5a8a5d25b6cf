#!/usr/bin/env bash
# Model layers from the command line (sourced by tests/cli/cli_test.sh; uses
# its helpers): the GQA Llama-70B milestone writes verified panels (decode
# panels with exactly 2 * n_ranks GEMMs), re-renders them with fast=1
# without simulating, refuses a missing or foreign sweep.json, and a run
# stopped early leaves no result file.

models_cases=(milestone_gqa_writes_verified_panels milestone_gqa_fast_rerenders milestone_gqa_stopped_leaves_nothing
              llama_layer_verified_on_1_2_4_sips llama_layer_breakdown llama_layer_refuses_bad_shapes
              llama_layer_attention_in_blocks)

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

# check_layer FILE MODE SIPS: the results document's breakdown and its invariants
check_layer() {
  python3 - "$@" <<'PY' || fail "results: $(cat "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
mode, sips = sys.argv[2], int(sys.argv[3])
r = d["result"]
assert d["status"] == "ok" and r["mode"] == mode and r["sips"] == sips, r
names = [p["name"] for p in r["phases"]]
want = ["norm_attn", "qkv", "rope", "attention"] + (["attention_combine"] if mode == "decode" else []) + \
       ["out_proj", "allreduce_attn", "norm_mlp", "gate_up", "down", "allreduce_mlp", "residual"]
assert names == want, names
total = sum(p["ns"] for p in r["phases"])
assert abs(total - r["layer_ns"]) < 1e-6 * total, (total, r["layer_ns"])
s = r["shares"]
assert abs(s["compute"] + s["memory"] + s["communication"] - 1) < 1e-9, s
for p in r["phases"]:
    assert p["ns"] > 0 and p["events"] > 0, p
    assert (p["class"] == "communication") == p["name"].startswith("allreduce"), p
    for e, u in p["engine_util"].items():
        assert 0 <= u <= 1, (p["name"], e, u)
    assert p["bottleneck_link"]["link"] and 0 < p["bottleneck_link"]["util"] <= 1, p
gemm = {p["name"]: p["engine_busy_ns"]["pe_gemm"] for p in r["phases"]}
assert gemm["qkv"] > 0 and gemm["gate_up"] > 0 and gemm["down"] > 0 and gemm["out_proj"] > 0, gemm
assert gemm["norm_attn"] == 0 and gemm["allreduce_attn"] == 0, gemm
if "worst_error" in r:
    assert r["worst_error"] < 3e-2, r
PY
}

llama_layer_verified_on_1_2_4_sips() {
  for n in 1 2 4; do
    run -q --set system.sips.count=$n --param model=llama-tiny --param seq=16 --param out="$tmp/l$n" \
      --results-json "$tmp/p$n.json" run llama-layer --data; expect_status 0
    expect_out "verified every rank's output against the host reference"
    check_layer "$tmp/p$n.json" prefill $n
  done
  # a narrow model whose row-parallel GEMMs split by rows on a cube's PEs
  printf 'return { name = "narrow", hidden = 64, heads = 2, kv_heads = 1, head_dim = math.floor(64 / 2), ffn = 128, rope_theta = 1e4, norm_eps = 1e-5 }\n' >"$tmp/narrow.lua"
  run -q --set system.sips.count=1 --param model="$tmp/narrow.lua" --param out="$tmp/n" --results-json "$tmp/n.json" \
    run llama-layer --data; expect_status 0
  expect_out "split out_proj by rows, gate_up by rows, down by rows"
  check_layer "$tmp/n.json" prefill 1
  for n in 1 4; do
    run -q --set system.sips.count=$n --param model=llama-tiny --param mode=decode --param batch=3 \
      --param context=32 --param out="$tmp/d$n" --results-json "$tmp/d$n.json" run llama-layer --data; expect_status 0
    expect_out "verified every rank's output against the host reference"
    check_layer "$tmp/d$n.json" decode $n
  done
}

llama_layer_breakdown() {
  run -q --set system.sips.count=2 --param model=llama-tiny --param out="$tmp/b" --results-json "$tmp/b.json" \
    run llama-layer; expect_status 0
  expect_out "critical path: compute"
  check_layer "$tmp/b.json" prefill 2
  [ "$(wc -l <"$tmp/b/phases.csv")" -eq 12 ] || fail "phases.csv should have a header and 11 phases"
  if command -v gnuplot >/dev/null; then
    [ "$(head -c 4 "$tmp/b/phases.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "phases.png is not a PNG"
  fi
  # the same inputs give the same figures
  run -q --set system.sips.count=2 --param model=llama-tiny --param out="$tmp/b2" run llama-layer; expect_status 0
  cmp -s "$tmp/b/phases.csv" "$tmp/b2/phases.csv" || fail "phases.csv differs between two runs"
}

# Attention longer than one scratch-sized block: prefill folds query and key
# blocks (144 rows a PE: a block of 125 and one of 19, each with its own
# causal mask), decode folds the cached positions in blocks (4608 > 4096);
# both verified against the host layer.
llama_layer_attention_in_blocks() {
  run -q --set system.sips.count=1 --param model=llama-tiny --param pes=2 --param seq=288 --param out="$tmp/p" \
    run llama-layer --data; expect_status 0
  expect_out "verified every rank's output against the host reference"
  run -q --set system.sips.count=1 --param model=llama-tiny --param mode=decode --param pes=1 --param cubes=1 \
    --param batch=2 --param context=4608 --param out="$tmp/d" run llama-layer --data; expect_status 0
  expect_out "verified every rank's output against the host reference"
}

llama_layer_refuses_bad_shapes() {
  run -q --param model=nope run llama-layer; expect_status 2
  expect_err "unknown model 'nope'"
  run -q --param model=llama-tiny --param seq=12 run llama-layer; expect_status 2
  expect_err "must divide by the PEs per cube (8)"
  run -q --param model=llama-tiny --param cubes=3 run llama-layer; expect_status 2
  expect_err "the all-reduces take one cube or all 16 of a SIP"
  printf 'return { name = "m", hidden = 64, heads = 3, kv_heads = 2, head_dim = 16, ffn = 64, rope_theta = 1e4, norm_eps = 1e-5 }\n' >"$tmp/m.lua"
  run -q --param model="$tmp/m.lua" run llama-layer; expect_status 2
  expect_err "heads (3) must be a multiple of kv_heads (2)"
  # a model file may compute and raise with Lua's pure libraries, and reaches nothing else
  printf 'if math.floor(2.5) == 2 then error("no such width") end\n' >"$tmp/e.lua"
  run -q --param model="$tmp/e.lua" run llama-layer; expect_status 2
  expect_err "model file $tmp/e.lua: $tmp/e.lua:1: no such width"
  printf 'return os.exit(0)\n' >"$tmp/os.lua"
  run -q --param model="$tmp/os.lua" run llama-layer; expect_status 2
  expect_err "global 'os'"
}
