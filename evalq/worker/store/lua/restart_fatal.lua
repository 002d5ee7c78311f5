-- Forget a job's counted refusals and note when (Redis's clock), on resume: the cause may have
-- been fixed, and a refusal of a call sent before now is the old cause's (count_fatal.lua).
-- KEYS: 1 the job's refusal counts.
-- ARGV: 1 the hash's TTL (s), 2 the SINCE field's name.
local t = redis.call('TIME')
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], ARGV[2], t[1] .. '.' .. string.format('%06d', tonumber(t[2])))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
