--- help(): the one source of the REPL's help texts, and the lookups behind
-- help(x) and Tab completion (docs/repl.md).
--
-- M.groups lists every module and type a script reaches, in listing order.
-- A module's entries are named as written in code (`kb.topology.load`); a
-- type's as a method call on the receiver the docs use (`s:run`, `t:summary`,
-- `h:done`). Each entry is {name, signature, one-line summary}.
-- tests/lua/test_help.lua checks that every entry is documented (its name in
-- a code span of the group's doc file) and that every function the live
-- modules and metatables hold has an entry, so this file cannot drift.
local M = {}

M.groups = {
  { name = "globals", summary = "the globals the REPL preloads", doc = "repl.md", entries = {
    { "sim", "sim", "the event core: simulations, processes, events, stores, resources" },
    { "kb", "kb", "the kernbench library: topologies, the torch runtime, components, probe, addresses" },
    { "help", "help([x])", "this help: help() lists everything, help(x) or help(\"name\") one function, module or type" },
    { "torch", "torch", "a torch-like runtime on the default topology, made when first used (others: kb.torch{topology = t}; docs/torch.md)" },
  } },

  { name = "sim", summary = "the event core (also kb.sim)", doc = "lua-api.md", entries = {
    { "sim.new", "sim.new([{topology = t, op_log = false}]) -> s", "a new, independent simulation; with a topology, its fabric" },
    { "sim.version", "sim.version", "the kernbench version string" },
    { "sim.is_interrupt", "sim.is_interrupt(e) -> bool", "whether an error is an interrupt (p:interrupt); its fields: cause, process (a name), by (a process or nil), time_ns, text" },
  } },

  { name = "Simulation", recv = "s", mt = "kernbench.sim", made = "s = sim.new()", doc = "lua-api.md",
    summary = "a simulation: processes, events, runs, fabric operations, inspection", entries = {
    { "s:spawn", "s:spawn(fn, ...) or s:spawn{fn =, name =, args = {...}, daemon =} -> p", "start a process running fn(...) as a coroutine" },
    { "s:sleep", "s:sleep(ns)", "(in a process) wait ns of simulated time" },
    { "s:now", "s:now() -> ns", "the current simulated time in ns" },
    { "s:now_ps", "s:now_ps() -> ps", "the current simulated time in ps (an integer)" },
    { "s:current", "s:current() -> p|nil", "the running process, or nil outside one" },
    { "s:event", "s:event([name]) -> ev", "a new pending event" },
    { "s:timeout", "s:timeout(ns[, value]) -> ev", "an event that succeeds with value after ns" },
    { "s:all_of", "s:all_of{e1, e2, ...} -> ev", "an event that succeeds when all succeed" },
    { "s:any_of", "s:any_of{e1, e2, ...} -> ev", "an event that succeeds or fails like the first one processed" },
    { "s:store", "s:store([capacity[, name]]) -> st", "a FIFO store (no capacity: unbounded)" },
    { "s:resource", "s:resource([capacity[, name]]) -> r", "a resource with capacity slots (default 1)" },
    { "s:container", "s:container([capacity[, init[, name]]]) or s:container{capacity =, init =, name =} -> c", "an amount between 0 and capacity (default unbounded), starting at init (default 0)" },
    { "s:priority_store", "s:priority_store([capacity[, name]]) -> ps", "a store whose gets take the item of lowest priority" },
    { "s:filter_store", "s:filter_store([capacity[, name]]) -> fs", "a store whose gets take the oldest item their filter accepts" },
    { "s:priority_resource", "s:priority_resource([capacity[, name]]) -> r", "a resource whose queue is served by request priority" },
    { "s:preemptive_resource", "s:preemptive_resource([capacity[, name]]) -> r", "a priority resource whose better requests preempt users (an interrupt)" },
    { "s:run", "s:run([until_ns | ev]) -> \"empty\"|\"until\"|\"stopped\" | ev's value", "process events until none remain (deadlock check), until until_ns, or until ev is processed (its value)" },
    { "s:step", "s:step([n]) -> count", "process at most n events (default 1)" },
    { "s:peek", "s:peek() -> ns", "the time of the next queued event, math.huge if none" },
    { "s:stop", "s:stop()", "(from a process) end the current run after this event" },
    { "s:stats", "s:stats([{requests = true}]) -> table", "events, simulated and wall time, processes; components, links and requests on a topology" },
    { "s:op_log", "s:op_log() -> {records, counts}", "the op log: records sorted by start time, counts per op name" },
    { "s:waiting", "s:waiting() -> string|nil", "the report of blocked non-daemon processes" },
    { "s:close", "s:close()", "free the simulation now" },
    { "s:memory_write", "s:memory_write{sip, cube, pe, offset, nbytes [, data | src]} -> ev", "host MemoryWrite through the SIP's PCIe endpoint into HBM" },
    { "s:memory_read", "s:memory_read{sip, cube, pe, offset, nbytes [, data = true | dst]} -> ev", "host MemoryRead of HBM back to the PCIe endpoint" },
    { "s:pe_dma", "s:pe_dma{sip, cube, pe, dst = {...} | dst_sram | dst_pa, nbytes [, write]} -> ev", "a PE DMA transfer to or from an HBM slice or the cube SRAM" },
    { "s:transfer", "s:transfer{src = id, dst = id, nbytes [, view] [, relay]} -> ev", "move bytes between any two nodes" },
    { "s:topology", "s:topology() -> t", "the topology of the simulation" },
    { "s:mmu_map", "s:mmu_map{targets = {...}, entries = {{va, pa, size}, ...}, label =} -> ev", "install page-table entries in the target PE_MMUs (a timed message)" },
    { "s:ipcq_install", "s:ipcq_install{buffer_kind =, backpressure =, n_slots =, slot_size =, pes = {...}} -> ev", "send an IPCQ plan to the PE_IPCQs (torch.install_ipcq builds it; docs/ipcq.md)" },
    { "s:mmu_unmap", "s:mmu_unmap{targets = {...}, entries = {{va, size}, ...}} -> ev", "remove page-table entries from the target PE_MMUs" },
    { "s:launch", "s:launch{name, targets, grid, body = fn [, data] [, pa_fallback]} -> ev", "a KernelLaunch: start barrier, fn(ctx, sip, cube, pe) on each target PE" },
    { "s:in_flight", "s:in_flight([src, dst]) -> list", "the transactions not yet completed (only those over link src -> dst)" },
    { "s:component", "s:component(id) -> table", "a component's counters (impl, kind, txns, flits, bytes, busy_ns, ...)" },
    { "s:pe_state", "s:pe_state(sip, cube, pe) -> table", "a PE's command in flight, composites, tiles left, register file, lanes" },
  } },

  { name = "Event", recv = "ev", mt = "kernbench.event", made = "ev = s:event()", doc = "lua-api.md",
    summary = "an event (also timeouts and conditions)", entries = {
    { "ev:succeed", "ev:succeed([value])", "trigger with a value (events from s:event() only; once)" },
    { "ev:fail", "ev:fail([reason])", "trigger as failed; the reason is raised in waiters" },
    { "ev:wait", "ev:wait() -> value", "(blocking) the value, or raise the reason" },
    { "ev:value", "ev:value() -> value", "the value without blocking; error if not processed yet" },
    { "ev:triggered", "ev:triggered() -> bool", "succeed/fail was called (or the timeout/condition fired)" },
    { "ev:processed", "ev:processed() -> bool", "waiters have been woken" },
    { "ev:ok", "ev:ok() -> bool|nil", "true / false once triggered, nil while pending" },
    { "ev:id", "ev:id() -> n", "the event's number" },
    { "ev:add_callback", "ev:add_callback(fn)", "call fn(ev) when the event is processed (in order with its waiters; must not block)" },
    { "ev:defuse", "ev:defuse()", "a failure of the event no longer fails the run when nothing waits on it" },
    { "ev:defused", "ev:defused() -> bool", "whether its failure was taken (defused)" },
  } },

  { name = "Process", recv = "p", mt = "kernbench.process", made = "p = s:spawn(fn)", doc = "lua-api.md",
    summary = "a process (also an event: it succeeds with fn's results)", entries = {
    { "p:wait", "p:wait() -> ...", "(blocking) the values the function returned; raises its error" },
    { "p:value", "p:value() -> ...", "the same without blocking" },
    { "p:name", "p:name() -> string", "its name (default proc#<id>)" },
    { "p:id", "p:id() -> n", "its number" },
    { "p:alive", "p:alive() -> bool", "true until the function returns or fails" },
    { "p:triggered", "p:triggered() -> bool", "as for events" },
    { "p:processed", "p:processed() -> bool", "as for events" },
    { "p:ok", "p:ok() -> bool|nil", "as for events" },
    { "p:add_callback", "p:add_callback(fn)", "as for events" },
    { "p:defuse", "p:defuse()", "as for events" },
    { "p:defused", "p:defused() -> bool", "as for events" },
    { "p:interrupt", "p:interrupt([cause])", "throw an interrupt error into the process at its blocking call (now, before ordinary events); what it waited on goes on without it" },
  } },

  { name = "Store", recv = "st", mt = "kernbench.store", made = "st = s:store()", doc = "lua-api.md",
    summary = "a FIFO store", entries = {
    { "st:put", "st:put(v)", "(blocking while full) append any Lua value" },
    { "st:get", "st:get() -> v", "(blocking while empty) remove the oldest value" },
    { "st:count", "st:count() -> n", "items held (also #st)" },
    { "st:capacity", "st:capacity() -> n|nil", "capacity, nil if unbounded" },
    { "st:name", "st:name() -> string", "its name (default store#N)" },
    { "st:put_event", "st:put_event(v) -> req", "a put request, not waited on (an event; cancel, close)" },
    { "st:get_event", "st:get_event() -> req", "a get request, not waited on; its value is the item" },
    { "st:getters", "st:getters() -> n", "gets waiting (blocking calls and requests)" },
    { "st:putters", "st:putters() -> n", "puts waiting (blocking calls and requests)" },
  } },

  { name = "Resource", recv = "r", mt = "kernbench.resource", made = "r = s:resource(n)", doc = "lua-api.md",
    summary = "a resource with slots", entries = {
    { "r:acquire", "r:acquire()", "(blocking while all slots are in use) take a slot" },
    { "r:release", "r:release([req])", "free a slot taken by r:acquire(), or request req's slot, now" },
    { "r:request", "r:request() -> req", "a request for a slot, not waited on (an event; release, close)" },
    { "r:in_use", "r:in_use() -> n", "slots in use" },
    { "r:capacity", "r:capacity() -> n", "slots in all" },
    { "r:queued", "r:queued() -> n", "acquires waiting" },
    { "r:name", "r:name() -> string", "its name" },
    { "r:users", "r:users() -> {req, ...}", "the requests holding a slot, in the order they got it" },
    { "r:queue", "r:queue() -> {req|p, ...}", "what waits: requests, and processes blocked in r:acquire()" },
  } },

  { name = "Request", recv = "req", mt = "kernbench.request", made = "req = r:request()", doc = "lua-api.md",
    summary = "a put, get or resource request as an event", entries = {
    { "req:wait", "req:wait() -> value", "(blocking) until served and processed; a get's item" },
    { "req:value", "req:value() -> value", "the same without blocking" },
    { "req:triggered", "req:triggered() -> bool", "served" },
    { "req:processed", "req:processed() -> bool", "as for events" },
    { "req:ok", "req:ok() -> bool|nil", "as for events" },
    { "req:id", "req:id() -> n", "its event's number" },
    { "req:cancel", "req:cancel() -> bool", "leave the queue if not served yet (true), else false" },
    { "req:release", "req:release()", "(resource requests) free its slot" },
    { "req:close", "req:close()", "cancel, then (resource requests) release: what <close> does" },
    { "req:add_callback", "req:add_callback(fn)", "as for events" },
  } },

  { name = "Container", recv = "c", mt = "kernbench.container", made = "c = s:container(cap, init)", doc = "lua-api.md",
    summary = "an amount of matter (credits, bytes) between 0 and a capacity", entries = {
    { "c:put", "c:put(amount)", "(blocking while there is no room for it) add amount > 0" },
    { "c:get", "c:get(amount)", "(blocking while the level is lower) take amount > 0" },
    { "c:put_event", "c:put_event(amount) -> req", "a put request, not waited on" },
    { "c:get_event", "c:get_event(amount) -> req", "a get request, not waited on" },
    { "c:level", "c:level() -> n", "the amount held" },
    { "c:capacity", "c:capacity() -> n|nil", "capacity, nil if unbounded" },
    { "c:getters", "c:getters() -> n", "gets waiting" },
    { "c:putters", "c:putters() -> n", "puts waiting" },
    { "c:name", "c:name() -> string", "its name" },
  } },

  { name = "PriorityStore", recv = "ps", mt = "kernbench.priority_store", made = "ps = s:priority_store()", doc = "lua-api.md",
    summary = "a store whose gets take the item of lowest priority", entries = {
    { "ps:put", "ps:put(v[, priority])", "(blocking while full) add v with a priority (default: v, a number)" },
    { "ps:get", "ps:get() -> v", "(blocking while empty) take the item of lowest priority" },
    { "ps:put_event", "ps:put_event(v[, priority]) -> req", "a put request, not waited on" },
    { "ps:get_event", "ps:get_event() -> req", "a get request, not waited on" },
    { "ps:count", "ps:count() -> n", "items held" },
    { "ps:capacity", "ps:capacity() -> n|nil", "capacity, nil if unbounded" },
    { "ps:getters", "ps:getters() -> n", "gets waiting" },
    { "ps:putters", "ps:putters() -> n", "puts waiting" },
    { "ps:name", "ps:name() -> string", "its name" },
  } },

  { name = "FilterStore", recv = "fs", mt = "kernbench.filter_store", made = "fs = s:filter_store()", doc = "lua-api.md",
    summary = "a store whose gets take the oldest item their filter accepts", entries = {
    { "fs:put", "fs:put(v)", "(blocking while full) append v" },
    { "fs:get", "fs:get([filter]) -> v", "(blocking until one is there) take the oldest item filter(item) accepts (any without a filter)" },
    { "fs:put_event", "fs:put_event(v) -> req", "a put request, not waited on" },
    { "fs:get_event", "fs:get_event([filter]) -> req", "a get request, not waited on" },
    { "fs:count", "fs:count() -> n", "items held" },
    { "fs:capacity", "fs:capacity() -> n|nil", "capacity, nil if unbounded" },
    { "fs:getters", "fs:getters() -> n", "gets waiting" },
    { "fs:putters", "fs:putters() -> n", "puts waiting" },
    { "fs:name", "fs:name() -> string", "its name" },
  } },

  { name = "PriorityResource", recv = "pr", mt = "kernbench.priority_resource", made = "pr = s:priority_resource(n)", doc = "lua-api.md",
    summary = "a resource served by priority; preemptive ones interrupt worse users", entries = {
    { "pr:request", "pr:request([priority[, preempt]]) or pr:request{priority =, preempt =} -> req", "a request (priority 0, preempt true by default), not waited on" },
    { "pr:release", "pr:release(req)", "free the slot of req" },
    { "pr:in_use", "pr:in_use() -> n", "slots in use" },
    { "pr:capacity", "pr:capacity() -> n", "slots in all" },
    { "pr:queued", "pr:queued() -> n", "requests waiting" },
    { "pr:preemptive", "pr:preemptive() -> bool", "whether better requests preempt users" },
    { "pr:name", "pr:name() -> string", "its name" },
    { "pr:users", "pr:users() -> {req, ...}", "the requests holding a slot" },
    { "pr:queue", "pr:queue() -> {req, ...}", "the requests waiting, in queue (priority) order" },
  } },

  { name = "kb", summary = "the kernbench library (require \"kernbench\")", doc = { "lua-api.md", "benches.md", "repl.md" }, entries = {
    { "kb.version", "kb.version", "the kernbench version" },
    { "kb.sim", "kb.sim", "the sim module" },
    { "kb.format_ns", "kb.format_ns(ns) -> string", "a readable duration: kb.format_ns(1500) == \"1.5 us\"" },
    { "kb.topology", "kb.topology", "loading topologies: kb.topology.load(name)" },
    { "kb.addr", "kb.addr", "the 53-bit physical address codec" },
    { "kb.components", "kb.components", "components written in Lua: kb.components.register(name, def)" },
    { "kb.torch", "kb.torch{topology = t, device = n, data_mode = nil|\"data\"|\"verify\", op_log = false} -> torch", "a torch-like runtime on a new simulation (docs/torch.md)" },
    { "kb.open_output", "kb.open_output(path) -> out", "a result file written beside path and renamed over it by out:close()" },
    { "kb.write_file", "kb.write_file(path, text)", "write text to path atomically" },
    { "kb.lua_dir", "kb.lua_dir", "(internal) the directory the Lua library was loaded from", "internal" },
    { "kb.progress", "kb.progress(k, n[, label])", "a bench has started point k of n: the command line's progress line" },
    { "kb.ccl_path", "kb.ccl_path", "(internal) the command line's --ccl FILE, for ccl.yaml", "internal" },
    { "kb.jobs", "kb.jobs", "(internal) the command line's -j N (nil when not given): worker processes a bench may run at once", "internal" },
    { "kb.data_mode", "kb.data_mode", "(internal) \"data\" or \"verify\" under --data / --verify-data, else nil", "internal" },
    { "kb.params", "kb.params", "(internal) the command line's --param values, for benches", "internal" },
    { "kb.results_requested", "kb.results_requested", "(internal) whether the command line asked for bench results", "internal" },
    { "kb.probe", "kb.probe", "the fabric probe as a library: kb.probe.run{case = name}" },
    { "kb.ipcq", "kb.ipcq.dump(plan) -> text", "an IPCQ plan's directions, peers and receive rings (docs/ipcq.md)" },
    { "kb.ccl", "kb.ccl.predict{algorithm =, topology =, nbytes =, buffer_kind =, slot_size =, root =} -> {predicted_ns, ...}", "an all-reduce's time estimated from the topology, without contention (docs/ccl.md)" },
    { "kb.pretty", "kb.pretty(v[, {depth = 3, items = 20}]) -> string", "v as the REPL prints it: a nested Lua literal, tensors and topologies summarised" },
    { "kb.help", "kb.help([x])", "print the help of x (the global help in the REPL)" },
  } },

  { name = "kb.topology", summary = "loading topologies", doc = "lua-api.md", entries = {
    { "kb.topology.load", "kb.topology.load([path[, overrides]]) -> t", "load and compile a topology (a file or a shipped name such as \"small_2x2\")" },
    { "kb.topology.implementations", "kb.topology.implementations() -> list", "the registered component implementations with their attributes" },
    { "kb.topology.dir", "kb.topology.dir", "where shipped topologies are found" },
    { "kb.topology.find", "kb.topology.find(path) -> file", "(internal) the file a topology name refers to", "internal" },
    { "kb.topology.default_overrides", "kb.topology.default_overrides", "(internal) the command line's --set overrides, applied by load() without a path", "internal" },
  } },

  { name = "Topology", recv = "t", mt = "kernbench.topology", made = "t = kb.topology.load(\"small_2x2\")", doc = { "lua-api.md", "topology.md" },
    summary = "a compiled topology", entries = {
    { "t.name", "t.name", "its name" },
    { "t.file", "t.file", "its file" },
    { "t:summary", "t:summary() -> string", "a multi-line description: counts per node and edge kind, parameters" },
    { "t:params", "t:params() -> table", "sips, cubes_per_sip, pes_per_cube, flit_bytes, hbm figures, nodes, edges, ..." },
    { "t:config", "t:config() -> table", "every parameter used, with its source (as --dump-config writes)" },
    { "t:nodes", "t:nodes([glob]) -> list", "node ids matching a shell glob, in id order" },
    { "t:node", "t:node(id) -> table", "{id, kind, impl, role, attrs, sip, cube, pe, io, pos_mm}" },
    { "t:node_at", "t:node_at{kind =, sip =, cube =, pe =, io =} -> id|nil", "the id of the node of that kind at that place" },
    { "t:edges", "t:edges(id) -> list", "out-edges {src, dst, kind, bw_gbs, mm, prop_ns}" },
    { "t:path", "t:path(src, dst[, view]) -> list", "node ids of the route" },
    { "t:path_edges", "t:path_edges(src, dst[, view]) -> list", "the edges of that route" },
    { "t:path_latency_ns", "t:path_latency_ns(src, dst[, view[, nbytes]]) -> ns", "the path formula: overheads, propagation, nbytes at the narrowest link" },
    { "t:resolve", "t:resolve(pa) -> id, offset", "the node a physical address lives on, and the node-local offset" },
  } },

  { name = "kb.addr", summary = "the 53-bit physical address codec", doc = "lua-api.md", entries = {
    { "kb.addr.hbm", "kb.addr.hbm(sip, die, hbm_offset) -> pa", "an HBM address" },
    { "kb.addr.pe_hbm", "kb.addr.pe_hbm(sip, die, pe, offset[, slice_bytes]) -> pa", "an offset inside PE pe's HBM slice" },
    { "kb.addr.pe_tcm", "kb.addr.pe_tcm(sip, die, pe, offset) -> pa", "an address in a PE's TCM" },
    { "kb.addr.pe_local", "kb.addr.pe_local(sip, die, pe, sub_unit, offset) -> pa", "a PE-local resource" },
    { "kb.addr.cube_sram", "kb.addr.cube_sram(sip, die, offset) -> pa", "an address in the cube SRAM" },
    { "kb.addr.mcpu", "kb.addr.mcpu(sip, die, sub_unit, offset) -> pa", "an M_CPU window" },
    { "kb.addr.iocpu", "kb.addr.iocpu(sip, io, sub_unit, offset) -> pa", "an IO_CPU window" },
    { "kb.addr.ual", "kb.addr.ual(sip, io, offset) -> pa", "a UAL window of an IO chiplet" },
    { "kb.addr.decode", "kb.addr.decode(pa) -> {sip, die, kind, pe, sub_unit, offset, io}", "the fields of an address" },
    { "kb.addr.format", "kb.addr.format(pa) -> string", "e.g. \"sip0.die0 pe3 PE_TCM +0x400\"" },
  } },

  { name = "kb.components", summary = "components written in Lua", doc = { "lua-api.md", "extending.md" }, entries = {
    { "kb.components.register", "kb.components.register(name, def)", "add a component implementation, usable as impl: name in topologies loaded afterwards" },
    { "kb.components.resolve", "kb.components.resolve(name, dir) -> def", "(internal) the definition of impl: lua:MODULE", "internal" },
    { "kb.components.start", "kb.components.start(s, self, impl, methods)", "(internal) start a Lua component's process", "internal" },
  } },

  { name = "kb.probe", summary = "the fabric probe as a library (kernbench probe)", doc = "repl.md", entries = {
    { "kb.probe.run", "kb.probe.run([{topology =, sets = {...}, case =, nbytes =}]) -> result", "run the probe's cases; {topology, cases, skipped, sweep, invariants, ...}" },
    { "kb.probe.passed", "kb.probe.passed(result) -> bool", "whether every invariant of a result passed" },
    { "kb.probe.report", "kb.probe.report(result) -> string", "the text report kernbench probe prints" },
    { "kb.probe.to_json", "kb.probe.to_json(result) -> string", "the JSON form (kernbench probe --json)" },
    { "kb.probe.json_encode", "kb.probe.json_encode(v) -> string", "a Lua value as JSON" },
    { "kb.probe.case_names", "kb.probe.case_names() -> list", "the names of every case, in order" },
    { "kb.probe.find_case", "kb.probe.find_case(name) -> table|nil", "the catalogue entry of a case" },
    { "kb.probe.load_topology", "kb.probe.load_topology(opts) -> t", "the topology run(opts) uses" },
    { "kb.probe.usage", "kb.probe.usage() -> string", "the usage text of kernbench probe" },
    { "kb.probe.parse", "kb.probe.parse(args) -> opts", "parse kernbench probe's arguments" },
    { "kb.probe.main", "kb.probe.main(args) -> status", "kernbench probe itself: run, print, exit status (a usage error is raised)" },
    { "kb.probe.NBYTES", "kb.probe.NBYTES", "the bytes of each case (32768)" },
    { "kb.probe.SWEEP_SIZES", "kb.probe.SWEEP_SIZES", "the sizes of the utilisation sweep" },
    { "kb.probe.SWEEP_LABELS", "kb.probe.SWEEP_LABELS", "their labels" },
  } },

  { name = "Output", recv = "out", mt = "kernbench.output", made = "out = kb.open_output(path)", doc = "benches.md",
    summary = "a result file that never looks complete unless it is (docs/benches.md)", entries = {
    { "out:write", "out:write(...) -> out", "append strings and numbers" },
    { "out:close", "out:close()", "flush, sync and rename over the target; raises on any write error" },
    { "out:abort", "out:abort()", "remove the temporary file; the target is left alone" },
    { "out:temp", "out:temp() -> path", "the file being written, for another program to fill" },
    { "out:path", "out:path() -> path", "the target" },
  } },

  { name = "torch", summary = "the torch-like runtime: torch = kb.torch{topology = t}", doc = "torch.md", entries = {
    { "torch.empty", "torch.empty(shape[, {dtype =, dp =, name =}]) -> tensor", "a new tensor (on the device with dp = torch.DPPolicy{...})" },
    { "torch.zeros", "torch.zeros(shape[, opts]) -> tensor", "zeros (host, or device with dp)" },
    { "torch.ones", "torch.ones(shape[, opts]) -> tensor", "ones" },
    { "torch.full", "torch.full(shape, value[, opts]) -> tensor", "filled with value" },
    { "torch.tensor", "torch.tensor(data[, opts]) -> tensor", "from a nested table, a number or a tensor" },
    { "torch.rand", "torch.rand(shape[, opts]) -> tensor", "uniform [0, 1) from the runtime's generator" },
    { "torch.randn", "torch.randn(shape[, opts]) -> tensor", "standard normal from the runtime's generator" },
    { "torch.arange", "torch.arange([start, ]stop[, step][, opts]) -> tensor", "start + i*step (torch semantics)" },
    { "torch.zeros_like", "torch.zeros_like(t[, {dtype =}]) -> tensor", "zeros of t's shape" },
    { "torch.ones_like", "torch.ones_like(t[, {dtype =}]) -> tensor", "ones of t's shape" },
    { "torch.from_bytes", "torch.from_bytes(s, shape, dtype) -> tensor", "a tensor holding the raw bytes s" },
    { "torch.is_tensor", "torch.is_tensor(x) -> bool", "whether x is a host tensor" },
    { "torch.manual_seed", "torch.manual_seed(n)", "replace the runtime's generator with new_generator(n)" },
    { "torch.DPPolicy", "torch.DPPolicy{cube =, pe =, num_cubes =, num_pes =} -> dp", "a placement: replicate, row_wise or column_wise per level" },
    { "torch.to_device", "torch.to_device(host, dp) -> d", "place a host tensor on the device" },
    { "torch.wait", "torch.wait(h)", "run the simulation until the handle (or event) is done" },
    { "torch.synchronize", "torch.synchronize()", "run until everything is done" },
    { "torch.wait_all", "torch.wait_all()", "alias of synchronize" },
    { "torch.now_ns", "torch.now_ns() -> ns", "the simulated time" },
    { "torch.elapsed_ns", "torch.elapsed_ns() -> ns", "the bench's simulated time so far" },
    { "torch.cleanup", "torch.cleanup()", "free every live device tensor" },
    { "torch.allocators_pristine", "torch.allocators_pristine() -> bool", "whether every allocator is back to its initial state" },
    { "torch.alloc_tcm", "torch.alloc_tcm(sip, cube, pe, nbytes) -> pa, offset", "allocate in a PE's TCM" },
    { "torch.install_ipcq", "torch.install_ipcq{topology =, pes =, buffer_kind =, n_slots =, slot_size =, backpressure =} -> plan", "install PE-to-PE queues (a timed message; docs/ipcq.md)" },
    { "torch.uninstall_ipcq", "torch.uninstall_ipcq()", "free the installed plan's receive rings" },
    { "torch.free_tcm", "torch.free_tcm(sip, cube, pe, offset)", "free a TCM allocation" },
    { "torch.translate", "torch.translate(sip, cube, pe, va) -> pa, ns", "translate through a PE's page table" },
    { "torch.launch", "torch.launch(kernel, grid, args...) -> h", "run a kernel on the grid's PEs until all have finished (docs/tl.md)" },
    { "torch.launch_async", "torch.launch_async(kernel, grid, args...) -> h", "submit a kernel launch and return at once" },
    { "torch.submit_launch", "torch.submit_launch(msg, fn) -> h", "submit a KernelLaunch message built by hand" },
    { "torch.verify", "torch.verify(name, got, expected[, {tol =}]) -> worst", "compare a result (a host tensor, or a device tensor it reads back) with a CPU reference at the dtype's tolerance" },
    { "torch.verified", "torch.verified() -> list", "what torch.verify checked so far" },
    { "torch.stats", "torch.stats() -> {requests, sim_ns, events, live_tensors}", "the runtime's counters" },
    { "torch.close", "torch.close()", "close the runtime's simulation" },
    { "torch.sim", "torch.sim", "the simulation" },
    { "torch.topology", "torch.topology", "the topology" },
    { "torch.spec", "torch.spec", "the topology's parameters (cubes_per_sip, pes_per_cube, ...)" },
    { "torch.data", "torch.data", "true when values are computed (data mode)" },
    { "torch.verify_data", "torch.verify_data", "true under --verify-data" },
    { "torch.tcm_bytes", "torch.tcm_bytes", "a PE's TCM size" },
    { "torch.tcm_reserved_bytes", "torch.tcm_reserved_bytes", "the scheduler-reserved part of it" },
    { "torch.ahbm", "torch.ahbm", "devices: set_device(rank), current_device(), device_count()" },
    { "torch.accelerator", "torch.accelerator", "aliases: set_device_index, current_device_index" },
    { "torch.distributed", "torch.distributed", "the process group: init_process_group, all_reduce, barrier ... (docs/ccl.md)" },
    { "torch.multiprocessing", "torch.multiprocessing", "spawn(fn, args, nprocs): one rank per SIP (docs/ccl.md)" },
    { "torch.matmul", "torch.matmul(a, b) -> tensor", "matrix product (2-D, batched, 1-D as in torch)" },
    { "torch.add", "torch.add(a, b) -> tensor", "elementwise sum with broadcasting" },
    { "torch.sub", "torch.sub(a, b) -> tensor", "elementwise difference" },
    { "torch.mul", "torch.mul(a, b) -> tensor", "elementwise product" },
    { "torch.div", "torch.div(a, b) -> tensor", "elementwise quotient" },
    { "torch.neg", "torch.neg(t) -> tensor", "elementwise negation" },
    { "torch.abs", "torch.abs(t) -> tensor", "elementwise absolute value" },
    { "torch.relu", "torch.relu(t) -> tensor", "elementwise x < 0 ? 0 : x" },
    { "torch.exp", "torch.exp(t) -> tensor", "elementwise exponential" },
    { "torch.log", "torch.log(t) -> tensor", "elementwise natural logarithm" },
    { "torch.sqrt", "torch.sqrt(t) -> tensor", "elementwise square root" },
    { "torch.sigmoid", "torch.sigmoid(t) -> tensor", "elementwise logistic function" },
    { "torch.tanh", "torch.tanh(t) -> tensor", "elementwise hyperbolic tangent" },
    { "torch.sum", "torch.sum(t[, dim[, keepdim]]) -> number|tensor", "the sum, along dim if given" },
    { "torch.mean", "torch.mean(t[, dim[, keepdim]]) -> number|tensor", "the mean" },
    { "torch.max", "torch.max(t[, dim[, keepdim]]) -> number|tensor, indices", "the maximum" },
    { "torch.min", "torch.min(t[, dim[, keepdim]]) -> number|tensor, indices", "the minimum" },
    { "torch.softmax", "torch.softmax(t, dim) -> tensor", "exp(x - max) / sum along dim" },
    { "torch.transpose", "torch.transpose(t, d0, d1) -> tensor", "a transposed copy" },
    { "torch.narrow", "torch.narrow(t, dim, start, length) -> tensor", "a copy of length entries of dim from start" },
    { "torch.reshape", "torch.reshape(t, shape) -> tensor", "a view of another shape" },
    { "torch.clone", "torch.clone(t) -> tensor", "a copy" },
    { "torch.cat", "torch.cat(list[, dim]) -> tensor", "concatenate along dim (default 0)" },
    { "torch.allclose", "torch.allclose(a, b[, rtol[, atol[, equal_nan]]]) -> bool", "|a - b| <= atol + rtol * |b| everywhere" },
    { "torch.isclose", "torch.isclose(a, b, ...) -> tensor", "the elementwise bool tensor of allclose" },
    { "torch.equal", "torch.equal(a, b) -> bool", "same shape and equal values" },
  } },

  { name = "torch.ahbm", summary = "the current device (SIP)", doc = "torch.md", entries = {
    { "torch.ahbm.set_device", "torch.ahbm.set_device(rank)", "the SIP tensors and launches go to" },
    { "torch.ahbm.current_device", "torch.ahbm.current_device() -> rank|nil", "the current SIP (nil: unset, SIP 0)" },
    { "torch.ahbm.device_count", "torch.ahbm.device_count() -> n", "the number of SIPs" },
  } },

  { name = "torch.accelerator", summary = "torch.accelerator aliases of torch.ahbm", doc = "torch.md", entries = {
    { "torch.accelerator.set_device_index", "torch.accelerator.set_device_index(rank)", "alias of torch.ahbm.set_device" },
    { "torch.accelerator.current_device_index", "torch.accelerator.current_device_index() -> rank|nil", "alias of torch.ahbm.current_device" },
  } },

  { name = "torch.distributed", summary = "the process group of the simulated device, rank = SIP", doc = "ccl.md", entries = {
    { "torch.distributed.init_process_group", "torch.distributed.init_process_group{backend = \"kernbench\", ...}", "install the collectives' queues (backend \"kernbench\" or \"ahbm\")" },
    { "torch.distributed.is_initialized", "torch.distributed.is_initialized() -> bool", "whether init_process_group has run" },
    { "torch.distributed.get_backend", "torch.distributed.get_backend() -> name", "the backend's name" },
    { "torch.distributed.get_world_size", "torch.distributed.get_world_size() -> n", "the ranks (SIPs)" },
    { "torch.distributed.get_rank", "torch.distributed.get_rank() -> rank", "the calling spawn rank (0 in the main script)" },
    { "torch.distributed.all_reduce", "torch.distributed.all_reduce(t[, op])", "(blocking) sum, max or min of every rank's t, in place" },
    { "torch.distributed.barrier", "torch.distributed.barrier()", "(blocking) a timed all-reduce of one element per rank" },
    { "torch.distributed.broadcast", "torch.distributed.broadcast(t, src)", "(blocking) every rank's t becomes rank src's" },
    { "torch.distributed.reduce", "torch.distributed.reduce(t, dst[, op])", "(blocking) rank dst's t becomes the all-reduce; the others keep theirs" },
    { "torch.distributed.all_gather", "torch.distributed.all_gather(tensor_list, t)", "(blocking) tensor_list[i + 1] becomes rank i's t" },
    { "torch.distributed.reduce_scatter", "torch.distributed.reduce_scatter(out, input_list[, op])", "(blocking) out becomes the all-reduce of every rank's input_list[rank + 1]" },
    { "torch.distributed.gather", "torch.distributed.gather(...)", "not implemented yet" },
    { "torch.distributed.scatter", "torch.distributed.scatter(...)", "not implemented yet" },
    { "torch.distributed.send", "torch.distributed.send(...)", "not implemented yet" },
    { "torch.distributed.recv", "torch.distributed.recv(...)", "not implemented yet" },
    { "torch.distributed.ReduceOp", "torch.distributed.ReduceOp", "SUM, MAX, MIN" },
    { "torch.distributed.get_config", "torch.distributed.get_config() -> {algorithm, config, buffer_kind, ...}", "(kernbench) the algorithm, the ccl.yaml used and the rings" },
  } },

  { name = "torch.multiprocessing", summary = "ranks as coroutines in the one simulation", doc = "ccl.md", entries = {
    { "torch.multiprocessing.spawn", "torch.multiprocessing.spawn(fn, args, nprocs)", "(blocking) fn(rank, ...) for every rank, drained round by round" },
    { "torch.multiprocessing.current_rank", "torch.multiprocessing.current_rank() -> rank|nil", "the running rank, nil in the main script" },
  } },

  { name = "Tensor", recv = "t", mt = "kernbench.tensor", made = "t = torch.zeros({2, 3})", doc = "torch.md",
    summary = "a host tensor (every torch math function is also a method)", entries = {
    { "t.shape", "t.shape", "a new table of the sizes" },
    { "t.dtype", "t.dtype", "the dtype name (\"f16\")" },
    { "t.ndim", "t.ndim", "the number of dimensions" },
    { "t:numel", "t:numel() -> n", "the number of elements" },
    { "t:dim", "t:dim() -> n", "the number of dimensions" },
    { "t:size", "t:size([d]) -> table|n", "the sizes, or the size of dimension d" },
    { "t:nbytes", "t:nbytes() -> n", "bytes in all" },
    { "t:element_size", "t:element_size() -> n", "bytes per element" },
    { "t:get", "t:get(i, j, ...) -> value", "one element (0-based indices)" },
    { "t:set", "t:set(i, j, ..., v)", "set one element" },
    { "t:item", "t:item() -> value", "the value of a one-element tensor" },
    { "t:tolist", "t:tolist() -> table", "nested tables (1-based)" },
    { "t:reshape", "t:reshape(shape) -> view", "a view of another shape (one size may be -1)" },
    { "t:view", "t:view(shape) -> view", "the same as reshape" },
    { "t:flatten", "t:flatten() -> view", "a 1-D view" },
    { "t:to", "t:to(dtype) -> tensor", "a converted copy (t itself for its own dtype or \"cpu\")" },
    { "t:float", "t:float() -> tensor", "to f32" },
    { "t:half", "t:half() -> tensor", "to f16" },
    { "t:bfloat16", "t:bfloat16() -> tensor", "to bf16" },
    { "t:int", "t:int() -> tensor", "to i32" },
    { "t:short", "t:short() -> tensor", "to i16" },
    { "t:char", "t:char() -> tensor", "to i8" },
    { "t:byte", "t:byte() -> tensor", "to u8" },
    { "t:bool", "t:bool() -> tensor", "to bool" },
    { "t:clone", "t:clone() -> tensor", "a copy" },
    { "t:narrow", "t:narrow(dim, start, length) -> tensor", "a copy of length entries of dim from start" },
    { "t:transpose", "t:transpose(d0, d1) -> tensor", "a transposed copy" },
    { "t:T", "t:T() -> tensor", "the transpose of a tensor of at most 2 dimensions" },
    { "t:bytes", "t:bytes() -> string", "the raw bytes" },
    { "t:hash", "t:hash() -> n", "a 64-bit FNV-1a of the bytes" },
    { "t:block", "t:block(row0, rows, col0, cols) -> string", "a block of the 2-D view as bytes" },
    { "t:set_block", "t:set_block(row0, rows, col0, cols, bytes)", "write a block of the 2-D view" },
    { "t:fill_", "t:fill_(v) -> t", "fill in place" },
    { "t:zero_", "t:zero_() -> t", "zero in place" },
    { "t:copy_", "t:copy_(src) -> t", "copy src in (broadcast, converted)" },
    { "t:cpu", "t:cpu() -> t", "t itself (for code shared with device tensors)" },
    { "t:contiguous", "t:contiguous() -> t", "t itself" },
    { "t:matmul", "t:matmul(b) -> tensor", "torch.matmul(t, b)" },
    { "t:add", "t:add(b) -> tensor", "t + b" },
    { "t:sub", "t:sub(b) -> tensor", "t - b" },
    { "t:mul", "t:mul(b) -> tensor", "t * b" },
    { "t:div", "t:div(b) -> tensor", "t / b" },
    { "t:neg", "t:neg() -> tensor", "-t" },
    { "t:abs", "t:abs() -> tensor", "elementwise absolute value" },
    { "t:relu", "t:relu() -> tensor", "elementwise relu" },
    { "t:exp", "t:exp() -> tensor", "elementwise exponential" },
    { "t:log", "t:log() -> tensor", "elementwise logarithm" },
    { "t:sqrt", "t:sqrt() -> tensor", "elementwise square root" },
    { "t:sigmoid", "t:sigmoid() -> tensor", "elementwise logistic function" },
    { "t:tanh", "t:tanh() -> tensor", "elementwise hyperbolic tangent" },
    { "t:sum", "t:sum([dim[, keepdim]]) -> number|tensor", "the sum" },
    { "t:mean", "t:mean([dim[, keepdim]]) -> number|tensor", "the mean" },
    { "t:max", "t:max([dim[, keepdim]]) -> number|tensor, indices", "the maximum" },
    { "t:min", "t:min([dim[, keepdim]]) -> number|tensor, indices", "the minimum" },
    { "t:softmax", "t:softmax(dim) -> tensor", "softmax along dim" },
    { "t:allclose", "t:allclose(b[, rtol[, atol[, equal_nan]]]) -> bool", "torch.allclose(t, b)" },
    { "t:isclose", "t:isclose(b, ...) -> tensor", "torch.isclose(t, b)" },
    { "t:equal", "t:equal(b) -> bool", "torch.equal(t, b)" },
  } },

  { name = "DeviceTensor", recv = "d", mt = "DeviceTensor", made = "d = torch.empty(shape, {dp = torch.DPPolicy{}})", doc = "torch.md",
    summary = "a tensor placed on the device", entries = {
    { "d:copy_", "d:copy_(x) -> h", "timed MemoryWrites of every shard from host tensor x" },
    { "d:cpu", "d:cpu() -> tensor", "timed MemoryReads, gathered into a host tensor (waits)" },
    { "d:free", "d:free()", "unmap and free (refused while a launch, copy or read still uses it)" },
    { "d:numel", "d:numel() -> n", "the number of elements" },
    { "d:numpy", "d:numpy() -> tensor", "the same as d:cpu()" },
    { "d.shards", "d.shards", "{sip, cube, pe, offset_bytes, nbytes, pa, hbm_offset, rows, cols, row0, col0} per shard" },
    { "d.va_base", "d.va_base", "its virtual base address" },
    { "d.mapped", "d.mapped", "the handle of its MmuMap" },
  } },

  { name = "Handle", recv = "h", mt = "Handle", made = "h = d:copy_(x) or torch.launch(...)", doc = "torch.md",
    summary = "a device operation's completion", entries = {
    { "h:done", "h:done() -> bool", "whether it has completed" },
    { "h:wait", "h:wait()", "torch.wait(h)" },
    { "h:elapsed_ns", "h:elapsed_ns() -> ns", "simulated ns from submission to completion" },
  } },

  { name = "Generator", recv = "g", mt = "kernbench.generator", made = "g = tc.new_generator(seed)", doc = "torch.md",
    summary = "a random number generator (xoshiro256**)", entries = {
    { "g:manual_seed", "g:manual_seed(n)", "restart from seed n" },
    { "g:initial_seed", "g:initial_seed() -> n", "the seed" },
    { "g:get_state", "g:get_state() -> string", "the 32-byte state" },
    { "g:set_state", "g:set_state(s)", "restore a state" },
  } },

  { name = "DPPolicy", recv = "dp", mt = "DPPolicy", made = "dp = torch.DPPolicy{cube = \"row_wise\"}", doc = "torch.md",
    summary = "a placement policy (fields cube, pe, num_cubes, num_pes)", entries = {} },

  { name = "tl", summary = "the kernel language: a kernel is function(tl, ...) (docs/tl.md)", doc = "tl.md", entries = {
    { "tl.program_id", "tl.program_id([axis]) -> n", "axis 0: the PE within its cube; axis 1: the cube" },
    { "tl.num_programs", "tl.num_programs([axis]) -> n", "the grid's PEs per cube (0) or cubes (1)" },
    { "tl.load", "tl.load(ptr, shape[, dtype]) or tl.load(ref) -> h", "(blocking) DMA from memory into TCM: a tensor handle" },
    { "tl.store", "tl.store(ptr, h)", "(blocking) DMA a handle back to memory; returns when acknowledged" },
    { "tl.ref", "tl.ref(ptr, shape[, dtype]) -> ref", "names memory without moving it (a streamed composite operand)" },
    { "tl.dot", "tl.dot(a, b[, {out_dtype =}]) -> h", "(blocking) [M, K] x [K, N] on PE_GEMM" },
    { "tl.exp", "tl.exp(x) -> h", "(blocking) elementwise exponential" },
    { "tl.log", "tl.log(x) -> h", "(blocking) elementwise logarithm" },
    { "tl.sqrt", "tl.sqrt(x) -> h", "(blocking) elementwise square root" },
    { "tl.abs", "tl.abs(x) -> h", "(blocking) elementwise absolute value" },
    { "tl.sigmoid", "tl.sigmoid(x) -> h", "(blocking) elementwise logistic function" },
    { "tl.cos", "tl.cos(x) -> h", "(blocking) elementwise cosine" },
    { "tl.sin", "tl.sin(x) -> h", "(blocking) elementwise sine" },
    { "tl.relu", "tl.relu(x) -> h", "(blocking) elementwise relu" },
    { "tl.add", "tl.add(a, b) -> h", "(blocking) a + b with broadcasting" },
    { "tl.sub", "tl.sub(a, b) -> h", "(blocking) a - b" },
    { "tl.mul", "tl.mul(a, b) -> h", "(blocking) a * b" },
    { "tl.div", "tl.div(a, b) -> h", "(blocking) a / b" },
    { "tl.maximum", "tl.maximum(a, b) -> h", "(blocking) elementwise maximum" },
    { "tl.minimum", "tl.minimum(a, b) -> h", "(blocking) elementwise minimum" },
    { "tl.cast", "tl.cast(x, dtype) -> h", "(blocking) x's values as dtype (a PE_MATH pass; f32 to f16 rounds, saturating to inf)" },
    { "tl.fma", "tl.fma(a, b, c) -> h", "(blocking) a * b + c" },
    { "tl.clamp", "tl.clamp(x, lo, hi) -> h", "(blocking) min(max(x, lo), hi)" },
    { "tl.where", "tl.where(cond, a, b) -> h", "(blocking) cond ~= 0 ? a : b" },
    { "tl.softmax", "tl.softmax(x[, axis]) -> h", "(blocking) softmax along axis (default -1)" },
    { "tl.sum", "tl.sum(x[, axis]) -> h", "(blocking) sum along axis (kept with size 1), or of every element" },
    { "tl.max", "tl.max(x[, axis]) -> h", "(blocking) maximum along axis" },
    { "tl.min", "tl.min(x[, axis]) -> h", "(blocking) minimum along axis" },
    { "tl.zeros", "tl.zeros(shape[, dtype]) -> h", "a TCM tensor of zeros" },
    { "tl.full", "tl.full(shape, v[, dtype]) -> h", "a TCM tensor filled with v" },
    { "tl.arange", "tl.arange(start, stop[, dtype]) -> h", "stop - start values start, start+1, ..." },
    { "tl.trans", "tl.trans(x) -> h", "a view with the last two dimensions swapped" },
    { "tl.cdiv", "tl.cdiv(a, b) -> n", "ceil(a / b) of integers" },
    { "tl.cycles", "tl.cycles(n)", "(blocking) the PE_CPU is busy for n cycles" },
    { "tl.composite", "tl.composite{op =, a =, b =, out_ptr =, math_op =, epilogue =, ...} -> c", "a pipelined GEMM or element-wise command; returns at once" },
    { "tl.wait", "tl.wait([c | f])", "(blocking) until composite c, or every composite of this kernel, is done; a recv future f: -> h, dir" },
    { "tl.is_data", "tl.is_data() -> bool", "whether values are computed (data mode)" },
    { "tl.send", "tl.send(dir, h | {addr =, nbytes =})", "(blocking while the ring is full) send a message to the neighbour in direction dir (docs/ipcq.md)" },
    { "tl.recv", "tl.recv(dir | nil, shape[, dtype[, {dst = addr}]]) -> h, dir", "(blocking) the next message from dir (nil: any direction)" },
    { "tl.recv_async", "tl.recv_async(dir, shape[, dtype]) -> f", "claim the next message of dir; tl.wait(f) receives it" },
    { "tl.recv_no_consume", "tl.recv_no_consume(dir, shape[, dtype]) -> h, dir", "(blocking, diagnostic) a recv without the slot-read cost" },
    { "tl.ipcq_rank", "tl.ipcq_rank() -> rank | nil", "this PE's rank in the installed IPCQ plan" },
    { "tl.ipcq_world_size", "tl.ipcq_world_size() -> n | nil", "the installed plan's ranks" },
    { "tl.ipcq_neighbors", "tl.ipcq_neighbors() -> {dir = rank} | nil", "this PE's directions and their peers" },
  } },

  { name = "tl.tensor", recv = "h", mt = "kernbench.tl_tensor", made = "h = tl.load(ptr, shape)", doc = "tl.md",
    summary = "a tensor handle in a PE's TCM (fields shape, dtype, ndim, space, addr)", entries = {
    { "h:numel", "h:numel() -> n", "the number of elements" },
    { "h:nbytes", "h:nbytes() -> n", "bytes in all" },
    { "h:tolist", "h:tolist() -> table", "(data mode) the values as nested tables" },
    { "h:item", "h:item() -> value", "(data mode) the value of a one-element handle" },
  } },

  { name = "tl.composite", recv = "c", mt = "kernbench.tl_composite", made = "c = tl.composite{...}", doc = "tl.md",
    summary = "a composite command in flight", entries = {
    { "c:done", "c:done() -> bool", "whether every tile is done" },
    { "c:stats", "c:stats() -> {tiles, submit_ns, first_ns, done_ns, stage_ns, stage_counts}", "its tiles and stage times" },
  } },
}

-- ---- the index ----

local by_name, group_of = {}, {}
for _, g in ipairs(M.groups) do
  for _, e in ipairs(g.entries) do
    local name = e[1]
    by_name[name] = by_name[name] or {}
    table.insert(by_name[name], { name = name, signature = e[2], summary = e[3], group = g, internal = e[4] == "internal" })
  end
  group_of[g.name] = g
  if g.mt then group_of[g.mt] = g end
end
M.group_of = group_of

--- The doc files of a group (its `doc`, a name or a list), under docs/.
function M.docs_of(g)
  return type(g.doc) == "table" and g.doc or { g.doc }
end
local function doc_of(g) return "docs/" .. M.docs_of(g)[1] end

local function rawfield(t, k)
  if type(t) ~= "table" then return nil end
  return rawget(t, k)
end

-- A value's metatable name (__name), read without calling anything.
local function mt_name(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__name") or nil
end

-- The group a value belongs to: a known module table, a typed value, a
-- torch runtime or a tl table (recognised by their fields).
local function live_modules()
  local kb = rawget(_G, "kb")
  local mods = { sim = rawget(_G, "sim") }
  if type(kb) == "table" then
    mods.kb = kb
    for _, k in ipairs { "topology", "addr", "components", "probe" } do mods["kb." .. k] = rawfield(kb, k) end
  end
  return mods
end

local function is_torch(v) return type(v) == "table" and rawget(v, "launch_async") ~= nil and rawget(v, "DPPolicy") ~= nil end
local function is_tl(v) return type(v) == "table" and rawget(v, "program_id") ~= nil and rawget(v, "composite") ~= nil end

local function group_of_value(v)
  if type(v) == "table" then
    for name, m in pairs(live_modules()) do
      if rawequal(m, v) then return group_of[name] end
    end
    if is_torch(v) then return group_of.torch end
    if is_tl(v) then return group_of.tl end
    if rawget(v, "set_device") and rawget(v, "device_count") then return group_of["torch.ahbm"] end
    if rawget(v, "set_device_index") then return group_of["torch.accelerator"] end
    if rawget(v, "init_process_group") then return group_of["torch.distributed"] end
    if rawget(v, "spawn") and rawget(v, "current_rank") then return group_of["torch.multiprocessing"] end
  end
  local n = mt_name(v)
  if n then
    if group_of[n] then return group_of[n] end
    if n == "tl.tensor" then return group_of["tl.tensor"] end
  end
end
M.group_of_value = group_of_value

-- Where function f lives: the group and key of a live table holding it.
-- Looks in the modules, the globals (a torch runtime, tl) and the method
-- tables of the registered metatables; raw access only.
local function find_function(f)
  local function scan(t, seen, depth)
    if type(t) ~= "table" or seen[t] or depth > 3 then return end
    seen[t] = true
    local g = group_of_value(t)
    local k = next(t)
    while k ~= nil do
      local v = rawget(t, k)
      if rawequal(v, f) and g and type(k) == "string" then return g, k end
      k = next(t, k)
    end
    k = next(t)
    while k ~= nil do
      local v = rawget(t, k)
      if type(k) == "string" and type(v) == "table" then
        local rg, rk = scan(v, seen, depth + 1)
        if rg then return rg, rk end
      end
      k = next(t, k)
    end
  end
  local seen = { [package.loaded] = true }
  for name in pairs(live_modules()) do
    local g, k = scan(live_modules()[name], seen, 1)
    if g then return g, k end
  end
  local g, k = scan(_G, seen, 0)
  if g then return g, k end
  local reg = debug.getregistry()
  for _, grp in ipairs(M.groups) do
    local mt = grp.mt and rawget(reg, grp.mt)
    for _, methods in ipairs(M.method_tables(mt)) do
      local kk = next(methods)
      while kk ~= nil do
        if rawequal(rawget(methods, kk), f) then return grp, kk end
        kk = next(methods, kk)
      end
    end
  end
end

local function entry_name(g, key)
  if g.recv then return g.recv .. ":" .. key end
  if g.name == "globals" then return key end
  return g.name .. "." .. key
end

-- ---- lookup and text ----

--- The entries named `name` ("kb.topology.load", "s:run", "t:summary";
-- "Tensor:sum" and "Simulation.run" name a type's method too).
function M.lookup(name)
  if by_name[name] then return by_name[name] end
  local tname, sep, key = name:match("^(.-)([.:])([%w_]+)$")
  if tname and group_of[tname] and group_of[tname].recv then
    local g = group_of[tname]
    for _, sym in ipairs { ":", "." } do
      local hit = by_name[g.recv .. sym .. key]
      if hit then
        for _, e in ipairs(hit) do if e.group == g then return { e } end end
      end
    end
  end
  if sep == "." and tname and by_name[tname .. ":" .. key] then return by_name[tname .. ":" .. key] end
end

local function pad(s, n) return s .. string.rep(" ", math.max(1, n - #s)) end

local function entry_text(e)
  return e.signature .. "\n  " .. e.summary
end

local function group_text(g)
  local out = {}
  local head = g.name .. ": " .. g.summary
  if g.made then head = head .. " (" .. g.made .. ")" end
  out[#out + 1] = head .. ", " .. doc_of(g)
  local w = 0
  for _, e in ipairs(g.entries) do w = math.max(w, #e[1]) end
  for _, e in ipairs(g.entries) do
    out[#out + 1] = "  " .. pad(e[1], w + 2) .. e[3]
  end
  if #g.entries > 0 then out[#out + 1] = "help(\"NAME\") gives a signature" end
  return table.concat(out, "\n")
end
M.group_text = group_text

local function overview()
  local out = { "Globals:" }
  for _, e in ipairs(group_of.globals.entries) do
    out[#out + 1] = "  " .. pad(e[1], 14) .. e[3]
  end
  out[#out + 1] = "What kb holds:"
  for _, e in ipairs(group_of.kb.entries) do
    if e[4] ~= "internal" then out[#out + 1] = "  " .. pad(e[1], 24) .. e[3] end
  end
  out[#out + 1] = "Modules (help(\"name\") lists one):"
  for _, g in ipairs(M.groups) do
    if not g.recv and g.name ~= "globals" then out[#out + 1] = "  " .. pad(g.name, 24) .. g.summary end
  end
  out[#out + 1] = "Types (help(value), or help(\"Type\"); methods as help(\"s:run\")):"
  for _, g in ipairs(M.groups) do
    if g.recv then out[#out + 1] = "  " .. pad(g.name .. " " .. g.recv, 24) .. g.summary end
  end
  out[#out + 1] = "Also: kb.pretty(v) formats a value as the REPL prints it; Tab completes names."
  return table.concat(out, "\n")
end

--- The help text of x: nil for the overview; a name; a function, module,
-- runtime, tl table or typed value.
function M.text(x, ...)
  if select("#", ...) == 0 and x == nil then return overview() end
  if type(x) == "string" then
    local hits = M.lookup(x)
    if hits then
      local parts = {}
      for _, e in ipairs(hits) do
        local sub = group_of[e.name]
        if sub and sub ~= e.group then parts[#parts + 1] = group_text(sub)
        else parts[#parts + 1] = entry_text(e) .. "\n  (" .. e.group.name .. ", " .. doc_of(e.group) .. ")" end
      end
      return table.concat(parts, "\n")
    end
    if group_of[x] then return group_text(group_of[x]) end
    return ("no help for %q: not a name help knows (help() lists them)"):format(x)
  end
  if type(x) == "function" then
    local g, key = find_function(x)
    if g then
      local hits = by_name[entry_name(g, key)]
      if hits then
        for _, e in ipairs(hits) do
          if e.group == g then return entry_text(e) .. "\n  (" .. g.name .. ", " .. doc_of(g) .. ")" end
        end
      end
      return ("no help for function %s (it is in %s)"):format(entry_name(g, key), g.name)
    end
    local info = debug.getinfo(x, "S")
    local where = info.what == "C" and "a C function" or ("a Lua function defined at " .. info.short_src .. ":" .. info.linedefined)
    return ("no help for this function (%s)"):format(where)
  end
  local g = group_of_value(x)
  if g then return group_text(g) end
  local n = mt_name(x)
  return ("no help for this value: a %s%s"):format(type(x), n and (" (" .. n .. ")") or "")
end

--- help(x): prints M.text(x).
function M.help(...)
  io.write(M.text(...), "\n")
end

-- ---- completion ----

--- The tables that hold a value's methods, found without calling anything:
-- the metatable's __index table (and the __index chain of tables); when
-- __index is a function, the tables the metatable holds (a topology's
-- __methods, a tl handle's methods) and the table upvalues of a C __index
-- (a host tensor's methods).
function M.method_tables(mt)
  local out = {}
  local guard = 0
  while type(mt) == "table" and guard < 8 do
    guard = guard + 1
    local idx = rawget(mt, "__index")
    if type(idx) == "table" then
      out[#out + 1] = idx
      mt = getmetatable(idx)
      if type(mt) ~= "table" then break end
    else
      if type(idx) == "function" then
        local k = next(mt)
        while k ~= nil do
          local v = rawget(mt, k)
          if type(v) == "table" and k ~= "__index" then out[#out + 1] = v end
          k = next(mt, k)
        end
        if debug.getinfo(idx, "S").what == "C" then
          for i = 1, 255 do
            local name, v = debug.getupvalue(idx, i)
            if name == nil then break end
            if type(v) == "table" then out[#out + 1] = v end
          end
        end
      end
      break
    end
  end
  return out
end

local function fields_of(v, methods_only, into)
  local function add(t)
    local k = next(t)
    while k ~= nil do
      local x = rawget(t, k)
      if type(k) == "string" and k:match("^[%a_][%w_]*$") and (not methods_only or type(x) == "function")
         and not k:match("^__") then
        into[k] = type(x)
      end
      k = next(t, k)
    end
  end
  if type(v) == "table" then add(v) end
  local mt = getmetatable(v)
  if type(mt) == "table" then
    for _, t in ipairs(M.method_tables(mt)) do add(t) end
  end
  return into
end

-- Follows a.b.c without calling anything: raw fields, then the method tables.
local function follow(v, key)
  if type(v) == "table" then
    local x = rawget(v, key)
    if x ~= nil then return x end
  end
  local mt = getmetatable(v)
  if type(mt) == "table" then
    for _, t in ipairs(M.method_tables(mt)) do
      local x = rawget(t, key)
      if x ~= nil then return x end
    end
  end
end

--- The completions of `word` (a Lua name path such as "kb.topology.lo" or
-- "t:su"), sorted: global names for a first word, the fields of a table or
-- the methods of a value after "." or ":". Nothing is called: raw fields,
-- metatables and their method tables only.
function M.complete(word)
  local path, sep, last = word:match("^(.*)([.:])([%w_]*)$")
  local names = {}
  if not path then
    if not word:match("^[%a_][%w_]*$") and word ~= "" then return {} end
    last = word
    fields_of(_G, false, names)
    for _, kw in ipairs { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
                          "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" } do
      names[kw] = "keyword"
    end
    path, sep = "", ""
  else
    if not path:match("^[%a_][%w_]*$") and not path:match("^[%a_][%w_]*[%.%w_]*[%w_]$") then return {} end
    if path:find(":", 1, true) then return {} end
    local v = _G
    for key in path:gmatch("[^.]+") do
      v = follow(v, key)
      if v == nil then return {} end
    end
    if type(v) ~= "table" and type(v) ~= "userdata" then return {} end
    fields_of(v, sep == ":", names)
  end
  local out = {}
  for k in pairs(names) do
    if k:sub(1, #last) == last then
      out[#out + 1] = path .. sep .. k
    end
  end
  table.sort(out)
  return out
end

return M
