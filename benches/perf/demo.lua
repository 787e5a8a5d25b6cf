--- Demo: producers sharing one link into a bounded receive queue.
--
-- The default bench until the hardware model exists: it shows Lua
-- processes driving the C event core through a Resource (the link), a
-- Store with backpressure (the receiver's queue), sleeps and all_of.
--
-- Each producer emits packets at a fixed interval. A packet waits for the
-- link, occupies it for bytes / bandwidth, flies for the propagation delay
-- and is put into the receiver's queue (blocking while the queue is full).
-- The consumer takes packets in order and spends a fixed time on each.
-- These are toy parameters of this demo, not hardware parameters.
--
--   kernbench benches/perf/demo.lua [producers] [packets_per_producer]

local producers = tonumber(arg and arg[1]) or 4
local packets = tonumber(arg and arg[2]) or 8
local link_gbps = 32        -- link bandwidth, bytes per ns (GB/s)
local propagation_ns = 5    -- link flight time
local interval_ns = 20      -- time between two packets of one producer
local service_ns = 12       -- consumer time per packet
local queue_depth = 4       -- receiver queue capacity (packets)

local s = sim.new()
local link = s:resource(1, "link")
local inbox = s:store(queue_depth, "inbox")
local link_busy_ns = 0

local function packet_size(p, i)
  return 256 * (1 + (p * i) % 4) -- 256 .. 1024 bytes
end

local function send(pkt)
  link:acquire()
  local busy = pkt.bytes / link_gbps
  s:sleep(busy)
  link_busy_ns = link_busy_ns + busy
  link:release()
  s:sleep(propagation_ns)
  inbox:put(pkt)
end

local senders = {}
for p = 1, producers do
  senders[#senders + 1] = s:spawn{name = "producer" .. p, fn = function()
    local flights = {}
    for i = 1, packets do
      local pkt = { src = p, seq = i, bytes = packet_size(p, i), created = s:now() }
      flights[#flights + 1] = s:spawn{name = ("pkt%d.%d"):format(p, i), fn = send, args = { pkt }}
      s:sleep(interval_ns)
    end
    s:all_of(flights):wait()
  end}
end

local per_src = {}
for p = 1, producers do per_src[p] = { n = 0, bytes = 0, sum = 0, max = 0 } end
local order = {}

s:spawn{name = "consumer", fn = function()
  for _ = 1, producers * packets do
    local pkt = inbox:get()
    s:sleep(service_ns)
    local latency = s:now() - pkt.created
    local r = per_src[pkt.src]
    r.n, r.bytes, r.sum = r.n + 1, r.bytes + pkt.bytes, r.sum + latency
    if latency > r.max then r.max = latency end
    order[#order + 1] = pkt.src
  end
end}

s:run()

local total_bytes, end_ns = 0, s:now()
print(("demo: %d producers x %d packets over one %d GB/s link into a %d-deep queue")
  :format(producers, packets, link_gbps, queue_depth))
print(("%-10s %8s %8s %14s %14s"):format("producer", "packets", "bytes", "mean latency", "max latency"))
for p = 1, producers do
  local r = per_src[p]
  total_bytes = total_bytes + r.bytes
  print(("%-10s %8d %8d %14s %14s"):format("producer" .. p, r.n, r.bytes,
    kb.format_ns(r.sum / r.n), kb.format_ns(r.max)))
end
print(("delivered %d bytes in %s: %.2f GB/s, link busy %.1f%%")
  :format(total_bytes, kb.format_ns(end_ns), total_bytes / end_ns, 100 * link_busy_ns / end_ns))
print("arrival order: " .. table.concat(order, " "))
local st = s:stats()
print(("events=%d resumes=%d sim_time=%s"):format(st.events, st.resumes, kb.format_ns(st.sim_ns)))
print(("wall clock: %.3f ms, %.0f events/s"):format(st.wall_s * 1e3, st.events_per_s))
