-- After a 429: push the model's request schedule at least delay_ms into the future.
-- KEYS: 1 the model's request schedule. ARGV: 1 delay_ms.
-- Returns 1.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local target = now + tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < target then
  redis.call('SET', KEYS[1], tostring(target), 'PX', math.ceil(tonumber(ARGV[1])) + 60000)
end
return 1
