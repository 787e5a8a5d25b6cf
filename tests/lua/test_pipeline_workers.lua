--- The pipeline keys of the original's mechanisms (docs/pe-model.md,
-- "The original's pipeline"): unbounded queues (queue_depth = 0), one
-- worker per part for both directions (serial_worker) and no register-file
-- capacity (register_file_kb = 0). Each changes the timing as its
-- mechanism predicts, computed from the run's own stage times, and the
-- defaults keep today's behaviour.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"
local gemm_run = require "gemm_run"

TestPipelineWorkers = {}

local P = "cube.pe_template.components."
local PARTS = { "pe_dma", "pe_fetch_store", "pe_gemm", "pe_math" }

local function keys(...)
  local o = {}
  for _, list in ipairs { ... } do
    for _, k in ipairs(list) do o[#o + 1] = k end
  end
  return o
end

local UNBOUNDED = {}
for _, part in ipairs(PARTS) do UNBOUNDED[#UNBOUNDED + 1] = P .. part .. ".attrs.queue_depth=0" end
local SERIAL_DMA = { P .. "pe_dma.attrs.serial_worker=true" }
local SERIAL_FS = { P .. "pe_fetch_store.attrs.serial_worker=true", P .. "pe_fetch_store.attrs.register_file_kb=0" }

-- One f16 composite GEMM, timing only: A pinned (tl.load) when pin_a, B
-- pinned when pin_b, else streamed. Returns its stats and the op log.
local function run(topology, overrides, M, K, N, pin_a, pin_b)
  local torch = torchmod.new { topology = kb.topology.load(topology, overrides or {}), op_log = true }
  local st = gemm_run.composite(torch, M, K, N, { pin_a = pin_a, pin_b = pin_b })
  local log = torch.sim:op_log()
  torch.close()
  return st, log
end

-- The stage records of the op log: { [stage] = { {start, end}, ... } }.
local function spans(log)
  local s = {}
  for _, r in ipairs(log.records) do
    local stage = r.op_name:match("^TileToken/(.*)")
    if stage then
      s[stage] = s[stage] or {}
      s[stage][#s[stage] + 1] = { r.t_start_ns, r.t_end_ns }
    end
  end
  return s
end

local function overlaps(a, b)
  for _, x in ipairs(a) do
    for _, y in ipairs(b) do
      if x[1] < y[2] and y[1] < x[2] then return true end
    end
  end
  return false
end

local function makespan(st) return st.done_ns - st.first_ns end

function TestPipelineWorkers:test_the_defaults_are_todays_pipeline()
  local t = kb.topology.load("small_1cube_1pe")
  local attrs = function(kind) return t:node(t:node_at { kind = kind, sip = 0, cube = 0, pe = 0 }).attrs end
  for _, part in ipairs(PARTS) do lu.assertEquals(attrs(part).queue_depth, 2, part) end
  lu.assertFalse(attrs("pe_dma").serial_worker)
  lu.assertFalse(attrs("pe_fetch_store").serial_worker)
  lu.assertEquals(attrs("pe_fetch_store").register_file_kb, 64)
  -- setting the defaults explicitly changes nothing
  local plain = run("small_1cube_1pe", nil, 128, 128, 128, true, false)
  local explicit = run("small_1cube_1pe", { P .. "pe_dma.attrs.serial_worker=false",
    P .. "pe_fetch_store.attrs.serial_worker=false", P .. "pe_fetch_store.attrs.register_file_kb=64",
    P .. "pe_dma.attrs.queue_depth=2" }, 128, 128, 128, true, false)
  lu.assertEquals(explicit, plain)
end

function TestPipelineWorkers:test_unbounded_queues_never_stall_the_feeder()
  -- a slow GEMM (4 x 4 MAC array): with queues one deep the feeder waits
  -- (test_pipeline.lua); with queue_depth 0 every tile enters the first
  -- stage's queue at once, so all 4 x 4 tiles are fed at the first's time
  local slow = { P .. "pe_gemm.attrs.mac_rows=4", P .. "pe_gemm.attrs.mac_cols=4" }
  local st, log = run("small_1cube_1pe", keys(slow, UNBOUNDED), 128, 64, 128, false, false)
  lu.assertEquals(st.tiles, 16)
  local reads = spans(log).DMA_READ
  -- the read channel works without a gap: the k-th read ends at the sum of the first k
  local busy = 0
  for _, r in ipairs(reads) do busy = busy + (r[2] - r[1]) end
  lu.assertAlmostEquals(reads[#reads][2] - st.first_ns, busy, 1e-6)
  -- the same run with queues one deep: the reads wait for room
  local one = {}
  for _, part in ipairs(PARTS) do one[#one + 1] = P .. part .. ".attrs.queue_depth=1" end
  local _, log1 = run("small_1cube_1pe", keys(slow, one), 128, 64, 128, false, false)
  local reads1 = spans(log1).DMA_READ
  lu.assertTrue(reads1[#reads1][2] > reads[#reads][2] + 100)
end

function TestPipelineWorkers:test_a_serial_dma_worker_serves_every_read_before_the_first_write()
  -- A pinned, B streamed, 128^3: 32 tiles, 16 output tiles. Unbounded
  -- queues put all 32 reads in PE_DMA's queue at once; with one worker
  -- the writes queue behind them, and the worker never idles, so the
  -- makespan is the sum of the DMA stage times exactly
  local st, log = run("small_1cube_1pe", keys(UNBOUNDED, SERIAL_DMA), 128, 128, 128, true, false)
  local s = spans(log)
  lu.assertEquals(#s.DMA_READ, 32)
  lu.assertEquals(#s.DMA_WRITE, 16)
  lu.assertAlmostEquals(makespan(st), st.stage_ns.DMA_READ + st.stage_ns.DMA_WRITE, 1e-6)
  lu.assertFalse(overlaps(s.DMA_READ, s.DMA_WRITE))
  -- two lanes (the default): writes overlap the later reads, the makespan is shorter
  local st2, log2 = run("small_1cube_1pe", UNBOUNDED, 128, 128, 128, true, false)
  local s2 = spans(log2)
  lu.assertTrue(overlaps(s2.DMA_READ, s2.DMA_WRITE))
  lu.assertTrue(makespan(st2) < st2.stage_ns.DMA_READ + st2.stage_ns.DMA_WRITE)
end

function TestPipelineWorkers:test_a_serial_fetch_store_worker_never_fetches_and_stores_at_once()
  -- both operands pinned: fetch, GEMM and store pace the pipeline
  local st, log = run("small_1cube_1pe", keys(UNBOUNDED, SERIAL_FS), 128, 256, 128, true, true)
  local s = spans(log)
  lu.assertFalse(overlaps(s.FETCH, s.STORE))
  lu.assertTrue(makespan(st) >= st.stage_ns.FETCH + st.stage_ns.STORE)
  local st2, log2 = run("small_1cube_1pe", keys(UNBOUNDED, { P .. "pe_fetch_store.attrs.register_file_kb=0" }),
                        128, 256, 128, true, true)
  lu.assertTrue(overlaps(spans(log2).FETCH, spans(log2).STORE))
  lu.assertEquals(st2.stage_counts, st.stage_counts)
end

function TestPipelineWorkers:test_a_serial_worker_that_could_deadlock_is_an_error()
  local cases = {
    { SERIAL_DMA, "pe_dma.attrs.serial_worker needs pe_dma.attrs.queue_depth = 0 (unbounded)" },
    { keys(UNBOUNDED, { P .. "pe_fetch_store.attrs.serial_worker=true" }),
      "pe_fetch_store.attrs.serial_worker needs pe_fetch_store.attrs.queue_depth = 0 (unbounded) and " ..
      "register_file_kb = 0" },
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(run, "small_1cube_1pe", c[1], 32, 64, 32, true, false)
    lu.assertFalse(ok)
    lu.assertStrContains(tostring(err), "tl.composite on sip0.cube0.pe0 (kernel '")
    lu.assertStrContains(tostring(err), c[2])
  end
end

function TestPipelineWorkers:test_register_file_0_has_no_capacity()
  -- 12 KiB holds one default tile with its accumulator: fetches wait for
  -- the GEMM before them; 0 (no model) runs as a register file too large to fill
  local tight = run("small_1cube_1pe", { P .. "pe_fetch_store.attrs.register_file_kb=12" }, 128, 256, 128, true, true)
  local none = run("small_1cube_1pe", { P .. "pe_fetch_store.attrs.register_file_kb=0" }, 128, 256, 128, true, true)
  local huge = run("small_1cube_1pe", { P .. "pe_fetch_store.attrs.register_file_kb=1048576" }, 128, 256, 128, true,
                   true)
  lu.assertEquals(none, huge)
  lu.assertTrue(makespan(tight) > makespan(none))
  -- a tile larger than any finite register file would be refused runs
  local ok = pcall(run, "small_1cube_1pe", { P .. "pe_fetch_store.attrs.register_file_kb=0",
    "cube.pe_template.components.pe_scheduler.attrs.tile_k=1048576" }, 32, 4096, 32, true, false)
  lu.assertTrue(ok)
end

function TestPipelineWorkers:test_original_32x3072x32_load_ref_is_48_reads_and_one_tiles_drain()
  -- the original profile with the original's pipeline keys: the read
  -- channel is the bottleneck (48 back-to-back reads of a 4 KiB B tile),
  -- then the last tile's fetch, GEMM, store and write follow in sequence
  local st = run("original", keys(UNBOUNDED, SERIAL_DMA, SERIAL_FS, { P .. "pe_fetch_store.attrs.register_file_kb=0" }),
                 32, 3072, 32, true, false)
  local c, ns = st.stage_counts, st.stage_ns
  lu.assertEquals(c.DMA_READ, 48)
  lu.assertEquals(c.DMA_WRITE, 1)
  local drain = ns.FETCH / c.FETCH + ns.GEMM / c.GEMM + ns.STORE + ns.DMA_WRITE
  lu.assertAlmostEquals(makespan(st), ns.DMA_READ + drain, 1e-6)
  -- each read: the request's and the 0-byte response's router decode around 16 bursts on 8 channels
  lu.assertAlmostEquals(ns.DMA_READ / 48, 2 + 16 + 2, 1e-6)
end
