-- Prints the `result` of a --results-json document (the rest names paths
-- and versions): kernbench tests/golden/result_of.lua FILE
package.path = "tests/lua/?.lua;" .. package.path
local f = assert(io.open(arg[1]))
local doc = require("json_decode")(f:read("a"))
f:close()
io.write(require("kernbench.json").encode(doc.result), "\n")
