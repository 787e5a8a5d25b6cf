#!/usr/bin/env bash
# kernbench web (sourced by tests/cli/cli_test.sh; uses its helpers): the
# server's command line, its JSON endpoints with good and bad requests (raw
# HTTP over bash's /dev/tcp, so any request can be sent, even one no client
# would), and the page in a real browser: headless Chromium loads it, runs its
# JavaScript, and the DOM it leaves is checked (docs/web.md). Every case stops
# its server (trap). Without Chromium the browser case fails, saying so.

web_cases=(web_usage_errors web_port_in_use web_endpoints web_bad_requests web_stats_utilisation
           web_stops_on_signals web_every_topology web_browser)

web_pid=""

web_stop() { # stops the server, if one runs: SIGTERM, then SIGKILL after 5 s
  [ -n "$web_pid" ] || return 0
  kill -TERM "$web_pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$web_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$web_pid" 2>/dev/null
  wait "$web_pid" 2>/dev/null
  web_pid=""
}

# web_start ARGS...: starts `kernbench ARGS...` (ending in `web ...`) in the
# background and waits for the URL it prints; sets web_pid, web_url, web_port.
web_start() {
  "$KB" "$@" </dev/null >"$tmp/web.out" 2>"$tmp/web.err" &
  web_pid=$!
  trap 'web_stop; rm -rf "$tmp"' EXIT
  web_url=""
  for _ in $(seq 300); do
    web_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/web.out" 2>/dev/null | head -1)
    [ -n "$web_url" ] && break
    kill -0 "$web_pid" 2>/dev/null || fail "kernbench web exited early: $(cat "$tmp/web.out" "$tmp/web.err")"
    sleep 0.1
  done
  [ -n "$web_url" ] || fail "kernbench web printed no URL in 30 s: $(cat "$tmp/web.out" "$tmp/web.err")"
  web_port=${web_url#http://127.0.0.1:}
  web_port=${web_port%/}
}

# http_raw REQUEST: sends it to the server (backslash escapes such as \r\n
# are sent as the bytes they stand for), reads the whole answer (the server
# closes); sets http_status and leaves the body in $tmp/body.
http_raw() {
  exec 3<>"/dev/tcp/127.0.0.1/$web_port" || fail "cannot connect to port $web_port"
  # in a subshell: a server that answers and closes before reading the whole
  # request (a 40 KB request line) ends the write with SIGPIPE, which must not
  # end the test
  (printf '%b' "$1" >&3) 2>/dev/null || true
  timeout 20 cat <&3 >"$tmp/resp" 2>/dev/null
  exec 3<&-
  http_status=$(head -n 1 "$tmp/resp" | awk '{ print $2 }')
  sed '1,/^\r$/d' "$tmp/resp" >"$tmp/body"
}

# get PATH [HOST]: a GET request, the path sent as it is (no normalisation).
get() {
  http_raw "GET $1 HTTP/1.1\r\nHost: ${2:-127.0.0.1:$web_port}\r\nConnection: close\r\n\r\n"
}

expect_http() { # STATUS [TEXT]: the last answer's status, and text in its body
  [ "$http_status" = "$1" ] || fail "HTTP status '$http_status', expected $1; answer: $(head -c 600 "$tmp/resp")"
  [ -z "${2:-}" ] || grep -qF -- "$2" "$tmp/body" || fail "body lacks '$2': $(head -c 600 "$tmp/body")"
}

# json_check LUA-EXPR: the last body is JSON, and the expression (over `d`,
# the decoded body) is true; checked with kernbench's own JSON decoder.
json_check() {
  [ -f "$tmp/json_check.lua" ] || cat >"$tmp/json_check.lua" <<'LUA'
local f = assert(io.open(arg[1]))
local text = f:read("a")
f:close()
local d = require("kernbench.json").decode(text)
if not assert(load("local d = ... return " .. arg[2]))(d) then
  io.stderr:write("false: ", arg[2], "\n")
  os.exit(1)
end
LUA
  "$KB" "$tmp/json_check.lua" "$tmp/body" "$1" >/dev/null 2>"$tmp/json.err" || fail "JSON check '$1' failed: $(cat "$tmp/json.err"); body: $(head -c 600 "$tmp/body")"
}

web_alive() { get /api/topology; expect_http 200 '"name"'; }

web_usage_errors() {
  run web --help; expect_status 0; expect_out "usage: kernbench [-t T] [--set K=V] web [--port N]"
  expect_out "--no-open"; expect_out "--stats FILE"
  run web --port abc; expect_status 2; expect_err "--port 'abc': expected a port number from 0 to 65535"
  run web --port 65536; expect_status 2; expect_err "--port '65536'"
  run web --port; expect_status 2; expect_err "option '--port' needs an argument"
  run web --port 1 --port 2; expect_status 2; expect_err "option '--port' given twice"
  run web --frob; expect_status 2; expect_err "unknown option '--frob'"
  run web --stats "$tmp/none.json"; expect_status 2; expect_err "--stats $tmp/none.json: "
  printf '{"x": 1}\n' >"$tmp/bad.json"
  run web --stats "$tmp/bad.json"; expect_status 2; expect_err "not a statistics file"
  run -t no_such_topology web; expect_status 2; expect_err "no_such_topology"
  run --param a=1 web; expect_status 2; expect_err "--param and --results-json need a bench"
}

web_port_in_use() {
  web_start -t small_1cube_1pe web --no-open --port 0
  run -t small_1cube_1pe web --no-open --port "$web_port"; expect_status 1
  expect_err "port $web_port is in use on 127.0.0.1"; expect_err "--port 0"
  web_alive
  web_stop
}

web_endpoints() {
  web_start -t small_2x2 web --no-open --port 0
  grep -qF "serving topology small_2x2 (550 nodes) at $web_url" "$tmp/web.out" || fail "start line: $(cat "$tmp/web.out")"
  get /; expect_http 200 '<script src="app.js"'
  get /app.js; expect_http 200 "kernbench web"
  get /style.css; expect_http 200
  grep -qi '^Content-Type: text/css' "$tmp/resp" || fail "style.css type: $(head -c 300 "$tmp/resp")"
  get /api/topology; expect_http 200
  json_check 'd.name == "small_2x2" and d.counts.sips == 1 and d.counts.cubes == 4 and d.counts.pes == 32
              and d.counts.nodes == 550 and d.digest:match("^fnv1a64:") and d.view.view == "system"
              and #d.nodes == 3 and d.nodes[1].id == "fabric.switch0" and d.nodes[2].id == "sip0"
              and d.nodes[2].kind == "sip" and d.nodes[2].group and d.nodes[3].id == "sip0.io0" and #d.links == 2'
  get '/api/topology?view=cube&sip=0&cube=1'; expect_http 200
  json_check 'd.view.view == "cube" and d.view.cube == 1 and #d.links > 0 and (function()
                local pes = 0 for _, n in ipairs(d.nodes) do if n.kind == "pe" then pes = pes + 1 end end
                return pes == d.counts.pes_per_cube end)()'
  get /api/node/sip0.cube0.pe0.pe_dma; expect_http 200
  json_check 'd.kind == "pe_dma" and d.attrs.overhead_ns ~= nil and #d.links_out > 0 and #d.links_in > 0
              and d.links_out[#d.links_out].bw_gbs > 0 and d.links_out[1].latency_ns ~= nil and d.utilisation == nil'
  get /api/node/sip0.cube1; expect_http 200
  json_check 'd.kind == "cube" and d.group == true and d.nodes > 0 and d.node_kinds.pe_dma == 8'
  get '/api/route?src=sip0.cube0.pe0.pe_dma&dst=sip0.cube3.pe3.pe_dma'; expect_http 200
  json_check 'd.nodes[1] == "sip0.cube0.pe0.pe_dma" and d.nodes[#d.nodes] == "sip0.cube3.pe3.pe_dma"
              and d.hops == #d.nodes - 1 and #d.links == d.hops and d.latency_ns > 0 and d.bottleneck_bw_gbs > 0'
  # the route is the router's: t:path's
  "$KB" -t small_2x2 -e 'local t = kb.topology.load()
    print(table.concat(t:path("sip0.cube0.pe0.pe_dma", "sip0.cube3.pe3.pe_dma"), " "))' >"$tmp/path" 2>&1
  json_check "table.concat(d.nodes, ' ') == '$(cat "$tmp/path")'"
  get '/api/route?src=sip0.cube0.m_cpu&dst=sip0.io0.pcie_ep&view=all'; expect_http 200
  get '/api/svg?view=cube&sip=0&cube=0'; expect_http 200 '<svg'
  grep -q 'id="sip0\.cube0\.m_cpu"' "$tmp/body" || fail "the cube view's SVG has no element sip0.cube0.m_cpu"
  grep -qi '^Content-Type: image/svg+xml' "$tmp/resp" || fail "svg type: $(head -c 300 "$tmp/resp")"
  web_stop
}

web_bad_requests() {
  web_start -t small_2x2 web --no-open --port 0
  get /api/node/nope; expect_http 404 "no node 'nope' in topology small_2x2"; json_check 'd.status == 404'
  get '/api/node/a%20b'; expect_http 400 "bad node id"
  get "/api/node/$(printf 'x%.0s' $(seq 300))"; expect_http 400 "bad node id"
  get '/api/node/%ff%fe'; expect_http 400 "bad node id"; json_check 'd.error ~= nil'
  get /api/route; expect_http 400 "a route needs two nodes"
  get '/api/route?src=sip0.cube0.m_cpu'; expect_http 400 "a route needs two nodes"
  get '/api/route?src=sip0.cube0.m_cpu&dst=nope'; expect_http 404 "no node 'nope'"
  get '/api/route?src=sip0.cube0.m_cpu&dst=sip0.cube1.m_cpu&view=sideways'; expect_http 400 "route view must be"
  get '/api/route?src=sip0.cube0.pe0.pe_tcm&dst=sip0.cube1.m_cpu'; expect_http 404 "no path from"
  get '/api/svg?view=diagonal'; expect_http 400 "view must be system, sip, cube or pe"
  get '/api/svg?view=cube&sip=0&cube=99'; expect_http 400 "cube must be a whole number from 0 to 3"
  get '/api/svg?view=sip&sip=-1'; expect_http 400 "sip must be a whole number"
  get '/api/topology?view=pe&sip=0&cube=0&pe=8'; expect_http 400 "pe must be a whole number from 0 to 7"
  get '/api/svg?view=cube&src=sip0.cube0.m_cpu'; expect_http 400 "src and dst go together"
  get "/api/topology?$(for i in $(seq 40); do printf 'k%d=1&' "$i"; done)"; expect_http 400 "query parameters"
  get "/api/topology?view=$(printf 'y%.0s' $(seq 1000))"; expect_http 400 "too long"
  get /api/nothing; expect_http 404 "no endpoint /api/nothing"
  # path traversal: no path reaches the file system, whatever its form
  for p in /../../../etc/passwd /..%2f..%2fetc%2fpasswd /%2e%2e/%2e%2e/etc/passwd '/web/../lua/kernbench/web.lua' \
           /index.html/.. /.git/config '/app.js%00.png' //etc/passwd; do
    get "$p"
    case $http_status in 4*) ;; *) fail "GET $p: status $http_status: $(head -c 300 "$tmp/resp")" ;; esac
    grep -q 'root:' "$tmp/body" && fail "GET $p served a system file"
  done
  # a request line longer than the server's limit (32 KiB): a 4xx, and the server goes on
  get "/api/node/$(head -c 40000 /dev/zero | tr '\0' 'a')"
  case $http_status in 4*|"") ;; *) fail "a 40 KB request line: status $http_status" ;; esac
  web_alive
  # a body, another method, another host
  http_raw "POST /api/topology HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc"
  expect_http 405 "only GET and HEAD"
  http_raw "DELETE /api/topology HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
  expect_http 405
  get /api/topology evil.example:80; expect_http 403 "Host header"
  get /api/topology "localhost:$web_port"; expect_http 200
  http_raw "GARBAGE\r\n\r\n"
  case $http_status in 4*|"") ;; *) fail "a malformed request: status $http_status" ;; esac
  http_raw "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"; expect_http 200
  [ ! -s "$tmp/body" ] || fail "HEAD answered with a body"
  # half a request, then the connection dropped
  exec 3<>"/dev/tcp/127.0.0.1/$web_port"; (printf 'GET /api/topo' >&3) 2>/dev/null || true; exec 3<&-
  web_alive
  kill -0 "$web_pid" || fail "the server died: $(cat "$tmp/web.err")"
  web_stop
}

web_stats_utilisation() {
  run -t small_2x2 -q --stats-json "$tmp/s.json" probe --case h2d-1hop; expect_status 0
  web_start -t small_2x2 web --no-open --port 0 --stats "$tmp/s.json"
  get /api/topology; expect_http 200
  json_check "d.stats.file == '$tmp/s.json' and d.stats.simulations == 1 and d.stats.same_topology"
  get /api/node/sip0.io0.pcie_ep; expect_http 200
  json_check '(function() for _, l in ipairs(d.links_out) do
                if l.dst == "sip0.io0.io_noc" then return l.utilisation.util > 0 and l.utilisation.util <= 1 end
              end end)() and d.utilisation.util >= 0'
  get /api/node/sip0; expect_http 200; json_check 'd.busiest.util > 0'
  web_stop
  # statistics of another topology: said, and served where the ids match
  web_start -t small_1cube_1pe web --no-open --port 0 --stats "$tmp/s.json"
  grep -qF "no simulation in it ran on topology small_1cube_1pe" "$tmp/web.err" || fail "no warning: $(cat "$tmp/web.err")"
  web_stop
}

web_stops_on_signals() {
  for sig in INT TERM; do
    web_start -t small_1cube_1pe web --no-open --port 0
    web_alive
    kill -"$sig" "$web_pid"
    wait "$web_pid"; status=$?
    web_pid=""
    [ "$status" -eq 0 ] || fail "SIG$sig: exit status $status; stderr: $(cat "$tmp/web.err")"
    grep -qF "kernbench web: stopped (SIG$sig)" "$tmp/web.out" || fail "SIG$sig: $(cat "$tmp/web.out")"
    # the port is free again at once
    if (exec 3<>"/dev/tcp/127.0.0.1/$web_port") 2>/dev/null; then fail "port $web_port still open after SIG$sig"; fi
  done
  # --timeout ends it as it ends any run (status 124)
  run -t small_1cube_1pe --timeout 1 web --no-open --port 0; expect_status 124; expect_err "--timeout"
  # without --no-open and without a browser it says so
  DISPLAY="" WAYLAND_DISPLAY="" BROWSER="" run -t small_1cube_1pe --timeout 1 web --port 0; expect_status 124
  expect_out "no browser configured"
}

web_every_topology() {
  for f in topologies/*.yaml; do
    name=$(basename "$f" .yaml)
    web_start -t "$name" web --no-open --port 0
    get /api/topology; expect_http 200; json_check "d.name == '$name' and #d.nodes > 0"
    get '/api/svg?view=system'; expect_http 200 '<svg'
    get '/api/topology'; grep -q '"pes":0,' "$tmp/body" && { web_stop; continue; } # plain nodes (chain)
    for v in 'sip&sip=0' 'cube&sip=0&cube=0' 'pe&sip=0&cube=0&pe=0'; do
      get "/api/svg?view=$v"; expect_http 200 '<svg'
    done
    web_stop
  done
}

# chromium_run ARGS... URL: headless Chromium with its own profile; stdout in $tmp/dom.
chromium_run() {
  timeout 120 "$web_chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$tmp/chromium-profile" --virtual-time-budget=10000 "$@" >"$tmp/dom" 2>"$tmp/chromium.err" \
    || fail "chromium failed: $(tail -n 20 "$tmp/chromium.err")"
}

dom_has() { grep -qE -- "$1" "$tmp/dom" || fail "the page's DOM lacks /$1/; DOM: $(head -c 1500 "$tmp/dom")"; }

web_browser() {
  web_chromium=$(command -v chromium || command -v chromium-browser || true)
  [ -n "$web_chromium" ] || fail "Chromium is not installed, so the page cannot be tested in a browser: install it \
(Debian: apt-get install chromium; make test does it as root) — this test fails rather than pass without it"
  artefacts="$(dirname "$(dirname "$KB")")/test-artefacts"
  mkdir -p "$artefacts"
  web_start -t small_2x2 web --no-open --port 0
  # the system view: the SVG the server drew is in the page, all of its nodes
  get '/api/svg?view=system'; expect_http 200
  want=$(grep -c '<g id="[^"]*" class="node' "$tmp/body")
  [ "$want" -ge 2 ] || fail "the system view's SVG has $want nodes"
  chromium_run --dump-dom "$web_url"
  dom_has '<section id="canvas" [^>]*data-state="ready"'
  dom_has 'data-view="system"'
  dom_has "data-svg-nodes=\"$want\""
  dom_has "data-view-items=\"$want\"" # what /api/topology lists is what is drawn
  dom_has '<g id="sip0" class="node'
  dom_has 'id="topo-name">small_2x2<'
  dom_has 'ui\.perfetto\.dev'
  # a drill-down by a click on SIP 0 (the page clicks it: click=sip0), then on cube 1
  chromium_run --dump-dom "${web_url}#click=sip0"
  dom_has 'data-view="sip"'; dom_has '<g id="sip0\.cube1" class="node'
  grep -q '<g id="sip0" class="node' "$tmp/dom" && fail "still the system view after a click on sip0"
  chromium_run --dump-dom "${web_url}#view=sip&sip=0&click=sip0.cube1"
  dom_has 'data-view="cube"'; dom_has '<g id="sip0\.cube1\.m_cpu" class="node'
  get '/api/svg?view=cube&sip=0&cube=1'; want=$(grep -c '<g id="[^"]*" class="node' "$tmp/body")
  dom_has "data-svg-nodes=\"$want\""
  # PEs of the cube: every one drawn
  for pe in $(seq 0 7); do dom_has "<g id=\"sip0\\.cube1\\.pe$pe(\\.[a-z_]+)?\" class=\"node"; done
  # hover: the tooltip filled from /api/node, for a node and for a link
  chromium_run --dump-dom "${web_url}#view=pe&sip=0&cube=0&pe=0&hover=sip0.cube0.pe0.pe_dma"
  dom_has 'data-view="pe"'
  dom_has '<div id="tooltip" role="tooltip" data-node="sip0\.cube0\.pe0\.pe_dma"'
  dom_has '<td>overhead_ns</td><td>2</td>'; dom_has '<td>kind</td><td>pe_dma</td>'
  dom_has 'class="node [^"]*kb-hover'
  chromium_run --dump-dom "${web_url}#view=cube&sip=0&cube=0&hover=sip0.cube0.r0c0-%3Esip0.cube0.r0c1"
  dom_has 'data-node="sip0\.cube0\.r0c0-&gt;sip0\.cube0\.r0c1"'
  dom_has '<td>bandwidth</td><td>[0-9.]+ GB/s'; dom_has '<td>latency</td><td>[0-9.]+ ns'
  # the route finder: the route listed and drawn
  chromium_run --dump-dom "${web_url}#view=sip&sip=0&src=sip0.cube0.pe0.pe_dma&dst=sip0.cube3.pe3.pe_dma"
  get '/api/route?src=sip0.cube0.pe0.pe_dma&dst=sip0.cube3.pe3.pe_dma'; json_check 'd.hops > 0'
  dom_has 'id="route-result" [^>]*data-hops="[1-9][0-9]*"'
  dom_has 'class="node [^"]*kb-route'; dom_has '<li>sip0\.cube3\.pe3\.pe_dma</li>'
  # an error is shown, not a blank page
  chromium_run --dump-dom "${web_url}#view=cube&sip=0&cube=0&src=sip0.cube0.m_cpu&dst=nope"
  dom_has "no node 'nope'"
  # the screenshot, kept as the test's artefact
  rm -f "$artefacts/web.png"
  chromium_run --hide-scrollbars --window-size=1280,800 --screenshot="$artefacts/web.png" \
    "${web_url}#view=sip&sip=0&src=sip0.cube0.pe0.pe_dma&dst=sip0.cube3.pe3.pe_dma&hover=sip0.cube1"
  [ -s "$artefacts/web.png" ] || fail "no screenshot in $artefacts/web.png: $(tail -n 5 "$tmp/chromium.err")"
  [ "$(head -c 8 "$artefacts/web.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] || fail "web.png is not a PNG"
  echo "screenshot: $artefacts/web.png"
  web_alive
  web_stop
}
