--- docs/sim-patterns.md: every Lua model there prints exactly the output shown
--- after it.
local lu = require "luaunit"

local function blocks()
  local f = assert(io.open("../../docs/sim-patterns.md"))
  local text = f:read("a")
  f:close()
  local found = {}
  for title, code, out in text:gmatch("\n## ([^\n]+).-```lua\n(.-)```%s*```text\n(.-)```") do
    found[#found + 1] = {title = title, code = code, out = out}
  end
  return found
end

TestSimPatterns = {}

function TestSimPatterns:test_the_page_has_the_four_patterns()
  local titles = {}
  for _, b in ipairs(blocks()) do titles[#titles + 1] = b.title end
  lu.assertEquals(titles, {
    "A router: any input, or a timeout",
    "A credit link: a Container of credits",
    "An arbiter: priorities and preemption",
    "A watchdog: interrupts",
  })
end

function TestSimPatterns:test_each_model_prints_what_the_page_shows()
  for _, b in ipairs(blocks()) do
    local lines = {}
    local env = setmetatable({print = function(...)
      local parts = table.pack(...)
      for i = 1, parts.n do parts[i] = tostring(parts[i]) end
      lines[#lines + 1] = table.concat(parts, "\t")
    end}, {__index = _G})
    local chunk = assert(load(b.code, "=" .. b.title, "t", env))
    chunk()
    lu.assertEquals(table.concat(lines, "\n") .. "\n", b.out, b.title)
  end
end
