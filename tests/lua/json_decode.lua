--- The tests' JSON decoder: kernbench.json's (lua/kernbench/json.lua).
return require("kernbench.json").decode
