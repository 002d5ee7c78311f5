-- Adds to the counters of a job that still exists (its hash holds the config) and renews the
-- hash's expiry: a call that lands after Redis lost the job must not leave a config-less hash
-- behind (no TTL, and it would look like a job to `wait`). Store.incr and Store.account.
-- KEYS: 1 the job hash; with spend (Store.account), 2 the job's spent_by hash.
-- ARGV: 1 ttl_s; with spend, 2 the writing process's tag in spent_by; then (field, amount) pairs.
-- Returns {1 added | 0 job gone, spent_nanos, budget_nanos or ''}.
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then
  return {0, '0', ''}
end
local first = 2
if #KEYS > 1 then
  first = 3
end
for i = first, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  if #KEYS > 1 then
    redis.call('HINCRBY', KEYS[2], ARGV[2] .. '/' .. ARGV[i], ARGV[i + 1])
  end
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
if #KEYS > 1 then
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[1]))
end
local cap = redis.call('HGET', KEYS[1], 'budget_nanos') or ''
return {1, redis.call('HGET', KEYS[1], 'spent_nanos') or '0', cap}
