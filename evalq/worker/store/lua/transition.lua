-- Every status change, checked against evalq.worker.store.jobs.TRANSITIONS (the allowed sources
-- come in as ARGV[6:]) and written in one atomic step: nothing can land between the check and
-- the write. A job that runs is one the watchdog looks after; a cancelled or finished one is
-- not. A job that ends (finished, cancelled) is due for the archive in the same step, so no
-- ended job can miss it; one that runs again (a resume) is not.
-- KEYS: 1 the job hash, 2 the active jobs set, 3 the archive's pending set.
-- ARGV: 1 the target status, 2 now (epoch s), 3 rows_total (finished needs rows_done >= it),
-- 4 the pause reason, 5 the job id, 6 when the archive write is due if nobody writes it
-- first, 7 the spend cap the reason was read under ('' for none: a pause at the cap moves the
-- job only while that cap is still in force, so a call that read the cap before a resume
-- raised it can't pause the resumed job); then the statuses the target may be reached from.
-- Returns {changed, status found ('unknown' when the job is gone), rows_done}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  return {0, 'unknown', 0}
end
local done = tonumber(redis.call('HGET', KEYS[1], 'rows_done') or '0')
local target = ARGV[1]
local allowed = false
for i = 8, #ARGV do
  if ARGV[i] == status then allowed = true end
end
if ARGV[7] ~= '' and redis.call('HGET', KEYS[1], 'budget_nanos') ~= ARGV[7] then
  allowed = false
end
if not allowed or (target == 'finished' and done < tonumber(ARGV[3])) then
  return {0, status, done}
end
redis.call('HSET', KEYS[1], 'status', target, target .. '_at', ARGV[2])
if target == 'paused' then
  redis.call('HSET', KEYS[1], 'pause_reason', ARGV[4])
elseif target == 'running' then
  redis.call('HDEL', KEYS[1], 'pause_reason')
  redis.call('SADD', KEYS[2], ARGV[5])
  redis.call('ZREM', KEYS[3], ARGV[5])
else
  redis.call('SREM', KEYS[2], ARGV[5])
  if target == 'finished' or target == 'cancelled' then
    redis.call('ZADD', KEYS[3], ARGV[6], ARGV[5])
  end
end
return {1, status, done}
