--- Deploys a seeded random f16 tensor sharded over every PE of one SIP,
-- reads it back and checks it element for element; prints the simulated
-- time of the deploy and of the read-back.
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- rows, cols (default 1024 x 512), seed (default 7).
return {
  name = "deploy-roundtrip",
  description = "deploy a random f16 tensor over all PEs of a SIP, read it back, compare",
  params = {
    rows = { default = 1024, min = 1, env = "DEPLOY_ROWS", help = "rows of the tensor" },
    cols = { default = 512, min = 1, env = "DEPLOY_COLS", help = "columns of the tensor" },
    seed = { default = 7, env = "DEPLOY_SEED", help = "seed of the random values" },
  },
  run = function(torch, p)
    local rows, cols = p.rows, p.cols
    torch.manual_seed(p.seed)
    local x = torch.randn({ rows, cols }, { dtype = "f16" })
    local dp = torch.DPPolicy { cube = "row_wise", pe = "row_wise" }

    local t0 = torch.now_ns()
    local d = torch.empty({ rows, cols }, { dtype = "f16", dp = dp, name = "x" })
    torch.wait(d:copy_(x))
    local t1 = torch.now_ns()
    local y = d:cpu()
    local t2 = torch.now_ns()

    if not torch.equal(x, y) then
      error("deploy-roundtrip: the tensor read back differs from the one deployed")
    end
    print(("deployed %d x %d f16 (%d bytes) over %d shards: deploy %s, read back %s, data identical"):format(
      rows, cols, rows * cols * 2, #d.shards, kb.format_ns(t1 - t0), kb.format_ns(t2 - t1)))
    d:free()
    return { deploy_ns = t1 - t0, read_back_ns = t2 - t1, shards = #d.shards, bytes = rows * cols * 2 }
  end,
}
