--- Deploys a seeded random f16 tensor sharded over every PE of one SIP,
-- reads it back and checks it element for element; prints the simulated
-- time of the deploy and of the read-back.
--
-- Environment (optional): DEPLOY_ROWS, DEPLOY_COLS (default 1024 x 512),
-- DEPLOY_SEED (default 7).
return {
  name = "deploy-roundtrip",
  description = "deploy a random f16 tensor over all PEs of a SIP, read it back, compare",
  run = function(torch)
    local rows = tonumber(os.getenv("DEPLOY_ROWS")) or 1024
    local cols = tonumber(os.getenv("DEPLOY_COLS")) or 512
    torch.manual_seed(tonumber(os.getenv("DEPLOY_SEED")) or 7)
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
  end,
}
