-- Shift the model's token schedule by the difference between estimated and actual tokens
-- (record_unit.lua shifts it the same way for a unit's held corrections).
-- KEYS: 1 the token schedule. ARGV: 1 the shift in ms.
-- Returns 1 when shifted, 0 when there is no schedule.
local tat = redis.call('GET', KEYS[1])
if not tat then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 60000 end
redis.call('SET', KEYS[1], tostring(tonumber(tat) + tonumber(ARGV[1])), 'PX', ttl)
return 1
