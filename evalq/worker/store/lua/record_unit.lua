-- One unit's outcome in one step (evalq.worker.store.unit_writes says which counter counts when).
-- The unit's calls' cost reservations (evalq.worker.judges.budget) are settled with their spend, so
-- spent + reserved never forgets a call.
-- KEYS: 1 the row's verdicts, 2 the job hash, 3 the job's activity, then ARGV[6] call-cache
-- keys, then ARGV[7] limiter token schedules, then (when ARGV[9] > 0) the job's reservations,
-- last the job's spent_by hash (evalq.worker.store.tallies).
-- ARGV: 1 verdict index ('' for none), 2 verdict JSON, 3 ttl_s, 4 the row's line, 5 its
-- activity time, 6 replies, 7 corrections, 8 spent pairs, 9 reservations, 10 the writing
-- process's tag in spent_by; then each reply's
-- (JSON, ttl_s), each correction's ms, the spent (name, amount) pairs, the reservations
-- ("{id}:{estimate}"), the counted pairs.
-- Returns {1 new verdict | 0 | -1 job gone, spend, cap or ''}.
if redis.call('HEXISTS', KEYS[2], 'config') == 0 then
  return {-1, '0', ''}
end
local ttl = tonumber(ARGV[3])
local written = 0
if ARGV[1] ~= '' then
  written = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
  redis.call('EXPIRE', KEYS[1], ttl)
end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
redis.call('EXPIRE', KEYS[3], ttl)
local replies, corrections, spent = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local reservations = tonumber(ARGV[9])
local spent_by, tag = KEYS[#KEYS], ARGV[10]
local a = 11
for i = 1, replies do
  redis.call('SET', KEYS[3 + i], ARGV[a], 'EX', ARGV[a + 1])
  a = a + 2
end
for i = 1, corrections do
  local key = KEYS[3 + replies + i]
  local tat = redis.call('GET', key)
  if tat then
    local left = redis.call('PTTL', key)
    if left < 0 then left = 60000 end
    redis.call('SET', key, tostring(tonumber(tat) + tonumber(ARGV[a])), 'PX', left)
  end
  a = a + 1
end
for i = 1, spent do
  redis.call('HINCRBY', KEYS[2], ARGV[a], ARGV[a + 1])
  redis.call('HINCRBY', spent_by, tag .. '/' .. ARGV[a], ARGV[a + 1])
  a = a + 2
end
if spent > 0 then
  redis.call('EXPIRE', spent_by, ttl)
end
local released = 0
for i = 1, reservations do
  if redis.call('ZREM', KEYS[4 + replies + corrections], ARGV[a]) == 1 then
    released = released + (tonumber(string.match(ARGV[a], ':(%d+)$')) or 0)
  end
  a = a + 1
end
if released > 0 then
  redis.call('HINCRBY', KEYS[2], 'reserved_nanos', -released)
end
if written == 1 then
  while a < #ARGV do
    redis.call('HINCRBY', KEYS[2], ARGV[a], ARGV[a + 1])
    a = a + 2
  end
end
local cap = redis.call('HGET', KEYS[2], 'budget_nanos') or ''
return {written, redis.call('HGET', KEYS[2], 'spent_nanos') or '0', cap}
