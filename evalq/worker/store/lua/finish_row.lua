-- Counts a row exactly once however often its callback runs: the SADD gate and every counter
-- change happen in one atomic script, so a crash can not leave one without the other.
-- The row's turn ends with it (evalq.worker.dispatch.turns), counted or not: a duplicate holds none.
-- A row counted after its job was cancelled (a task already running then) changes what the
-- archive holds of it, so the job is due to be written again.
-- KEYS: 1 the job's done set, 2 the job hash, 3 the job's results, 4 its unscored counts,
-- 5 the rows holding a turn, 6 the archive's pending set.
-- ARGV: 1 the row's key, 2 its RowResult JSON, 3 its status, 4 ttl_s, 5 the failed row's
-- reason ('' if not failed), 6 its score ('' for none), 7 when an archive write would be due,
-- 8 the job id; then (unscored reason, count) pairs.
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
for i = 9, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], tonumber(ARGV[i + 1]))
end
if redis.call('HGET', KEYS[2], 'status') == 'cancelled' then
  redis.call('ZADD', KEYS[6], ARGV[7], ARGV[8])
end
local ttl = tonumber(ARGV[4])
for i = 1, 4 do
  redis.call('EXPIRE', KEYS[i], ttl)
end
return tonumber(redis.call('HGET', KEYS[2], 'rows_done'))
