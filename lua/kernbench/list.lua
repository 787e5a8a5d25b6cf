--- `kernbench list [DIR]` (kernbench.bench does the work).
return { main = require("kernbench.bench").list_main }
