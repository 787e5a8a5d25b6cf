#!/usr/bin/env bash
# Digests of simulated results that a restructure must not change:
#   golden.sh KERNBENCH OUTDIR     run the golden runs into OUTDIR and print
#                                  one "sha256  name" line per output
#   golden.sh --update KERNBENCH   rewrite tests/golden/digests.txt
# An intended change of results updates the digests in the same commit,
# with an entry in docs/decisions.md saying why (docs/architecture.md,
# "Golden digests").
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
KB=$1
if [ $update = 1 ]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; else out=$2; fi
cd "$root"

# Statistics keep every modelled figure; wall-clock rates and the counts of
# simulator-internal work (events, Lua resumes, processes) are dropped.
strip_wall() {
  sed -E 's/"(wall_s|events_per_s|events|resumes|resumes_per_s|processes|waiting|pending)":[^,}]*,?//g' "$1"
}

"$KB" -q probe --json >"$out/probe.json"
"$KB" -q --trace "$out/sharded.trace.json" --op-log "$out/sharded.ops.jsonl" \
  --stats-json "$out/sharded.stats.json" benches/sharded_gemm.lua --verify-data >"$out/sharded.out"
strip_wall "$out/sharded.stats.json" >"$out/sharded.stats.model.json"
"$KB" -q --trace "$out/single.trace.json" benches/gemm_single_pe.lua >"$out/single.out"
"$KB" -q --trace "$out/single_data.trace.json" --op-log "$out/single_data.ops.jsonl" \
  -t small_1cube_1pe benches/gemm_single_pe.lua --verify-data >"$out/single_data.out"
"$KB" -q -t small_1cube_8pe benches/softmax_rows.lua --verify-data >"$out/softmax.out"
"$KB" -q -t small_1cube_8pe --op-log "$out/branch.ops.jsonl" benches/memory_branch.lua --verify-data \
  >"$out/branch.out"
"$KB" -q --param quick=true --param out="$out/ms" --results-json "$out/ms.results.json" \
  run milestone-gemm >/dev/null
# what the milestone returned: its points (the rest of the document names paths)
"$KB" tests/golden/result_of.lua "$out/ms.results.json" >"$out/ms.result.json"
"$KB" -q -t small_2x2 --trace "$out/deploy.trace.json" --param rows=64 --param cols=32 \
  run deploy-roundtrip >"$out/deploy.out"

digests() {
  (cd "$out" && sha256sum probe.json sharded.out sharded.trace.json sharded.ops.jsonl \
     sharded.stats.model.json single.out single.trace.json single_data.out single_data.trace.json \
     single_data.ops.jsonl softmax.out branch.out branch.ops.jsonl ms.result.json ms/gemm_sweep.csv \
     deploy.out deploy.trace.json)
}
if [ $update = 1 ]; then digests >"$here/digests.txt"; cat "$here/digests.txt"; else digests; fi
