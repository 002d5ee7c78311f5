-- Count one more of a refusal toward pausing its job, unless its call was sent before the
-- job's last resume (then it is the old cause's answer, arriving late, and not counted).
-- KEYS: 1 the job's refusal counts (a hash: signature -> count; SINCE -> when they restarted).
-- ARGV: 1 the refusal's signature, 2 how long its call took (s), 3 the hash's TTL (s), 4 the
-- SINCE field's name.
-- Returns how often this refusal was seen since the last resume; 0 when not counted.
-- Times are Redis's own clock (TIME), less the call's duration as the worker measured it, so
-- the hosts' clocks never meet.
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local since = tonumber(redis.call('HGET', KEYS[1], ARGV[4]) or '0')
if now - tonumber(ARGV[2]) < since then return 0 end
local seen = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return seen
