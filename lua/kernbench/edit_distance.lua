--- The Levenshtein distance between two strings (bytes): the fewest
-- insertions, deletions and substitutions turning a into b. For the "did
-- you mean" lists of bench names (bench_find.lua) and node ids (draw.lua).
return function(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end
