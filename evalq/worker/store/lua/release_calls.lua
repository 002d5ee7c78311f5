-- Settle reservations (reserve_call.lua) once what their calls cost is in spent_nanos: each is
-- taken off the job's reserved total once, whether settled here or freed by its expiry first.
-- KEYS: 1 the job hash, 2 the job's reservations. ARGV: the members ("{id}:{estimate}").
-- Returns the nanos released.
local released = 0
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[2], ARGV[i]) == 1 then
    released = released + (tonumber(string.match(ARGV[i], ':(%d+)$')) or 0)
  end
end
if released > 0 and redis.call('HEXISTS', KEYS[1], 'config') == 1 then
  redis.call('HINCRBY', KEYS[1], 'reserved_nanos', -released)
end
return released
