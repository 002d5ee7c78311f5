-- Counts a row exactly once however often its callback runs: the SADD gate and every counter
-- change happen in one atomic script, so a crash can not leave one without the other.
-- The row's turn ends with it (worker.turns), counted or not: a duplicate holds none.
-- KEYS: 1 the job's done set, 2 the job hash, 3 the job's results, 4 its unscored counts,
-- 5 the rows holding a turn.
-- ARGV: 1 the row's key, 2 its RowResult JSON, 3 its status, 4 ttl_s, 5 the failed row's
-- reason ('' if not failed), 6 its score ('' for none); then (unscored reason, count) pairs.
-- Returns rows_done after it, or -1 when the row was already counted.
redis.call('SREM', KEYS[5], ARGV[1])
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then
  return -1
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'rows_done', 1)
redis.call('HINCRBY', KEYS[2], 'rows_' .. ARGV[3], 1)
if ARGV[5] ~= '' then
  redis.call('HINCRBY', KEYS[2], 'failed:' .. ARGV[5], 1)
end
if ARGV[6] ~= '' then
  redis.call('HINCRBYFLOAT', KEYS[2], 'score_sum', ARGV[6])
  redis.call('HINCRBY', KEYS[2], 'score_count', 1)
end
for i = 7, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], tonumber(ARGV[i + 1]))
end
local ttl = tonumber(ARGV[4])
for i = 1, 4 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
return tonumber(redis.call('HGET', KEYS[2], 'rows_done'))
