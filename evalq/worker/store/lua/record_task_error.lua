-- Record a task error on a job that still exists (its hash holds the config).
-- KEYS: 1 the job hash.
-- ARGV: 1 the count's field, 2 the last error's, 3 its task's, 4 its time's; then 5-7 the
-- last error, its task and its time.
-- Returns the job's count of task errors (0: the job is gone).
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return 0 end
local count = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HSET', KEYS[1], ARGV[2], ARGV[5], ARGV[3], ARGV[6], ARGV[4], ARGV[7])
return count
