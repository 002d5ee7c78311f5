-- A job's archive write succeeded: note when, forget the failures, and take the job off the
-- pending set unless something made it due again while the write ran (its score moved).
-- KEYS: 1 the archive's pending set, 2 the job hash.
-- ARGV: 1 the job id, 2 its pending score read before the write ('' when it was not pending),
-- 3 now, 4-7 the hash's fields: archived_at, archive_error, archive_tries, archive_held.
-- Returns 1 when the job's keys were held (the caller lets them expire again), else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and (ARGV[2] == '' or tonumber(score) <= tonumber(ARGV[2])) then
  redis.call('ZREM', KEYS[1], ARGV[1])
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  return 0
end
local held = redis.call('HGET', KEYS[2], ARGV[7])
redis.call('HSET', KEYS[2], ARGV[4], ARGV[3])
redis.call('HDEL', KEYS[2], ARGV[5], ARGV[6], ARGV[7])
if held then
  return 1
end
return 0
