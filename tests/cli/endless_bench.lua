--- A bench that runs until it is stopped, for the tests of interrupted and
-- limited runs (tests/cli/run_cases.sh): it launches a kernel (DMA loads
-- and stores and tl.cycles on one PE) again and again, so the trace and the
-- op log keep growing, and prints "ready" (unbuffered) after its third
-- launch, so a test knows the run is under way whatever the machine's
-- speed. With ENDLESS_RESULT=FILE it also opens a result file at the start
-- (kb.open_output) that a finished run would write.
return {
  name = "endless",
  description = "launches a small kernel forever (tests of stopped runs)",
  run = function(torch)
    io.stdout:setvbuf("no")
    local result = os.getenv("ENDLESS_RESULT")
    local out = result and kb.open_output(result)
    local d = torch.to_device(torch.ones({ 16, 16 }), torch.DPPolicy { num_cubes = 1, num_pes = 1 })
    local n = 0
    while true do
      torch.launch(function(tl, p)
        for _ = 1, 20 do
          tl.store(p, tl.load(p, { 16, 16 }, "f32"))
          tl.cycles(100)
        end
      end, 1, d)
      n = n + 1
      if n == 3 then print("ready") end
      if n == math.huge then out:write("unreachable\n"):close() end
    end
  end,
}
