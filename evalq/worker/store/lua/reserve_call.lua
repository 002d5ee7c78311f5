-- Before a judge call reaches the API (evalq.worker.judges.budget.BudgetGuard): the job's status, and for a
-- job with a spend cap, a reservation of the call's estimated cost, in one step, so calls
-- starting together on any worker or host can not all pass a cap that has room for one.
-- Reservations whose holder never settled them (a worker killed mid-call) have expired and are
-- freed first. Time is Redis's, so hosts' clocks don't matter.
-- KEYS: 1 the job hash, 2 the job's reservations (ZSET "{id}:{estimate}" -> expires at, ms).
-- ARGV: 1 this reservation's member, 2 its estimate (nanos), 3 how long it holds (ms),
-- 4 the job keys' ttl_s.
-- Returns {verdict, status, spent, reserved, cap or ''}; verdict: 'go' (no cap: nothing
-- reserved), 'reserved', 'over' (spent has reached the cap: nothing reserved), 'busy' (the cap
-- has no room for this call while calls in flight hold reservations: nothing reserved, ask
-- again once they settle), 'idle' (cancelled or paused: no call may start), 'gone' (no such
-- job). A call the room left can not cover is let through alone (nothing else reserved): an
-- estimate is a bound (the whole output allowance), and refusing it would pause a job far
-- below its cap; so the one call may overshoot the cap by what it really costs.
-- Every call let through counts in calls_admitted: a cancel, atomic with this, freezes it, so
-- the calls a job ever sent are those counted before its cancel (a test counts them at the
-- fake server).
local status = redis.call('HGET', KEYS[1], 'status')
if not status or redis.call('HEXISTS', KEYS[1], 'config') == 0 then
  return {'gone', '', '0', '0', ''}
end
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent_nanos') or '0')
local cap = redis.call('HGET', KEYS[1], 'budget_nanos') or ''
if status == 'cancelled' or status == 'paused' then
  return {'idle', status, tostring(spent), '0', cap}
end
if cap == '' then
  redis.call('HINCRBY', KEYS[1], 'calls_admitted', 1)
  return {'go', status, tostring(spent), '0', ''}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local freed = 0
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  freed = freed + (tonumber(string.match(member, ':(%d+)$')) or 0)
end
if freed > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  redis.call('HINCRBY', KEYS[1], 'reserved_nanos', -freed)
end
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved_nanos') or '0')
local estimate = tonumber(ARGV[2])
if spent >= tonumber(cap) then
  return {'over', status, tostring(spent), tostring(reserved), cap}
end
if spent + reserved + estimate > tonumber(cap) and reserved > 0 then
  return {'busy', status, tostring(spent), tostring(reserved), cap}
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
reserved = redis.call('HINCRBY', KEYS[1], 'reserved_nanos', estimate)
redis.call('HINCRBY', KEYS[1], 'calls_admitted', 1)
return {'reserved', status, tostring(spent), tostring(reserved), cap}
