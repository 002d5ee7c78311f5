-- The global rate limiter (evalq.worker.judges.limiter): reserve a call's slot when both budgets allow,
-- GCRA on Redis time (so hosts' clocks don't matter).
-- KEYS: 1 the model's request schedule, 2 its token schedule.
-- ARGV: 1 ms per request, 2 request burst ms, 3 this call's token ms, 4 token burst ms,
-- 5 the longest wait ms to reserve for.
-- Returns {reserved (0/1), wait_ms}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local function plan(key, increment, burst)
  if increment <= 0 then return 0, nil end
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local wait = tat - burst - now
  if wait < 0 then wait = 0 end
  return wait, tat + increment
end
local w1, n1 = plan(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
local w2, n2 = plan(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
local wait = math.max(w1, w2)
if wait > tonumber(ARGV[5]) then
  return {0, tostring(wait)}
end
if n1 then redis.call('SET', KEYS[1], tostring(n1), 'PX', math.ceil(n1 - now) + 60000) end
if n2 then redis.call('SET', KEYS[2], tostring(n2), 'PX', math.ceil(n2 - now) + 60000) end
return {1, tostring(wait)}
