--- A sweep's result files (docs/sweeps.md "Results"): results.csv,
-- results.json and the declared gnuplot plots, built from the journal's
-- last line per id, rows in the sweep file's point order (so any -j and any
-- backend give the same bytes), each written atomically (kb.open_output).
local json = require "kernbench.json"
local sfile = require "kernbench.sweep.file"

local M = {}

M.SCHEMA = "kernbench.sweep_results"
M.SCHEMA_VERSION = 1

--- The rows: one per point, {id, status ("ok", "failed" or "missing"),
-- exit_code, values = {column -> value}} with axis, metric and derived
-- columns; and the messages of derived columns that raised.
function M.rows(S, by_id)
  local rows, problems, said, views = {}, {}, {}, {}
  for i, p in ipairs(S.points) do
    local e = by_id[p.id]
    local row = { id = p.id, status = e and e.status or "missing", exit_code = e and e.exit_code, values = {} }
    for _, c in ipairs(S.columns) do row.values[c.name] = p.values[c.name] end
    local m = e and e.metrics or {}
    for _, mt in ipairs(S.metrics) do row.values[mt.name] = m[mt.name] end
    rows[i] = row
    -- what a derived column sees of a row: its axis and metric columns (a copy)
    local v = { id = row.id, status = row.status, exit_code = row.exit_code }
    for k, x in pairs(row.values) do v[k] = x end
    views[i] = v
  end
  for i, p in ipairs(S.points) do
    local row = rows[i]
    for _, d in ipairs(S.derived) do
      local view = setmetatable({ id = row.id, status = row.status, exit_code = row.exit_code }, { __index = row.values })
      local ok, v = pcall(d.fn, view, views)
      local bad = ok and v ~= nil and type(v) ~= "number" and type(v) ~= "string" and type(v) ~= "boolean"
      if not ok or bad or (type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge)) then
        if not said[d.name] and row.status == "ok" then
          said[d.name] = true
          problems[#problems + 1] = ("derived column %s, point %s: %s (the cell is empty)"):format(d.name, p.id,
            not ok and tostring(v) or ("returned " .. tostring(v)))
        end
        v = nil
      end
      row.values[d.name] = v
    end
  end
  return rows, problems
end

--- Every column name in order: id, status, exit_code, axes, metrics, derived.
function M.column_names(S)
  local names = { "id", "status", "exit_code" }
  for _, c in ipairs(S.columns) do names[#names + 1] = c.name end
  for _, m in ipairs(S.metrics) do names[#names + 1] = m.name end
  for _, d in ipairs(S.derived) do names[#names + 1] = d.name end
  return names
end

local function csv_cell(v)
  if v == nil then return "" end
  local s
  if type(v) == "table" then s = json.encode(v)
  elseif type(v) == "number" then s = json.encode(v)
  else s = tostring(v) end
  if s:find('[,"\r\n]') or s:match("^%s") or s:match("%s$") then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

local function cell_of(row, name)
  if name == "id" then return row.id elseif name == "status" then return row.status
  elseif name == "exit_code" then return row.exit_code end
  return row.values[name]
end

function M.csv(S, rows)
  local names = M.column_names(S)
  local out = { table.concat(names, ",") }
  for _, row in ipairs(rows) do
    local cells = {}
    for i, n in ipairs(names) do cells[i] = csv_cell(cell_of(row, n)) end
    out[#out + 1] = table.concat(cells, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

function M.json(S, rows)
  local fixed = {}
  for _, f in ipairs(S.fixed) do
    fixed[#fixed + 1] = json.obj({ "kind", f.kind }, { "key", f.key }, { "value", f.value })
  end
  local cols = {}
  for _, c in ipairs(S.columns) do cols[#cols + 1] = json.obj({ "name", c.name }, { "kind", c.kind }, { "key", c.key }) end
  for _, m in ipairs(S.metrics) do cols[#cols + 1] = json.obj({ "name", m.name }, { "kind", "metric" }, { "key", m.path }) end
  for _, d in ipairs(S.derived) do cols[#cols + 1] = json.obj({ "name", d.name }, { "kind", "derived" }) end
  local counts = { ok = 0, failed = 0, missing = 0 }
  local jrows = {}
  local names = M.column_names(S)
  for i, row in ipairs(rows) do
    counts[row.status] = counts[row.status] + 1
    local kv = {}
    for j, n in ipairs(names) do kv[j] = { n, cell_of(row, n) } end
    jrows[i] = json.obj(table.unpack(kv))
  end
  local doc = json.obj({ "schema", M.SCHEMA }, { "schema_version", M.SCHEMA_VERSION },
    { "kernbench_version", kb.version },
    { "sweep", json.obj({ "name", S.name }, { "bench", S.bench }, { "probe", S.probe },
      { "mode", S.mode }, { "data_mode", S.data_mode }, { "fixed", fixed }) },
    { "counts", json.obj({ "points", #rows }, { "ok", counts.ok }, { "failed", counts.failed },
      { "missing", counts.missing }) },
    { "columns", cols },
    { "rows", jrows })
  return json.encode(doc, "results") .. "\n", counts
end

local function gp_string(s) return '"' .. tostring(s):gsub('[\\"]', "\\%0") .. '"' end

-- The gnuplot script of plot pl (PNG to `png`): one datablock per series
-- and y column, points sorted by x, only ok rows with numeric x and y.
local function gnuplot_script(pl, rows, png)
  local groups, order = {}, {}
  for _, row in ipairs(rows) do
    if row.status == "ok" then
      local x = cell_of(row, pl.x)
      local s = pl.series and cell_of(row, pl.series)
      for _, y in ipairs(pl.y) do
        local yv = cell_of(row, y)
        if type(x) == "number" and type(yv) == "number" then
          local key = (pl.series and (pl.series .. "=" .. sfile.text(s)) or "") ..
                      (#pl.y > 1 and ((pl.series and " " or "") .. y) or "")
          if key == "" then key = y end
          if not groups[key] then groups[key] = {} order[#order + 1] = key end
          local g = groups[key]
          g[#g + 1] = { x, yv }
        end
      end
    end
  end
  local lines = { "set terminal pngcairo size 1000,650", "set termoption noenhanced",
                  "set output " .. gp_string(png), "set grid", "set key outside right top",
                  "set title " .. gp_string(pl.title or (table.concat(pl.y, ", ") .. " against " .. pl.x)),
                  "set xlabel " .. gp_string(pl.xlabel or pl.x),
                  "set ylabel " .. gp_string(pl.ylabel or table.concat(pl.y, ", ")) }
  if pl.logx then lines[#lines + 1] = "set logscale x" end
  if pl.logy then lines[#lines + 1] = "set logscale y" end
  if #order == 0 then return nil end
  local plots = {}
  for i, key in ipairs(order) do
    local g = groups[key]
    table.sort(g, function(a, b) return a[1] < b[1] end)
    lines[#lines + 1] = ("$d%d << EOD"):format(i)
    for _, xy in ipairs(g) do lines[#lines + 1] = sfile.text(xy[1]) .. " " .. sfile.text(xy[2]) end
    lines[#lines + 1] = "EOD"
    plots[i] = ("$d%d using 1:2 with %s title %s"):format(i, pl.style, gp_string(key))
  end
  lines[#lines + 1] = "plot " .. table.concat(plots, ", ")
  return table.concat(lines, "\n") .. "\n"
end

local function have_gnuplot()
  return os.execute("command -v gnuplot >/dev/null 2>&1") == true
end

--- Writes DIR/results.csv, DIR/results.json and the plots. Returns the
-- counts, the files written and messages (skipped plots, derived errors).
function M.write(S, dir, by_id)
  local rows, notes = M.rows(S, by_id)
  local csv = kb.open_output(dir .. "/results.csv")
  local js = kb.open_output(dir .. "/results.json")
  local text, counts = M.json(S, rows)
  csv:write(M.csv(S, rows))
  js:write(text)
  csv:close()
  js:close()
  local files = { dir .. "/results.csv", dir .. "/results.json" }
  if #S.plots > 0 then
    if not have_gnuplot() then
      notes[#notes + 1] = ("gnuplot is not installed: %d plot(s) skipped (apt-get install gnuplot-nox); " ..
        "results.csv holds every figure"):format(#S.plots)
    else
      for _, pl in ipairs(S.plots) do
        local out = kb.open_output(("%s/%s.png"):format(dir, pl.name))
        local script = gnuplot_script(pl, rows, out:temp())
        if not script then
          out:abort()
          notes[#notes + 1] = ("plot %s: no ok point with numeric %s and %s; skipped"):format(pl.name, pl.x,
            table.concat(pl.y, ", "))
        else
          local gp = io.popen("gnuplot 2>&1", "w")
          gp:write(script)
          local ok = gp:close()
          if ok then
            out:close()
            files[#files + 1] = ("%s/%s.png"):format(dir, pl.name)
          else
            out:abort()
            notes[#notes + 1] = ("plot %s: gnuplot failed; skipped"):format(pl.name)
          end
        end
      end
    end
  end
  return counts, files, notes
end

return M
