--- The element types collectives move (docs/ccl.md): kernels take numbers
-- only, so a dtype travels as its code.
local M = {}

M.CODE = { f16 = 0, bf16 = 1, f32 = 2 }
M.NAME = { [0] = "f16", [1] = "bf16", [2] = "f32" }
M.SIZE = { [0] = 2, [1] = 2, [2] = 4 }

--- The code of dtype name `dt` (default f16), or an error naming `who`.
function M.code(dt, who)
  local c = M.CODE[dt or "f16"]
  if not c then error(("%s: the collectives move f16, bf16 and f32, got %s"):format(who, tostring(dt)), 3) end
  return c
end

return M
